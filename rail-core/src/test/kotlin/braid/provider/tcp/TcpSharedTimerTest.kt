package braid.provider.tcp

import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.provider.RailTimer
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.time.Duration
import java.util.concurrent.CountDownLatch
import org.agrona.concurrent.UnsafeBuffer

/**
 * tcp's keepalive runs from the process's one [RailTimer], not from a thread per endpoint, and still keeps idle
 * connections alive and finds dead peers when nobody drives progress; a domain held by a stuck thread stalls nobody
 * else's liveness.
 */
class TcpSharedTimerTest :
    FunSpec({
        fun braidThreads(): List<String> =
            Thread.getAllStackTraces().keys.filter { it.isAlive }.map { it.name }.filter { it.startsWith("braid-") }

        /** Whether [t]'s peer [addr] has been declared dead, read under its domain lock. */
        fun dead(n: braid.core.TestFabric.Node, addr: Long): Boolean =
            synchronized(n.domain.lock) { n.ep.tcp.peerFor(addr)?.dead == true }

        test("fifty tcp endpoints in one process run their keepalives on one timer thread, not fifty") {
            val before = braidThreads()
            TestFabric(50, Rail.TCP).use { f ->
                // Every endpoint has a connection to watch: each sends one message to the next.
                for (i in 0 until 50) {
                    val j = (i + 1) % 50
                    f.nodes[j].ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                    f.nodes[i].ep.tryTsend(buf("hi"), 0, 2, f.addrs[i][j], 1, null) shouldBe 0
                }
                for (i in 0 until 50) f.nodes[i].await(2, others = f.nodes)
                val during = braidThreads()
                during.filter { it.startsWith("braid-tcp-keepalive") }.shouldBeEmpty()
                during.count { it == "braid-rail-timer" } shouldBe 1
                // Fifty endpoints added at most the timer and its servant to what ran before.
                (during.size - before.size) shouldBeLessThanOrEqual 2
                TcpKeepalive.running.get() shouldBeLessThanOrEqual RailTimer.live
            }
        }

        test(
            "idle endpoints nobody drives keep their connections past the time-out, and find a frozen peer dead while another domain is stuck"
        ) {
            TestFabric(3, Rail.TCP, settings = TestFabric.SETTINGS.with(TcpParams.TIMEOUT_MS, 400L)).use { f ->
                val (a, b, c) = f.nodes
                for (to in listOf(1, 2)) {
                    f.nodes[to].ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                    a.ep.tryTsend(buf("hi"), 0, 2, f.addrs[0][to], 1, null) shouldBe 0
                    f.nodes[to].await(1, others = listOf(a))
                    a.await(1, others = listOf(f.nodes[to]))
                }
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 2, 0, "from-b") shouldBe 0
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][2], 2, 0, "from-c") shouldBe 0
                // Nobody drives progress for four time-outs: the timer's servant keeps every connection alive.
                Thread.sleep(1_600)
                dead(a, f.addrs[0][1]) shouldBe false
                dead(a, f.addrs[0][2]) shouldBe false
                dead(c, f.addrs[2][0]) shouldBe false
                // b's domain is held by a stuck thread: nothing of b runs, and the servant that tries blocks on it.
                val frozen = CountDownLatch(1)
                val release = CountDownLatch(1)
                val freezer = Thread {
                    synchronized(b.domain.lock) {
                        frozen.countDown()
                        release.await()
                    }
                }
                freezer.start()
                try {
                    frozen.await()
                    // Still nobody drives a: the timer finds b silent for a, and keeps a and c talking meanwhile.
                    Deadline.await("a, undriven, to declare the frozen peer b dead", Duration.ofSeconds(10)) {
                        dead(a, f.addrs[0][1])
                    }
                    Thread.sleep(800)
                    dead(a, f.addrs[0][2]) shouldBe false
                    dead(c, f.addrs[2][0]) shouldBe false
                } finally {
                    release.countDown()
                    freezer.join()
                }
                val err = a.await(1).single().shouldBeInstanceOf<CompletionError>()
                err.context shouldBe "from-b"
                err.err shouldBe Errno.EHOSTDOWN
                err.message shouldContain "stopped, hung or unreachable"
                a.ep.srx.postedCount shouldBe 1 // the receive from c still waits
            }
        }
    })
