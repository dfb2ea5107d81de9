package braid.core

import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.util.concurrent.CancellationException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import org.agrona.concurrent.UnsafeBuffer

/**
 * The outcomes of the `CompletableFuture` forms, whose operations come from the domain's pool (a future born complete
 * gives its operation straight back, a pending one keeps it): each completes exactly once with its own operation's
 * outcome, however many threads join it and whatever the pool hands out meanwhile.
 */
class FutureOutcomeTest :
    FunSpec({
        test("a receive future joined from several threads completes once, and every joiner gets its completion") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                val r = b.ep.trecvAsync(rx, 0, 16, FiAddr.UNSPEC, 4)
                val dependents = AtomicInteger()
                r.whenComplete { _, _ -> dependents.incrementAndGet() }
                val started = CountDownLatch(4)
                val got = arrayOfNulls<Completion>(4)
                val joiners =
                    List(4) { i ->
                        thread(name = "joiner-$i") {
                            started.countDown()
                            got[i] = if (i % 2 == 0) r.join() else r.get(30, TimeUnit.SECONDS)
                        }
                    }
                started.await()
                a.ep.tinjectAsync(buf("several"), 0, 7, f.addrs[0][1], 4).join()
                joiners.forEach { it.join(30_000) }
                joiners.forEach { it.isAlive shouldBe false }
                got.forEach { c ->
                    c!!.len shouldBe 7L
                    c shouldBeSameInstanceAs got[0]
                }
                r.join() shouldBeSameInstanceAs got[0]
                dependents.get() shouldBe 1
                rx.text(7) shouldBe "several"
                r.complete(Completion()) shouldBe false // completed once: nothing replaces it
            }
        }

        test("pending futures keep their own outcomes while the pool recycles the operations of inject futures") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                val rx = List(8) { UnsafeBuffer(ByteArray(16)) }
                repeat(50) { round ->
                    // Eight receives pending, then eight injects (each born complete, its operation back in the
                    // pool at once) in reverse tag order, each of a length of its own.
                    val receives = List(8) { t -> b.ep.trecvAsync(rx[t], 0, 16, FiAddr.UNSPEC, 100L + t) }
                    val injects =
                        (7 downTo 0).map { t ->
                            val out = UnsafeBuffer(ByteArray(16))
                            out.putInt(0, round * 8 + t)
                            a.ep.tinjectAsync(out, 0, 4 + t, toB, 100L + t)
                        }
                    injects.forEach { it.isDone shouldBe true }
                    injects.forEachIndexed { i, s -> s.join().len shouldBe (4L + 7 - i) }
                    CompletableFuture.allOf(*receives.toTypedArray()).get(30, TimeUnit.SECONDS)
                    receives.forEachIndexed { t, r ->
                        val c = r.join()
                        c.tag shouldBe 100L + t
                        c.len shouldBe (4L + t)
                        rx[t].getInt(0) shouldBe round * 8 + t
                    }
                    // Every completion object is the future's own, never one reused by a later operation.
                    receives.map { it.join() }.toSet().size shouldBe 8
                }
            }
        }

        test("a cancelled receive future stays cancelled, runs its dependents once, and leaves the message") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val cancelled = b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 6)
                val dependents = AtomicInteger()
                cancelled.whenComplete { _, _ -> dependents.incrementAndGet() }
                cancelled.cancel(false) shouldBe true
                cancelled.cancel(false) shouldBe true // already cancelled: still true, and nothing runs again
                shouldThrow<CancellationException> { cancelled.join() }
                a.ep.tinjectAsync(buf("kept"), 0, 4, f.addrs[0][1], 6).join()
                val rx = UnsafeBuffer(ByteArray(8))
                b.ep.trecvAsync(rx, 0, 8, FiAddr.UNSPEC, 6).get(30, TimeUnit.SECONDS).len shouldBe 4L
                rx.text(4) shouldBe "kept"
                cancelled.isCancelled shouldBe true
                dependents.get() shouldBe 1
            }
        }

        test("a failed future carries the error's code and names the operation, refused or failed in flight") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                // Refused at the start (an address not in the AV): born failed.
                val refused = a.ep.tsendAsync(buf("x"), 0, 1, 12345L, 1)
                refused.isCompletedExceptionally shouldBe true
                val e1 = shouldThrow<ExecutionException> { refused.get() }.cause as FabricException
                e1.code shouldBe Errno.EINVAL
                e1.message!! shouldContain "12345"
                // Failed in flight (truncated): completes exceptionally once the message arrives.
                val trunc = b.ep.trecvAsync(UnsafeBuffer(ByteArray(2)), 0, 2, FiAddr.UNSPEC, 3)
                val failures = AtomicInteger()
                trunc.whenComplete { _, t -> if (t != null) failures.incrementAndGet() }
                a.ep.tinjectAsync(buf("too long"), 0, 8, f.addrs[0][1], 3).join()
                val e2 = shouldThrow<ExecutionException> { trunc.get(30, TimeUnit.SECONDS) }.cause as FabricException
                e2.code shouldBe Errno.ETRUNC
                e2.message!! shouldContain "trecv"
                Deadline.await("the failure's dependent") { failures.get() == 1 }
                failures.get() shouldBe 1
            }
        }

        test("a settled future keeps its own outcome while its operation, back in the pool, carries another receive") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                val rx = UnsafeBuffer(ByteArray(16))
                val first = b.ep.trecvAsync(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 21)
                a.ep.tinjectAsync(buf("first"), 0, 5, toB, 21).join()
                val c1 = first.get(30, TimeUnit.SECONDS)
                val op = (first as OpFuture).op
                // Settled, and its operation let go (by whichever thread fired it): the pool takes it back.
                Deadline.await("the first future's operation to be let go") { op.future == null }
                // The next receive future takes it; this one fails: its error is its own, however the operation is
                // used next.
                val failed = b.ep.trecvAsync(UnsafeBuffer(ByteArray(2)), 0, 2, FiAddr.UNSPEC, 23)
                (failed as OpFuture).op shouldBeSameInstanceAs op
                a.ep.tinjectAsync(buf("too long"), 0, 8, toB, 23).join()
                shouldThrow<ExecutionException> { failed.get(30, TimeUnit.SECONDS) }
                Deadline.await("the failed future's operation to be let go") { op.future == null }
                // And the next takes it again, while both stale futures are still held.
                val second = b.ep.trecvAsync(rx, 0, 16, FiAddr.UNSPEC, 22)
                (second as OpFuture).op shouldBeSameInstanceAs op
                val third = b.ep.trecvAsync(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 24)
                // The stale futures report their own outcomes, and cancelling them leaves the receives now on their
                // operations alone.
                first.cancel(true) shouldBe false
                failed.cancel(true) shouldBe false
                first.isCancelled shouldBe false
                first.join() shouldBeSameInstanceAs c1
                c1.len shouldBe 5L
                c1.tag shouldBe 21L
                first.toString() shouldContain "done"
                val e = shouldThrow<ExecutionException> { failed.get() }.cause as FabricException
                e.code shouldBe Errno.ETRUNC
                e.message!! shouldContain "tag 0x17"
                second.isDone shouldBe false
                third.isDone shouldBe false
                a.ep.tinjectAsync(buf("second!"), 0, 7, toB, 22).join()
                second.get(30, TimeUnit.SECONDS).len shouldBe 7L
                rx.text(7) shouldBe "second!"
                third.cancel(false) shouldBe true
                first.join() shouldBeSameInstanceAs c1
                first.isCompletedExceptionally shouldBe false
                failed.isCompletedExceptionally shouldBe true
            }
        }
    })
