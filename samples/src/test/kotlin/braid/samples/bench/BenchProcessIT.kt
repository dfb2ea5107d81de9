package braid.samples.bench

import braid.samples.BraidCommand
import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.shouldBeGreaterThan
import io.kotest.matchers.doubles.shouldBeGreaterThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration
import javax.imageio.ImageIO

/**
 * Every benchmark runs, for one tiny size and a few iterations, at each layer where it makes sense: `braid bench` in a
 * child JVM starts its own two ranks, as a user runs it. The output is checked for its shape; no timing is asserted.
 */
class BenchProcessIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-bench-it").toFile()
        afterSpec { dir.deleteRecursively() }

        fun bench(name: String, vararg args: String): Pair<Int, String> {
            val log = name + args.joinToString("") { it.filter(Char::isLetterOrDigit) }
            val child =
                ChildProcess.jvm(BraidCommand::class.java.name, listOf("bench", name) + args)
                    .name("braid bench $name")
                    .output(File(dir, "$log.out"))
                    .errorOutput(File(dir, "$log.err"))
                    .start()
            val status = child.awaitExit(Duration.ofSeconds(120))
            return status to "stdout:\n${child.output()}\nstderr:\n${child.errorOutput()}"
        }

        val core = listOf("latency", "bw", "bibw", "mbw_mr", "put_latency", "get_latency", "put_bw", "fop_latency")
        val mpi =
            listOf(
                "latency",
                "bw",
                "bibw",
                "mbw_mr",
                "allreduce",
                "reduce",
                "bcast",
                "barrier",
                "allgather",
                "alltoall",
                "put_latency",
                "get_latency",
                "put_bw",
                "fop_latency",
            )
        for ((layer, names) in listOf("core" to core, "mpi" to mpi, "java-mpi" to mpi)) {
            for (name in names) {
                test("$name at --layer $layer runs for one tiny size") {
                    val benchmark = Benchmark.byName(name)!!
                    val size = if (name == "fop_latency") "8" else "64"
                    val (status, text) = bench(name, "--layer", layer, "-S", size, "-I", "3", "-x", "1", "-W", "4")
                    withClue(text) {
                        status shouldBe 0
                        text shouldContain "# ${benchmark.title}"
                        text shouldContain "# Braid layer: $layer"
                        val rows =
                            text.substringAfter("stdout:\n").substringBefore("\nstderr:").lines().filter {
                                it.isNotBlank() && !it.startsWith("#")
                            }
                        rows.size shouldBe 1
                        if (benchmark.shape != Shape.BARRIER) rows.single().split(Regex(" +")).first() shouldBe size
                        if (benchmark.shape == Shape.LATENCY) {
                            // mean, then p50, p99, max: the distribution timed on rank 1 reached rank 0's row
                            val (p50, p99, max) = rows.single().split(Regex(" +")).drop(2).map { it.toDouble() }
                            p50 shouldBeGreaterThan 0.0
                            max shouldBeGreaterThanOrEqual p99
                        }
                    }
                }
            }
        }

        test("--format csv and --plot over tcp: one CSV line per size and a PNG") {
            val png = File(dir, "bw.png")
            val (status, text) =
                bench(
                    "latency",
                    "-p",
                    "tcp",
                    "-S",
                    "1,64,1k",
                    "-I",
                    "3",
                    "-x",
                    "1",
                    "--format",
                    "csv",
                    "--plot",
                    png.path,
                )
            withClue(text) {
                status shouldBe 0
                text shouldContain "benchmark,layer,transport,ranks,size,latency_us"
                text shouldContain "latency,core,tcp,2,1024,"
                ImageIO.read(png).width shouldBe BenchPlot.WIDTH
            }
        }
    })
