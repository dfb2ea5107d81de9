package braid.provider.tcp

import braid.core.Completion
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.core.driveUntil
import braid.core.lateSenderContract
import braid.core.matchingContract
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * The matching rules of the shared receive context, exercised through real tcp endpoints on 127.0.0.1 (the rail
 * contracts, [matchingContract] and [lateSenderContract], and the tcp-specific cases).
 */
class TcpMatchingTest :
    FunSpec({
        matchingContract { count, eager -> TestFabric(count, Rail.TCP, eagerSize = eager) }
        lateSenderContract { Rail.TCP.info() }

        fun UnsafeBuffer.send(f: TestFabric, from: Int, to: Int, tag: Long, ctx: Any? = null) =
            f.nodes[from].ep.tryTsend(this, 0, capacity(), f.addrs[from][to], tag, ctx) shouldBe 0

        test("messages from one sender match in the order sent, across unexpected and posted receives") {
            TestFabric(rail = Rail.TCP).use { f ->
                val (a, b) = f.nodes
                val n = 500
                for (i in 0 until n) {
                    val out =
                        UnsafeBuffer(ByteArray(4)).also {
                            it.putInt(0, i)
                        } // a send's buffer is the sender's until it completes
                    val accepted = Deadline.of("send $i to be accepted")
                    while (
                        a.ep.tryTsend(out, 0, 4, f.addrs[0][1], 42, null).also {
                            if (it == -Errno.EAGAIN) a.domain.progress()
                        } == -Errno.EAGAIN
                    ) accepted.check()
                    if (i == n / 2) { // the first half arrive unexpected
                        driveUntil(
                            "the first half to arrive unexpected",
                            listOf(a, b),
                            seen = { "${b.ep.srx.unexpectedCount} arrived" },
                        ) {
                            b.ep.srx.unexpectedCount > n / 2
                        }
                    }
                }
                val seen = ArrayList<Int>()
                val rx = UnsafeBuffer(ByteArray(4))
                repeat(n) {
                    b.ep.tryTrecv(rx, 0, 4, FiAddr.UNSPEC, 0, -1L, null) shouldBe 0
                    b.await(1, others = listOf(a))
                    seen += rx.getInt(0)
                }
                seen shouldBe (0 until n).toList()
            }
        }

        test("the rail's stats count each message once, whether its receive was posted before it or after") {
            TestFabric(rail = Rail.TCP, eagerSize = 1024).use { f ->
                val (a, b) = f.nodes
                a.ep.tryTsend(buf("early"), 0, 5, f.addrs[0][1], 1, "unexpected eager") shouldBe 0
                a.ep.tryTsend(
                    UnsafeBuffer(ByteArray(4000)),
                    0,
                    4000,
                    f.addrs[0][1],
                    2,
                    "unexpected rendezvous",
                ) shouldBe 0
                driveUntil(
                    "both messages to arrive unexpected",
                    listOf(a, b),
                    seen = { "${b.ep.srx.unexpectedCount} arrived" },
                ) {
                    b.ep.srx.unexpectedCount >= 2
                }
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "rx1") shouldBe 0
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(4000)), 0, 4000, FiAddr.UNSPEC, 2, 0, "rx2") shouldBe 0
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 3, 0, "rx3") shouldBe 0
                a.ep.tryTsend(buf("late"), 0, 4, f.addrs[0][1], 3, "expected eager") shouldBe 0
                b.await(3, others = listOf(a))
                b.ep.stats().rails.single().let {
                    it.messagesReceived shouldBe 3
                    it.bytesReceived shouldBe 4009
                }
            }
        }

        test(
            "past the credit window the sender is pushed back (EAGAIN on inject), holds stay within the window, and nothing is dropped"
        ) {
            TestFabric(rail = Rail.TCP, unexpectedLimit = 8, bufferSize = 4096, eagerSize = 64).use { f ->
                val (a, b) = f.nodes
                val window = b.ep.tcp.window
                val n = 2000
                val out = UnsafeBuffer(ByteArray(32))
                var sent = 0
                var refusals = 0
                while (sent < n && refusals < 1000) {
                    out.putInt(0, sent)
                    val rc = a.ep.tryTinject(out, 0, 32, f.addrs[0][1], 1)
                    if (rc == 0) {
                        sent++
                        refusals = 0
                    } else {
                        rc shouldBe -Errno.EAGAIN
                        refusals++
                        b.domain.progress()
                        a.domain.progress()
                    }
                }
                (sent < n) shouldBe true // the window filled with held messages: pushed back
                (b.ep.srx.unexpectedCount * TcpFrameDescriptor.frameCost(32) <= window) shouldBe true
                (b.ep.tcp.heldBytesMax <= window) shouldBe true
                val rx = UnsafeBuffer(ByteArray(32))
                for (i in 0 until n) {
                    if (sent < n) {
                        out.putInt(0, sent)
                        if (a.ep.tryTinject(out, 0, 32, f.addrs[0][1], 1) == 0) sent++
                    }
                    b.ep.tryTrecv(rx, 0, 32, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                    b.await(1, others = listOf(a))
                    rx.getInt(0) shouldBe i
                }
                sent shouldBe n
                (b.ep.srx.stats().unexpectedMax * TcpFrameDescriptor.frameCost(32) <= window) shouldBe true
            }
        }

        test(
            "a matched rendezvous message completes while its sender's unexpected messages wait for credit behind it, and the message bound holds"
        ) {
            TestFabric(rail = Rail.TCP, unexpectedLimit = 1, bufferSize = 4096, eagerSize = 1024).use { f ->
                val (a, b) = f.nodes
                val big = UnsafeBuffer(ByteArray(100_000) { it.toByte() })
                val rx = UnsafeBuffer(ByteArray(100_000))
                b.ep.tryTrecv(rx, 0, rx.capacity(), FiAddr.UNSPEC, 1, 0, "big") shouldBe 0
                big.send(f, 0, 1, 1, "big-send")
                // Unexpected messages until the sender has no credit left: they queue behind the big one's DATA.
                val small = UnsafeBuffer(ByteArray(1000))
                var t = 2L
                while (true) {
                    val rc = a.ep.tryTsend(small, 0, 1000, f.addrs[0][1], t, null)
                    if (rc != 0) break
                    if (++t > 2000) break
                    a.domain.progress()
                    b.domain.progress()
                }
                val got = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
                got.context shouldBe "big"
                (0 until 100_000 step 997).forEach { rx.getByte(it) shouldBe it.toByte() }
                // Before credit came from the endpoint's bounds, the sender's window let it pass the limit of 1.
                (b.ep.srx.stats().unexpectedMax <= 1) shouldBe true
            }
        }
    })
