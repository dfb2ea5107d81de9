package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.agrona.concurrent.UnsafeBuffer

class SmokeTest :
    FunSpec({
        test("a tagged message crosses the shm rail between two endpoints") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 7, 0, "r") shouldBe 0
                a.ep.tryTsend(buf("hello"), 0, 5, f.addrs[0][1], 7, "s") shouldBe 0
                val got = b.await(1, others = listOf(a)).single() as Completion
                got.context shouldBe "r"
                got.len shouldBe 5
                got.source shouldBe f.addrs[1][0]
                rx.text(5) shouldBe "hello"
                (a.await(1).single() as Completion).context shouldBe "s"
            }
        }
    })
