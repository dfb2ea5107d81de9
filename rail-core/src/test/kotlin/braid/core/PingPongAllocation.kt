package braid.core

import braid.testsupport.Deadline
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.matchers.longs.shouldBeLessThan
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The check both rails' allocation specs share: a warm tagged ping-pong between the first two nodes of [f], [rounds]
 * round trips per size after as many to warm up, must allocate less than one byte per message on this thread in the
 * steady state ([SteadyAllocation]: bytes, not time).
 */
fun pingPongAllocatesNothing(f: TestFabric, sizes: List<Int>, rounds: (size: Int) -> Int) {
    val (a, b) = f.nodes
    val toB = f.addrs[0][1]
    val toA = f.addrs[1][0]
    for (size in sizes) {
        val out = UnsafeBuffer(ByteBuffer.allocateDirect(size))
        val inA = UnsafeBuffer(ByteBuffer.allocateDirect(size))
        val inB = UnsafeBuffer(ByteBuffer.allocateDirect(size))
        val c = Completion()
        val ctx = Any()
        val deadline = Deadline.of("a ping-pong round's completions")
        fun drain(n: TestFabric.Node, count: Int) {
            var got = 0
            deadline.restart()
            while (got < count) {
                val rc = n.cq.read(c)
                if (rc == 1) got++ else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
                a.domain.progress()
                b.domain.progress()
                deadline.check()
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
        val n = rounds(size)
        repeat(n) { round() }
        val allocated = SteadyAllocation.least(3, n * 2L - 1) { repeat(n) { round() } }
        // Liveness checks allocate a little now and then; per message it must round to zero.
        withClue("$size-byte messages: $allocated bytes allocated over ${n * 2} messages") {
            (allocated / (n * 2)) shouldBeLessThan 1L
        }
    }
}
