package braid.core

import braid.bench.LocalEndpoints
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.time.Duration
import java.util.concurrent.CountDownLatch
import org.agrona.concurrent.UnsafeBuffer

/**
 * `Threading.DOMAIN` (FI_THREAD_DOMAIN): the application drives each domain from one thread at a time, so the
 * per-message path of a domain under manual progress takes no lock ([DomainLock]) until Braid itself starts a thread
 * that drives it.
 */
class SoloDomainTest :
    FunSpec({
        fun info(provider: String, threading: Threading, progress: ProgressModel = ProgressModel.MANUAL): Info =
            Braid.getInfo(
                    Hints(
                        caps = Caps.TAGGED,
                        provider = provider,
                        threading = threading,
                        settings = TestFabric.SETTINGS,
                    )
                )
                .first()
                .let { it.copy(domainAttr = it.domainAttr.copy(idle = IdlePolicy.SPIN, progress = progress)) }

        /** A window of 64 tagged messages from node 0 to node 1, both CQs read until all 128 completed. */
        fun window(p: LocalEndpoints, round: Int) {
            val a = p.nodes[0]
            val b = p.nodes[1]
            val out = Array(64) { UnsafeBuffer(ByteBuffer.allocateDirect(8)) }
            val rx = Array(64) { UnsafeBuffer(ByteBuffer.allocateDirect(8)) }
            for (k in 0 until 64) b.ep.tryTrecv(rx[k], 0, 8, FiAddr.UNSPEC, 7, 0, null) shouldBe 0
            for (k in 0 until 64) {
                out[k].putLong(0, round * 64L + k)
                a.ep.tryTsend(out[k], 0, 8, p.addr(0, 1), 7, null) shouldBe 0
            }
            val comps = Array(16) { Completion() }
            val deadline = Deadline.of("a window of 64", Duration.ofSeconds(30))
            for ((cq, n) in listOf(b.cq to 64, a.cq to 64)) {
                var got = 0
                while (got < n) {
                    deadline.check { "$got of $n completions read" }
                    val r = cq.read(comps)
                    if (r > 0) got += r else r shouldBe -Errno.EAGAIN
                }
            }
            for (k in 0 until 64) rx[k].getLong(0) shouldBe round * 64L + k
        }

        test("a DOMAIN domain under manual progress is solo; a SAFE one and a DOMAIN one under AUTO progress are not") {
            val fabric = Braid.fabric(info("shm", Threading.DOMAIN))
            fabric.use { f ->
                f.domain(info("shm", Threading.DOMAIN)).use { it.isSolo shouldBe true }
                f.domain(info("shm", Threading.SAFE)).use { it.isSolo shouldBe false }
                f.domain(info("shm", Threading.DOMAIN, ProgressModel.AUTO)).use { it.isSolo shouldBe false }
            }
        }

        test("a solo domain's posts, progress and completion reads run while another thread holds its lock") {
            LocalEndpoints(2, info("shm", Threading.DOMAIN)).use { p ->
                p.nodes.forEach { it.domain.isSolo shouldBe true }
                window(p, 0) // warm: the rings are connected
                // Another thread holds both domains' monitors: a path that took one would block on it for ever.
                val held = CountDownLatch(1)
                val release = CountDownLatch(1)
                val holder = Thread {
                    synchronized(p.nodes[0].domain.lock) {
                        synchronized(p.nodes[1].domain.lock) {
                            held.countDown()
                            release.await()
                        }
                    }
                }
                holder.isDaemon = true
                holder.start()
                held.await()
                var failure: Throwable? = null
                val driver = Thread { failure = runCatching { for (r in 1..20) window(p, r) }.exceptionOrNull() }
                driver.isDaemon = true
                driver.start()
                driver.join(Duration.ofSeconds(60).toMillis())
                val blocked = driver.isAlive
                release.countDown()
                holder.join()
                driver.join()
                blocked shouldBe false
                failure shouldBe null
            }
        }

        test("a solo domain takes its lock once a thread of Braid's drives it, and messages go on flowing") {
            LocalEndpoints(2, info("shm", Threading.DOMAIN)).use { p ->
                val b = p.nodes[1]
                window(p, 0)
                // A receive future that cannot complete yet: its progress driver runs on a pool thread.
                val f = b.ep.trecvAsync(ByteBuffer.allocateDirect(8), p.addr(1, 0), 99)
                b.domain.isSolo shouldBe false
                p.nodes[0].domain.isSolo shouldBe true
                window(p, 1)
                val one = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                p.nodes[0].ep.tryTinject(one, 0, 8, p.addr(0, 1), 99) shouldBe 0
                val deadline = Deadline.of("the receive future", Duration.ofSeconds(30))
                while (!f.isDone) {
                    deadline.check { "the receive future did not complete" }
                    p.nodes[0].domain.progress()
                }
                f.get().len shouldBe 8L
                // A progress engine.
                ProgressEngine.thread(p.nodes[0].domain).use { p.nodes[0].domain.isSolo shouldBe false }
            }
        }

        test("an endpoint whose rail schedules work on the timer's servant (tcp's keepalive) makes its domain share") {
            LocalEndpoints(2, info("tcp", Threading.DOMAIN)).use { p ->
                p.nodes.forEach { it.domain.isSolo shouldBe false }
                window(p, 0)
            }
        }

        test("shareAcrossThreads is one-way, and a completion queue's publisher shares its domain") {
            val fabric = Braid.fabric(info("shm", Threading.DOMAIN))
            fabric.use { f ->
                f.domain(info("shm", Threading.DOMAIN)).use { d ->
                    d.shareAcrossThreads()
                    d.isSolo shouldBe false
                    d.shareAcrossThreads()
                    d.isSolo shouldBe false
                }
                f.domain(info("shm", Threading.DOMAIN)).use { d ->
                    d.completionQueue().use { cq ->
                        cq.publisher()
                        d.isSolo shouldBe false
                    }
                }
            }
        }
    })
