package braid.provider

import braid.core.SharedReceiveContext
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The floor rule for N rails ([UnexpectedBounds.railFloorPercent]): each rail keeps the configured floor, but never
 * more than 1/N of the bounds, so the floors of shm and any number of network rails always fit in the bounds together
 * and every rail can still take its floor whatever the others hold or promise.
 */
class UnexpectedBoundsRailsTest :
    FunSpec({
        val limit = 90_000L

        fun bounds(percent: Int) = UnexpectedBounds(limit, SharedReceiveContext(900).let { srx -> { srx } }, percent)

        test("three rails at the largest floor, 50 %, keep a third each, and each can still take it") {
            val b = bounds(50)
            val rails = listOf(b.account("shm"), b.account("tcp:eth0"), b.account("tcp:eth1"))
            b.railFloorPercent shouldBe 33
            b.floorBytes shouldBe limit * 33 / 100
            b.floorMsgs shouldBe 900 * 33 / 100
            // Two rails promise all they may: the third still has its floor.
            rails[1].promise(rails[1].availableBytes(), 0)
            rails[2].promise(rails[2].availableBytes(), 0)
            rails[0].availableBytes() shouldBe b.floorBytes
            (rails.sumOf { it.claimBytes } + rails[0].availableBytes() <= limit) shouldBe true
        }

        test("a small floor is kept as configured however many rails there are") {
            val b = bounds(10)
            repeat(4) { b.account("r$it") }
            b.railFloorPercent shouldBe 10
        }
    })
