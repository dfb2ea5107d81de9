package braid.samples.bench

import org.HdrHistogram.Histogram

/**
 * What a benchmark measures, and so which loop runs it (the OSU micro-benchmarks' shapes):
 * - [LATENCY]: `osu_latency`, a ping-pong between ranks 0 and 1; rank 0 times it; half the round trip.
 * - [BW]: `osu_bw`, rank 0 sends a window of messages, rank 1 receives them and answers with a 4-byte ack; rank 0
 *   times.
 * - [BIBW]: `osu_bibw`, both send and receive a window at once; rank 0 times.
 * - [MBW_MR]: `osu_mbw_mr`, the first half of the ranks each run [BW]'s loop with a partner in the second half at once;
 *   the aggregate bandwidth and message rate.
 * - [COLLECTIVE]: `osu_allreduce` and the others; every rank times each call, then a barrier; the average over ranks.
 * - [BARRIER]: `osu_barrier`, the same without a size.
 * - [RMA_LATENCY]: `osu_put_latency`/`osu_get_latency`: rank 0 writes (reads) rank 1's memory and waits for the
 *   completion, once per iteration; the time per operation, not halved.
 * - [RMA_BW]: `osu_put_bw`: rank 0 writes a window, waits for all of them; bytes over time.
 * - [ATOMIC_LATENCY]: `osu_fop_latency`: a fetch-and-add of one 8-byte integer in rank 1's memory per iteration.
 */
internal enum class Shape {
    LATENCY,
    BW,
    BIBW,
    MBW_MR,
    COLLECTIVE,
    BARRIER,
    RMA_LATENCY,
    RMA_BW,
    ATOMIC_LATENCY,
}

/** The OSU benchmarks `braid bench` runs: its name, OSU's title line, its shape and its default sizes. */
internal enum class Benchmark(val id: String, val title: String, val shape: Shape) {
    LATENCY("latency", "OSU MPI Latency Test", Shape.LATENCY),
    BW("bw", "OSU MPI Bandwidth Test", Shape.BW),
    BIBW("bibw", "OSU MPI Bi-Directional Bandwidth Test", Shape.BIBW),
    MBW_MR("mbw_mr", "OSU MPI Multiple Bandwidth / Message Rate Test", Shape.MBW_MR),
    ALLREDUCE("allreduce", "OSU MPI Allreduce Latency Test", Shape.COLLECTIVE),
    REDUCE("reduce", "OSU MPI Reduce Latency Test", Shape.COLLECTIVE),
    BCAST("bcast", "OSU MPI Broadcast Latency Test", Shape.COLLECTIVE),
    BARRIER("barrier", "OSU MPI Barrier Latency Test", Shape.BARRIER),
    ALLGATHER("allgather", "OSU MPI Allgather Latency Test", Shape.COLLECTIVE),
    ALLTOALL("alltoall", "OSU MPI All-to-All Personalized Exchange Latency Test", Shape.COLLECTIVE),
    PUT_LATENCY("put_latency", "OSU MPI_Put Latency Test", Shape.RMA_LATENCY),
    GET_LATENCY("get_latency", "OSU MPI_Get latency Test", Shape.RMA_LATENCY),
    PUT_BW("put_bw", "OSU MPI_Put Bandwidth Test", Shape.RMA_BW),
    FOP_LATENCY("fop_latency", "OSU MPI_Fetch_and_op latency Test", Shape.ATOMIC_LATENCY);

    /** Whether the value is a latency (a distribution is recorded), not a bandwidth. */
    val isLatency: Boolean
        get() = shape !in setOf(Shape.BW, Shape.BIBW, Shape.MBW_MR, Shape.RMA_BW)

    /** OSU's column names after `# Size` (the first is OSU's own; braid adds the distribution after it). */
    val columns: List<String>
        get() =
            when (shape) {
                Shape.LATENCY,
                Shape.RMA_LATENCY,
                Shape.ATOMIC_LATENCY -> listOf("Latency (us)", "P50 (us)", "P99 (us)", "Max (us)")
                Shape.BW,
                Shape.BIBW,
                Shape.RMA_BW -> listOf("Bandwidth (MB/s)")
                Shape.MBW_MR -> listOf("MB/s", "Messages/s")
                Shape.COLLECTIVE,
                Shape.BARRIER -> listOf("Avg Latency(us)", "P50 (us)", "P99 (us)", "Max (us)")
            }

    /** The same columns as CSV and JSON keys. */
    val keys: List<String>
        get() =
            when (shape) {
                Shape.LATENCY,
                Shape.RMA_LATENCY,
                Shape.ATOMIC_LATENCY -> listOf("latency_us", "p50_us", "p99_us", "max_us")
                Shape.BW,
                Shape.BIBW,
                Shape.RMA_BW -> listOf("bandwidth_mb_s")
                Shape.MBW_MR -> listOf("bandwidth_mb_s", "messages_s")
                Shape.COLLECTIVE,
                Shape.BARRIER -> listOf("avg_latency_us", "p50_us", "p99_us", "max_us")
            }

    /**
     * OSU's default sizes: 0 (latency only) or 1 up to 4 MiB for point-to-point and one-sided, 1 up to 1 MiB for
     * collectives (4 for the reductions, one float), 8 for the fetch-and-op, none (one row) for the barrier.
     */
    val defaultSizes: List<Int>
        get() =
            when (shape) {
                Shape.LATENCY -> listOf(0) + powers(1, MAX_P2P)
                Shape.BW,
                Shape.BIBW,
                Shape.MBW_MR,
                Shape.RMA_LATENCY,
                Shape.RMA_BW -> powers(1, MAX_P2P)
                Shape.COLLECTIVE -> powers(if (this == ALLREDUCE || this == REDUCE) 4 else 1, MAX_COLL)
                Shape.BARRIER -> listOf(0)
                Shape.ATOMIC_LATENCY -> listOf(8)
            }

    /** Iterations and untimed iterations (OSU's `skip`) of one size, as OSU's defaults; [iterations] overrides. */
    fun plan(size: Int, iterations: Int?, skip: Int?): Plan {
        val large = size > LARGE_MESSAGE_SIZE
        val (loop, warm) =
            when (shape) {
                Shape.BW,
                Shape.BIBW,
                Shape.MBW_MR,
                Shape.RMA_BW -> if (large) 20 to 2 else 100 to 10
                Shape.COLLECTIVE,
                Shape.BARRIER -> if (large) 100 to 10 else 1000 to 100
                else -> if (large) 1000 to 10 else 10000 to 100
            }
        return Plan(iterations ?: loop, skip ?: warm)
    }

    companion object {
        /** OSU's `LARGE_MESSAGE_SIZE`: above it, fewer iterations. */
        const val LARGE_MESSAGE_SIZE = 8192
        /** OSU's `MAX_MESSAGE_SIZE` (point-to-point, one-sided) and `MAX_MSG_SIZE_COLL`. */
        const val MAX_P2P = 1 shl 22
        const val MAX_COLL = 1 shl 20
        /** OSU's default window (`WINDOW_SIZE_LARGE`): messages in flight per bandwidth iteration. */
        const val WINDOW = 64

        fun byName(name: String): Benchmark? = entries.firstOrNull { it.id == name }

        private fun powers(from: Int, to: Int): List<Int> =
            generateSequence(from) { it * 2 }.takeWhile { it <= to }.toList()
    }
}

/** How many timed iterations a size runs, after how many untimed ones. */
internal data class Plan(val iterations: Int, val skip: Int)

/**
 * The latency shape's per-iteration timing, on rank 1 (the echoing rank), called right after its reply went: the time
 * since its previous reply is one round trip. Rank 0 times only the whole loop, as OSU's C does, so no clock read or
 * histogram write sits between its receive and its next send; rank 1 does its bookkeeping while its reply travels.
 * Records half the round trip in [histogram] from the first timed iteration on (from the second when the plan skips
 * none) and returns the new stamp.
 */
internal fun stampRoundTrip(i: Int, plan: Plan, last: Long, histogram: Histogram): Long {
    val now = System.nanoTime()
    if (i >= plan.skip && i > 0) histogram.recordValue((now - last) / 2)
    return now
}
