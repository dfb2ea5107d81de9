package braid.core

import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.random.Random
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.agrona.concurrent.UnsafeBuffer

/**
 * Cancelling a suspended operation against the arrival of its message: every round has exactly one outcome — the
 * receive got the message, or it was withdrawn and the message went to a later receive — and no message is lost or
 * delivered twice.
 */
class CancelVersusArrivalTest :
    FunSpec({
        test(
            "a cancelled receive that never matched throws CancellationException and the message goes to a later receive"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                OneThread("receiver").use { t ->
                    val job =
                        CoroutineScope(t.dispatcher).outcome {
                            b.ep.trecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 4)
                        }
                    Deadline.await("the receive to suspend") { b.domain.suspendedOps == 1 }
                    job.cancel()
                    job.await(10_000).exceptionOrNull().shouldBeInstanceOf<CancellationException>()
                    b.ep.postedReceives shouldBe 0
                    a.ep.tryTinject(buf("kept"), 0, 4, f.addrs[0][1], 4) shouldBe 0
                    val later = UnsafeBuffer(ByteArray(8))
                    b.ep.trecvBlocking(later, 0, 8, FiAddr.UNSPEC, 4, 0, 10_000).len shouldBe 4
                    later.text(4) shouldBe "kept"
                    b.domain.pendingOps shouldBe 0
                }
            }
        }

        test(
            "a receive whose message matched before the cancel returns the message, though its coroutine was cancelled"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                OneThread("receiver").use { t ->
                    val rx = UnsafeBuffer(ByteArray(8))
                    val job = CoroutineScope(t.dispatcher).outcome { b.ep.trecv(rx, 0, 8, FiAddr.UNSPEC, 5) }
                    Deadline.await("the receive to suspend") { b.domain.suspendedOps == 1 }
                    // Hold the receiver's thread so the coroutine is resumed but not yet run.
                    val hold = CountDownLatch(1)
                    CoroutineScope(t.dispatcher).launch { hold.await() }
                    a.ep.tryTinject(buf("mine"), 0, 4, f.addrs[0][1], 5) shouldBe 0
                    Deadline.await("the receive to match") {
                        b.domain.progress()
                        b.domain.pendingOps == 0
                    }
                    job.cancel()
                    hold.countDown()
                    // The code after trecv gets the message; the cancellation shows at its next suspension.
                    val c = job.await(10_000).getOrThrow()
                    c.len shouldBe 4
                    rx.text(4) shouldBe "mine"
                    b.ep.unexpectedMessages shouldBe 0
                }
            }
        }

        for ((kind, size) in listOf("eager" to 256, "rendezvous" to 16 * 1024)) {
            val rounds = if (kind == "eager") 3000 else 1000
            test(
                "cancel racing with the arrival of $kind messages: $rounds rounds, each with one outcome, no message lost or doubled"
            ) {
                TestFabric(eagerSize = 1024, ringCapacity = 1 shl 16).use { f ->
                    val (a, b) = f.nodes
                    // The sender's rendezvous steps need no help from this test.
                    ProgressEngine.thread(a.domain)
                    val senderPool = Executors.newSingleThreadExecutor()
                    try {
                        OneThread("receiver").use { t ->
                            val rnd = Random(size)
                            val dest = f.addrs[0][1]
                            var delivered = 0
                            var withdrawn = 0
                            for (i in 0 until rounds) {
                                val tag = i.toLong()
                                val first = payload(size, i, 1)
                                val second = payload(size, i, 2)
                                val rx = UnsafeBuffer(ByteArray(size))
                                val job =
                                    CoroutineScope(t.dispatcher).outcome { b.ep.trecv(rx, 0, size, FiAddr.UNSPEC, tag) }
                                Deadline.await("round $i: the receive to be posted") {
                                    b.ep.postedReceives == 1 || job.isCompleted
                                }
                                val sendDelay = rnd.nextInt(1000)
                                val cancelDelay = rnd.nextInt(20_000)
                                // The sender also drives the receiver's progress, so the match races the cancel
                                // in two threads under the domain lock.
                                val sent =
                                    senderPool.submit {
                                        busy(sendDelay)
                                        check(a.ep.tryTsend(first, 0, size, dest, tag, null) == 0)
                                        repeat(3) { b.domain.progress() }
                                    }
                                busy(cancelDelay)
                                job.cancel()
                                sent.get(10, TimeUnit.SECONDS)
                                val outcome = job.await(10_000)
                                a.ep.tryTsend(second, 0, size, dest, tag, null) shouldBe 0
                                val seen = ArrayList<Int>()
                                if (outcome.isSuccess) {
                                    outcome.getOrThrow().len shouldBe size.toLong()
                                    seen += check(rx, size, i)
                                    delivered++
                                } else {
                                    outcome.exceptionOrNull().shouldBeInstanceOf<CancellationException>()
                                    withdrawn++
                                }
                                while (seen.size < 2) {
                                    val later = UnsafeBuffer(ByteArray(size))
                                    b.ep.trecvBlocking(later, 0, size, FiAddr.UNSPEC, tag, 0, 10_000)
                                    seen += check(later, size, i)
                                }
                                withClue("round $i (${if (outcome.isSuccess) "delivered" else "withdrawn"})") {
                                    seen shouldBe listOf(1, 2)
                                }
                            }
                            println(
                                "cancel vs $kind arrival: $delivered rounds delivered to the cancelled receive, $withdrawn withdrawn"
                            )
                            delivered shouldBeGreaterThan 0
                            withdrawn shouldBeGreaterThan 0
                            b.ep.unexpectedMessages shouldBe 0
                            b.ep.postedReceives shouldBe 0
                            b.domain.pendingOps shouldBe 0
                        }
                    } finally {
                        senderPool.shutdownNow()
                    }
                }
            }
        }

        test("future.cancel withdraws an unmatched receive and refuses to cancel a matched one") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val unmatched = b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1)
                unmatched.cancel(true) shouldBe true
                unmatched.isCancelled shouldBe true
                val rx = UnsafeBuffer(ByteArray(8))
                val matched = b.ep.trecvAsync(rx, 0, 8, FiAddr.UNSPEC, 2)
                a.ep.tryTinject(buf("two"), 0, 3, f.addrs[0][1], 2) shouldBe 0
                Deadline.await("the receive to match") {
                    b.domain.progress()
                    b.domain.pendingOps == 0
                }
                matched.cancel(true) shouldBe false
                matched.get(10, TimeUnit.SECONDS).len shouldBe 3
                rx.text(3) shouldBe "two"
            }
        }

        test(
            "a cancelled send the rail has taken still completes; one still waiting for ring space is withdrawn and never sent"
        ) {
            TestFabric(ringCapacity = 1024, eagerSize = 64, txSize = 1).use { f ->
                val (a, b) = f.nodes
                val dest = f.addrs[0][1]
                OneThread("sender").use { t ->
                    // Taken: a rendezvous send waits for a receive that is not posted yet.
                    val big = payload(4096, 0, 1)
                    val taken = CoroutineScope(t.dispatcher).outcome { a.ep.tsend(big, 0, 4096, dest, 100) }
                    Deadline.await("the rendezvous send to suspend") { a.domain.suspendedOps == 1 }
                    taken.cancel()
                    // Fill the ring and the one-deep backlog, so the next send is refused (EAGAIN).
                    val small = UnsafeBuffer(ByteArray(64))
                    var smalls = 0
                    val full = Deadline.of("the ring to refuse an inject")
                    while (a.ep.tryTinject(small, 0, 64, dest, 1) == 0) {
                        smalls++
                        full.check { "$smalls injects accepted" }
                    }
                    a.ep.tryTsend(small, 0, 64, dest, 1, "backlog") shouldBe 0
                    smalls++
                    val queued =
                        CoroutineScope(t.dispatcher).outcome { a.ep.tsend(payload(64, 0, 3), 0, 64, dest, 200) }
                    Deadline.await("the refused send to suspend") { a.domain.suspendedOps == 2 }
                    queued.cancel()
                    queued.await(10_000).exceptionOrNull().shouldBeInstanceOf<CancellationException>()
                    taken.isCompleted shouldBe false
                    // Now let everything through: the taken send completes normally.
                    val rx = UnsafeBuffer(ByteArray(4096))
                    b.ep.trecvBlocking(rx, 0, 4096, FiAddr.UNSPEC, 100, 0, 10_000).len shouldBe 4096
                    check(rx, 4096, 0) shouldBe 1
                    taken.await(10_000).getOrThrow().len shouldBe 4096
                    val sink = UnsafeBuffer(ByteArray(64))
                    repeat(smalls) { b.ep.trecvBlocking(sink, 0, 64, FiAddr.UNSPEC, 1, 0, 10_000) }
                    b.ep.tryTrecv(sink, 0, 64, FiAddr.UNSPEC, 200, 0, "withdrawn?") shouldBe 0
                    repeat(100) {
                        a.domain.progress()
                        b.domain.progress()
                    }
                    b.cq.read(b.entry) shouldBe -Errno.EAGAIN // the withdrawn send never arrived
                    a.domain.pendingOps shouldBe 0
                }
            }
        }
    })

/**
 * What the code right after a suspending call sees: its result or its exception. (A cancelled `async` reports
 * CancellationException from `await()` even when its body returned a value, so tests that check the
 * cancel-versus-complete rule look inside the body.)
 */
internal class Outcome<T>(val job: kotlinx.coroutines.Job) {
    @Volatile var result: Result<T>? = null
    val isCompleted: Boolean
        get() = result != null

    fun cancel() = job.cancel()

    suspend fun await(millis: Long): Result<T> {
        if (result == null) withTimeout(millis) { job.join() }
        return result!!
    }
}

internal fun <T> CoroutineScope.outcome(block: suspend () -> T): Outcome<T> {
    lateinit var o: Outcome<T>
    val job =
        launch(start = kotlinx.coroutines.CoroutineStart.LAZY) {
            o.result =
                try {
                    Result.success(block())
                } catch (t: Throwable) {
                    Result.failure(t)
                }
        }
    o = Outcome(job)
    job.start()
    return o
}

/** [size] bytes: round [round] and copy [which] in the first 8, then a pattern of both. */
internal fun payload(size: Int, round: Int, which: Int): UnsafeBuffer {
    val b = UnsafeBuffer(ByteArray(size))
    b.putInt(0, round)
    b.putInt(4, which)
    for (i in 8 until size) b.putByte(i, (round * 31 + which * 7 + i).toByte())
    return b
}

/** Checks a received [payload] of round [round] byte by byte; returns which copy it is. */
internal fun check(b: UnsafeBuffer, size: Int, round: Int): Int {
    check(b.getInt(0) == round) { "expected round $round, got ${b.getInt(0)}" }
    val which = b.getInt(4)
    for (i in 8 until size) check(b.getByte(i) == (round * 31 + which * 7 + i).toByte()) {
        "round $round copy $which corrupt at byte $i"
    }
    return which
}

/** Burns about [n] short steps of CPU, to shift one side of a race. */
internal fun busy(n: Int) {
    var x = 0L
    repeat(n) {
        x += it
        Thread.onSpinWait()
    }
    if (x == -1L) println()
}
