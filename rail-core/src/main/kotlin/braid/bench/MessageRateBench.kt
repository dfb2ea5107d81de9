package braid.bench

import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionQueue
import braid.core.FiAddr
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.ProgressModel
import braid.core.Threading
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The CPU cost of the rail-level per-message path (a program that prints numbers, not a test): tagged sends and
 * receives between two shm endpoints of this process, a window of 64 in flight, no MPI above them, one thread playing
 * both sides (64 receives posted, 64 sends, both CQs read until all 128 completed), so nothing waits for another core:
 * what a loaded machine measures far more steadily than a rate. NS_PER_MSG is the thread's CPU time (the least of 7
 * batches). Prints `cpu SIZE NS_PER_MSG CQ_READS_PER_MSG BYTES_ALLOCATED_PER_MSG`. The message rate itself between two
 * processes (osu_mbw_mr's shape for one pair on endpoints alone) is `braid bench mbw_mr -p shm`.
 *
 * Completions are read in batches of 16 (`CompletionQueue.read(Array<Completion>)`). `threading=domain` opens the
 * domains with [Threading.DOMAIN] (one thread per domain, as each side here is).
 *
 * After the README's build (`bench/msg-rate.sh` runs it beside `braid bench mbw_mr -p shm` and a C floor):
 * ```
 * java -Xmx1g -cp samples/target/braid.jar braid.bench.MessageRateBench [cpu] [SIZES] [threading=domain]
 * ```
 */
public object MessageRateBench {
    private const val WINDOW = 64
    private const val BATCHES = 7
    private const val DATA_TAG = 1L

    @JvmStatic
    public fun main(args: Array<String>) {
        val parts = args.getOrNull(0)?.split(",")?.toSet() ?: setOf("cpu")
        val sizes = args.getOrNull(1)?.split(",")?.map { it.trim().toInt() } ?: listOf(1, 8, 64, 1024, 4096, 8192)
        val threading = if (args.any { it == "threading=domain" }) Threading.DOMAIN else Threading.SAFE
        println("# rail-level message rate over shm, window $WINDOW, $threading threading")
        pair(threading).use { p -> if ("cpu" in parts) for (size in sizes) cpu(p, size) }
    }

    /** Two endpoints of this process, each on a domain of its own, that know each other; spinning, no engine. */
    private fun pair(threading: Threading): LocalEndpoints {
        val info =
            Braid.getInfo(Hints(caps = Caps.TAGGED, provider = "shm", threading = threading)).first().let {
                it.copy(domainAttr = it.domainAttr.copy(idle = IdlePolicy.SPIN, progress = ProgressModel.MANUAL))
            }
        return LocalEndpoints(2, info)
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

    private fun cpu(p: LocalEndpoints, size: Int) {
        val out = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
        val rx = Array(WINDOW) { UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 8))) }
        val a = p.nodes[0].ep
        val b = p.nodes[1].ep
        val aToB = p.addr(0, 1)
        val cqA = a.txCq!!
        val cqB = b.txCq!!
        val comps = Array(16) { Completion() }
        val windows = if (size <= 8192) 2_000 else 200
        var reads = 0L
        fun batch() {
            reads = 0
            for (i in 0 until windows) {
                for (k in 0 until WINDOW) check(b.tryTrecv(rx[k], 0, size, FiAddr.UNSPEC, DATA_TAG, 0, null) == 0) {
                    "trecv refused"
                }
                for (k in 0 until WINDOW) check(a.tryTsend(out[k], 0, size, aToB, DATA_TAG, null) == 0) {
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
            // The thread's CPU time, not the wall clock: the same on a quiet machine (one thread that never waits), and
            // what a loaded one still measures steadily (a preempted thread's wait is not counted).
            val t0 = threads.currentThreadCpuTime
            batch()
            best = minOf(best, threads.currentThreadCpuTime - t0)
            leastBytes = minOf(leastBytes, threads.getThreadAllocatedBytes(tid) - bytes0)
        }
        val msgs = windows.toDouble() * WINDOW
        println(
            "cpu $size ${"%.1f".format(best / msgs)} ${"%.3f".format(reads / msgs)} ${"%.2f".format(leastBytes / msgs)}"
        )
    }
}
