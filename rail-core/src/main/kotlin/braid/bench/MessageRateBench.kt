package braid.bench

import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionQueue
import braid.core.Endpoint
import braid.core.FiAddr
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.Info
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.core.Threading
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import kotlin.concurrent.thread
import org.agrona.concurrent.UnsafeBuffer

/**
 * The rail-level message rate (a program that prints numbers, not a test): tagged sends and receives between two shm
 * endpoints of this process, a window of 64 in flight, no MPI above them. The shape of OSU's `osu_mbw_mr` for one pair,
 * on endpoints alone:
 * - `rate`: two threads. The sender posts a window of 64 `tryTsend`s and reads its CQ until all 64 completed, then
 *   waits for a 4-byte acknowledgement; the receiver posts 64 `tryTrecv`s, reads its CQ until all 64 matched, then
 *   injects the acknowledgement. Prints `rate SIZE MSGS_PER_S` (the best of [BATCHES] batches).
 * - `cpu`: one thread plays both sides (64 receives posted, 64 sends, both CQs read until all 128 completed), so
 *   nothing waits for another core: the CPU cost of the per-message path, which a loaded machine measures far more
 *   steadily than a rate. Prints `cpu SIZE NS_PER_MSG CQ_READS_PER_MSG BYTES_ALLOCATED_PER_MSG`.
 *
 * Both read completions in batches of 16 (`CompletionQueue.read(Array<Completion>)`). `threading=domain` opens the
 * domains with [Threading.DOMAIN] (one thread per domain, as each side here is).
 *
 * Run from the repository root after `mvn -o -q -pl rail-core -am test-compile`:
 * ```
 * mvn -q -o -pl rail-core dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * java -Xmx1g -cp rail-core/target/classes:rail-core/target/test-classes:$(cat /tmp/cp.txt) \
 *     braid.bench.MessageRateBench [rate,cpu] [SIZES] [threading=domain]
 * ```
 */
object MessageRateBench {
    private const val WINDOW = 64
    private const val BATCHES = 7
    private const val ACK_TAG = 2L
    private const val DATA_TAG = 1L

    @JvmStatic
    fun main(args: Array<String>) {
        val parts = args.getOrNull(0)?.split(",")?.toSet() ?: setOf("rate", "cpu")
        val sizes = args.getOrNull(1)?.split(",")?.map { it.trim().toInt() } ?: listOf(1, 8, 64, 1024, 4096, 8192)
        val threading = if (args.any { it == "threading=domain" }) Threading.DOMAIN else Threading.SAFE
        println("# rail-level message rate over shm, window $WINDOW, $threading threading")
        Pair2(threading).use { p ->
            if ("cpu" in parts) for (size in sizes) cpu(p, size)
            if ("rate" in parts) for (size in sizes) rate(p, size)
        }
    }

    /** Two endpoints of this process, each on a domain of its own, that know each other. */
    private class Pair2(threading: Threading) : AutoCloseable {
        val info: Info =
            Braid.getInfo(Hints(caps = Caps.TAGGED, provider = "shm", threading = threading)).first().let {
                it.copy(domainAttr = it.domainAttr.copy(idle = IdlePolicy.SPIN, progress = ProgressModel.MANUAL))
            }
        val fabric = Braid.fabric(info)

        private fun open(): Pair<Endpoint, braid.core.AddressVector> {
            val d = fabric.domain(info)
            val av = d.addressVector()
            val ep =
                d.endpoint().also {
                    it.bind(d.completionQueue(), OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(av)
                    it.enable()
                }
            return ep to av
        }

        private val pa = open()
        private val pb = open()
        val a: Endpoint = pa.first
        val b: Endpoint = pb.first
        val aToB: Long = pa.second.insert(b.address)
        val bToA: Long = pb.second.insert(a.address)

        override fun close() {
            a.close()
            b.close()
            fabric.close()
        }
    }

    private val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

    /** Reads [cq] until [n] completions were read; returns the reads it took. A failed operation stops the bench. */
    private fun drain(cq: CompletionQueue, into: Array<Completion>, n: Int): Int {
        var got = 0
        var reads = 0
        while (got < n) {
            val r = cq.read(into)
            reads++
            if (r > 0) got += r else check(r == -braid.core.Errno.EAGAIN) { "CQ read failed: $r" }
        }
        return reads
    }

    private fun cpu(p: Pair2, size: Int) {
        val out = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
        val rx = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
        val cqA = p.a.txCq!!
        val cqB = p.b.txCq!!
        val comps = Array(16) { Completion() }
        val windows = if (size <= 8192) 2_000 else 200
        var reads = 0L
        fun batch() {
            reads = 0
            for (i in 0 until windows) {
                for (k in 0 until WINDOW) check(p.b.tryTrecv(rx[k], 0, size, FiAddr.UNSPEC, DATA_TAG, 0, null) == 0) {
                    "trecv refused"
                }
                for (k in 0 until WINDOW) check(p.a.tryTsend(out[k], 0, size, p.aToB, DATA_TAG, null) == 0) {
                    "tsend refused"
                }
                reads += drain(cqB, comps, WINDOW)
                reads += drain(cqA, comps, WINDOW)
            }
        }
        repeat(5) { batch() } // warm-up
        var best = Long.MAX_VALUE
        var leastBytes = Long.MAX_VALUE
        val tid = Thread.currentThread().id
        repeat(BATCHES) {
            val bytes0 = threads.getThreadAllocatedBytes(tid)
            val t0 = System.nanoTime()
            batch()
            best = minOf(best, System.nanoTime() - t0)
            leastBytes = minOf(leastBytes, threads.getThreadAllocatedBytes(tid) - bytes0)
        }
        val msgs = windows.toDouble() * WINDOW
        println(
            "cpu $size ${"%.1f".format(best / msgs)} ${"%.3f".format(reads / msgs)} ${"%.2f".format(leastBytes / msgs)}"
        )
    }

    private fun rate(p: Pair2, size: Int) {
        val windows = if (size <= 8192) 5_000 else 500
        val total = (5 + BATCHES) * windows
        val receiver =
            thread(name = "receiver") {
                val rx = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
                val ack = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val cq = p.b.txCq!!
                val comps = Array(16) { Completion() }
                for (i in 0 until total) {
                    for (k in 0 until WINDOW) check(
                        p.b.tryTrecv(rx[k], 0, size, FiAddr.UNSPEC, DATA_TAG, 0, null) == 0
                    ) {
                        "trecv refused"
                    }
                    drain(cq, comps, WINDOW)
                    while (true) {
                        val rc = p.b.tryTinject(ack, 0, 4, p.bToA, ACK_TAG)
                        if (rc == 0) break
                        check(rc == -braid.core.Errno.EAGAIN) { "ack refused: $rc" }
                        cq.read(comps)
                    }
                }
            }
        val out = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
        val ackIn = UnsafeBuffer(ByteBuffer.allocateDirect(8))
        val cq = p.a.txCq!!
        val comps = Array(16) { Completion() }
        var best = Long.MAX_VALUE
        for (b in 0 until 5 + BATCHES) {
            val t0 = System.nanoTime()
            for (w in 0 until windows) {
                check(p.a.tryTrecv(ackIn, 0, 4, p.aToB, ACK_TAG, 0, null) == 0) { "ack receive refused" }
                var got = 0
                for (k in 0 until WINDOW) {
                    while (true) {
                        val rc = p.a.tryTsend(out[k], 0, size, p.aToB, DATA_TAG, null)
                        if (rc == 0) break
                        check(rc == -braid.core.Errno.EAGAIN) { "tsend refused: $rc" }
                        val r = cq.read(comps)
                        if (r > 0) got += r
                    }
                }
                drain(cq, comps, WINDOW + 1 - got) // the window and the acknowledgement
            }
            if (b >= 5) best = minOf(best, System.nanoTime() - t0)
        }
        receiver.join()
        println("rate $size ${"%.0f".format(windows.toDouble() * WINDOW / (best / 1e9))}")
    }
}
