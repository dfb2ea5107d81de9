package braid.provider.tcp

import braid.core.Completion
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.driveUntil
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * tcp grants credit lazily (`TcpCredit.kt`), so what it promises on the endpoint's bounds is credit its senders use: a
 * connected sender gets a first grant, not its fair share; one that floods grows to its share; one that goes idle has
 * the credit above its first grant asked back.
 */
class TcpLazyCreditTest :
    FunSpec({
        test(
            "eight connected senders that sent one message each are promised their first grants, not their shares of the bound"
        ) {
            TestFabric(9, Rail.TCP, unexpectedBytes = 64L shl 20).use { f ->
                val rx = f.nodes[0]
                val one = UnsafeBuffer(ByteArray(64))
                for (s in 1..8) rx.ep.tryTrecv(UnsafeBuffer(ByteArray(64)), 0, 64, FiAddr.UNSPEC, 1, 0, s) shouldBe 0
                for (s in 1..8) f.nodes[s].ep.tryTsend(one, 0, 64, f.addrs[s][0], 1, null) shouldBe 0
                rx.await(8, others = f.nodes.drop(1)).forEach { it.shouldBeInstanceOf<Completion>() }
                repeat(200) {
                    f.nodes.forEach {
                        it.domain.progress()
                        it.cq.readFrom(it.entry)
                    }
                }
                val t = rx.ep.tcp
                val promised = rx.ep.sink.bounds.rails.single().promisedBytes
                withClue(
                    "tcp promised $promised B with 8 senders, first grant ${t.stats.firstGrant()} B, share ${t.stats.creditShare()} B"
                ) {
                    t.stats.firstGrant() shouldBe
                        TcpFrameDescriptor.MIN_WINDOW.toLong() // 4 eager messages of 1 KiB are less
                    (t.stats.creditShare() > 16 * t.stats.firstGrant()) shouldBe true
                    (t.stats.committedTotal <= 8 * t.stats.firstGrant()) shouldBe true
                    (promised <= 8 * t.stats.firstGrant()) shouldBe true
                }
            }
        }

        test(
            "a flooding sender's credit grows past its first grant to its share, and once it idles the credit above the first grant is asked back"
        ) {
            val bound = 8L shl 20
            TestFabric(2, Rail.TCP, eagerSize = 16 shl 10, bufferSize = 1 shl 20, unexpectedBytes = bound).use { f ->
                val (rx, tx) = f.nodes
                val payload = UnsafeBuffer(ByteArray(16 shl 10) { it.toByte() })
                val count = 200 // 3.2 MiB unexpected: more than the first grant, less than the share (the 4 MiB window)
                repeat(count) { tx.ep.tryTsend(payload, 0, payload.capacity(), f.addrs[1][0], 3, null) shouldBe 0 }
                driveUntil("$count unexpected messages held", f.nodes, millis = 30_000, seen = { rx.ep.describe() }) {
                    tx.cq.readFrom(tx.entry)
                    rx.ep.srx.unexpectedCount >= count
                }
                val t = rx.ep.tcp
                withClue("held ${rx.ep.sink.heldBytesMax} B, first grant ${t.stats.firstGrant()} B") {
                    (rx.ep.sink.heldBytesMax > 8 * t.stats.firstGrant()) shouldBe true
                }
                val into = List(count) { UnsafeBuffer(ByteArray(16 shl 10)) }
                for ((i, b) in into.withIndex()) rx.ep.tryTrecv(b, 0, b.capacity(), FiAddr.UNSPEC, 3, 0, i) shouldBe 0
                rx.await(count, millis = 30_000, others = listOf(tx)).forEach { it.shouldBeInstanceOf<Completion>() }
                into.forEach { it.byteArray().contentEquals(payload.byteArray()) shouldBe true }
                // Idle now: within a few keepalive periods its committed credit is back to the first grant.
                driveUntil(
                    "the idle sender's credit to be asked back down to its first grant",
                    f.nodes,
                    millis = 30_000,
                    seen = {
                        "committed ${t.stats.committedTotal} B, first grant ${t.stats.firstGrant()} B; ${rx.ep.describe()}"
                    },
                ) {
                    tx.cq.readFrom(tx.entry)
                    t.stats.committedTotal <= t.stats.firstGrant()
                }
                (rx.ep.sink.heldBytesMax <= bound) shouldBe true
            }
        }
    })
