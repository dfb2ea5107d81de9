package braid.provider.tcp

import braid.core.Completion
import braid.core.Errno
import braid.core.TestFabric
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import org.agrona.concurrent.UnsafeBuffer
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer

/**
 * Once warm, the tcp hot path allocates nothing per message: a ping-pong of eager and
 * rendezvous messages between two endpoints over 127.0.0.1, counted with the JVM's per-thread
 * allocation counter (bytes, not time). The keepalive threads allocate on their own threads.
 */
class TcpHotPathAllocationTest : FunSpec({
    val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

    test("a warm tcp ping-pong allocates nothing per message, eager or rendezvous") {
        TcpTestFabric(eagerSize = 1024).use { f ->
            val (a, b) = f.nodes
            val toB = f.addrs[0][1]
            val toA = f.addrs[1][0]
            for (size in listOf(64, 256 * 1024)) {
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
                val rounds = if (size > 1024) 2_000 else 20_000
                repeat(rounds) { round() }
                val tid = Thread.currentThread().id
                val before = threads.getThreadAllocatedBytes(tid)
                repeat(rounds) { round() }
                val allocated = threads.getThreadAllocatedBytes(tid) - before
                withClue("$size-byte messages: $allocated bytes allocated over ${rounds * 2} messages") { (allocated / (rounds * 2)) shouldBeLessThan 1L }
            }
        }
    }
})
