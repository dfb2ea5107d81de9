package braid.mpi.it

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.ErrorHandler
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Request
import java.io.File
import java.nio.ByteBuffer
import kotlin.system.exitProcess

/**
 * One rank of a multi-process job: `MpiRankMain DIR RANK SIZE SCENARIO`, started by [MpiMultiProcessIT]. Prints OK and
 * exits 0 when its scenario passes.
 */
object MpiRankMain {
    @JvmStatic
    fun main(args: Array<String>) {
        val (dir, rank, size, scenario) = args
        try {
            Mpi.init(
                    FileBootstrap(File(dir), rank.toInt(), size.toInt()),
                    options = MpiOptions().provider(System.getenv("BRAID_MPI_PROVIDER") ?: "shm"),
                )
                .use { mpi ->
                    mpi.world.setErrhandler(ErrorHandler.ERRORS_RETURN)
                    when (scenario) {
                        "semantics" -> semantics(mpi)
                        "peer-death" -> peerDeath(mpi)
                        "intercomm" ->
                            check(braid.mpi.testing.CollectiveChecks.runInterSplit(mpi.world, 2) >= 14) {
                                "too few intercommunicator checks (every rank passes at least 14)"
                            }
                        "abort" ->
                            if (mpi.world.rank == 1) mpi.world.abort(7)
                            else mpi.world.recv(ByteBuffer.allocate(4), 1, Datatype.INT, 1, 0)
                        else -> error("unknown scenario $scenario")
                    }
                }
            println("OK")
            exitProcess(0)
        } catch (t: Throwable) {
            println("FAILED")
            t.printStackTrace(System.out)
            exitProcess(1)
        }
    }

    private fun check(ok: Boolean, what: () -> String) {
        if (!ok) throw AssertionError(what())
    }

    /**
     * Rank 2 dies (halts) after a first exchange; rank 0's receive from it and rank 1's large send to it fail with
     * ERR_PROC_FAILED, later calls naming it fail at once, and 0 and 1 go on. Rank 0's receive into device memory from
     * rank 2, posted before rank 2 can have died (before the barrier it needs), fails the same way.
     */
    private fun peerDeath(mpi: Mpi) {
        val w = mpi.world
        val b = ByteBuffer.allocateDirect(1 shl 20)
        w.sendRecv(
            ByteBuffer.allocate(4),
            1,
            Datatype.INT,
            (w.rank + 1) % 3,
            0,
            ByteBuffer.allocate(4),
            1,
            Datatype.INT,
            (w.rank + 2) % 3,
            0,
        )
        val onDevice = if (w.rank == 0) deviceReceive(mpi, source = 2) else null
        w.barrier()
        when (w.rank) {
            2 -> Runtime.getRuntime().halt(9)
            0 -> {
                expectProcFailed { w.recv(b, 1, Datatype.INT, 2, 5) }
                expectProcFailed { onDevice!!.waitFor() }
            }
            1 -> expectProcFailed { w.send(b, 1 shl 20, Datatype.BYTE, 2, 5) }
        }
        expectProcFailed { w.isend(b, 1, Datatype.INT, 2, 6).waitFor() }
        val got = ByteBuffer.allocate(4)
        w.sendRecv(
            ByteBuffer.allocate(4).putInt(0, 40 + w.rank),
            1,
            Datatype.INT,
            1 - w.rank,
            7,
            got,
            1,
            Datatype.INT,
            1 - w.rank,
            7,
        )
        check(got.getInt(0) == 40 + 1 - w.rank) { "after the failure: got ${got.getInt(0)}" }
    }

    /** A receive from [source] into memory of a test device (reached only through its copy functions), posted now. */
    private fun deviceReceive(mpi: Mpi, source: Int): Request {
        val dev = braid.bench.SegmentDevice(1 shl 16, "peer-death-device")
        val copies = dev.copies()
        mpi.setOp(braid.core.HmemOp.COPY_TO_HMEM_IOV, copies.toHmem)
        mpi.setOp(braid.core.HmemOp.COPY_FROM_HMEM_IOV, copies.fromHmem)
        val region = mpi.registerMemory(dev.iface, 0, dev.alloc(64), 64, braid.core.MrAccess.RECV)
        return mpi.world.irecv(region, 0, 4, Datatype.INT, source, 8)
    }

    private fun expectProcFailed(call: () -> Unit) {
        try {
            call()
            throw AssertionError("expected MPIX_ERR_PROC_FAILED, the call succeeded")
        } catch (e: braid.mpi.MPIException) {
            check(e.errorClass == braid.mpi.ErrorClass.ERR_PROC_FAILED) {
                "expected MPIX_ERR_PROC_FAILED, got ${e.message}"
            }
            println("failed as expected: ${e.message}")
        }
    }

    private fun semantics(mpi: Mpi) {
        val w = mpi.world
        val n = w.size
        // Ring of mixed sizes (eager and rendezvous) in both directions at once, any-source receives.
        // Each round its own tag: an any-source receive of one round must not take a fast
        // neighbour's message of the next (MPI would allow it; this test means rounds).
        for ((round, bytes) in listOf(4, 100_000, 0, 1 shl 20).withIndex()) {
            val tag = 1 + round
            val out =
                ByteBuffer.allocateDirect(maxOf(bytes, 4)).also { b ->
                    for (i in 0 until bytes) b.put(i, (w.rank + i).toByte())
                }
            val got = Array(2) { ByteBuffer.allocateDirect(maxOf(bytes, 4)) }
            val reqs =
                arrayOf(
                    w.irecv(got[0], bytes, Datatype.BYTE, Mpi.ANY_SOURCE, tag),
                    w.irecv(got[1], bytes, Datatype.BYTE, Mpi.ANY_SOURCE, tag),
                    w.isend(out, bytes, Datatype.BYTE, (w.rank + 1) % n, tag),
                    w.isend(out, bytes, Datatype.BYTE, (w.rank + n - 1) % n, tag),
                )
            val st = Request.waitAll(reqs)
            val sources = setOf(st[0].source, st[1].source)
            check(sources == setOf((w.rank + 1) % n, (w.rank + n - 1) % n)) { "ring of $bytes B: sources $sources" }
            for (k in 0..1) for (i in 0 until bytes step 997) check(got[k].get(i) == (st[k].source + i).toByte()) {
                "ring of $bytes B: byte $i from ${st[k].source}"
            }
        }
        // A split with traffic on parent and child at once.
        val half = w.split(w.rank % 2, 0)!!
        val a = ByteBuffer.allocate(4)
        val b = ByteBuffer.allocate(4)
        val r =
            arrayOf(
                w.irecv(a, 1, Datatype.INT, (w.rank + n - 1) % n, 0),
                half.irecv(b, 1, Datatype.INT, (half.rank + half.size - 1) % half.size, 0),
                w.isend(ByteBuffer.allocate(4).putInt(0, 1000 + w.rank), 1, Datatype.INT, (w.rank + 1) % n, 0),
                half.isend(
                    ByteBuffer.allocate(4).putInt(0, 2000 + half.rank),
                    1,
                    Datatype.INT,
                    (half.rank + 1) % half.size,
                    0,
                ),
            )
        Request.waitAll(r)
        check(a.getInt(0) == 1000 + (w.rank + n - 1) % n) { "parent got ${a.getInt(0)}" }
        check(b.getInt(0) == 2000 + (half.rank + half.size - 1) % half.size) { "child got ${b.getInt(0)}" }
        // Synchronous send to the next rank, received after a probe.
        val s = w.issend(ByteBuffer.allocate(8), 2, Datatype.INT, (w.rank + 1) % n, 9)
        val p = w.probe((w.rank + n - 1) % n, 9)
        check(p.getCount(Datatype.INT) == 2) { "probe count ${p.getCount(Datatype.INT)}" }
        w.recv(ByteBuffer.allocate(8), 2, Datatype.INT, p.source, 9)
        s.waitFor()
        half.free()
    }
}
