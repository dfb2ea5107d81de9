package braid.provider.tcp

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.util.Random
import java.util.concurrent.atomic.AtomicBoolean
import org.agrona.concurrent.UnsafeBuffer

/**
 * The whole receive path of a live endpoint (decoder and protocol: sequence numbers, credit, CTS, DATA, ACK) against
 * authenticated peers that send valid, mutated and cut frame streams, deterministic seed. No exception may escape
 * progress, nothing may hang, and a well-behaved peer must still be served at the end.
 */
class TcpTransportFuzzTest :
    FunSpec({
        test("hundreds of authenticated peers sending mutated frame streams never break the endpoint") {
            TestFabric(2, Rail.TCP, eagerSize = 512, settings = TestFabric.SETTINGS.with(TcpParams.TIMEOUT_MS, 2000L))
                .use { f ->
                    val (a, b) = f.nodes
                    val random = Random(20_251_121)
                    val rxBuffers = List(4) { UnsafeBuffer(ByteArray(4096)) }
                    var posted = 0
                    fun repost() {
                        while (posted < rxBuffers.size) {
                            b.ep.tryTrecv(rxBuffers[posted], 0, 4096, FiAddr.UNSPEC, 0, Long.MAX_VALUE, "fuzz") shouldBe
                                0 // tags with the top bit clear
                            posted++
                        }
                    }
                    val c = Completion()
                    val e = CompletionError()
                    fun drain() {
                        while (true) {
                            when (b.cq.read(c)) {
                                1 -> if (c.context == "fuzz") posted--
                                -Errno.EAVAIL -> {
                                    b.cq.readErr(e)
                                    if (e.context == "fuzz") posted--
                                }
                                else -> return
                            }
                        }
                    }
                    repost()
                    var welcomed = 0
                    repeat(400) { case ->
                        RawTcpPeer().use { raw ->
                            val run = AtomicBoolean(true)
                            val driver = Thread { while (run.get()) b.domain.progress() }
                            driver.start()
                            val answer =
                                try {
                                    raw.connect(b.ep.address)
                                } finally {
                                    run.set(false)
                                    driver.join()
                                }
                            if (answer == TcpFrameDescriptor.WELCOME) welcomed++
                            val stream = java.io.ByteArrayOutputStream()
                            repeat(1 + random.nextInt(6)) {
                                val tag = random.nextLong() and Long.MAX_VALUE
                                val frame =
                                    when (random.nextInt(20)) {
                                        in 0..7 ->
                                            raw.eager(tag, ByteArray(random.nextInt(600)).also { random.nextBytes(it) })
                                        in 8..11 -> raw.rts(tag, random.nextInt(100_000).toLong())
                                        12 ->
                                            raw.frame(
                                                TcpFrameDescriptor.CTS,
                                                0,
                                                msgId = random.nextInt(4).toLong(),
                                                value = random.nextInt(5000).toLong(),
                                            )
                                        13 ->
                                            raw.frame(
                                                TcpFrameDescriptor.DATA,
                                                0,
                                                ByteArray(random.nextInt(300)),
                                                msgId = random.nextInt(4).toLong(),
                                                value = 0,
                                            )
                                        14 -> raw.frame(TcpFrameDescriptor.ACK, 0, msgId = random.nextInt(4).toLong())
                                        in 15..16 ->
                                            raw.frame(
                                                TcpFrameDescriptor.CREDIT,
                                                0,
                                                credit = random.nextInt(200_000).toLong(),
                                            )
                                        else -> raw.frame(TcpFrameDescriptor.HEARTBEAT, 0)
                                    }
                                stream.write(frame)
                            }
                            val bytes = stream.toByteArray().toMutableList()
                            if (random.nextBoolean())
                                repeat(1 + random.nextInt(3)) {
                                    val at = random.nextInt(bytes.size)
                                    when (random.nextInt(4)) {
                                        0 -> bytes[at] = (bytes[at].toInt() xor (1 shl random.nextInt(8))).toByte()
                                        1 -> bytes.add(at, random.nextInt().toByte())
                                        2 -> if (bytes.size > 1) bytes.removeAt(at)
                                        else -> while (bytes.size > at + 1) bytes.removeAt(bytes.size - 1)
                                    }
                                }
                            runCatching { raw.send(bytes.toByteArray()) } // the endpoint may have closed already
                            repeat(20) { b.domain.progress() }
                            drain()
                            repost()
                            if (case % 50 == 0) b.ep.tcp.stats.connectionCount().let { (it <= 2) shouldBe true }
                        }
                        repeat(5) { b.domain.progress() }
                        drain()
                        repost()
                    }
                    welcomed shouldBe 400
                    // A well-behaved peer is still served.
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[1][0], Long.MIN_VALUE, 0, "real") shouldBe 0
                    a.ep.tryTsend(buf("fine"), 0, 4, f.addrs[0][1], Long.MIN_VALUE, null) shouldBe 0
                    val deadline = Deadline.of("the real peer's message")
                    var got: Any? = null
                    while (got == null) {
                        a.domain.progress()
                        if (b.cq.read(c) == 1) {
                            if (c.context == "real") got = c.context else if (c.context == "fuzz") posted--
                        } else if (b.cq.readErr(e) == 1) {
                            if (e.context == "fuzz") posted--
                        }
                        deadline.check { b.ep.describe() }
                    }
                    got.shouldBeInstanceOf<String>() shouldBe "real"
                }
        }
    })
