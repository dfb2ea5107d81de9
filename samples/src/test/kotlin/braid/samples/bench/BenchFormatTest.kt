package braid.samples.bench

import braid.samples.braid
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldMatch
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.nio.file.Files
import javax.imageio.ImageIO
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * `braid bench`'s output checked against OSU's format (the `# OSU … Test` title, `# Size` and the column names, one row
 * per size), its CSV and JSON schemas, and its plot (a PNG of the stated size with one line per series); the refusals.
 * No timing is asserted: the rows here are made up.
 */
class BenchFormatTest :
    FunSpec({
        fun render(benchmark: Benchmark, format: Format, rows: List<Row>): String {
            val bytes = ByteArrayOutputStream()
            PrintStream(bytes, true).use { out ->
                val report = Report(RunInfo(benchmark, "core", "shm", 2, 64), format, out)
                report.header()
                rows.forEach(report::row)
                report.end()
            }
            return bytes.toString()
        }

        fun rowsOf(benchmark: Benchmark) =
            benchmark.defaultSizes.take(3).map { size -> Row(size, benchmark.columns.indices.map { 1.5 + it + size }) }

        for (benchmark in Benchmark.entries) {
            test("${benchmark.id}: text is OSU's: title, # Size and the columns, one row per size") {
                val rows = rowsOf(benchmark)
                val lines = render(benchmark, Format.TEXT, rows).lines().filter { it.isNotEmpty() }
                lines.first() shouldMatch Regex("# OSU .*(Test|test) \\(braid .*\\)")
                lines.first() shouldContain benchmark.title
                val header = lines.last { it.startsWith("#") }
                val data = lines.filterNot { it.startsWith("#") }
                data shouldHaveSize rows.size
                if (benchmark.shape == Shape.BARRIER) {
                    header shouldMatch Regex("# Avg Latency\\(us\\) +P50 \\(us\\) +P99 \\(us\\) +Max \\(us\\)")
                    data.single() shouldMatch Regex(" +[0-9]+\\.[0-9]{2}( +[0-9]+\\.[0-9]{2}){3}")
                } else {
                    header shouldMatch
                        Regex("# Size {4}" + benchmark.columns.joinToString("") { " +" + Regex.escape(it) })
                    for ((line, row) in data.zip(rows)) {
                        line shouldMatch Regex("${row.size} +[0-9]+\\.[0-9]{2}( +[0-9]+\\.[0-9]{2})*")
                        line.trim().split(Regex(" +")) shouldHaveSize 1 + benchmark.columns.size
                        line.substring(0, 10).trim() shouldBe row.size.toString()
                    }
                }
            }

            test("${benchmark.id}: CSV has one header line naming the keys, then one line per size") {
                val rows = rowsOf(benchmark)
                val lines = render(benchmark, Format.CSV, rows).lines().filter { it.isNotEmpty() }
                lines.first() shouldBe
                    (listOf("benchmark", "layer", "transport", "ranks", "size") + benchmark.keys).joinToString(",")
                lines.drop(1) shouldHaveSize rows.size
                for ((line, row) in lines.drop(1).zip(rows)) {
                    val cells = line.split(',')
                    cells shouldHaveSize 5 + benchmark.keys.size
                    cells.take(5) shouldBe listOf(benchmark.id, "core", "shm", "2", row.size.toString())
                    cells.drop(5).map { it.toDouble() } shouldBe row.values
                }
            }

            test("${benchmark.id}: JSON is one object: the run, the machine, the keys and the rows") {
                val rows = rowsOf(benchmark)
                val json = Json.parseToJsonElement(render(benchmark, Format.JSON, rows).trim()).jsonObject
                json["benchmark"]!!.jsonPrimitive.content shouldBe benchmark.id
                json["layer"]!!.jsonPrimitive.content shouldBe "core"
                json["ranks"]!!.jsonPrimitive.int shouldBe 2
                json["machine"]!!.jsonObject.keys shouldBe setOf("cores", "cpu", "jvm")
                json["columns"]!!.jsonArray.map { it.jsonPrimitive.content } shouldBe benchmark.keys
                val out = json["rows"]!!.jsonArray
                out shouldHaveSize rows.size
                for ((o, row) in out.zip(rows)) {
                    o.jsonObject.keys shouldBe setOf("size") + benchmark.keys
                    o.jsonObject["size"]!!.jsonPrimitive.int shouldBe row.size
                    benchmark.keys.map { o.jsonObject[it]!!.jsonPrimitive.content.toDouble() } shouldBe row.values
                }
            }
        }

        test("the plot is a PNG of the stated size with one line per series") {
            val file = Files.createTempFile("braid-bench", ".png")
            try {
                val rows = listOf(1, 64, 4096, 1 shl 20).map { Row(it, listOf(1.0 + it / 1000.0, 1.0, 2.0, 3.0 + it)) }
                BenchPlot.write(file, Benchmark.LATENCY, "core", "shm", rows)
                val image = ImageIO.read(file.toFile())
                image.width shouldBe BenchPlot.WIDTH
                image.height shouldBe BenchPlot.HEIGHT
                val colours = HashSet<Int>()
                for (x in 0 until image.width) for (y in 0 until image.height) colours +=
                    image.getRGB(x, y) and 0xffffff
                BenchPlot.PALETTE.count { it.rgb and 0xffffff in colours } shouldBe Benchmark.LATENCY.columns.size
            } finally {
                Files.deleteIfExists(file)
            }
        }

        test("refusals name what is missing and the way out") {
            Refusals.of("core", Benchmark.ALLREDUCE, 2)!! shouldContain "--layer mpi"
            Refusals.of("core", Benchmark.ALLREDUCE, 2)!! shouldContain "--layer java-mpi"
            // braid.mpi windows and the mpi package exist now: the one-sided names run at both MPI layers.
            Refusals.of("mpi", Benchmark.PUT_LATENCY, 2) shouldBe null
            Refusals.of("java-mpi", Benchmark.FOP_LATENCY, 2) shouldBe null
            Refusals.of("java-mpi", Benchmark.MBW_MR, 3)!! shouldContain "even number"
            Refusals.of("core", Benchmark.MBW_MR, 3)!! shouldContain "even number"
            Refusals.of("core", Benchmark.LATENCY, 2) shouldBe null
            Refusals.of("mpi", Benchmark.BARRIER, 1) shouldBe null
            val layer = braid("bench", "latency", "--layer", "nosuch")
            layer.status shouldBe 2
            layer.err shouldContain "unknown layer 'nosuch'; use core, mpi or java-mpi"
            val unknown = braid("bench", "nosuch")
            unknown.status shouldBe 2
            unknown.err shouldContain "unknown benchmark 'nosuch'"
            braid("bench", "fop_latency", "-S", "64").err shouldContain "-S 8"
        }

        test("OSU's iterations: fewer above 8 KiB; -I and -x override") {
            Benchmark.LATENCY.plan(8192, null, null) shouldBe Plan(10000, 100)
            Benchmark.LATENCY.plan(8193, null, null) shouldBe Plan(1000, 10)
            Benchmark.BW.plan(64, null, null) shouldBe Plan(100, 10)
            Benchmark.ALLREDUCE.plan(1 shl 20, null, null) shouldBe Plan(100, 10)
            Benchmark.BW.plan(64, 5, 0) shouldBe Plan(5, 0)
        }
    })
