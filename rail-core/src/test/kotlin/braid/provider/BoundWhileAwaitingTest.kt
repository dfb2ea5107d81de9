package braid.provider

import braid.core.Completion
import braid.core.FiAddr
import braid.core.MrAccess
import braid.core.Rail
import braid.core.TestFabric
import braid.core.direct
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * The endpoint's unexpected byte bound holds on tcp (and a link's tcp rail) while the receiver waits for frames from
 * the very sender whose unexpected messages are being held back — a rendezvous' DATA, an RMA read's reply — and those
 * frames still arrive (issue 11). Before the credit came from the endpoint's bounds, tcp read past the bound by up to
 * that sender's window here, since stopping the connection at the unexpected message would have stranded the awaited
 * frames behind it. Held bytes are the endpoint's own accounting, not timings.
 */
class BoundWhileAwaitingTest :
    FunSpec({
        val bound = 64L shl 10
        val rails =
            listOf<Pair<String, () -> TestFabric>>(
                "tcp" to { TestFabric(3, Rail.TCP, eagerSize = 8 shl 10, unexpectedBytes = bound) },
                "link" to
                    {
                        TestFabric(
                            3,
                            Rail.link("shm+tcp:lo", "tcp:lo", "tcp:lo"),
                            eagerSize = 8 shl 10,
                            unexpectedBytes = bound,
                        )
                    },
            )

        for ((rail, open) in rails) {
            test(
                "$rail: at the byte bound, a rendezvous receive from the sender whose unexpected messages wait completes, and held bytes never pass the bound"
            ) {
                open().use { f ->
                    val (rx, tx) = f.nodes
                    val sent = floodUnexpected(f, tx, count = 40)
                    withClue("held ${rx.ep.sink.heldBytes} of $bound") {
                        (rx.ep.sink.heldBytes > bound / 2) shouldBe true
                    } // at the bound: the rest of the flood waits
                    val big = UnsafeBuffer(ByteArray(1 shl 20) { (it * 7).toByte() })
                    val into = UnsafeBuffer(ByteArray(1 shl 20))
                    rx.ep.tryTrecv(into, 0, into.capacity(), FiAddr.UNSPEC, 1, 0, "big") shouldBe 0
                    tx.ep.tryTsend(big, 0, big.capacity(), f.addrs[1][0], 1, "big-send") shouldBe 0
                    rx.await(1, millis = 30_000, others = listOf(tx))
                        .single()
                        .shouldBeInstanceOf<Completion>()
                        .context shouldBe "big"
                    into.byteArray().contentEquals(big.byteArray()) shouldBe true
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                    drainUnexpected(f, tx, sent)
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                }
            }

            test(
                "$rail: at the byte bound, an RMA read from the sender whose unexpected messages wait completes, and held bytes never pass the bound"
            ) {
                open().use { f ->
                    val (rx, tx) = f.nodes
                    val region = direct(1 shl 20)
                    for (i in 0 until region.capacity() step 8) region.putLong(i, i.toLong())
                    val mr = tx.domain.registerMemory(region, MrAccess.REMOTE, 0)
                    val sent = floodUnexpected(f, tx, count = 40)
                    withClue("held ${rx.ep.sink.heldBytes} of $bound") {
                        (rx.ep.sink.heldBytes > bound / 2) shouldBe true
                    } // at the bound: the rest of the flood waits
                    val dst = direct(1 shl 20)
                    rx.ep.tryRead(dst, 0, dst.capacity(), f.addrs[0][1], 0, mr.key, "read") shouldBe 0
                    rx.await(1, millis = 30_000, others = listOf(tx))
                        .single()
                        .shouldBeInstanceOf<Completion>()
                        .context shouldBe "read"
                    for (i in 0 until dst.capacity() step 4096) dst.getLong(i) shouldBe i.toLong()
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                    drainUnexpected(f, tx, sent)
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                }
            }
        }

        test(
            "tcp: a sender that connects after an idle one was granted the whole bound still gets credit (the idle one gives its unspent credit back)"
        ) {
            TestFabric(3, Rail.TCP, eagerSize = 8 shl 10, unexpectedBytes = bound).use { f ->
                val (rx, idle, late) = f.nodes
                // rx connects to the idle node (a message to it): its connection takes the whole bound as its share.
                val one = UnsafeBuffer(ByteArray(8))
                idle.ep.tryTrecv(one, 0, 8, FiAddr.UNSPEC, 5, 0, "hello") shouldBe 0
                rx.ep.tryTsend(one, 0, 8, f.addrs[0][1], 5, null) shouldBe 0
                idle.await(1, others = listOf(rx)).single().shouldBeInstanceOf<Completion>()
                repeat(200) {
                    rx.domain.progress()
                    idle.domain.progress()
                }
                // The late sender's messages all have posted receives; without credit they could never go.
                val payload = UnsafeBuffer(ByteArray(8 shl 10) { it.toByte() })
                val into = List(20) { UnsafeBuffer(ByteArray(8 shl 10)) }
                for ((i, b) in into.withIndex()) rx.ep.tryTrecv(b, 0, b.capacity(), FiAddr.UNSPEC, 6, 0, i) shouldBe 0
                repeat(20) { late.ep.tryTsend(payload, 0, payload.capacity(), f.addrs[2][0], 6, null) shouldBe 0 }
                rx.await(20, millis = 30_000, others = listOf(idle, late)).forEach {
                    it.shouldBeInstanceOf<Completion>()
                }
                into.forEach { it.byteArray().contentEquals(payload.byteArray()) shouldBe true }
            }
        }
    })

/**
 * Has node 1 of [f] send [count] unexpected 8 KiB messages (tag 2) to node 0, as many as it can post, driving both
 * until nothing more moves; returns how many it posted.
 */
private fun floodUnexpected(f: TestFabric, tx: TestFabric.Node, count: Int): Int {
    val rx = f.nodes[0]
    val payload = UnsafeBuffer(ByteArray(8 shl 10) { (it + 3).toByte() })
    var sent = 0
    for (i in 0 until count) if (tx.ep.tryTsend(payload, 0, payload.capacity(), f.addrs[1][0], 2, null) == 0) sent++
    repeat(2000) {
        tx.domain.progress()
        tx.cq.readFrom(tx.entry)
        rx.domain.progress()
    }
    return sent
}

/** Node 0 of [f] takes the [sent] messages of [floodUnexpected], each intact. */
private fun drainUnexpected(f: TestFabric, tx: TestFabric.Node, sent: Int) {
    val rx = f.nodes[0]
    val into = List(sent) { UnsafeBuffer(ByteArray(8 shl 10)) }
    for ((i, b) in into.withIndex()) rx.ep.tryTrecv(b, 0, b.capacity(), FiAddr.UNSPEC, 2, 0, i) shouldBe 0
    rx.await(sent, millis = 30_000, others = listOf(tx)).forEach { it.shouldBeInstanceOf<Completion>() }
    for (b in into) for (j in 0 until b.capacity() step 1000) b.getByte(j) shouldBe (j + 3).toByte()
}
