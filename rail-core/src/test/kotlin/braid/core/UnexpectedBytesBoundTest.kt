package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.agrona.concurrent.UnsafeBuffer

/**
 * The unexpected queue is bounded in bytes, endpoint-wide (issue 11, item 2): four shm senders
 * flooding one receiver with unexpected 16 KiB messages are pushed back once it holds its bound,
 * and every message still arrives, intact, once receives are posted.
 */
class UnexpectedBytesBoundTest : FunSpec({
    test("shm: four senders flooding 16 KiB unexpected messages are held to the endpoint's byte bound, and none is lost") {
        val limit = 256L shl 10
        val size = 16 shl 10
        val perSender = 100
        val f = TestFabric(5, ringCapacity = 1 shl 20, eagerSize = size, unexpectedBytes = limit)
        f.use {
            val rx = f.nodes[0]
            val senders = f.nodes.drop(1)
            val payloads = senders.indices.map { s -> UnsafeBuffer(ByteArray(size) { (s * 31 + it).toByte() }) }
            val sent = IntArray(senders.size)
            val deadline = System.nanoTime() + 60_000_000_000L
            while (sent.any { it < perSender }) {
                for ((s, node) in senders.withIndex()) {
                    if (sent[s] < perSender && node.ep.tryTsend(payloads[s], 0, size, f.addrs[s + 1][0], (s + 1).toLong(), null) == 0) sent[s]++
                    node.domain.progress()
                    node.cq.readFrom(node.entry)
                }
                rx.domain.progress()
                check(System.nanoTime() < deadline) { "the senders could not post their messages: ${sent.toList()}" }
            }
            repeat(2000) { senders.forEach { it.domain.progress(); it.cq.readFrom(it.entry) }; rx.domain.progress() }
            val held = rx.ep.sink.heldBytesMax
            println("held at most $held bytes of unexpected messages (bound $limit) with ${senders.size * perSender} x $size B sent")
            (held <= limit) shouldBe true
            (held > 0) shouldBe true

            // Every message arrives once receives are posted, intact.
            val buffers = List(senders.size * perSender) { UnsafeBuffer(ByteArray(size)) }
            for ((i, b) in buffers.withIndex()) rx.ep.tryTrecv(b, 0, size, FiAddr.UNSPEC, (i / perSender + 1).toLong(), 0, i) shouldBe 0
            val done = rx.await(buffers.size, millis = 60_000, others = senders)
            done.forEach { (it is Completion) shouldBe true }
            for ((i, b) in buffers.withIndex()) (b.byteArray().contentEquals(payloads[i / perSender].byteArray())) shouldBe true
        }
    }
})
