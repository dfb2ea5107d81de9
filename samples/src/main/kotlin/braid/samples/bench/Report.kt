package braid.samples.bench

import braid.core.Braid
import java.io.File
import java.io.PrintStream
import java.util.Locale
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/** The machine a run measured: its cores, CPU model and JVM, for the header lines and the plot's title. */
internal object Machine {
    val cores: Int = Runtime.getRuntime().availableProcessors()

    val cpuModel: String by lazy {
        runCatching {
                File("/proc/cpuinfo").useLines { lines ->
                    lines.firstOrNull { it.startsWith("model name") }?.substringAfter(':')?.trim()
                }
            }
            .getOrNull() ?: System.getProperty("os.arch")
    }

    val jvm: String = "${System.getProperty("java.vm.name")} ${System.getProperty("java.runtime.version")}"

    /** `2 cores, Intel(R) Xeon(R) …, OpenJDK 64-Bit Server VM 17.0.9+9`. */
    fun describe(): String = "$cores cores, $cpuModel, $jvm"
}

/** What ran: the benchmark, at which layer, over what, how many ranks, and with which window. */
internal data class RunInfo(
    val benchmark: Benchmark,
    val layer: String,
    val transport: String,
    val ranks: Int,
    val window: Int,
)

/** One row of results: a size and the values of [Benchmark.columns], in order. */
internal data class Row(val size: Int, val values: List<Double>)

/** The output formats of `braid bench`: OSU's text, CSV, JSON. */
internal enum class Format {
    TEXT,
    CSV,
    JSON;

    companion object {
        fun parse(value: String): Format? = entries.firstOrNull { it.name.equals(value, ignoreCase = true) }
    }
}

/**
 * Prints a run's results as [format] says: OSU's text (its `# OSU …` title line, Braid's `#` lines, `# Size` and the
 * column names, one row per size as each size ends), CSV (one header line, then one line per size) or JSON (one object
 * at the end: the run, the machine, the column keys and the rows).
 */
internal class Report(private val run: RunInfo, private val format: Format, private val out: PrintStream) {
    private val rows = ArrayList<Row>()

    /** The rows so far (for the plot). */
    val results: List<Row>
        get() = rows

    fun header() {
        val b = run.benchmark
        when (format) {
            Format.TEXT -> {
                out.println("# ${b.title} (braid ${Braid.VERSION})")
                out.println("# Braid layer: ${run.layer}, transport: ${run.transport}, ranks: ${run.ranks}")
                out.println("# Machine: ${Machine.describe()}")
                when (b.shape) {
                    Shape.MBW_MR -> out.println("# [ pairs: ${run.ranks / 2} ] [ window size: ${run.window} ]")
                    Shape.BW,
                    Shape.BIBW,
                    Shape.RMA_BW -> out.println("# Window size: ${run.window}")
                    else -> {}
                }
                if (b.shape == Shape.BARRIER) {
                    out.println("# " + b.columns.first() + b.columns.drop(1).joinToString("") { it.padStart(FIELD) })
                } else {
                    out.println("# Size".padEnd(SIZE_FIELD) + b.columns.joinToString("") { it.padStart(FIELD) })
                }
            }
            Format.CSV ->
                out.println((listOf("benchmark", "layer", "transport", "ranks", "size") + b.keys).joinToString(","))
            Format.JSON -> {}
        }
        out.flush()
    }

    fun row(row: Row) {
        rows += row
        val b = run.benchmark
        when (format) {
            Format.TEXT -> {
                val values = row.values.joinToString("") { String.format(Locale.ROOT, "%${FIELD}.2f", it) }
                out.println(
                    if (b.shape == Shape.BARRIER) values
                    else String.format(Locale.ROOT, "%-${SIZE_FIELD}d", row.size) + values
                )
            }
            Format.CSV ->
                out.println(
                    (listOf(b.id, run.layer, csv(run.transport), run.ranks.toString(), row.size.toString()) +
                            row.values.map { String.format(Locale.ROOT, "%.3f", it) })
                        .joinToString(",")
                )
            Format.JSON -> {}
        }
        out.flush()
    }

    fun end() {
        if (format != Format.JSON) return
        val b = run.benchmark
        val json = buildJsonObject {
            put("benchmark", b.id)
            put("title", b.title)
            put("layer", run.layer)
            put("transport", run.transport)
            put("ranks", run.ranks)
            put("window", run.window)
            put(
                "machine",
                buildJsonObject {
                    put("cores", Machine.cores)
                    put("cpu", Machine.cpuModel)
                    put("jvm", Machine.jvm)
                },
            )
            put("columns", buildJsonArray { b.keys.forEach { add(JsonPrimitive(it)) } })
            put(
                "rows",
                buildJsonArray {
                    for (r in rows) add(
                        buildJsonObject {
                            put("size", r.size)
                            b.keys.zip(r.values).forEach { (k, v) -> put(k, v) }
                        }
                    )
                },
            )
        }
        out.println(Json.encodeToString(kotlinx.serialization.json.JsonObject.serializer(), json))
        out.flush()
    }

    private fun csv(s: String): String = if (',' in s || '"' in s) "\"" + s.replace("\"", "\"\"") + "\"" else s

    companion object {
        /** OSU's `%-10d` size and `%18.2f` values (`FIELD_WIDTH`, `FLOAT_PRECISION`). */
        const val SIZE_FIELD = 10
        const val FIELD = 18
    }
}
