package braid.samples.bench

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldNotContain
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import org.HdrHistogram.Histogram

/**
 * `--warmup`: the untimed passes run each warmed size with the timed plan's skip (a loop compiled without ever taking
 * its skipped branch deoptimised at the first timed size), rehearse the row formatting into nothing, and stop; the
 * timed sizes follow with their own plans. One rank, in-process, through a layer that records what it is asked to run.
 */
class BenchWarmupTest :
    FunSpec({
        class RecordingLayer : BenchLayer {
            val calls = mutableListOf<Pair<Int, Plan>>()
            var warming = true

            override val name = "core"
            override val transport = "shm"
            override val rank = 0
            override val size = 1

            override fun barrier() {}

            override fun fromRoot(value: Double): Double = value

            override fun sumToRoot(value: Double): Double = value

            override fun measure(
                benchmark: Benchmark,
                bytes: Int,
                plan: Plan,
                window: Int,
                histogram: Histogram,
            ): Long {
                calls += bytes to plan
                histogram.recordValue(1_000)
                return 1_000_000
            }

            override fun close() {}
        }

        test("warm-up passes use the timed plan's skip, print nothing and end before the timed sizes") {
            val layer = RecordingLayer()
            val sizes = listOf(8, 64, 1 shl 20)
            val options =
                BenchOptions(
                    Benchmark.LATENCY,
                    "core",
                    null,
                    null,
                    sizes,
                    iterations = null,
                    skip = null,
                    window = 64,
                    format = Format.TEXT,
                    plot = null,
                    warmupSeconds = 1,
                )
            val bytes = ByteArrayOutputStream()
            PrintStream(bytes, true).use { out ->
                BenchRunner(layer, options, out, Progress(Progress.Mode.OFF, out)).run()
            }

            val timed = layer.calls.takeLast(sizes.size)
            timed.map { it.first } shouldBe sizes
            timed.forEach { (size, plan) -> plan shouldBe Benchmark.LATENCY.plan(size, null, null) }

            val warm = layer.calls.dropLast(sizes.size)
            warm.shouldNotBeEmpty()
            warm.map { it.first }.toSet() shouldBe setOf(8, 64) // 1 MiB is above the warmed sizes
            warm.forEach { (size, plan) ->
                val timedPlan = Benchmark.LATENCY.plan(size, null, null)
                plan.skip shouldBe timedPlan.skip
                plan.skip shouldBeGreaterThan 0
                plan.iterations shouldBe timedPlan.iterations / 10
            }

            val lines = bytes.toString().lines().filter { it.isNotBlank() && !it.startsWith("#") }
            lines.map { it.trim().split(Regex(" +")).first() } shouldContainAll sizes.map { it.toString() }
            lines.size shouldBe sizes.size // the rehearsed rows went nowhere
            bytes.toString() shouldNotContain "warming"
        }
    })
