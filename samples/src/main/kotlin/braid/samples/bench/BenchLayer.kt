package braid.samples.bench

import org.HdrHistogram.Histogram

/**
 * One layer `braid bench` measures (rail-core endpoints, `braid.mpi`): the ranks of the job and the loops of every
 * [Shape] it can run. The loops are OSU's (see [Shape]); [BenchRunner] calls [measure] once per size on every rank,
 * after a [barrier], and prints what rank 0 returns.
 */
internal interface BenchLayer : AutoCloseable {
    /** `core`, `mpi` or `java-mpi`. */
    val name: String

    /** What carries the traffic: the provider or the link. */
    val transport: String

    val rank: Int
    val size: Int

    fun barrier()

    /** Rank 0's [value], on every rank. */
    fun fromRoot(value: Double): Double

    /** The sum of every rank's [value], at rank 0 (other ranks get an unspecified number). */
    fun sumToRoot(value: Double): Double

    /**
     * Runs [benchmark] for [bytes] as [plan] says, with [window] messages in flight where the shape has a window.
     * Returns rank 0's timed nanoseconds (for the latency shapes, the timed loop; for the bandwidth shapes, the same)
     * on the ranks that time, 0 elsewhere; records one latency per timed iteration in [histogram] (ns) on the ranks
     * that time (for [Shape.LATENCY], rank 1: [stampRoundTrip]).
     */
    fun measure(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long
}

/** What a layer cannot run, said before anything starts. */
internal object Refusals {
    /** Why [layer] cannot run [benchmark] on [ranks] ranks (the message names the fix), or null when it can. */
    fun of(layer: String, benchmark: Benchmark, ranks: Int): String? {
        val shape = benchmark.shape
        return when {
            layer == "core" && (shape == Shape.COLLECTIVE || shape == Shape.BARRIER) ->
                "${benchmark.id} needs a communicator: run it with --layer mpi (braid.mpi) or --layer java-mpi " +
                    "(package mpi); the rail-core layer has none"
            shape == Shape.MBW_MR && ranks % 2 != 0 ->
                "mbw_mr pairs the ranks: give an even number of ranks (got $ranks)"
            shape != Shape.COLLECTIVE && shape != Shape.BARRIER && ranks < 2 ->
                "${benchmark.id} needs at least 2 ranks (got $ranks)"
            else -> null
        }
    }
}
