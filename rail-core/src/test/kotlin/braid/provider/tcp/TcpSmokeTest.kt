package braid.provider.tcp

import braid.core.Completion
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.MrAccess
import braid.core.ProgressEngine
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.core.direct
import braid.core.driveUntil
import braid.core.text
import braid.core.trecv
import braid.core.tsend
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.agrona.concurrent.UnsafeBuffer

/** The tcp rail end to end in its simplest uses: raw operations, and the suspend forms under both progress models. */
class TcpSmokeTest :
    FunSpec({
        test("an eager and a rendezvous message cross between two tcp endpoints, with the sender as source") {
            TestFabric(rail = Rail.TCP).use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 7, 0, "rx") shouldBe 0
                a.ep.tryTsend(buf("hello"), 0, 5, f.addrs[0][1], 7, "tx") shouldBe 0
                val got = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
                got.len shouldBe 5
                got.source shouldBe f.addrs[1][0]
                rx.text(5) shouldBe "hello"
                a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>().context shouldBe "tx"
                val size = 3 shl 20
                val big =
                    UnsafeBuffer(ByteBuffer.allocateDirect(size)).also {
                        for (i in 0 until size step 4) it.putInt(i, i)
                    }
                val bigRx = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                b.ep.tryTrecv(bigRx, 0, size, FiAddr.UNSPEC, 8, 0, "big") shouldBe 0
                a.ep.tryTsend(big, 0, size, f.addrs[0][1], 8, "big-tx") shouldBe 0
                b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().len shouldBe size.toLong()
                for (i in 0 until size step 4) if (bigRx.getInt(i) != i) error("byte $i differs")
                a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>().context shouldBe "big-tx"
            }
        }

        test("a send is on the socket when the call returns, without a progress call on the sender") {
            TestFabric(rail = Rail.TCP).use { f ->
                val (a, b) = f.nodes
                // Connect and authenticate first: until then frames wait in the peer's buffer.
                a.ep.tryTsend(buf("hi"), 0, 2, f.addrs[0][1], 0, null) shouldBe 0
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 0, 0, null) shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                val sizes = listOf(0, 64, 1000, 100_000) // inject-sized, eager, and the RTS of a rendezvous
                for ((i, size) in sizes.withIndex()) {
                    // Under the domain lock: the keepalive thread cannot flush for the sender meanwhile.
                    synchronized(a.domain.lock) {
                        a.ep.tryTsend(UnsafeBuffer(ByteArray(size)), 0, size, f.addrs[0][1], 10L + i, null) shouldBe 0
                        withClue("a $size-byte send left unwritten") { a.ep.tcp.stats.unflushedBytes() shouldBe 0L }
                    }
                }
                for ((i, size) in sizes.withIndex()) b.ep.tryTrecv(
                    UnsafeBuffer(ByteArray(size)),
                    0,
                    size,
                    FiAddr.UNSPEC,
                    10L + i,
                    0,
                    null,
                ) shouldBe 0
                b.await(sizes.size, others = listOf(a)).map { (it as Completion).len } shouldBe
                    sizes.map { it.toLong() }
                a.await(sizes.size, others = listOf(b)) // the sends
                // RMA requests too.
                val mr = b.domain.registerMemory(direct(64), MrAccess.REMOTE, 0)
                synchronized(a.domain.lock) {
                    a.ep.tryWrite(buf("12345678"), 0, 8, f.addrs[0][1], 0, mr.key, "w") shouldBe 0
                    withClue("an RMA write left unwritten") { a.ep.tcp.stats.unflushedBytes() shouldBe 0L }
                }
                a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>().context shouldBe "w"
                mr.buffer.text(8) shouldBe "12345678"
            }
        }

        test(
            "a rendezvous payload goes straight from the socket into a direct receive buffer, all but a small prefetch of each frame"
        ) {
            TestFabric(rail = Rail.TCP).use { f ->
                val (a, b) = f.nodes
                val size = 3 shl 20
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                b.ep.tryTrecv(rx, 0, size, FiAddr.UNSPEC, 1, 0, "rx") shouldBe 0
                a.ep.tryTsend(UnsafeBuffer(ByteBuffer.allocateDirect(size)), 0, size, f.addrs[0][1], 1, "tx") shouldBe 0
                driveUntil("the RTS to match the receive", listOf(a, b)) { b.ep.srx.postedCount == 0 }
                // The sender alone streams what the sockets take, so the receiver finds far more than a header waiting.
                repeat(50) {
                    a.domain.progress()
                    Thread.sleep(1)
                }
                b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().len shouldBe size.toLong()
                val frames = size / (1 shl 20)
                withClue("${b.ep.tcp.stats.bytesReadDirect} of $size bytes read straight into the buffer") {
                    (b.ep.tcp.stats.bytesReadDirect >= size - frames * 8192L) shouldBe true
                }
            }
        }

        test("the tcp rail counts each message once, expected or not, eager or rendezvous") {
            TestFabric(rail = Rail.TCP, eagerSize = 256).use { f ->
                val (a, b) = f.nodes
                // Unexpected first (held, then matched), then expected; eager and rendezvous each way.
                for ((i, size) in listOf(100, 5000).withIndex()) a.ep.tryTsend(
                    UnsafeBuffer(ByteArray(size)),
                    0,
                    size,
                    f.addrs[0][1],
                    i.toLong(),
                    null,
                ) shouldBe 0
                a.await(1, others = listOf(b)) // the eager one completed: both heads have gone out
                repeat(100) {
                    a.domain.progress()
                    b.domain.progress()
                }
                b.ep.srx.unexpectedCount shouldBe 2
                for (round in 0..1) {
                    for (i in 0..1) b.ep.tryTrecv(
                        UnsafeBuffer(ByteArray(5000)),
                        0,
                        5000,
                        FiAddr.UNSPEC,
                        i.toLong(),
                        0,
                        null,
                    ) shouldBe 0
                    if (round == 1)
                        for ((i, size) in listOf(100, 5000).withIndex()) a.ep.tryTsend(
                            UnsafeBuffer(ByteArray(size)),
                            0,
                            size,
                            f.addrs[0][1],
                            i.toLong(),
                            null,
                        ) shouldBe 0
                    b.await(2, others = listOf(a))
                }
                a.await(3, others = listOf(b))
                val sent = a.ep.stats().rail("tcp")!!
                val got = b.ep.stats().rail("tcp")!!
                listOf(sent.messagesSent, sent.bytesSent) shouldBe listOf(4L, 10_200L)
                listOf(got.messagesReceived, got.bytesReceived) shouldBe listOf(4L, 10_200L)
            }
        }

        test(
            "the suspend forms work over tcp under manual progress and with progress engines, and a dead peer is thrown as FabricException"
        ) {
            TestFabric(rail = Rail.TCP, eagerSize = 256).use { f ->
                val (a, b) = f.nodes
                suspend fun exchange(tag: Long) = coroutineScope {
                    val rx = UnsafeBuffer(ByteArray(10_000))
                    val got = async { b.ep.trecv(rx, 0, 10_000, FiAddr.UNSPEC, tag) }
                    a.ep.tsend(UnsafeBuffer(ByteArray(5000) { 3 }), 0, 5000, f.addrs[0][1], tag).len shouldBe 5000
                    val c = got.await()
                    c.len shouldBe 5000
                    c.source shouldBe f.addrs[1][0]
                    rx.getByte(4999) shouldBe 3
                }
                runBlocking {
                    withTimeout(30_000) {
                        exchange(1)
                        ProgressEngine.thread(a.domain).use { ProgressEngine.thread(b.domain).use { exchange(2) } }
                        b.ep.close()
                        // In flight when the close is seen (ECONNRESET, the cause) or refused if it was seen first
                        // (EHOSTDOWN)...
                        val e =
                            shouldThrow<FabricException> {
                                a.ep.tsend(UnsafeBuffer(ByteArray(5000)), 0, 5000, f.addrs[0][1], 3)
                            }
                        if (e.code == Errno.ECONNRESET) e.message!! shouldContain "closed its endpoint"
                        else e.code shouldBe Errno.EHOSTDOWN
                        // ...and from then on refused: the peer is down.
                        shouldThrow<FabricException> { a.ep.tsend(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 4) }
                            .code shouldBe Errno.EHOSTDOWN
                    }
                }
            }
        }
    })
