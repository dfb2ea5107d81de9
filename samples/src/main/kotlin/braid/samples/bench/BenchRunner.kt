package braid.samples.bench

import java.io.OutputStream
import java.io.PrintStream
import java.lang.management.ManagementFactory
import org.HdrHistogram.Histogram

/** What `braid bench` was asked to run, parsed. */
internal data class BenchOptions(
    val benchmark: Benchmark,
    val layer: String,
    val provider: String?,
    val config: java.nio.file.Path?,
    val sizes: List<Int>,
    val iterations: Int?,
    val skip: Int?,
    val window: Int,
    val format: Format,
    val plot: java.nio.file.Path?,
    val warmupSeconds: Int,
)

/**
 * Runs one benchmark over a [BenchLayer] on every rank of the job: the JIT warm-up (`--warmup`), then per size a
 * barrier and the layer's loop; rank 0 turns the times into OSU's numbers (with p50/p99/max from the [Histogram] of the
 * timed iterations beside the mean), prints each row as its size ends, and writes the plot.
 */
internal class BenchRunner(
    private val layer: BenchLayer,
    private val options: BenchOptions,
    private val out: PrintStream,
    private val progress: Progress,
) {
    private val benchmark = options.benchmark
    private val histogram = Histogram(MAX_TRACKABLE_NANOS, 3)

    fun run() {
        val root = layer.rank == 0
        val run = RunInfo(benchmark, layer.name, layer.transport, layer.size, options.window)
        val report = Report(run, options.format, out)
        if (root) report.header()
        warmUp(run)
        for ((index, bytes) in options.sizes.withIndex()) {
            if (root) progress.update(benchmark, bytes, index, options.sizes.size)
            histogram.reset()
            val plan = benchmark.plan(bytes, options.iterations, options.skip)
            layer.barrier()
            val elapsed = layer.measure(benchmark, bytes, plan, options.window, histogram)
            val values = values(bytes, plan, elapsed)
            if (root) report.row(Row(bytes, values))
        }
        if (root) {
            progress.done()
            report.end()
            options.plot?.let { BenchPlot.write(it, benchmark, layer.name, layer.transport, report.results) }
        }
        layer.barrier()
    }

    /**
     * `--warmup S`: untimed passes of the benchmark over its sizes up to 64 KiB (the smallest if none is), a tenth of
     * each size's iterations, until rank 0 has seen S seconds go by and then until the JIT has been quiet on every rank
     * for [QUIET_NANOS] (no compilation finished: a compiler thread that is still working takes a core from a spinning
     * rank for milliseconds, which the timed rows would count), for at most S seconds more. Rank 0 decides when to stop
     * so that every rank runs the same passes. Each pass also builds the rows and the progress line that the timed
     * sizes will, into nothing: the first run of a string template spins classes, and compiling them took a core from
     * the first timed row (one 0.4–2 ms iteration in it).
     */
    private fun warmUp(run: RunInfo) {
        if (options.warmupSeconds <= 0) return
        val sizes = options.sizes.filter { it <= 65536 }.ifEmpty { listOf(options.sizes.min()) }
        val start = System.nanoTime()
        val seconds = options.warmupSeconds * 1_000_000_000L
        val jit = ManagementFactory.getCompilationMXBean()?.takeIf { it.isCompilationTimeMonitoringSupported }
        var compiled = jit?.totalCompilationTime ?: 0L
        var quietSince = start
        val rehearsal =
            if (layer.rank == 0) Report(run, options.format, PrintStream(OutputStream.nullOutputStream())) else null
        if (layer.rank == 0) progress.show("braid bench ${benchmark.id}: warming up for ${options.warmupSeconds} s")
        do {
            for (bytes in sizes) {
                val plan = benchmark.plan(bytes, options.iterations, options.skip)
                layer.barrier()
                // The timed plan's skip, so that the loop's untimed branch is compiled too (with none, the first
                // timed size deoptimised the compiled loop at its first skipped iteration and ran it interpreted).
                val pass = Plan(maxOf(1, plan.iterations / 10), plan.skip)
                layer.measure(benchmark, bytes, pass, options.window, histogram)
                val values = values(bytes, plan, 1) // the same collective calls as a timed size
                rehearsal?.row(Row(bytes, values)) // and the same formatting, into nothing
                if (rehearsal != null) Progress.text(benchmark, bytes, 0, options.sizes.size) // and the progress line's
            }
            histogram.reset()
            val now = System.nanoTime()
            val total = jit?.totalCompilationTime ?: 0L
            val busyRanks = layer.sumToRoot(if (total != compiled) 1.0 else 0.0)
            compiled = total
            if (busyRanks > 0) quietSince = now
            val settled = jit == null || now - quietSince >= QUIET_NANOS
            val more = now - start < seconds || (!settled && now - start < 2 * seconds)
            val go = layer.fromRoot(if (more) 1.0 else 0.0) > 0
        } while (go)
    }

    /** The row's values at rank 0 (OSU's arithmetic); every rank calls it (the collectives sum over ranks). */
    private fun values(bytes: Int, plan: Plan, elapsed: Long): List<Double> {
        val n = plan.iterations.toDouble()
        val seconds = elapsed / 1e9
        fun distribution(mean: Double) =
            listOf(
                mean,
                histogram.getValueAtPercentile(50.0) / 1e3,
                histogram.getValueAtPercentile(99.0) / 1e3,
                histogram.maxValue / 1e3,
            )
        return when (benchmark.shape) {
            // The mean is rank 0's (OSU's); the distribution is rank 1's, which timed each round trip.
            Shape.LATENCY ->
                listOf(elapsed / 1e3 / (2 * n)) +
                    distribution(0.0).drop(1).map { layer.sumToRoot(if (layer.rank == 1) it else 0.0) }
            Shape.RMA_LATENCY,
            Shape.ATOMIC_LATENCY -> distribution(elapsed / 1e3 / n)
            Shape.BW,
            Shape.RMA_BW -> listOf(bytes * options.window * n / seconds / 1e6)
            Shape.BIBW -> listOf(2 * bytes * options.window * n / seconds / 1e6)
            Shape.MBW_MR -> {
                val pairs = layer.size / 2
                val average = layer.sumToRoot(seconds) / pairs
                val rate = pairs * n * options.window / average
                listOf(rate * bytes / 1e6, rate)
            }
            Shape.COLLECTIVE,
            Shape.BARRIER -> distribution(layer.sumToRoot(elapsed / 1e3 / n) / layer.size)
        }
    }

    companion object {
        /** The longest latency the histograms record: an hour, in nanoseconds (3 significant digits). */
        private const val MAX_TRACKABLE_NANOS = 3_600_000_000_000L

        /** How long the JIT must have finished no compilation on any rank before the warm-up may end. */
        private const val QUIET_NANOS = 500_000_000L
    }
}
