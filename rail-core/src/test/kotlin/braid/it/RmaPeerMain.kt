package braid.it

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.Fabric
import braid.core.Hints
import braid.core.Info
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.OpFlags
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import kotlin.system.exitProcess

/**
 * The other processes of the RMA and deferred-work multi-process tests. Usage:
 * `RmaPeerMain MODE PROVIDER DIR NAME ARGS…` (PROVIDER `shm`, `tcp` on loopback, or `link`);
 * addresses are exchanged through files in DIR. Exits 0 after printing OK, 1 with a message.
 *
 * - `target PROVIDER DIR NAME INITIATOR`: the peer of [DeferredWorkMultiProcessIT]'s initiator:
 *   registers region [KEY] ([REGION] bytes, INT64 [START] at 0, a pattern at [PATTERN_AT]),
 *   sends it an untagged and a tagged (tag 9) message, receives its untagged and tagged (tag 7)
 *   messages, and once the initiator marks itself done checks what its deferred writes and
 *   atomics left in the region.
 * - `fetch-add PROVIDER DIR NAME TARGET INDEX COUNT`: COUNT fetch-adds of INDEX+1 to TARGET's
 *   region [KEY] at 0, a window of them in flight, writing each fetched old value to NAME.fetched.
 * - `serve PROVIDER DIR NAME`: registers region [KEY] ([REGION] bytes) and drives progress until
 *   DIR holds `stop.done` (a target for benchmarks).
 */
object RmaPeerMain {
    const val KEY = 77L
    const val REGION = 4096
    const val START = 1000L
    const val PATTERN_AT = 512
    const val PATTERN_LENGTH = 256
    const val WRITE_AT = 100
    const val WRITTEN = "written-by-deferred-work"
    const val FROM_TARGET = "untagged-from-target"
    const val TAGGED_FROM_TARGET = "tagged-from-target"
    const val TO_TARGET = "deferred-send"
    const val TAGGED_TO_TARGET = "deferred-tsend"
    /** What the initiator's deferred atomics leave at offset 0: +5, +10, then CSWAP(1015 -> FINAL). */
    const val FINAL = 7L

    fun pattern(i: Int): Byte = (i * 31 + 7).toByte()

    @JvmStatic
    fun main(args: Array<String>) {
        try {
            val node = Node(args[1], Paths.get(args[2]), args[3])
            when (args[0]) {
                "target" -> node.target(args[4])
                "fetch-add" -> node.fetchAdd(args[4], args[5].toInt(), args[6].toInt())
                "serve" -> node.serve()
                else -> error("unknown mode ${args[0]}")
            }
            node.close()
            println("OK")
            exitProcess(0)
        } catch (t: Throwable) {
            println("FAILED: $t")
            t.printStackTrace(System.out)
            System.out.flush()
            exitProcess(1)
        }
    }

    /** The Info of [provider] for one-machine tests: tcp and the link's network rail on loopback. */
    fun info(provider: String): Info = when (provider) {
        "tcp" -> Braid.getInfo(Hints(provider = "tcp", domainName = "lo")).first()
        "link" -> Braid.getInfo(Hints(provider = "link", links = "shm+tcp:lo")).first()
        else -> Braid.getInfo(Hints(provider = provider)).first()
    }

    /** One endpoint of [provider] with its own fabric, domain, CQ and AV; [name] is how it publishes its address in [dir]. */
    class Node(provider: String, private val dir: Path, private val name: String) : AutoCloseable {
        private val info = info(provider)
        private val fabric: Fabric = Braid.fabric(info)
        val domain: Domain = fabric.domain(info)
        val cq = domain.completionQueue()
        val av = domain.addressVector()
        val ep: Endpoint = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av); it.enable() }
        private val c = Completion()
        private val e = CompletionError()

        fun peer(other: String): Long = av.insert(Rendezvous.lookup(dir, other))

        operator fun component1(): Domain = domain
        operator fun component2(): braid.core.CompletionQueue = cq
        operator fun component3(): braid.core.AddressVector = av
        operator fun component4(): Endpoint = ep

        /** Reads one completion, failing on an error completion; returns its context or null if none yet. */
        fun poll(): Any? = when (val rc = cq.readFrom(c)) {
            1 -> c.context ?: Unit
            -Errno.EAGAIN -> null
            -Errno.EAVAIL -> { cq.readErr(e); error("error completion: ${Errno.name(e.err)} ${e.message}") }
            else -> error("cq read returned $rc")
        }

        private fun deadline(seconds: Long): Long = System.nanoTime() + seconds * 1_000_000_000L

        private fun check(deadline: Long, what: () -> String) = check(System.nanoTime() < deadline) { "timed out: ${what()}" }

        fun target(initiator: String) {
            val region: MemoryRegion = domain.registerMemory(ByteBuffer.allocateDirect(REGION), MrAccess.REMOTE, KEY)
            region.buffer.putLong(0, START)
            for (i in 0 until PATTERN_LENGTH) region.buffer.putByte(PATTERN_AT + i, pattern(i))
            Rendezvous.publish(dir, name, ep.address)
            val peer = peer(initiator)
            val rx = UnsafeBuffer(ByteArray(64)); val trx = UnsafeBuffer(ByteArray(64))
            ep.tryRecv(rx, 0, 64, peer, "recv") shouldBe 0
            ep.tryTrecv(trx, 0, 64, peer, 7, 0, "trecv") shouldBe 0
            ep.trySend(UnsafeBuffer(FROM_TARGET.toByteArray()), 0, FROM_TARGET.length, peer, "send") shouldBe 0
            ep.tryTsend(UnsafeBuffer(TAGGED_FROM_TARGET.toByteArray()), 0, TAGGED_FROM_TARGET.length, peer, 9, "tsend") shouldBe 0
            val done = HashMap<Any, Long>()
            val until = deadline(120)
            while (done.size < 4 || !Rendezvous.marked(dir, initiator)) {
                poll()?.let { done[it] = c.len }
                check(until) { "completions $done, initiator done ${Rendezvous.marked(dir, initiator)}" }
            }
            String(ByteArray(done.getValue("recv").toInt()).also { rx.getBytes(0, it) }) shouldBe TO_TARGET
            String(ByteArray(done.getValue("trecv").toInt()).also { trx.getBytes(0, it) }) shouldBe TAGGED_TO_TARGET
            String(ByteArray(WRITTEN.length).also { region.buffer.getBytes(WRITE_AT, it) }) shouldBe WRITTEN
            region.buffer.getLong(0) shouldBe FINAL
            // Linger so the initiator's last completions are not cut short by our close.
            val linger = System.nanoTime() + 200_000_000L
            while (System.nanoTime() < linger) domain.progress()
        }

        fun serve() {
            domain.registerMemory(ByteBuffer.allocateDirect(REGION), MrAccess.REMOTE, KEY)
            Rendezvous.publish(dir, name, ep.address)
            var n = 0
            while (++n and 0xfff != 0 || !Rendezvous.marked(dir, "stop")) domain.progress()
        }

        fun fetchAdd(target: String, index: Int, count: Int) {
            Rendezvous.publish(dir, name, ep.address)
            val dest = peer(target)
            val window = 16
            val operand = UnsafeBuffer(ByteBuffer.allocateDirect(8)).also { it.putLong(0, index + 1L) }
            val results = UnsafeBuffer(ByteBuffer.allocateDirect(8 * count))
            var posted = 0; var completed = 0
            val until = deadline(180)
            while (completed < count) {
                while (posted < count && posted - completed < window) {
                    val rc = ep.tryFetchAtomic(operand, 0, 1, results, 8 * posted, dest, 0, KEY, AtomicDatatype.INT64, AtomicOp.SUM, null)
                    if (rc == -Errno.EAGAIN) break
                    rc shouldBe 0
                    posted++
                }
                if (poll() != null) completed++
                check(until) { "$completed of $count fetch-adds completed" }
            }
            val out = StringBuilder()
            for (i in 0 until count) out.append(results.getLong(8 * i)).append(' ').append(index + 1).append('\n')
            Files.writeString(dir.resolve("$name.fetched"), out)
            Rendezvous.mark(dir, name)
        }

        override fun close() {
            ep.close()
            fabric.close()
        }

        private infix fun <T> T.shouldBe(expected: T) = check(this == expected) { "expected $expected, got $this" }
    }
}
