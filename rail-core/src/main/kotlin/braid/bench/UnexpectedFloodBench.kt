package braid.bench

import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import org.agrona.concurrent.UnsafeBuffer

/**
 * Held bytes under a flood of unexpected 16 KiB messages (a program that prints numbers, not a test): four senders in
 * this process send COUNT messages each to one receiver that posts no receive until they are done (or pushed back for
 * good); the receiver's endpoint-wide count of held unexpected bytes is sampled, then every message is received to
 * prove none was lost.
 *
 * Run with `bench/unexpected-flood.sh [COUNT]`.
 */
object UnexpectedFloodBench {
    private const val SIZE = 16 shl 10

    @JvmStatic
    fun main(args: Array<String>) {
        val count = args.getOrNull(0)?.toInt() ?: 2000
        println("rail   messages  held max (bytes)  bound (bytes)  received  held max per rail (bytes)")
        // The bound, passed through the API (the test fabrics ignore the environment otherwise); 0: the default.
        val bound = System.getenv("BRAID_UNEXPECTED_BYTES")?.toLong() ?: 0L
        run("shm", count) { TestFabric(5, ringCapacity = 4 shl 20, eagerSize = SIZE, unexpectedBytes = bound) }
        run("tcp", count) { TestFabric(5, Rail.TCP, bufferSize = 1 shl 20, eagerSize = SIZE, unexpectedBytes = bound) }
        // Two senders on this host (shm) and two that the link reaches over its tcp rail.
        run("link", count) {
            TestFabric(
                rail = Rail.link("shm+tcp:lo", "shm+tcp:lo", "shm+tcp:lo", "tcp:lo", "tcp:lo"),
                eagerSize = SIZE,
                unexpectedBytes = bound,
            )
        }
    }

    private fun run(rail: String, count: Int, open: () -> TestFabric) {
        open().use { f ->
            val rx = f.nodes[0]
            val senders = f.nodes.drop(1)
            val payload = UnsafeBuffer(ByteArray(SIZE))
            val sent = IntArray(senders.size)
            var idle = 0
            // Flood until every message is posted, or no sender got one in for a long while (pushed back).
            while (sent.any { it < count } && idle < 200_000) {
                var moved = false
                for ((s, node) in senders.withIndex()) {
                    if (
                        sent[s] < count &&
                            node.ep.tryTsend(payload, 0, SIZE, f.addrs[s + 1][0], (s + 1).toLong(), null) == 0
                    ) {
                        sent[s]++
                        moved = true
                    }
                    node.domain.progress()
                    node.cq.readFrom(node.entry)
                }
                rx.domain.progress()
                idle = if (moved) 0 else idle + 1
            }
            repeat(10_000) {
                senders.forEach {
                    it.domain.progress()
                    it.cq.readFrom(it.entry)
                }
                rx.domain.progress()
            }
            val held = rx.ep.sink.heldBytesMax
            val total = sent.sum()
            val buffers = Array(senders.size) { UnsafeBuffer(ByteArray(SIZE)) }
            var received = 0
            for ((s, n) in sent.withIndex()) repeat(n) {
                while (rx.ep.tryTrecv(buffers[s], 0, SIZE, FiAddr.UNSPEC, (s + 1).toLong(), 0, null) != 0) rx.domain
                    .progress()
            }
            val deadline = System.nanoTime() + 120_000_000_000L
            while (received < total && System.nanoTime() < deadline) {
                senders.forEach {
                    it.domain.progress()
                    it.cq.readFrom(it.entry)
                }
                rx.domain.progress()
                while (rx.cq.readFrom(rx.entry) == 1) received++
            }
            val perRail = rx.ep.sink.bounds.rails.joinToString(" ") { "${it.rail} ${it.heldBytesMax}" }
            println(
                String.format(
                    "%-6s %-9d %-17d %-14d %-9d %s",
                    rail,
                    total,
                    held,
                    rx.ep.sink.unexpectedBytesLimit,
                    received,
                    perRail,
                )
            )
        }
    }
}
