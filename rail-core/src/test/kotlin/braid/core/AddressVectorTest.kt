package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe

/** The address-vector bookkeeping contract ([avContract]) on each rail: shm, tcp (loopback) and the link. */
class AddressVectorTest :
    FunSpec({
        avContract("shm") { count -> TestFabric(count) }
        avContract("tcp") { count -> TestFabric(count, Rail.TCP) }
        avContract("link") { count -> TestFabric(count, Rail.LINK) }

        for (rail in AvScale.rails) {
            test(
                "the $rail address vector of a million peers holds at most 32 bytes of heap per entry, and resolves the first and last"
            ) {
                val (fabric, domain) = AvScale.open(rail)
                try {
                    val before = AvScale.heapAfterGc()
                    val av = domain.addressVector()
                    AvScale.fill(av, rail, 0, 1_000_000)
                    val perEntry = (AvScale.heapAfterGc() - before) / 1_000_000
                    println("$rail AV: $perEntry B of heap per entry at 1,000,000 entries")
                    perEntry shouldBeLessThanOrEqual 32L
                    av.count shouldBe 1_000_000
                    av.lookup(0).toList() shouldBe AvScale.blob(rail, 0).toList()
                    av.lookup(999_999).toList() shouldBe AvScale.blob(rail, 999_999).toList()
                    av.insert(AvScale.blob(rail, 500_000)) shouldBe 500_000L // a duplicate finds its entry
                    av.close()
                } finally {
                    fabric.close()
                }
            }
        }
    })
