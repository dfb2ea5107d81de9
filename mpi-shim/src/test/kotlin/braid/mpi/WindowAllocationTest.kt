package braid.mpi

import braid.mpi.testing.runRanks
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Once warm, a window's plain put and get allocate nothing per operation: rank 0 holds a shared lock on rank 1's window
 * and runs put + flush and get + flush loops (8 B and 64 KiB, contiguous built-in types), counted with the JVM's
 * per-thread allocation counter on rank 0's thread (bytes, not time), while rank 1 waits in a barrier. Every round puts
 * a new value and the get loop reads it back, so a loop that moved nothing fails.
 */
/** One round of a loop; an `Int` parameter that is not boxed (as a Kotlin `(Int) -> Unit` would be). */
private fun interface WindowRound {
    fun run(i: Int)
}

class WindowAllocationTest :
    FunSpec({
        /** Runs [round] [n] times to warm up, then asserts < 1 byte per round in the least of 3 counted windows. */
        fun allocatesNothing(what: String, n: Int, round: WindowRound) {
            for (i in 0 until n) round.run(i)
            var least = Long.MAX_VALUE
            for (w in 1..3) {
                val base = w * n
                least = minOf(least, SteadyAllocation.of { for (i in 0 until n) round.run(base + i) })
            }
            withClue("$what: $least bytes allocated over $n rounds (the least of 3 windows)") {
                (least / n) shouldBeLessThan 1L
            }
        }

        for (level in listOf(ThreadLevel.MULTIPLE, ThreadLevel.SINGLE)) test(
            "warm put + flush and get + flush loops in a lock epoch allocate nothing per operation ($level)"
        ) {
            runRanks(2, seconds = 300, level = level) { mpi ->
                val w = mpi.world
                val size = 65_536
                val win = Window.allocate(size.toLong(), 1, w)
                if (w.rank == 0) {
                    val out = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder())
                    val inb = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder())
                    win.lock(Window.LOCK_SHARED, 1, 0)
                    for (bytes in listOf(8, size)) {
                        val n = if (bytes == 8) 20_000 else 2_000
                        allocatesNothing("put + flush of $bytes B", n) { i ->
                            out.putLong(0, i.toLong())
                            win.put(out, bytes, Datatype.BYTE, 1, 0, bytes, Datatype.BYTE)
                            win.flush(1)
                        }
                        allocatesNothing("get + flush of $bytes B", n) { i ->
                            inb.putLong(0, -1)
                            win.get(inb, bytes, Datatype.BYTE, 1, 0, bytes, Datatype.BYTE)
                            win.flush(1)
                            check(inb.getLong(0) == 4L * n - 1) { "round $i got ${inb.getLong(0)}" }
                        }
                    }
                    win.unlock(1)
                }
                w.barrier()
                if (w.rank == 1) win.base!!.getLong(0) shouldBe 4L * 2_000 - 1
                win.free()
            }
        }
    })
