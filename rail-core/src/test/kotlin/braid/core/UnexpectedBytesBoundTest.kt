package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The unexpected queue is bounded in bytes, endpoint-wide (issue 11, item 2): four shm senders flooding one receiver
 * with unexpected 16 KiB messages are pushed back once it holds its bound, and every message still arrives, intact,
 * once receives are posted.
 */
class UnexpectedBytesBoundTest :
    FunSpec({
        test(
            "shm: four senders flooding 16 KiB unexpected messages are held to the endpoint's byte bound, and none is lost"
        ) {
            val limit = 256L shl 10
            val size = 16 shl 10
            val f = TestFabric(5, ringCapacity = 1 shl 20, eagerSize = size, unexpectedBytes = limit)
            f.use {
                val (_, held) = braid.provider.flood(f, perSender = 100, size = size)
                (held <= limit) shouldBe true
                (held > 0) shouldBe true
            }
        }
    })
