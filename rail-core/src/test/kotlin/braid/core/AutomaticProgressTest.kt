package braid.core

import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/** Automatic progress: operations complete with nobody reading, polling or waiting in Braid. */
class AutomaticProgressTest :
    FunSpec({

        /** Posts [n] receives on b and [n] sends (eager and rendezvous) on a as futures; waits passively. */
        fun exchangeWithoutCalls(f: TestFabric, n: Int) {
            val (a, b) = f.nodes
            val rx = List(n) { UnsafeBuffer(ByteArray(4096)) }
            val receives = List(n) { i -> b.ep.trecvAsync(rx[i], 0, 4096, FiAddr.UNSPEC, i.toLong()) }
            val sends =
                List(n) { i ->
                    a.ep.tsendAsync(
                        payload(if (i % 2 == 0) 64 else 4096, i, 1),
                        0,
                        if (i % 2 == 0) 64 else 4096,
                        f.addrs[0][1],
                        i.toLong(),
                    )
                }
            // A latch, not get(): get() on an operation's future would drive progress itself.
            val all = CountDownLatch(2 * n)
            (receives + sends).forEach { it.whenComplete { _, _ -> all.countDown() } }
            all.await(10, TimeUnit.SECONDS) shouldBe true
            for (i in 0 until n) {
                val c = receives[i].join()
                c.len shouldBe (if (i % 2 == 0) 64L else 4096L)
                check(rx[i], c.len.toInt(), i) shouldBe 1
            }
        }

        test("with ProgressModel.AUTO, futures complete on the engine threads with no application calls") {
            TestFabric(progress = ProgressModel.AUTO).use { f ->
                f.nodes.forEach { it.domain.progressModel shouldBe ProgressModel.AUTO }
                exchangeWithoutCalls(f, 200)
                f.nodes.forEach { it.domain.progressEngine!!.busyCycles shouldBeGreaterThan 0L }
            }
        }

        test(
            "a coroutine engine on a caller's dispatcher completes operations with no application calls, and stops with its parent job"
        ) {
            TestFabric().use { f ->
                OneThread("engine").use { t ->
                    val parent = Job()
                    val engines = f.nodes.map { ProgressEngine.coroutine(it.domain, t.dispatcher + parent) }
                    f.nodes.forEach { it.domain.progressModel shouldBe ProgressModel.AUTO }
                    exchangeWithoutCalls(f, 200)
                    engines.forEach { it.cycles shouldBeGreaterThan 0L }
                    runBlocking { parent.cancelAndJoin() }
                    f.nodes.forEach { it.domain.progressModel shouldBe ProgressModel.MANUAL }
                }
            }
        }

        test("suspended operations complete under a thread engine while their coroutines only wait") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                f.nodes.forEach { ProgressEngine.thread(it.domain) }
                OneThread("waiters").use { t ->
                    val scope = CoroutineScope(t.dispatcher)
                    val rx = List(50) { UnsafeBuffer(ByteArray(64)) }
                    val receives =
                        List(50) { i -> scope.outcome { b.ep.trecv(rx[i], 0, 64, FiAddr.UNSPEC, i.toLong()) } }
                    val sends =
                        List(50) { i ->
                            scope.outcome { a.ep.tsend(payload(64, i, 1), 0, 64, f.addrs[0][1], i.toLong()) }
                        }
                    for (i in 0 until 50) {
                        receives[i].await(10_000).getOrThrow().len shouldBe 64
                        check(rx[i], 64, i) shouldBe 1
                        sends[i].await(10_000).getOrThrow()
                    }
                }
            }
        }

        test(
            "a second engine on a domain is refused with EBUSY; closing the engine hands waiting coroutines back to manual progress"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val engine = ProgressEngine.thread(b.domain)
                val e = shouldThrow<FabricException> { ProgressEngine.coroutine(b.domain) }
                e.code shouldBe Errno.EBUSY
                e.message shouldContain "close it before starting another engine"
                OneThread("waiter").use { t ->
                    val rx = UnsafeBuffer(ByteArray(8))
                    val r = CoroutineScope(t.dispatcher).outcome { b.ep.trecv(rx, 0, 8, FiAddr.UNSPEC, 3) }
                    Deadline.await("the receive to suspend") { b.domain.suspendedOps == 1 }
                    engine.close()
                    engine.isRunning shouldBe false
                    b.domain.progressModel shouldBe ProgressModel.MANUAL
                    a.ep.tryTinject(buf("late"), 0, 4, f.addrs[0][1], 3) shouldBe 0
                    r.await(10_000).getOrThrow().len shouldBe 4
                    rx.text(4) shouldBe "late"
                }
            }
        }

        test("closing a domain stops its engine thread") {
            val f = TestFabric(progress = ProgressModel.AUTO)
            val threads = f.nodes.map { it.domain.progressEngine!!.engineThread!! }
            threads.forEach { it.isAlive shouldBe true }
            f.close()
            threads.forEach {
                it.join(10_000)
                it.isAlive shouldBe false
            }
        }
    })
