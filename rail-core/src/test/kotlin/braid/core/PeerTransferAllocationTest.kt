package braid.core

import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The `try…` forms of [PeerTransfer] allocate nothing once warm (bytes counted with the JVM's per-thread allocation
 * counter around the calls): the outcome objects handed to the peer's callbacks are theirs to keep, and are not
 * counted.
 */
class PeerTransferAllocationTest :
    FunSpec({
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

        test("peer transfer: warm trySend and tryRecv allocate nothing") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                var done = 0
                val ops =
                    object : PeerTransferOps {
                        override fun complete(entry: Completion, source: Long) {
                            done++
                        }

                        override fun compErr(error: CompletionError) = error("peer transfer failed: ${error.message}")
                    }
                val ta = a.ep.peerTransfer(ops)
                val tb = b.ep.peerTransfer(ops)
                // Past the eager size, so neither call completes inside itself.
                val tx = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
                val dest = f.addrs[0][1]
                val context = "op"
                val tid = Thread.currentThread().id
                fun round(): Long {
                    val before = threads.getThreadAllocatedBytes(tid)
                    check(tb.tryRecv(rx, 0, 4096, FiAddr.UNSPEC, 5, 0, context) == 0)
                    check(ta.trySend(tx, 0, 4096, dest, 5, context) == 0)
                    val bytes = threads.getThreadAllocatedBytes(tid) - before
                    val target = done + 2
                    driveUntil("the peer transfer to complete", listOf(a, b)) { done >= target }
                    return bytes
                }
                repeat(20_000) { round() }
                val rounds = 20_000
                val total =
                    SteadyAllocation.leastCounted(3, rounds - 1L) {
                        var bytes = 0L
                        repeat(rounds) { bytes += round() }
                        bytes
                    }
                withClue("${total / rounds} bytes per trySend + tryRecv") { (total / rounds) shouldBeLessThan 1L }
            }
        }
    })
