package braid.it

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.Endpoint
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer
import java.nio.file.Path
import java.nio.file.Paths

/**
 * The other processes of the multi-process tests, on any provider. Usage:
 * `PeerMain PROVIDER MODE DIR NAME ARGS…`; addresses are exchanged through files in DIR. PROVIDER
 * is `shm`, `tcp` or `link` (`shm+tcp`); tcp runs on the interface `BRAID_TCP_IFACE` names,
 * `lo` if unset. Exits 0 on success, 1 with a message otherwise.
 *
 * - `send DIR NAME RECEIVER SENDER_INDEX COUNT`: sends the [Traffic] stream to RECEIVER.
 * - `recv DIR NAME COUNT SENDER…`: receives COUNT messages from each SENDER with any-source
 *   receives and checks every byte, exactly once, in order per sender.
 * - `send-refused DIR NAME RECEIVER`: sends a small and a large message to RECEIVER, which
 *   holds another job key; both must fail with EACCES. Prints their messages, then drives
 *   progress until RECEIVER marks itself done.
 * - `slow-send DIR NAME RECEIVER SIZE`: sends one SIZE-byte message, drives progress slowly for a
 *   while, prints STALLED and stops driving it.
 * - `hold DIR NAME`: publishes its address and drives progress until killed; receives nothing.
 * - `big-send DIR NAME RECEIVER SIZE` / `big-recv DIR NAME SENDER SIZE`: one message of SIZE
 *   bytes (up to 2 GiB - 1, tag [BIG_TAG]), checked byte by byte; the sender prints SENDING
 *   once it is posted.
 * - `mesh DIR NAME COUNT PROCESS@HOST…`: every process named sends every other one COUNT tagged
 *   and COUNT untagged messages ([Mesh]) and receives theirs with any-source receives; then
 *   checks its per-rail counters against where its peers are (same HOST: shm, else the network).
 */
object PeerMain {
    const val BIG_TAG = 7L

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val node = Node(args[0], Paths.get(args[2]), args[3])
        when (args[1]) {
            "send" -> node.send(args[4], args[5].toInt(), args[6].toInt())
            "recv" -> node.recv(args[4].toInt(), args.drop(5))
            "send-refused" -> node.sendRefused(args[4])
            "slow-send" -> node.slowSend(args[4], args[5].toInt())
            "hold" -> node.hold()
            "big-send" -> node.bigSend(args[4], args[5].toInt())
            "big-recv" -> node.bigRecv(args[4], args[5].toInt())
            "mesh" -> Mesh(node, args[4].toInt(), args.drop(5)).run()
            else -> error("unknown mode ${args[1]}")
        }
        node.close()
    }

    /** The arguments that run [mode] of [provider] (everything after the main class). */
    fun args(provider: String, mode: String, dir: Path, name: String, vararg rest: Any): List<String> =
        listOf(provider, mode, "$dir", name) + rest.map { it.toString() }

    /** The hints a child uses for [provider]. */
    fun hints(provider: String): Hints = when (provider) {
        "shm" -> Hints(provider = "shm")
        "tcp" -> Hints(provider = "tcp", domainName = System.getenv("BRAID_TCP_IFACE") ?: "lo")
        "link" -> Hints(provider = "link", links = "shm+tcp:${System.getenv("BRAID_TCP_IFACE") ?: "lo"}")
        else -> error("unknown provider '$provider' (shm, tcp, link)")
    }

    class Node(provider: String, val dir: Path, val name: String) : AutoCloseable {
        private val info = Braid.getInfo(hints(provider)).first()
        private val fabric = Braid.fabric(info)
        val domain = fabric.domain(info)
        val cq = domain.completionQueue()
        val av = domain.addressVector()
        val ep: Endpoint = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av); it.enable() }
        val c = Completion()
        private val e = CompletionError()

        init {
            Rendezvous.publish(dir, name, ep.address)
        }

        fun peer(other: String): Long = av.insert(Rendezvous.lookup(dir, other))

        /** Reads one completion, failing on an error completion; returns its context or null if none yet. */
        fun poll(): Any? = when (val rc = cq.readFrom(c)) {
            1 -> c.context ?: NO_CONTEXT
            -Errno.EAGAIN -> null
            -Errno.EAVAIL -> { cq.readErr(e); error("error completion: ${Errno.name(e.err)} ${e.message}") }
            else -> error("cq read returned $rc")
        }

        fun mark() = Rendezvous.mark(dir, name)

        fun awaitMark(other: String, deadline: Long) {
            while (!Rendezvous.marked(dir, other)) {
                domain.progress()
                check(System.nanoTime() < deadline) { "'$other' never finished" }
                Thread.sleep(1)
            }
        }

        fun send(receiver: String, sender: Int, count: Int) {
            val dest = peer(receiver)
            val window = 8
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            val free = ArrayDeque((0 until window).toList())
            var seq = 0
            var done = 0
            val deadline = System.nanoTime() + 300_000_000_000L
            while (done < count) {
                while (seq < count && free.isNotEmpty()) {
                    val slot = free.first()
                    val size = Traffic.size(sender, seq)
                    Traffic.fill(slots[slot], sender, seq, size)
                    val rc = ep.tryTsend(slots[slot], 0, size, dest, Traffic.tag(sender, seq), contexts[slot])
                    if (rc == -Errno.EAGAIN) break
                    check(rc == 0) { "tsend returned ${Errno.name(rc)}" }
                    free.removeFirst()
                    seq++
                }
                val ctx = poll()
                if (ctx == null) { check(System.nanoTime() < deadline) { "sent $done of $count" }; continue }
                free.addLast(ctx as Int)
                done++
            }
            awaitMark(receiver, deadline)
            println("OK sent $count")
        }

        fun recv(count: Int, senders: List<String>) {
            val sources = senders.map { peer(it) }
            val window = 8
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            val postSeq = LongArray(window)
            var posts = 0L
            val total = count * senders.size
            // For each sender: the post sequence of the receive each message matched, by message seq.
            val matchedAt = Array(senders.size) { LongArray(count) { -1 } }
            fun post(slot: Int) {
                check(ep.tryTrecv(slots[slot], 0, Traffic.MAX_SIZE, FiAddr.UNSPEC, 0, -1L, contexts[slot]) == 0)
                postSeq[slot] = posts++
            }
            for (s in 0 until window) post(s)
            var got = 0
            val deadline = System.nanoTime() + 300_000_000_000L
            while (got < total) {
                val ctx = poll()
                if (ctx == null) { check(System.nanoTime() < deadline) { "received $got of $total" }; continue }
                val slot = ctx as Int
                val sender = (c.tag ushr 32).toInt()
                val seq = (c.tag and 0xffff_ffffL).toInt()
                check(sender in senders.indices && seq in 0 until count) { "unexpected tag 0x${java.lang.Long.toHexString(c.tag)}" }
                check(c.source == sources[sender]) { "message $sender/$seq reports source ${c.source}, expected ${sources[sender]}" }
                check(matchedAt[sender][seq] == -1L) { "message $sender/$seq delivered twice" }
                val size = Traffic.size(sender, seq)
                check(c.len == size.toLong()) { "message $sender/$seq has ${c.len} bytes, expected $size" }
                val bad = Traffic.check(slots[slot], sender, seq, size)
                check(bad < 0) { "message $sender/$seq corrupt at byte $bad of $size" }
                matchedAt[sender][seq] = postSeq[slot]
                got++
                post(slot)
            }
            for (s in senders.indices) {
                for (seq in 1 until count) {
                    check(matchedAt[s][seq] > matchedAt[s][seq - 1]) { "sender $s: message $seq matched before message ${seq - 1}" }
                }
            }
            mark()
            println("OK received $total")
        }

        fun sendRefused(receiver: String) {
            val dest = peer(receiver)
            val small = UnsafeBuffer(ByteArray(16))
            val large = UnsafeBuffer(ByteBuffer.allocateDirect(1 shl 20))
            check(ep.tryTsend(small, 0, 16, dest, 1, "small") == 0)
            check(ep.tryTsend(large, 0, 1 shl 20, dest, 2, "large") == 0)
            val refused = HashMap<Any?, String>()
            val deadline = System.nanoTime() + 60_000_000_000L
            while (refused.size < 2) {
                check(System.nanoTime() < deadline) { "sends not refused after 60 s: $refused" }
                when (val rc = cq.readFrom(c)) {
                    1 -> error("send '${c.context}' completed: the receiver took it")
                    -Errno.EAVAIL -> { cq.readErr(e); check(e.err == Errno.EACCES) { "send '${e.context}' failed with ${Errno.name(e.err)}, expected EACCES: ${e.message}" }; refused[e.context] = e.message }
                    -Errno.EAGAIN -> {}
                    else -> error("cq read returned $rc")
                }
            }
            val again = ep.tryTsend(small, 0, 16, dest, 3, null)
            check(again == -Errno.EACCES) { "a send after the refusal returned ${Errno.name(again)}, expected EACCES" }
            println("OK refused: ${refused.values.joinToString(" | ")}")
            System.out.flush()
            awaitMark(receiver, deadline)
        }

        fun slowSend(receiver: String, size: Int) {
            val dest = peer(receiver)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            Traffic.fill(buffer, 0, 0, size)
            check(ep.tryTsend(buffer, 0, size, dest, 1, "slow") == 0)
            println("SENDING through a ${ep.info.endpointAttr.ringCapacity}-byte ring")
            // Drive the transfer for a while, then stop driving it: the receiver is left mid-transfer.
            repeat(200) {
                if (poll() != null) println("COMPLETED early: the whole message was sent")
                Thread.sleep(2)
            }
            println("STALLED")
            System.out.flush()
            Thread.sleep(600_000)
        }

        fun hold() {
            println("HOLDING")
            System.out.flush()
            val deadline = System.nanoTime() + 600_000_000_000L
            while (System.nanoTime() < deadline) {
                domain.progress()
                Thread.sleep(1)
            }
        }

        fun bigSend(receiver: String, size: Int) {
            val dest = peer(receiver)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            Traffic.fill(buffer, 7, 7, size)
            check(ep.tryTsend(buffer, 0, size, dest, BIG_TAG, "big") == 0)
            println("SENDING $size bytes")
            System.out.flush()
            val deadline = System.nanoTime() + 300_000_000_000L
            while (poll() == null) check(System.nanoTime() < deadline) { "the $size-byte send did not complete" }
            awaitMark(receiver, deadline)
            println("OK sent $size bytes")
        }

        fun bigRecv(sender: String, size: Int) {
            val src = peer(sender)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            check(ep.tryTrecv(buffer, 0, size, src, BIG_TAG, 0, "big") == 0)
            val deadline = System.nanoTime() + 300_000_000_000L
            while (poll() == null) check(System.nanoTime() < deadline) { "the $size-byte receive did not complete" }
            check(c.len == size.toLong()) { "received ${c.len} bytes, expected $size" }
            val bad = Traffic.check(buffer, 7, 7, size)
            check(bad < 0) { "the $size-byte message is corrupt at byte $bad" }
            mark()
            println("OK received $size bytes intact")
        }

        override fun close() {
            ep.close()
            fabric.close()
        }
    }

    private val NO_CONTEXT = Any()
}
