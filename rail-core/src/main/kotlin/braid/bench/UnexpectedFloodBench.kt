package braid.bench

import braid.core.Completion
import braid.core.FiAddr
import braid.core.Info
import braid.provider.shm.ShmParams
import braid.provider.tcp.TcpParams
import org.agrona.concurrent.UnsafeBuffer

/**
 * Held bytes under a flood of unexpected 16 KiB messages (a program that prints numbers, not a test): four senders in
 * this process send COUNT messages each to one receiver that posts no receive until they are done (or pushed back for
 * good); the receiver's endpoint-wide count of held unexpected bytes is sampled, then every message is received to
 * prove none was lost.
 *
 * After the README's build: `java -Xmx1g -cp samples/target/braid.jar braid.bench.UnexpectedFloodBench [COUNT]`
 * (`BRAID_UNEXPECTED_BYTES` sets the bound).
 */
public object UnexpectedFloodBench {
    private const val SIZE = 16 shl 10

    @JvmStatic
    public fun main(args: Array<String>) {
        val count = args.getOrNull(0)?.toInt() ?: 2000
        println("rail   messages  held max (bytes)  bound (bytes)  received  held max per rail (bytes)")
        // The bound is the settings' (BRAID_UNEXPECTED_BYTES in the environment; default: an eighth of the heap).
        run("shm", count) { LocalEndpoints(5, eager(LocalEndpoints.info("shm").with(ShmParams.RING_SIZE, 4 shl 20))) }
        run("tcp", count) { LocalEndpoints(5, eager(LocalEndpoints.info("tcp").with(TcpParams.BUFFER_SIZE, 1 shl 20))) }
        // Two senders on this host (shm) and two that the link reaches over its tcp rail.
        run("link", count) {
            val strings = listOf("shm+tcp:lo", "shm+tcp:lo", "shm+tcp:lo", "tcp:lo", "tcp:lo")
            LocalEndpoints(strings.map { links -> eagerRails(LocalEndpoints.info("link", links = links)) })
        }
    }

    /** [info] with an eager limit of one message. */
    private fun eager(info: Info): Info = info.copy(endpointAttr = info.endpointAttr.copy(eagerSize = SIZE))

    /** A link's [info] with every rail's eager limit one message. */
    private fun eagerRails(info: Info): Info = info.copy(rails = info.rails.map(::eager))

    private fun run(rail: String, count: Int, open: () -> LocalEndpoints) {
        open().use { f ->
            val rx = f.nodes[0]
            val senders = f.nodes.drop(1)
            val payload = UnsafeBuffer(ByteArray(SIZE))
            val sent = IntArray(senders.size)
            val entry = Completion()
            var idle = 0
            // Flood until every message is posted, or no sender got one in for a long while (pushed back).
            while (sent.any { it < count } && idle < 200_000) {
                var moved = false
                for ((s, node) in senders.withIndex()) {
                    if (
                        sent[s] < count &&
                            node.ep.tryTsend(payload, 0, SIZE, f.addr(s + 1, 0), (s + 1).toLong(), null) == 0
                    ) {
                        sent[s]++
                        moved = true
                    }
                    node.domain.progress()
                    node.cq.readFrom(entry)
                }
                rx.domain.progress()
                idle = if (moved) 0 else idle + 1
            }
            repeat(10_000) {
                senders.forEach {
                    it.domain.progress()
                    it.cq.readFrom(entry)
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
                    it.cq.readFrom(entry)
                }
                rx.domain.progress()
                while (rx.cq.readFrom(entry) == 1) received++
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
