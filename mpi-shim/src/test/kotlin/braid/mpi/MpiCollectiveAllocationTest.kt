package braid.mpi

import braid.mpi.testing.runRanks
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Once warm, braid.mpi's blocking collectives on a contiguous built-in type with a built-in op allocate nothing per
 * call: barrier, bcast (root moving round the ranks), allreduce (and in place), reduce and reduce_scatter_block, two
 * ranks each on its own shm endpoint and thread, counted with the JVM's per-thread allocation counter
 * ([SteadyAllocation]: bytes, not time). Every round checks its results, so a round that moved nothing fails.
 */
class MpiCollectiveAllocationTest :
    FunSpec({
        for (level in listOf(ThreadLevel.SINGLE, ThreadLevel.MULTIPLE)) test(
            "warm blocking barrier, bcast, allreduce, reduce and reduce_scatter_block of contiguous built-in types allocate nothing per call ($level)"
        ) {
            runRanks(2, seconds = 100, level = level) { mpi ->
                val w = mpi.world
                val p = w.size
                val me = w.rank
                fun direct(bytes: Int) = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
                val bc = direct(64)
                val send = direct(64)
                val recv = direct(64)
                val inPlace = direct(64)
                val rsbIn = direct(8 * p)
                val rsbOut = direct(8)
                val calls = 7
                val ranks = p * (p + 1L) / 2 // the sum of (rank + 1)

                /**
                 * One round of every collective; checks each result (allocation-free: `check`'s message is built only
                 * on failure).
                 */
                fun round(i: Int) {
                    w.barrier()
                    val root = i % p
                    if (me == root) for (k in 0 until 16) bc.putInt(k * 4, i + k)
                    w.bcast(bc, 16, Datatype.INT, root)
                    check(bc.getInt(0) == i && bc.getInt(60) == i + 15) { "round $i: bcast carried ${bc.getInt(0)}" }
                    for (k in 0 until 8) send.putLong(k * 8, (me + 1L) * (i + k))
                    w.allreduce(send, recv, 8, Datatype.LONG, Op.SUM)
                    check(recv.getLong(0) == ranks * i && recv.getLong(56) == ranks * (i + 7)) {
                        "round $i: allreduce gave ${recv.getLong(0)}"
                    }
                    inPlace.putInt(0, me + i)
                    w.allreduce(Mpi.IN_PLACE, inPlace, 1, Datatype.INT, Op.MAX)
                    check(inPlace.getInt(0) == p - 1 + i) {
                        "round $i: allreduce MAX in place gave ${inPlace.getInt(0)}"
                    }
                    w.reduce(send, if (me == root) recv else null, 8, Datatype.LONG, Op.SUM, root)
                    check(me != root || recv.getLong(8) == ranks * (i + 1)) {
                        "round $i: reduce gave ${recv.getLong(8)}"
                    }
                    for (k in 0 until p) rsbIn.putLong(k * 8, (k + 1L) * (me + i))
                    w.reduceScatterBlock(rsbIn, rsbOut, 1, Datatype.LONG, Op.SUM)
                    check(rsbOut.getLong(0) == (me + 1L) * (p * (p - 1L) / 2 + p.toLong() * i)) {
                        "round $i: reduce_scatter_block gave ${rsbOut.getLong(0)}"
                    }
                }

                val n = 500
                for (i in 0 until 2 * n) round(i)
                // Every rank runs the same number of windows (they are collectives): the least of three.
                var least = Long.MAX_VALUE
                for (window in 1..3) {
                    val base = (window + 1) * n
                    least = minOf(least, SteadyAllocation.of { for (i in 0 until n) round(base + i) })
                }
                withClue("rank $me: at least $least bytes allocated over $n rounds of $calls collectives") {
                    (least / (n.toLong() * calls)) shouldBeLessThan 1L
                }
            }
        }
    })
