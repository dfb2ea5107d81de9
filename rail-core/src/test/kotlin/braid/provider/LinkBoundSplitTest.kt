package braid.provider

import braid.core.Completion
import braid.core.Errno
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
 * A link's rails share the endpoint's unexpected bounds without one rail's promises starving the other (issue 11): node
 * 0 is a link (shm + tcp) whose tcp rail has [REMOTE] connected senders — link endpoints with no shm rail, so they
 * really reach it over tcp — and node 1 a same-host peer its shm rail carries. Credit tcp has promised but its senders
 * have not used must not leave shm room for nothing: shm would push back every unexpected same-host message, and a
 * receive posted for a later one would wait for ever behind the first, left in the ring. Senders that do flood are
 * still held to the bound by credit while same-host traffic flows.
 */
class LinkBoundSplitTest :
    FunSpec({
        test(
            "link: with $REMOTE idle tcp senders connected at the default bound and window, a same-host peer's unexpected messages are held and received last-first"
        ) {
            TestFabric(rail = links(), eagerSize = 8 shl 10, ringCapacity = 1 shl 20, unexpectedBytes = 64L shl 20)
                .use { f ->
                    val rx = f.nodes[0]
                    // Each remote sender connects and sends one message, which is received: then it idles.
                    val hello = UnsafeBuffer(ByteArray(64))
                    val into = List(REMOTE) { UnsafeBuffer(ByteArray(64)) }
                    for ((i, b) in into.withIndex()) rx.ep.tryTrecv(b, 0, 64, FiAddr.UNSPEC, HELLO, 0, i) shouldBe 0
                    for (s in 2 until f.nodes.size) f.nodes[s]
                        .ep
                        .tryTsend(hello, 0, 64, f.addrs[s][0], HELLO, null) shouldBe 0
                    rx.await(REMOTE, millis = 30_000, others = f.nodes.drop(1)).forEach {
                        it.shouldBeInstanceOf<Completion>()
                    }
                    repeat(500) {
                        f.nodes.forEach {
                            it.domain.progress()
                            it.cq.readFrom(it.entry)
                        }
                    }

                    sameHostLastFirst(f)
                }
        }

        test(
            "link: $REMOTE tcp senders flooding unexpected messages are held to the bound by credit while a same-host peer's unexpected messages are held and received last-first"
        ) {
            val bound = 2L shl 20
            TestFabric(rail = links(), eagerSize = 8 shl 10, ringCapacity = 1 shl 20, unexpectedBytes = bound).use { f
                ->
                val rx = f.nodes[0]
                val payload = UnsafeBuffer(ByteArray(8 shl 10) { (it + 5).toByte() })
                val posted = IntArray(f.nodes.size)
                // 24 x 16 x 8 KiB = 3 MiB offered against a 2 MiB bound: part of it must wait at the senders.
                driveUntil(
                    "the flood to stop moving (every remote sender posted $FLOOD or is held back)",
                    f.nodes,
                    millis = 60_000,
                ) {
                    var moved = false
                    for (s in 2 until f.nodes.size) {
                        if (
                            posted[s] < FLOOD &&
                                f.nodes[s]
                                    .ep
                                    .tryTsend(payload, 0, payload.capacity(), f.addrs[s][0], FLOOD_TAG, null) == 0
                        ) {
                            posted[s]++
                            moved = true
                        }
                        f.nodes[s].cq.readFrom(f.nodes[s].entry)
                    }
                    !moved && posted.drop(2).all { it > 0 }
                }
                repeat(2000) {
                    f.nodes.forEach {
                        it.domain.progress()
                        it.cq.readFrom(it.entry)
                    }
                }
                withClue("held ${rx.ep.sink.heldBytesMax} of $bound bytes") {
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                }

                sameHostLastFirst(f)

                withClue("held ${rx.ep.sink.heldBytesMax} of $bound bytes") {
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                }
                // Every flooded message still arrives, intact, once receives are posted.
                val total = REMOTE * FLOOD
                val bufs = List(total) { UnsafeBuffer(ByteArray(8 shl 10)) }
                for ((i, b) in bufs.withIndex()) rx.ep.tryTrecv(
                    b,
                    0,
                    b.capacity(),
                    FiAddr.UNSPEC,
                    FLOOD_TAG,
                    0,
                    i,
                ) shouldBe 0
                val others = f.nodes.drop(1)
                driveUntil("the remote senders' $total flooded messages", f.nodes, millis = 60_000) {
                    for (s in 2 until f.nodes.size) {
                        while (
                            posted[s] < FLOOD &&
                                f.nodes[s]
                                    .ep
                                    .tryTsend(payload, 0, payload.capacity(), f.addrs[s][0], FLOOD_TAG, null) == 0
                        ) posted[s]++
                    }
                    posted.drop(2).all { it == FLOOD }
                }
                rx.await(total, millis = 60_000, others = others).forEach { it.shouldBeInstanceOf<Completion>() }
                for (b in bufs) b.byteArray().contentEquals(payload.byteArray()) shouldBe true
                withClue("held ${rx.ep.sink.heldBytesMax} of $bound bytes") {
                    (rx.ep.sink.heldBytesMax <= bound) shouldBe true
                }
            }
        }
    })

private const val REMOTE = 24
private const val FLOOD = 16
private const val HELLO = 100L
private const val FLOOD_TAG = 200L
private const val SAME_HOST = 16
private const val SAME_HOST_SIZE = 8 shl 10

/** Node 0 a link over shm and tcp, node 1 a same-host link (reached over shm), then [REMOTE] tcp-only links. */
private fun links(): Rail = Rail.link(listOf("shm+tcp:lo", "shm+tcp:lo") + List(REMOTE) { "tcp:lo" })

/**
 * Node 1 of [f] sends [SAME_HOST] unexpected 8 KiB messages (tags 1..) to node 0 over shm, which then posts their
 * receives last first: each completes, with its own bytes. (128 KiB in all, eager over shm: more than the slack tcp's
 * accounting leaves by chance.)
 */
private fun sameHostLastFirst(f: TestFabric) {
    val rx = f.nodes[0]
    val peer = f.nodes[1]
    val payloads = List(SAME_HOST) { m -> UnsafeBuffer(ByteArray(SAME_HOST_SIZE) { (m * 11 + it).toByte() }) }
    for ((m, p) in payloads.withIndex()) peer.ep.tryTsend(p, 0, p.capacity(), f.addrs[1][0], m + 1L, null) shouldBe 0
    repeat(500) {
        f.nodes.forEach {
            it.domain.progress()
            it.cq.readFrom(it.entry)
        }
    }
    val into = List(SAME_HOST) { UnsafeBuffer(ByteArray(SAME_HOST_SIZE)) }
    for (m in SAME_HOST - 1 downTo 0) {
        rx.ep.tryTrecv(into[m], 0, SAME_HOST_SIZE, FiAddr.UNSPEC, m + 1L, 0, "same-host ${m + 1}") shouldBe 0
        var rc = -Errno.EAGAIN
        driveUntil(
            "the same-host message with tag ${m + 1}, received after those with later tags",
            f.nodes,
            seen = { rx.ep.describe() },
        ) {
            rc = rx.cq.readFrom(rx.entry)
            rc != -Errno.EAGAIN
        }
        withClue("the completion of the same-host message with tag ${m + 1}") {
            rc shouldBe 1
            rx.entry.context shouldBe "same-host ${m + 1}"
        }
        into[m].byteArray().contentEquals(payloads[m].byteArray()) shouldBe true
    }
}
