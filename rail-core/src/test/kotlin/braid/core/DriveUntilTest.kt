package braid.core

import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.agrona.concurrent.UnsafeBuffer

/**
 * The one wait on a domain ([Domain.driveUntil], [Domain.awaitUntil]): it drives progress until its condition holds,
 * gives up at its deadline, is woken when another thread's progress completes what it waits for, and allocates nothing
 * once its thread has waited before.
 */
class DriveUntilTest :
    FunSpec({

        // Parks for a minute at once: a waiter that is not woken hangs far past the test's limit.
        val parkForAMinute =
            IdlePolicy(
                IdleKind.BACKOFF,
                maxParkNanos = 60_000_000_000,
                maxSpins = 0,
                maxYields = 0,
                minParkNanos = 60_000_000_000,
            )

        test("a wait drives the domain's progress until its condition holds") {
            TestFabric(counters = true).use { f ->
                val (a, b) = f.nodes
                val received = f.recvCounters[1]!!
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                a.ep.tryInject(buf("hi"), 0, 2, f.addrs[0][1]) shouldBe 0
                // Counter.value reads without driving progress: only the wait's own progress completes the receive.
                b.domain.driveUntil(Domain.deadlineAfter(10_000)) { received.value >= 1 } shouldBe true
                b.cq.read(b.entry) shouldBe 1
            }
        }

        test("a wait whose condition never holds returns false once its deadline has passed") {
            TestFabric().use { f ->
                val d = f.nodes[1].domain
                val start = System.nanoTime()
                d.driveUntil(Domain.deadlineAfter(50)) { false } shouldBe false
                (System.nanoTime() - start) shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(50)
                var looks = 0
                withClue("a deadline already past still drives once and looks again") {
                    d.driveUntil(
                        System.nanoTime() - 1,
                        {
                            looks++
                            0
                        },
                    ) {
                        false
                    } shouldBe false
                    looks shouldBe 1
                }
                d.driveUntil(Domain.deadlineAfter(0)) { true } shouldBe true
            }
        }

        test("a waiter parked for a minute is woken by another thread's progress that completes what it waits for") {
            TestFabric(idle = parkForAMinute, counters = true).use { f ->
                val (a, b) = f.nodes
                val received = f.recvCounters[1]!!
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val parked = CountDownLatch(1)
                val result = AtomicReference<Boolean>()
                val waiter =
                    thread(name = "drive-until") {
                        val drive = { b.domain.progress().also { parked.countDown() } }
                        result.set(b.domain.driveUntil(Domain.deadlineAfter(120_000), drive) { received.value >= 1 })
                    }
                parked.await(10, TimeUnit.SECONDS) shouldBe true
                Thread.sleep(
                    100
                ) // let it park (a wake-up before the park is not lost either: the park returns at once)
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                b.domain.progress() // this thread's progress completes the receive and must wake the waiter
                waiter.join(10_000)
                withClue("the parked waiter was not woken") { waiter.isAlive shouldBe false }
                result.get() shouldBe true
                b.cq.read(b.entry) shouldBe 1
            }
        }

        test("a condition another thread makes true outside progress ends the wait once it calls wakeWaiters") {
            TestFabric(idle = parkForAMinute).use { f ->
                val d = f.nodes[1].domain
                val future = CompletableFuture<Int>()
                val result = AtomicReference<Boolean>()
                val waiter =
                    thread(name = "drive-until") {
                        result.set(d.driveUntil(Domain.deadlineAfter(120_000)) { future.isDone })
                    }
                Thread.sleep(100)
                future.complete(1)
                d.wakeWaiters()
                waiter.join(10_000)
                withClue("the parked waiter was not woken") { waiter.isAlive shouldBe false }
                result.get() shouldBe true
            }
        }

        test("under automatic progress the engine's completion ends the wait") {
            // The default policy: the engine idles under it too, and work from another domain cannot unpark the engine.
            TestFabric(counters = true, progress = ProgressModel.AUTO).use { f ->
                val (a, b) = f.nodes
                val received = f.recvCounters[1]!!
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val result = AtomicReference<Boolean>()
                val waiter =
                    thread(name = "drive-until-auto") {
                        result.set(b.domain.driveUntil(Domain.deadlineAfter(120_000)) { received.value >= 1 })
                    }
                Thread.sleep(100)
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                waiter.join(10_000)
                withClue("the waiter did not see the engine's completion") { waiter.isAlive shouldBe false }
                result.get() shouldBe true
            }
        }

        test("the suspending form drives progress until its condition holds, and is cancellable") {
            TestFabric(counters = true).use { f ->
                val (a, b) = f.nodes
                val received = f.recvCounters[1]!!
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                runBlocking {
                    val timedOut = runCatching { withTimeout(50) { b.domain.awaitUntil { false } } }.exceptionOrNull()
                    (timedOut is TimeoutCancellationException) shouldBe true
                    a.ep.tryInject(buf("hi"), 0, 2, f.addrs[0][1]) shouldBe 0
                    withTimeout(10_000) { b.domain.awaitUntil { received.value >= 1 } }
                }
                b.cq.read(b.entry) shouldBe 1
            }
        }

        test("a wait inside another's condition backs off with a strategy of its own, so the outer wait still parks") {
            // No spins or yields, then parks of 20 ms: the outer wait's strategy parks from its fourth idle step on.
            val parkAt20ms =
                IdlePolicy(
                    IdleKind.BACKOFF,
                    maxParkNanos = 20_000_000,
                    maxSpins = 0,
                    maxYields = 0,
                    minParkNanos = 20_000_000,
                )
            TestFabric(idle = parkAt20ms).use { f ->
                val d = f.nodes[1].domain
                var looks = 0
                val start = System.nanoTime()
                d.driveUntil(Domain.deadlineAfter(60_000), { 0 }) {
                    // A look that is a wait itself (as a probe's is): it takes a strategy, which would reset a shared
                    // one.
                    var tries = 0
                    d.driveUntil(Domain.NO_DEADLINE, { 0 }) { ++tries >= 2 }
                    ++looks > 20
                }
                withClue("the outer wait never parked: the inner one reset its back-off") {
                    (System.nanoTime() - start) shouldBeGreaterThanOrEqual TimeUnit.MILLISECONDS.toNanos(60)
                }
            }
        }

        test("a wait allocates nothing once its thread has waited before, idle steps included") {
            TestFabric().use { f ->
                val d = f.nodes[1].domain
                var rounds = 0
                fun waits(n: Int) {
                    for (i in 0 until n) {
                        rounds = 0
                        // Three rounds of progress that find nothing: the wait takes its idle strategy and idles twice.
                        d.driveUntil(Domain.NO_DEADLINE) { ++rounds > 3 }
                    }
                }
                waits(20_000)
                val bytes = SteadyAllocation.least(5, 0) { waits(10_000) }
                withClue("$bytes bytes allocated over 10,000 waits") { (bytes / 10_000) shouldBeLessThan 1L }
            }
        }
    })
