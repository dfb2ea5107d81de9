package braid.mpi

import braid.bootstrap.BootstrapException
import braid.bootstrap.JobLauncher
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * `MPI_Comm_spawn` and `MPI_Comm_spawn_multiple` where Braid launches the children itself: the root opens a port and
 * starts the children on this machine as one job, as `braid run` does ([JobLauncher]: their own key-value store, their
 * output forwarded to the root's; with several commands, entry `i`'s processes follow the ranks of the entries before
 * it and have `MPI_APPNUM` `i`), with [MpiParams.PARENT_PORT] set to the port; every child's `MPI_Init` connects its
 * world to it ([Mpi.parent]) while the parents [Intracomm.accept] there, which gives both sides the intercommunicator.
 * If the children's job ends before they connect (a child died, or the program never calls `MPI_Init`), the accept
 * stops waiting and every parent raises `MPI_ERR_SPAWN` naming the command and how the job ended.
 */
internal object Spawn {
    /** One entry of a spawn: [maxprocs] processes of [command] with [argv]. */
    class App(val command: String, val argv: Array<String>, val maxprocs: Int)

    /** [apps] and [refuse] (a reason not to start them, or empty) are read at the root only. */
    fun spawn(
        comm: Intracomm,
        apps: List<App>,
        root: Int,
        errcodes: IntArray?,
        call: String,
        refuse: String = "",
    ): Intercomm {
        if (root < 0 || root >= comm.size)
            throw comm.raise(
                MPIException.of(
                    ErrorClass.ERR_ROOT,
                    call,
                    "root $root is not a rank of ${comm.getName()} (size ${comm.size})",
                )
            )
        val what = apps.map { it.command }.distinct().joinToString(", ").ifEmpty { "no command" }
        var port = ""
        var failure = ""
        /** Set by the job's thread when the children's job has ended: how. */
        val ended = java.util.concurrent.atomic.AtomicReference<String?>()
        if (comm.rank == root) {
            port = comm.mpi.openPort()
            val env = mapOf(MpiParams.PARENT_PORT.env to port)
            val bad = apps.withIndex().firstOrNull { it.value.maxprocs < 1 }
            val job =
                if (refuse.isNotEmpty() || apps.isEmpty() || bad != null) null
                else
                    JobLauncher.multiple(
                        apps.map { listOf(it.command) + it.argv },
                        apps.map { it.maxprocs }.toIntArray(),
                        System.out,
                        System.err,
                        env,
                    )
            failure =
                when {
                    refuse.isNotEmpty() -> refuse
                    apps.isEmpty() -> "no command to spawn"
                    bad != null ->
                        if (apps.size == 1) "maxprocs is ${bad.value.maxprocs}; spawn 1 or more processes"
                        else "maxprocs[${bad.index}] is ${bad.value.maxprocs}; spawn 1 or more processes per command"
                    else ->
                        try {
                            job!!.checkCommand()
                            ""
                        } catch (e: BootstrapException) {
                            e.message.orEmpty()
                        }
                }
            if (job != null && failure.isEmpty()) {
                val t =
                    Thread(
                            {
                                val how =
                                    try {
                                        val code = job.run()
                                        if (code == 0) "exited (code 0) without connecting: does it call MPI_Init?"
                                        else "ended with exit code $code"
                                    } catch (e: Exception) {
                                        "could not run: ${e.message}"
                                    }
                                ended.set(how)
                            },
                            "braid-mpi-spawn",
                        )
                        .apply { isDaemon = true }
                comm.mpi.spawned(t) // finalize waits for it
                t.start()
            }
        }
        // Every parent learns whether the root could start the children before it waits for them to connect.
        val ok = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, if (failure.isEmpty()) 1 else 0)
        comm.bcast(ok, 1, Datatype.INT, root)
        if (ok.getInt(0) == 0) {
            if (comm.rank == root) comm.mpi.closePort(port)
            errcodes?.fill(ErrorClass.ERR_SPAWN)
            throw comm.raise(
                MPIException.of(
                    ErrorClass.ERR_SPAWN,
                    call,
                    if (comm.rank == root) "cannot start $what: $failure"
                    else "the root (rank $root) could not start the processes",
                )
            )
        }
        try {
            val children =
                comm.construct(call) {
                    comm.mpi.ports.accept(comm, port, root) {
                        ended.get()?.let { MPIException.of(ErrorClass.ERR_SPAWN, call, "the spawned $what $it") }
                    }
                }
            errcodes?.fill(ErrorClass.SUCCESS)
            return children
        } catch (e: MPIException) {
            errcodes?.fill(ErrorClass.ERR_SPAWN)
            throw e
        } finally {
            if (comm.rank == root) comm.mpi.closePort(port)
        }
    }
}
