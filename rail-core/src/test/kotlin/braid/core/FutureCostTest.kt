package braid.core

import braid.testsupport.Deadline
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import java.lang.management.ManagementFactory
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.locks.LockSupport
import org.agrona.concurrent.UnsafeBuffer

/**
 * What the `CompletableFuture` forms cost per operation beyond the raw ones, counted, not timed: in the loop of
 * `bench/api-overhead.sh` (a receive future started before the send that provokes its message, then joined) no driver
 * is launched (no coroutine, no task handed to another thread), the future completes on the joining thread, and what
 * the loop allocates is the futures' own objects.
 */
class FutureCostTest :
    FunSpec({
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

        /** One round: a receive future on b, a tinject future from a that provokes its message, both joined. */
        class Loop(val f: TestFabric) {
            val a = f.nodes[0]
            val b = f.nodes[1]
            val tx = UnsafeBuffer(ByteArray(64))
            val rx = UnsafeBuffer(ByteArray(64))
            val toB = f.addrs[0][1]

            fun start(): CompletableFuture<Completion> {
                val r = b.ep.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, 7)
                a.ep.tinjectAsync(tx, 0, 64, toB, 7).join()
                return r
            }

            fun round() {
                check(start().join().len == 64L)
            }
        }

        test("a joined future launches no driver and completes on the joining thread") {
            TestFabric().use { f ->
                val loop = Loop(f)
                val hub = loop.b.domain.hub
                repeat(20_000) { loop.round() }
                val rounds = 20_000
                val launches = hub.driverLaunches
                val driverRounds = hub.driverRounds
                val watchSpins = hub.watchSpins
                val me = Thread.currentThread()
                var handOffs = 0L
                repeat(rounds) {
                    val r = loop.start()
                    // The dependent stage runs on the thread that completed the future.
                    r.whenComplete { _, _ -> if (Thread.currentThread() !== me) handOffs++ }
                    r.join()
                }
                val launched = hub.driverLaunches - launches
                val woke = hub.driverRounds - driverRounds
                val spun = hub.watchSpins - watchSpins
                println(
                    "futures: $rounds rounds: $launched driver launches, $handOffs hand-offs, $woke driver rounds, " +
                        "$spun watching spins"
                )
                withClue("$launched driver launches over $rounds joined futures") {
                    launched shouldBeLessThanOrEqual 1L
                }
                withClue("$handOffs of $rounds joined futures completed on another thread") {
                    (handOffs * 100) shouldBeLessThanOrEqual rounds.toLong()
                }
                // While a thread joins, the lingering driver sleeps rather than spin beside it: on a machine with
                // as many busy threads as cores (two ranks on two), a spinning driver takes turns with the joiner.
                withClue("the lingering driver spun $spun times beside $rounds joined futures") {
                    (spun * 10) shouldBeLessThanOrEqual rounds.toLong()
                }
            }
        }

        test("after a joined loop, a future nobody waits for still completes on its own, off the caller's thread") {
            TestFabric().use { f ->
                val loop = Loop(f)
                repeat(2_000) { loop.round() } // the futures' driver now lingers without the role
                val me = Thread.currentThread()
                // The dependent stage is in place before the message is sent (the lingering driver completes the
                // future within microseconds); the message is then in b's ring: only progress on b completes it.
                val r = loop.b.ep.trecvAsync(loop.rx, 0, 64, FiAddr.UNSPEC, 7)
                val by = r.thenApply { Thread.currentThread() }
                loop.a.ep.tinjectAsync(loop.tx, 0, 64, loop.toB, 7).join()
                val deadline = Deadline.of("an unwaited receive future to complete with no progress call")
                while (!r.isDone) {
                    deadline.check()
                    LockSupport.parkNanos(100_000)
                }
                r.getNow(null).len shouldBe 64L
                (by.getNow(null) !== me) shouldBe true
            }
        }

        test("a future with only a callback after a joined loop completes within the driver's tick, not its park") {
            // Nothing idles by parking (YIELD) but the lingering driver, whose longest park is ten minutes: the
            // callbacks below run within the deadline only if the driver, which sleeps a short tick at a time while
            // futures are joined, notices the futures nobody joins and drives them.
            TestFabric(idle = IdlePolicy(IdleKind.YIELD, maxParkNanos = 600_000_000_000L)).use { f ->
                val loop = Loop(f)
                repeat(2_000) { loop.round() } // b's futures' driver now lingers without the role
                val a = loop.a
                val b = loop.b
                val toA = f.addrs[1][0]
                val events = ConcurrentLinkedQueue<String>()
                val replyBuf = UnsafeBuffer(ByteArray(8))
                // b, which nobody drives: two receive futures with callbacks only; the first's callback replies.
                b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 12).thenAccept {
                    events.add("second message")
                }
                b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 10).thenAccept {
                    events.add("first's callback")
                    b.ep.tinjectAsync(replyBuf, 0, 8, toA, 11)
                }
                // The peer (this thread, driving only a's domain) sends the second message only after the reply.
                val reply = a.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 11)
                a.ep.tinjectAsync(loop.tx, 0, 8, loop.toB, 10).join()
                val deadline = Deadline.of("the reply sent by a callback-only future's callback")
                val replied = a.domain.driveUntil(System.nanoTime() + deadline.remainingNanos()) { reply.isDone }
                withClue("the peer got no reply: nobody drove b's callback-only future ($events)") {
                    replied shouldBe true
                }
                a.ep.tinjectAsync(loop.tx, 0, 8, loop.toB, 12).join()
                Deadline.await("the second message's callback") { events.size == 2 }
                events.toList() shouldBe listOf("first's callback", "second message")
            }
        }

        test("a joined future loop allocates the futures' own objects and nothing else") {
            TestFabric().use { f ->
                val loop = Loop(f)
                repeat(20_000) { loop.round() }
                val rounds = 20_000
                val perRound = SteadyAllocation.least(3, 0) { repeat(rounds) { loop.round() } } / rounds
                // A future's own objects: its operation, the future, and the completion it completes with.
                val sink = arrayOfNulls<Any>(1)
                val own =
                    SteadyAllocation.least(3, 0) {
                        repeat(rounds) {
                            val op = PendingOp(loop.b.ep, PendingOp.TRECV, loop.rx, 0, 64, FiAddr.UNSPEC, 7, 0)
                            op.result = Completion()
                            sink[0] = OpFuture(op)
                        }
                    } / rounds
                println(
                    "futures: $perRound bytes per round (a receive and a tinject future), $own bytes a future's own"
                )
                withClue("$perRound bytes per round of two futures, each $own bytes of its own") {
                    perRound shouldBeLessThanOrEqual 2 * own
                }
            }
        }
    })
