package braid.mpi.bench

import braid.bench.LocalEndpoints
import braid.bootstrap.FileBootstrap
import braid.collectives.CollectiveGroup
import braid.collectives.Collectives
import braid.collectives.JoinOptions
import braid.collectives.ReduceOp
import braid.collectives.offload.ShmOffload
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Files
import java.util.concurrent.CyclicBarrier
import kotlin.concurrent.thread
import org.agrona.concurrent.UnsafeBuffer

/**
 * Where a one-host braid.mpi allreduce spends its time beside a `braid.collectives` user's, on two ranks (threads of
 * this process) and one 8-byte double, in `bench/coll-offload.sh`'s loop shape (back-to-back calls, each timed from the
 * end of the one before; the slower rank's median and mean) and in OSU's (`braid bench allreduce --layer mpi`: a
 * barrier after each call, the call alone timed). Rows, each through the intra-node offload:
 * - `collectives`: a group joined on endpoints of their own with [ShmOffload.DEFAULT], waited for on the domain's
 *   progress (what `braid.collectives` users get);
 * - `mpi group`: the communicator's own group called directly, so its wait drives braid.mpi's progress (the MPI
 *   progress rule) but nothing of the MPI call runs;
 * - `mpi allreduce`: `world.allreduce` (argument checks, datatype and op dispatch, then the same group call);
 * - `mpi allreduce osu`: the same call in OSU's shape.
 *
 * After the README's build: `java -cp samples/target/braid.jar braid.mpi.bench.MpiAllreduceOffload [ITERS] [ROUNDS]`;
 * prints `allreduce ROW p50_us mean_us` per row, the best of ROUNDS rounds. Two cores shared by two spinning ranks
 * measure the machine's scheduling as much as the path: use a quiet machine.
 */
public object MpiAllreduceOffload {
    @JvmStatic
    public fun main(args: Array<String>) {
        val iters = args.getOrNull(0)?.toInt() ?: 10_000
        val rounds = args.getOrNull(1)?.toInt() ?: 3
        val dir = Files.createTempDirectory("braid-mpi-allreduce").toFile()
        val local = LocalEndpoints(2, LocalEndpoints.info("shm"))
        val sync = CyclicBarrier(2)
        val rows = listOf("collectives", "mpi group", "mpi allreduce", "mpi allreduce osu")
        // Per row: each rank's best p50 and mean (ns) over the rounds.
        val p50 = Array(rows.size) { LongArray(2) { Long.MAX_VALUE } }
        val mean = Array(rows.size) { LongArray(2) { Long.MAX_VALUE } }
        val failures = ArrayList<Throwable>()
        try {
            List(2) { r ->
                    thread(name = "rank-$r") {
                        try {
                            val mpi = Mpi.init(FileBootstrap(dir, r, 2), options = MpiOptions().provider("shm"))
                            val node = local.nodes[r]
                            val set = node.av.avSet(local.addr(r, 0), local.addr(r, 1))
                            val off = JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT)
                            val coll = Collectives.join(node.ep, set, 60_000, off)
                            check(coll.offload != null) { "the collectives group has no offload" }
                            val world = mpi.world
                            val mpiGroup = world.coll.group
                            check(mpiGroup.offload != null) { "braid.mpi's world group has no offload" }
                            val send = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder())
                            val recv = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder())
                            val s = UnsafeBuffer(send)
                            val d = UnsafeBuffer(recv)
                            val lat = LongArray(iters)
                            fun call(row: Int, g: CollectiveGroup?) {
                                when (row) {
                                    0,
                                    1 -> g!!.allreduce(s, 0, d, 0, 1, braid.collectives.Datatype.DOUBLE, ReduceOp.SUM)
                                    else -> world.allreduce(send, recv, 1, Datatype.DOUBLE, Op.SUM)
                                }
                            }
                            repeat(rounds + 1) { round ->
                                for (row in rows.indices) {
                                    val g = if (row == 0) coll else mpiGroup
                                    sync.await()
                                    if (row == 3) {
                                        for (i in 0 until iters) {
                                            val t0 = System.nanoTime()
                                            call(row, g)
                                            lat[i] = System.nanoTime() - t0
                                            world.barrier()
                                        }
                                    } else {
                                        if (row == 0) coll.barrier() else world.barrier()
                                        var last = System.nanoTime()
                                        for (i in 0 until iters) {
                                            call(row, g)
                                            val now = System.nanoTime()
                                            lat[i] = now - last
                                            last = now
                                        }
                                    }
                                    if (round > 0) {
                                        val m = lat.sum() / iters
                                        lat.sort()
                                        synchronized(p50) {
                                            p50[row][r] = minOf(p50[row][r], lat[iters / 2])
                                            mean[row][r] = minOf(mean[row][r], m)
                                        }
                                    }
                                }
                            }
                            sync.await()
                            mpi.close()
                        } catch (t: Throwable) {
                            synchronized(failures) { failures += t }
                            sync.reset()
                        }
                    }
                }
                .forEach { it.join() }
        } finally {
            local.close()
            dir.deleteRecursively()
        }
        failures.firstOrNull()?.let { throw it }
        for ((i, row) in rows.withIndex()) {
            println(
                "allreduce %-18s p50 %6.2f us  mean %6.2f us".format(row, p50[i].max() / 1000.0, mean[i].max() / 1000.0)
            )
        }
    }
}
