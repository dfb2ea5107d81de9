package braid.core

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import org.agrona.concurrent.UnsafeBuffer
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer

/**
 * Once warm, the shm hot path allocates nothing per message: a ping-pong of eager and
 * rendezvous messages between two endpoints, counted with the JVM's per-thread allocation
 * counter (bytes, not time).
 */
class HotPathAllocationTest : FunSpec({
    val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

    test("a warm ping-pong allocates nothing per message, eager or rendezvous") {
        TestFabric(eagerSize = 1024).use { f ->
            val (a, b) = f.nodes
            val toB = f.addrs[0][1]
            val toA = f.addrs[1][0]
            for (size in listOf(64, 64 * 1024)) {
                val out = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                val inA = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                val inB = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                val c = Completion()
                val ctx = Any()
                fun drain(n: TestFabric.Node, count: Int) {
                    var got = 0
                    while (got < count) {
                        val rc = n.cq.read(c)
                        if (rc == 1) got++ else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
                        a.domain.progress(); b.domain.progress()
                    }
                }
                fun round() {
                    check(b.ep.tryTrecv(inB, 0, size, toA, 1, 0, ctx) == 0)
                    check(a.ep.tryTrecv(inA, 0, size, toB, 2, 0, ctx) == 0)
                    check(a.ep.tryTsend(out, 0, size, toB, 1, ctx) == 0)
                    drain(b, 1)
                    check(b.ep.tryTsend(out, 0, size, toA, 2, ctx) == 0)
                    drain(a, 2)
                    drain(b, 1)
                }
                repeat(20_000) { round() }
                val tid = Thread.currentThread().id
                val before = threads.getThreadAllocatedBytes(tid)
                val rounds = 20_000
                repeat(rounds) { round() }
                val allocated = threads.getThreadAllocatedBytes(tid) - before
                // Liveness checks allocate a little now and then; per message it must round to zero.
                withClue("$size-byte messages: $allocated bytes allocated over ${rounds * 2} messages") { (allocated / (rounds * 2)) shouldBeLessThan 1L }
            }
        }
    }
})
