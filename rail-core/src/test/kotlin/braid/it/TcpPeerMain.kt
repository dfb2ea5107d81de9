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
import kotlin.system.exitProcess

/**
 * The other processes of the tcp multi-process tests, on 127.0.0.1. Usage:
 * `TcpPeerMain MODE DIR NAME ARGS…`; addresses are exchanged through files in DIR. Exits 0 on
 * success, 1 with a message otherwise.
 *
 * - `send DIR NAME RECEIVER SENDER_INDEX COUNT`: sends the [Traffic] stream to RECEIVER.
 * - `recv DIR NAME COUNT SENDER…`: receives COUNT messages from each SENDER with any-source
 *   receives and checks every byte, exactly once, in order per sender.
 * - `big-send DIR NAME RECEIVER SIZE`: sends one SIZE-byte message and drives progress until
 *   killed.
 * - `hold DIR NAME`: publishes its address and drives progress until killed; receives nothing.
 */
object TcpPeerMain {
    @JvmStatic
    fun main(args: Array<String>) {
        try {
            val node = Node(Paths.get(args[1]), args[2])
            when (args[0]) {
                "send" -> node.send(args[3], args[4].toInt(), args[5].toInt())
                "recv" -> node.recv(args[3].toInt(), args.drop(4))
                "big-send" -> node.bigSend(args[3], args[4].toInt())
                "hold" -> node.hold()
                else -> error("unknown mode ${args[0]}")
            }
            node.close()
            exitProcess(0)
        } catch (t: Throwable) {
            System.out.println("FAILED: $t")
            t.printStackTrace(System.out)
            System.out.flush()
            exitProcess(1)
        }
    }

    class Node(private val dir: Path, private val name: String) : AutoCloseable {
        private val info = Braid.getInfo(Hints(provider = "tcp", domainName = "lo")).first()
        private val fabric = Braid.fabric(info)
        private val domain = fabric.domain(info)
        val cq = domain.completionQueue()
        val av = domain.addressVector()
        val ep: Endpoint = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av); it.enable() }
        private val c = Completion()
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
            while (!Rendezvous.marked(dir, receiver)) { domain.progress(); check(System.nanoTime() < deadline) { "receiver never finished" }; Thread.sleep(1) }
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
            Rendezvous.mark(dir, name)
            println("OK received $total")
        }

        fun bigSend(receiver: String, size: Int) {
            val dest = peer(receiver)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            Traffic.fill(buffer, 7, 7, size)
            check(ep.tryTsend(buffer, 0, size, dest, 1, "big") == 0)
            println("SENDING $size bytes")
            System.out.flush()
            while (true) {
                if (poll() != null) println("COMPLETED: the whole message was sent")
                Thread.onSpinWait()
            }
        }

        fun hold() {
            println("HOLDING")
            System.out.flush()
            while (true) {
                domain.progress()
                Thread.sleep(1)
            }
        }

        override fun close() {
            ep.close()
            fabric.close()
        }
    }

    private val NO_CONTEXT = Any()
}
