package braid.core

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * The matching rules of the shared receive context through real shm endpoints: the rail contracts ([matchingContract],
 * [lateSenderContract]) and the shm-specific cases.
 */
class MatchingTest :
    FunSpec({
        matchingContract { count, eager -> TestFabric(count, eagerSize = eager) }
        lateSenderContract { Braid.getInfo(Hints(provider = "shm")).first() }

        fun UnsafeBuffer.send(f: TestFabric, from: Int, to: Int, tag: Long, ctx: Any? = null) =
            f.nodes[from].ep.tryTsend(this, 0, capacity(), f.addrs[from][to], tag, ctx) shouldBe 0

        test("a batch of receives is posted in order, as that many receives are, and stops at the first refused") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rx = List(4) { UnsafeBuffer(ByteArray(4)) }
                val batch = TrecvBatch(2) // grows past its first capacity
                batch.add(rx[0], 0, 4, FiAddr.UNSPEC, 7, 0, "first 7")
                batch.add(rx[1], 0, 4, FiAddr.UNSPEC, 8, 0, "the 8")
                batch.add(java.nio.ByteBuffer.wrap(ByteArray(4)), FiAddr.UNSPEC, 7, 0, "second 7")
                b.ep.tryTrecv(batch) shouldBe 0
                batch.posted shouldBe 3
                batch.clear()
                batch.size shouldBe 0
                // A read-only buffer is refused: the receives before it are posted, those after it are not tried.
                batch.add(rx[2], 0, 4, FiAddr.UNSPEC, 9, 0, "the 9")
                batch.add(java.nio.ByteBuffer.allocate(4).asReadOnlyBuffer(), FiAddr.UNSPEC, 9, 0, "read-only")
                batch.add(rx[3], 0, 4, FiAddr.UNSPEC, 9, 0, "never posted")
                b.ep.tryTrecv(batch) shouldBe -Errno.EINVAL
                batch.posted shouldBe 1
                bytes(1, 1, 1, 1).send(f, 0, 1, 8)
                bytes(2, 2, 2, 2).send(f, 0, 1, 7)
                bytes(3, 3, 3, 3).send(f, 0, 1, 7)
                bytes(4, 4, 4, 4).send(f, 0, 1, 9)
                val got = b.await(4, others = listOf(a)).map { (it as Completion).context }
                // Receives of one tag take its messages in the order they were posted.
                got shouldBe listOf("the 8", "first 7", "second 7", "the 9")
                rx[0].getByte(0) shouldBe 2.toByte()
                rx[1].getByte(0) shouldBe 1.toByte()
                rx[2].getByte(0) shouldBe 4.toByte()
                rx[3].getByte(0) shouldBe 0.toByte()
            }
        }

        test("an inject larger than one ring record is refused with EMSGSIZE, never -EAGAIN for ever") {
            TestFabric(ringCapacity = 1024).use { f ->
                f.nodes[0].ep.tryTinject(UnsafeBuffer(ByteArray(100)), 0, 100, f.addrs[0][1], 11) shouldBe
                    -Errno.EMSGSIZE
            }
        }

        test("messages from one sender match in the order sent, across unexpected and posted receives") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val n = 500
                val out = UnsafeBuffer(ByteArray(4))
                for (i in 0 until n) {
                    out.putInt(0, i)
                    // inject: the one buffer is reusable as soon as the call returns
                    val deadline = Deadline.of("inject $i to be accepted")
                    while (
                        a.ep.tryTinject(out, 0, 4, f.addrs[0][1], 42).also {
                            if (it == -Errno.EAGAIN) a.domain.progress()
                        } == -Errno.EAGAIN
                    ) deadline.check()
                    if (i == n / 2) repeat(50) { b.domain.progress() } // half arrive unexpected
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

        test("past the unexpected bound the sender is pushed back and nothing is dropped") {
            TestFabric(unexpectedLimit = 8, ringCapacity = 4096, eagerSize = 64).use { f ->
                val (a, b) = f.nodes
                val n = 300
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
                (sent < n) shouldBe true // the ring filled behind the 8 held messages: pushed back
                b.ep.srx.unexpectedCount shouldBe 8
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
                b.ep.srx.stats().unexpectedMax shouldBe 8
            }
        }

        test("a matched rendezvous message completes even while its sender is pushed back behind it") {
            TestFabric(unexpectedLimit = 1, ringCapacity = 4096, eagerSize = 64).use { f ->
                val (a, b) = f.nodes
                val big = UnsafeBuffer(ByteArray(100_000) { it.toByte() })
                val rx = UnsafeBuffer(ByteArray(100_000))
                b.ep.tryTrecv(rx, 0, rx.capacity(), FiAddr.UNSPEC, 1, 0, "big") shouldBe 0
                big.send(f, 0, 1, 1, "big-send")
                for (t in 2L..6L) buf("small").send(f, 0, 1, t) // unexpected: one is held, the rest wait in the ring
                val got = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
                got.context shouldBe "big"
                (0 until 100_000 step 997).forEach { rx.getByte(it) shouldBe it.toByte() }
                b.ep.srx.unexpectedCount shouldBe 1
            }
        }

        test("an endpoint can send to itself, eager and rendezvous") {
            TestFabric(1, eagerSize = 256).use { f ->
                val me = f.nodes[0]
                val self = f.addrs[0][0]
                for (size in listOf(10, 10_000)) {
                    val rx = UnsafeBuffer(ByteArray(size))
                    me.ep.tryTrecv(rx, 0, size, self, 3, 0, "rx$size") shouldBe 0
                    me.ep.tryTsend(UnsafeBuffer(ByteArray(size) { 7 }), 0, size, self, 3, "tx$size") shouldBe 0
                    me.await(2).map { it.shouldBeInstanceOf<Completion>().context }.toSet() shouldBe
                        setOf("rx$size", "tx$size")
                    rx.getByte(size - 1) shouldBe 7.toByte()
                }
            }
        }
    })
