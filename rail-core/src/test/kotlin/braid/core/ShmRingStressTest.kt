package braid.core

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.concurrent.thread
import org.agrona.concurrent.UnsafeBuffer

/**
 * The ring path under pressure: a 1 KiB ring (so every few messages fill it, and messages over 80 bytes go by
 * rendezvous in 112-byte fragments), three sender threads, and a receiver whose endpoint is posted to and progressed
 * from two threads at once. Messages up to 64 bytes are injected; larger ones are sent (eager up to 80 bytes,
 * rendezvous beyond).
 */
class ShmRingStressTest :
    FunSpec({
        test("with a tiny ring and several threads every message arrives exactly once and in order per sender") {
            val senders = 3
            val perSender = 5_000
            TestFabric(count = senders + 1, ringCapacity = 1024, eagerSize = 1024, unexpectedLimit = 64).use { f ->
                val rx = f.nodes[senders]
                val failures = ConcurrentLinkedQueue<Throwable>()
                val done = CountDownLatch(senders)
                val deadline = Deadline.of("every sender's messages to arrive", Duration.ofSeconds(60))
                val next = IntArray(senders)
                fun alive() {
                    deadline.check {
                        "received per sender ${next.toList()}\n" + f.nodes.joinToString("\n") { it.ep.describe() }
                    }
                    Thread.yield() // five busy threads share two cores: let the others run
                }

                val sendThreads =
                    (0 until senders).map { s ->
                        thread(name = "sender-$s") {
                            try {
                                val node = f.nodes[s]
                                val dest = f.addrs[s][senders]
                                val out = UnsafeBuffer(ByteArray(300))
                                val c = Completion()
                                var inFlight = 0
                                var seq = 0
                                while (seq < perSender || inFlight > 0) {
                                    alive()
                                    if (seq < perSender && inFlight < 16) {
                                        val size = 4 + (seq * 31 + s * 7) % 296
                                        out.putInt(0, seq)
                                        for (i in 4 until size) out.putByte(i, (seq + i).toByte())
                                        // tinject copies: the buffer is free again at once, so one buffer serves.
                                        val rc =
                                            if (size <= 64) node.ep.tryTinject(out, 0, size, dest, s.toLong())
                                            else node.ep.tryTsend(out, 0, size, dest, s.toLong(), seq)
                                        if (rc == 0) {
                                            if (size > 64) {
                                                // A send reads the buffer until it completes: wait for it.
                                                inFlight++
                                                while (node.cq.read(c) != 1) alive()
                                                inFlight--
                                            }
                                            seq++
                                        } else {
                                            rc shouldBe -Errno.EAGAIN
                                        }
                                    }
                                    if (node.cq.read(c) == 1) inFlight--
                                }
                            } catch (t: Throwable) {
                                failures += t
                            } finally {
                                done.countDown()
                            }
                        }
                    }

                // A second thread hammers the receiver's domain lock by driving progress concurrently.
                val progressor =
                    thread(name = "progressor") {
                        while (done.count > 0 || rx.ep.srx.postedCount > 0) {
                            rx.domain.progress()
                            Thread.yield()
                            if (deadline.expired()) break
                        }
                    }

                val buf = UnsafeBuffer(ByteArray(300))
                val c = Completion()
                val e = CompletionError()
                var received = 0
                while (received < senders * perSender && failures.isEmpty()) {
                    alive()
                    rx.ep.tryTrecv(buf, 0, 300, FiAddr.UNSPEC, 0, -1L, null) shouldBe 0
                    while (true) {
                        alive()
                        val rc = rx.cq.readFrom(c)
                        if (rc == -Errno.EAVAIL) {
                            rx.cq.readErr(e)
                            error("error completion: $e")
                        }
                        if (rc == 1) break
                        if (failures.isNotEmpty()) break
                    }
                    if (failures.isNotEmpty()) break
                    val s = c.tag.toInt()
                    val seq = buf.getInt(0)
                    seq shouldBe next[s]
                    val size = 4 + (seq * 31 + s * 7) % 296
                    c.len shouldBe size.toLong()
                    for (i in 4 until size) buf.getByte(i) shouldBe (seq + i).toByte()
                    next[s]++
                    received++
                }
                sendThreads.forEach { it.join(TimeUnit.SECONDS.toMillis(30)) }
                progressor.join(TimeUnit.SECONDS.toMillis(30))
                failures.firstOrNull()?.let { throw it }
                next.toList() shouldBe List(senders) { perSender }
            }
        }
    })
