package braid.mpi

import braid.bootstrap.BootstrapException
import braid.bootstrap.JobLauncher
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * `MPI_Comm_spawn` where Braid launches the children itself: the root opens a port and starts `maxprocs` copies of the
 * command on this machine as one job, as `braid run` does ([JobLauncher]: their own key-value store, their output
 * forwarded to the root's), with [MpiParams.PARENT_PORT] set to the port; every child's `MPI_Init` connects its world
 * to it ([Mpi.parent]) while the parents [Intracomm.accept] there, which gives both sides the intercommunicator.
 */
internal object Spawn {
    fun spawn(
        comm: Intracomm,
        command: String,
        argv: Array<String>,
        maxprocs: Int,
        root: Int,
        errcodes: IntArray?,
    ): Intercomm {
        val call = "MPI_Comm_spawn"
        if (root < 0 || root >= comm.size)
            throw comm.raise(
                MPIException.of(
                    ErrorClass.ERR_ROOT,
                    call,
                    "root $root is not a rank of ${comm.getName()} (size ${comm.size})",
                )
            )
        var port = ""
        var failure = ""
        if (comm.rank == root) {
            port = comm.mpi.openPort()
            val env = mapOf(MpiParams.PARENT_PORT.env to port)
            val job =
                if (maxprocs < 1) null else JobLauncher(maxprocs, listOf(command) + argv, System.out, System.err, env)
            failure =
                if (job == null) "maxprocs is $maxprocs; spawn 1 or more processes"
                else
                    try {
                        job.checkCommand()
                        ""
                    } catch (e: BootstrapException) {
                        e.message.orEmpty()
                    }
            if (job != null && failure.isEmpty()) {
                val t = Thread({ runCatching { job.run() } }, "braid-mpi-spawn").apply { isDaemon = true }
                comm.mpi.spawned(t) // finalize waits for it
                t.start()
            }
        }
        // Every parent learns whether the root could start the children before it waits for them to connect.
        val ok = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, if (failure.isEmpty()) 1 else 0)
        comm.bcast(ok, 1, Datatype.INT, root)
        if (ok.getInt(0) == 0) {
            if (comm.rank == root) comm.mpi.closePort(port)
            throw comm.raise(
                MPIException.of(
                    ErrorClass.ERR_SPAWN,
                    call,
                    if (comm.rank == root) "cannot start $command: $failure" else "the root could not start $command",
                )
            )
        }
        try {
            return comm.accept(port, root)
        } finally {
            if (comm.rank == root) comm.mpi.closePort(port)
            errcodes?.fill(ErrorClass.SUCCESS)
        }
    }
}
