package braid.provider.tcp

import braid.core.Completion
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.driveUntil
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * Floods of unexpected messages: what the receiver holds stays bounded, and everything arrives once the receives come.
 */
class TcpFloodTest :
    FunSpec({
        test(
            "fifty unexpected 8 MiB messages wait as headers only (no payload byte held), then each arrives intact when its receive is posted"
        ) {
            TestFabric(rail = Rail.TCP, bufferSize = 256 * 1024, eagerSize = 16 * 1024).use { f ->
                val (a, b) = f.nodes
                val size = 8 shl 20
                val count = 50
                val out =
                    UnsafeBuffer(ByteBuffer.allocateDirect(size)).also {
                        for (i in 0 until size step 8) it.putLong(i, i.toLong() * 31)
                    }
                for (i in 0 until count) a.ep.tryTsend(out, 0, size, f.addrs[0][1], i.toLong(), i) shouldBe 0
                driveUntil(
                    "$count messages to arrive unexpected",
                    listOf(a, b),
                    30_000,
                    seen = { "${b.ep.srx.unexpectedCount} arrived" },
                ) {
                    b.ep.srx.unexpectedCount >= count
                }
                repeat(100) {
                    a.domain.progress()
                    b.domain.progress()
                }
                withClue(b.ep.describe()) {
                    b.ep.tcp.heldBytesMax shouldBe 0L
                    a.cq.read(Completion()) shouldBe -braid.core.Errno.EAGAIN // nothing was sent but the headers
                }
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                for (i in count - 1 downTo 0) { // in reverse, by tag: each one is fetched when asked for
                    rx.setMemory(0, size, 0)
                    b.ep.tryTrecv(rx, 0, size, FiAddr.UNSPEC, i.toLong(), 0, "rx$i") shouldBe 0
                    val c = b.await(1, millis = 30_000, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
                    c.len shouldBe size.toLong()
                    for (k in 0 until size step 4096) if (rx.getLong(k) != k.toLong() * 31)
                        error("message $i corrupt at byte $k")
                }
                a.await(count, others = listOf(b)).map { (it as Completion).context }.toSet() shouldBe
                    (0 until count).toSet()
                b.ep.tcp.heldBytesMax shouldBe 0L
            }
        }

        test(
            "a flood of small unexpected messages holds at most the credit window per sender; the rest wait at the sender"
        ) {
            TestFabric(3, Rail.TCP, eagerSize = 4096, unexpectedLimit = 512).use { f ->
                val (a, c, b) = f.nodes
                val window = b.ep.tcp.window
                val payload = UnsafeBuffer(ByteArray(3000))
                var queued = 0
                for (i in 0 until 2000) {
                    if (a.ep.tryTsend(payload, 0, 3000, f.addrs[0][2], 1, null) == 0) queued++
                    if (c.ep.tryTsend(payload, 0, 3000, f.addrs[1][2], 2, null) == 0) queued++
                }
                val settle = Deadline.of("the flood to settle", Duration.ofSeconds(5))
                var last = -1
                while (!settle.expired()) { // until nothing more moves (at most 5 s: the checks below hold either way)
                    repeat(200) {
                        a.domain.progress()
                        c.domain.progress()
                        b.domain.progress()
                    }
                    if (b.ep.srx.unexpectedCount == last) break
                    last = b.ep.srx.unexpectedCount
                }
                withClue(b.ep.describe()) {
                    (b.ep.tcp.heldBytesMax <= 2 * window) shouldBe true
                    (b.ep.srx.unexpectedCount < queued) shouldBe true
                }
                val rx = UnsafeBuffer(ByteArray(3000))
                repeat(queued) {
                    b.ep.tryTrecv(rx, 0, 3000, FiAddr.UNSPEC, 0, -1L, null) shouldBe 0
                    b.await(1, others = listOf(a, c))
                }
                (b.ep.tcp.heldBytesMax <= 2 * window) shouldBe true
            }
        }
    })
