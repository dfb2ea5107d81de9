package braid.provider

import braid.core.SharedReceiveContext
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The one rule for who may take what of an endpoint's unexpected bounds ([UnexpectedBounds]): one rail alone may take
 * all of them; each rail of a link keeps its floor against the other's promises and held messages; above the floors the
 * rails share what is free; a message larger than everything is held only when nothing at all is held or promised.
 */
class UnexpectedBoundsTest :
    FunSpec({
        val limit = 100_000L

        fun bounds(msgs: Int = 1000) = UnexpectedBounds(limit, SharedReceiveContext(msgs).let { srx -> { srx } }, 10)

        test("a rail alone may claim the whole bound, and is pushed back only past it") {
            val b = bounds()
            val shm = b.account("shm")
            shm.availableBytes() shouldBe limit
            shm.held(limit - 10, 1)
            shm.mustPushBack(10) shouldBe false
            shm.mustPushBack(11) shouldBe true
        }

        test("a link's tcp promises leave the shm rail its floor, however much credit they ask for") {
            val b = bounds()
            val shm = b.account("shm")
            val tcp = b.account("tcp")
            // tcp may promise all but shm's floor (10 %).
            tcp.availableBytes() shouldBe limit - limit / 10
            tcp.promise(tcp.availableBytes(), 0)
            shm.availableBytes() shouldBe limit / 10
            shm.mustPushBack(limit / 10) shouldBe false
            shm.held(limit / 10, 1)
            shm.mustPushBack(1) shouldBe true
        }

        test(
            "each rail keeps its floor against the other's held messages too, and above the floors they share what is free"
        ) {
            val b = bounds()
            val shm = b.account("shm")
            val tcp = b.account("tcp")
            shm.held(50_000, 5)
            // tcp: the bound less shm's claim (above its floor).
            tcp.availableBytes() shouldBe 50_000
            // shm: the bound less tcp's floor, tcp claiming nothing yet.
            shm.availableBytes() shouldBe limit - limit / 10
            shm.held(40_000, 4)
            shm.mustPushBack(1) shouldBe true // tcp's floor is left
            tcp.availableBytes() shouldBe limit / 10
        }

        test("the message bound is split the same way, with a floor per rail") {
            val b = bounds(msgs = 100)
            val shm = b.account("shm")
            val tcp = b.account("tcp")
            tcp.promise(0, tcp.availableMsgs())
            tcp.promisedMsgs shouldBe 90
            shm.availableMsgs() shouldBe 10
            repeat(10) {
                shm.mustPushBack(0) shouldBe false
                shm.held(0, 1)
            }
            shm.mustPushBack(0) shouldBe true
        }

        test("a message larger than the whole bound is held only when nothing at all is held or promised") {
            val b = bounds()
            val shm = b.account("shm")
            val tcp = b.account("tcp")
            shm.mustPushBack(limit * 2) shouldBe false
            tcp.promise(1, 0)
            shm.mustPushBack(limit * 2) shouldBe true
        }
    })
