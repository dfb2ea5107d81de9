package braid.core

import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.util.concurrent.Semaphore
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlin.random.Random
import kotlinx.coroutines.CoroutineScope
import org.agrona.concurrent.UnsafeBuffer

/**
 * Waiting without burning a core: blocking reads, counter waits, suspended receives and the engine park while idle
 * (checked by the waiting thread's CPU time over an idle second, not by a clock), and a parked waiter is woken by every
 * write that concerns it (fi_trywait: no lost wake-up, no hang).
 */
class IdleWaitTest :
    FunSpec({

        /** CPU used by [t] over one idle second, after letting it settle into parking. */
        fun idleSecondCpu(t: Thread): Long {
            Thread.sleep(200)
            val before = cpuNanos(t)
            Thread.sleep(1000)
            return cpuNanos(t) - before
        }

        fun shouldIdle(what: String, cpu: Long) {
            println("$what: ${cpu / 1_000_000} ms of CPU over an idle second")
            withClue("$what used $cpu ns of CPU over an idle second (limit: 20% of it)") {
                cpu shouldBeLessThan 200_000_000L
            }
        }

        test("an idle blocking CQ read parks instead of spinning, and returns when a message arrives") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val rc = AtomicInteger(0)
                val reader = thread(name = "sread") { rc.set(b.cq.sread(Completion(), 30_000)) }
                shouldIdle("blocking CQ read (manual progress)", idleSecondCpu(reader))
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                reader.join(10_000)
                rc.get() shouldBe 1
            }
        }

        test("an idle counter wait parks instead of spinning, and returns when a receive completes") {
            TestFabric(counters = true).use { f ->
                val (a, b) = f.nodes
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val rc = AtomicInteger(-1)
                val waiter = thread(name = "cntr-wait") { rc.set(f.recvCounters[1]!!.waitFor(1, 30_000)) }
                shouldIdle("counter wait (manual progress)", idleSecondCpu(waiter))
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                waiter.join(10_000)
                rc.get() shouldBe 0
            }
        }

        test("an idle driveUntil parks instead of spinning, and returns when a receive completes") {
            TestFabric(counters = true).use { f ->
                val (a, b) = f.nodes
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val received = f.recvCounters[1]!!
                val held = AtomicReference<Boolean>()
                val waiter =
                    thread(name = "drive-until") {
                        held.set(b.domain.driveUntil(Domain.deadlineAfter(30_000)) { received.value >= 1 })
                    }
                shouldIdle("driveUntil (manual progress)", idleSecondCpu(waiter))
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                waiter.join(10_000)
                held.get() shouldBe true
            }
        }

        test("a suspended receive and the coroutine driving progress for it cost little CPU while idle") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                OneThread("suspended").use { t ->
                    val rx = UnsafeBuffer(ByteArray(8))
                    val r = CoroutineScope(t.dispatcher).outcome { b.ep.trecv(rx, 0, 8, FiAddr.UNSPEC, 1) }
                    shouldIdle("suspended receive (manual progress)", idleSecondCpu(t.thread))
                    a.ep.tryTinject(buf("wake"), 0, 4, f.addrs[0][1], 1) shouldBe 0
                    r.await(10_000).getOrThrow().len shouldBe 4
                }
            }
        }

        test(
            "an idle engine thread parks, and a blocking read under automatic progress neither polls nor misses the engine's completion"
        ) {
            TestFabric(progress = ProgressModel.AUTO).use { f ->
                val (a, b) = f.nodes
                shouldIdle("progress engine thread", idleSecondCpu(b.domain.progressEngine!!.engineThread!!))
                b.ep.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "r") shouldBe 0
                val rc = AtomicInteger(0)
                val reader = thread(name = "sread-auto") { rc.set(b.cq.sread(Completion(), 30_000)) }
                shouldIdle("blocking CQ read (automatic progress)", idleSecondCpu(reader))
                a.ep.tryInject(buf("wake"), 0, 4, f.addrs[0][1]) shouldBe 0
                reader.join(10_000)
                rc.get() shouldBe 1
            }
        }

        // A park of a minute at once: a waiter whose wake-up is lost hangs far past the round's deadline.
        val parkForAMinute =
            IdlePolicy(
                IdleKind.BACKOFF,
                maxParkNanos = 60_000_000_000,
                maxSpins = 0,
                maxYields = 0,
                minParkNanos = 60_000_000_000,
            )

        for (what in listOf("blocking CQ read", "counter wait", "blocking receive")) {
            test("a $what parked for a minute is woken by another thread's progress every time: 300 racing rounds") {
                TestFabric(idle = parkForAMinute, counters = true).use { f ->
                    val (a, b) = f.nodes
                    val rounds = 300
                    val start = Semaphore(0)
                    val done = Semaphore(0)
                    val failure = AtomicReference<Throwable>()
                    val waiter =
                        thread(name = "parked-waiter") {
                            try {
                                val c = Completion()
                                for (i in 0 until rounds) {
                                    start.acquire()
                                    when (what) {
                                        "blocking CQ read" ->
                                            check(b.cq.sread(c, 30_000) == 1) { "round $i: no completion" }
                                        "counter wait" ->
                                            check(f.recvCounters[1]!!.waitFor(i + 1L, 30_000) == 0) {
                                                "round $i: counter wait failed"
                                            }
                                        else ->
                                            b.ep.trecvBlocking(
                                                UnsafeBuffer(ByteArray(8)),
                                                0,
                                                8,
                                                FiAddr.UNSPEC,
                                                i.toLong(),
                                                0,
                                                30_000,
                                            )
                                    }
                                    done.release()
                                }
                            } catch (t: Throwable) {
                                failure.set(t)
                                done.release()
                            }
                        }
                    val rnd = Random(7)
                    try {
                        for (i in 0 until rounds) {
                            if (what != "blocking receive")
                                b.ep.tryTrecv(
                                    UnsafeBuffer(ByteArray(8)),
                                    0,
                                    8,
                                    FiAddr.UNSPEC,
                                    i.toLong(),
                                    0,
                                    "r$i",
                                ) shouldBe 0
                            start.release()
                            busy(rnd.nextInt(20_000))
                            if (what == "blocking receive")
                                Deadline.await("round $i: the receive to be posted") { b.ep.postedReceives == 1 }
                            a.ep.tryTinject(buf("w"), 0, 1, f.addrs[0][1], i.toLong()) shouldBe 0
                            b.domain.progress() // this thread's progress completes the receive and must wake the waiter
                            withClue("round $i: the parked waiter was not woken (a lost wake-up)") {
                                done.tryAcquire(5, TimeUnit.SECONDS) shouldBe true
                            }
                            failure.get()?.let { throw it }
                        }
                    } finally {
                        waiter.interrupt()
                        waiter.join(10_000)
                    }
                    if (what == "counter wait")
                        b.cq.read(Array(rounds) { Completion() }) // tidy: the receives' completions
                }
            }
        }
    })
