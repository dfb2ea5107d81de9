package braid.provider

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger

/**
 * The process's one rail timer: flags each period, an undriven action when nobody takes the flag, and a stuck action
 * stalls no other task.
 */
class RailTimerTest :
    FunSpec({
        test("a task's flag is up at once and raised again each period after the duty cycle took it") {
            val t = RailTimer.schedule("test flag", 5_000_000L)
            try {
                t.take() shouldBe true
                Deadline.await("the flag to be raised again") { t.due }
                t.take() shouldBe true
                val before = RailTimer.now()
                Deadline.await("the cached clock to move") { RailTimer.now() != before }
            } finally {
                t.cancel()
            }
        }

        test("a flag nobody takes for a period runs the undriven action; a cancelled task's does not run again") {
            val runs = AtomicInteger()
            val t = RailTimer.schedule("test undriven", 5_000_000L) { runs.incrementAndGet() }
            Deadline.await("the undriven action to run twice") { runs.get() >= 2 }
            t.cancel()
            Thread.sleep(50) // an action already handed out may still finish
            val after = runs.get()
            Thread.sleep(100)
            runs.get() shouldBe after
        }

        test("an undriven action stuck on a lock does not stop another task's from running") {
            val lock = Any()
            val release = CountDownLatch(1)
            val held = CountDownLatch(1)
            val holder =
                Thread {
                        synchronized(lock) {
                            held.countDown()
                            release.await()
                        }
                    }
                    .also { it.start() }
            held.await()
            val stuckRuns = AtomicInteger()
            val otherRuns = AtomicInteger()
            val stuck =
                RailTimer.schedule("test stuck", 5_000_000L) { synchronized(lock) { stuckRuns.incrementAndGet() } }
            try {
                // Let the stuck task reach the servant first, then start the other one.
                Thread.sleep(50)
                val other = RailTimer.schedule("test other", 5_000_000L) { otherRuns.incrementAndGet() }
                try {
                    Deadline.await("the other task's action to run while the first is stuck on its lock") {
                        otherRuns.get() >= 3
                    }
                    stuckRuns.get() shouldBe 0
                } finally {
                    other.cancel()
                }
            } finally {
                release.countDown()
                holder.join()
                stuck.cancel()
            }
            Deadline.await("the stuck action to finish once the lock is free") { stuckRuns.get() >= 1 }
        }
    })
