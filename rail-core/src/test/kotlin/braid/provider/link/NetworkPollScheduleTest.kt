package braid.provider.link

import braid.provider.link.NetworkPollSchedule.Companion.ACTIVE_NANOS
import braid.provider.link.NetworkPollSchedule.Companion.IDLE_POLL_NANOS
import braid.provider.link.NetworkPollSchedule.Companion.MAX_STRIDE
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThanOrEqual
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe

/**
 * The link's network polling schedule, driven as [LinkTransport.progress] drives it but with made-up times (no wall
 * clock): a poll decrements the countdown, reads "the clock" only when it runs out, and polls the network rail when
 * [NetworkPollSchedule.due] says so.
 */
class NetworkPollScheduleTest :
    FunSpec({
        /** A caller polling at made-up times; records clock reads and network polls. */
        class Caller(start: Long = 0) {
            var now = start
            val schedule = NetworkPollSchedule(now = start)
            var clockReads = 0
            val networkPolls = ArrayList<Long>()

            /** One poll at [now]; the network rail, if polled, reports [work]. Returns whether it was polled. */
            fun poll(work: Int = 0): Boolean {
                if (--schedule.countdown > 0) return false
                clockReads++
                if (!schedule.due(now)) return false
                networkPolls += now
                schedule.polled(now, work)
                return true
            }

            /** [n] polls [gap] ns apart. */
            fun spin(n: Int, gap: Long) =
                repeat(n) {
                    now += gap
                    poll()
                }
        }

        test(
            "a spinning caller reads the clock once per MAX_STRIDE polls and still polls an idle network rail every 20 µs or so"
        ) {
            val c = Caller()
            c.spin(100_000, 50) // past the first ACTIVE_NANOS, when a new link counts its network rail as busy
            c.clockReads = 0
            c.networkPolls.clear()
            c.spin(1_000_000, 50) // 50 ms of 50 ns polls
            withClue("clock reads over 1,000,000 polls") {
                c.clockReads shouldBeLessThanOrEqual 1_000_000 / MAX_STRIDE + 10
            }
            val gaps = c.networkPolls.zipWithNext { a, b -> b - a }.drop(5)
            gaps.min() shouldBeGreaterThanOrEqual IDLE_POLL_NANOS
            gaps.max() shouldBeLessThanOrEqual IDLE_POLL_NANOS + MAX_STRIDE * 50L
        }

        test(
            "a caller that starts parking between polls polls the network rail every time, once a stride of polls has shown it"
        ) {
            val c = Caller()
            c.spin(100_000, 50)
            val before = c.networkPolls.size
            c.spin(100, 1_000_000) // 1 ms parks
            withClue("network polls in 100 parked polls") {
                (c.networkPolls.size - before) shouldBeGreaterThanOrEqual 100 - MAX_STRIDE
            }
            c.schedule.polls shouldBe 1
        }

        test("a caller backing off (spin, yield, park) has a short stride by the time it parks") {
            val c = Caller()
            c.spin(100_000, 50)
            c.spin(100, 1_000) // yields of about 1 µs
            val before = c.networkPolls.size
            c.spin(100, 55_000) // the shortest parks, as Linux serves them
            withClue("network polls in 100 parked polls") {
                (c.networkPolls.size - before) shouldBeGreaterThanOrEqual 100 - 4
            }
        }

        test("work on the network rail makes it busy: polled every time until ACTIVE_NANOS pass without work") {
            val c = Caller()
            c.spin(100_000, 50)
            c.now += IDLE_POLL_NANOS
            while (!c.poll(work = 1)) c.now += 50
            val busySince = c.now
            repeat(1000) {
                c.now += 50
                c.poll() shouldBe true
            }
            c.now = busySince + ACTIVE_NANOS + 1
            c.poll() // the first poll past the busy period reads the clock and finds the rail idle
            val polled = c.networkPolls.size
            c.spin(MAX_STRIDE * 4, 50)
            c.networkPolls.size shouldBe polled
        }

        test("a send over the network rail makes the very next poll poll it, and keeps it busy") {
            val c = Caller()
            c.spin(100_000, 50)
            c.schedule.polls shouldBe MAX_STRIDE
            c.now += 50
            c.schedule.kick()
            c.poll() shouldBe true
            repeat(1000) {
                c.now += 50
                c.poll() shouldBe true
            }
            c.now += ACTIVE_NANOS
            c.poll()
            c.spin(100_000, 50)
            c.schedule.polls shouldBe MAX_STRIDE
        }
    })
