package braid.provider

import braid.core.Completion
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The unexpected bounds are endpoint-wide on tcp and on a link too (issue 11, item 3): four senders flooding one
 * receiver with unexpected messages are pushed back once it holds its bound in messages
 * ([braid.core.RxAttr.unexpectedLimit]) or in bytes ([braid.core.CoreParams.UNEXPECTED_BYTES]) — not a window per
 * sender, and for a link the link's own bound, not its rail's — and every message still arrives, intact, once receives
 * are posted.
 */
class UnexpectedRailBoundTest :
    FunSpec({
        test("tcp: four senders are held to the endpoint's unexpected message limit, and none is lost") {
            TestFabric(5, Rail.TCP, eagerSize = 256, unexpectedLimit = 50).use { f ->
                val (msgs, _) = flood(f, perSender = 200, size = 64)
                (msgs <= 50) shouldBe true
                (msgs > 25) shouldBe true
            }
        }

        test(
            "tcp: four senders flooding 16 KiB unexpected messages are held to the endpoint's byte bound, and none is lost"
        ) {
            val limit = 256L shl 10
            TestFabric(5, Rail.TCP, eagerSize = 16 shl 10, unexpectedBytes = limit).use { f ->
                val (_, bytes) = flood(f, perSender = 100, size = 16 shl 10)
                (bytes <= limit) shouldBe true
                (bytes > limit / 2) shouldBe true
            }
        }

        test(
            "link: four senders reaching it over its tcp rail are held to the link's unexpected message limit, and none is lost"
        ) {
            TestFabric(
                    rail = Rail.link(listOf("shm+tcp:lo") + List(4) { "tcp:lo" }),
                    eagerSize = 256,
                    unexpectedLimit = 50,
                )
                .use { f ->
                    val (msgs, _) = flood(f, perSender = 200, size = 64)
                    withClue("held $msgs of 50 messages") {
                        (msgs <= 50) shouldBe true
                        (msgs > 25) shouldBe true
                    }
                }
        }

        test(
            "link: four senders (shm and tcp) flooding 16 KiB unexpected messages are held to the link's byte bound, and none is lost"
        ) {
            val limit = 256L shl 10
            TestFabric(
                    rail = Rail.link("shm+tcp:lo", "shm+tcp:lo", "shm+tcp:lo", "tcp:lo", "tcp:lo"),
                    eagerSize = 16 shl 10,
                    unexpectedBytes = limit,
                )
                .use { f ->
                    val (_, bytes) = flood(f, perSender = 100, size = 16 shl 10)
                    withClue("held $bytes of $limit bytes") {
                        (bytes <= limit) shouldBe true
                        (bytes > limit / 2) shouldBe true
                    }
                }
        }
    })

/**
 * Nodes 1.. of [f] each send [perSender] unexpected tagged messages of [size] bytes to node 0, driving everyone's
 * progress until all are posted and a while after; then node 0 posts a receive for each and checks every message
 * arrived intact. Returns the most messages and the most bytes node 0 held unexpected at once.
 */
internal fun flood(f: TestFabric, perSender: Int, size: Int): Pair<Int, Long> {
    val rx = f.nodes[0]
    val senders = f.nodes.drop(1)
    val payloads = senders.indices.map { s -> UnsafeBuffer(ByteArray(size) { (s * 31 + it).toByte() }) }
    val sent = IntArray(senders.size)
    val deadline = Deadline.of("the senders to post their messages ($perSender each)", Duration.ofSeconds(60))
    while (sent.any { it < perSender }) {
        for ((s, node) in senders.withIndex()) {
            if (
                sent[s] < perSender &&
                    node.ep.tryTsend(payloads[s], 0, size, f.addrs[s + 1][0], (s + 1).toLong(), null) == 0
            )
                sent[s]++
            node.domain.progress()
            node.cq.readFrom(node.entry)
        }
        rx.domain.progress()
        deadline.check { "posted ${sent.toList()}" }
    }
    repeat(3000) {
        senders.forEach {
            it.domain.progress()
            it.cq.readFrom(it.entry)
        }
        rx.domain.progress()
    }
    val heldMsgs = rx.ep.srx.stats().unexpectedMax
    val heldBytes = rx.ep.sink.heldBytesMax
    println(
        "held at most $heldMsgs messages, $heldBytes bytes unexpected with ${senders.size} x $perSender x $size B sent"
    )

    val buffers = List(senders.size * perSender) { UnsafeBuffer(ByteArray(size)) }
    for ((i, b) in buffers.withIndex()) rx.ep.tryTrecv(
        b,
        0,
        size,
        FiAddr.UNSPEC,
        (i / perSender + 1).toLong(),
        0,
        i,
    ) shouldBe 0
    val done = rx.await(buffers.size, millis = 60_000, others = senders)
    done.forEach { (it is Completion) shouldBe true }
    for ((i, b) in buffers.withIndex()) (b.byteArray().contentEquals(payloads[i / perSender].byteArray())) shouldBe true
    return heldMsgs to heldBytes
}
