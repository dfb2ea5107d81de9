package braid.samples.bench

import braid.samples.CommandFailure
import java.awt.BasicStroke
import java.awt.Color
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import java.text.DecimalFormat
import kotlin.system.exitProcess
import org.jfree.chart.ChartUtils
import org.jfree.chart.JFreeChart
import org.jfree.chart.axis.LogAxis
import org.jfree.chart.axis.NumberTickUnit
import org.jfree.chart.plot.XYPlot
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer
import org.jfree.data.xy.XYSeries
import org.jfree.data.xy.XYSeriesCollection

/**
 * The plots of `braid bench --plot FILE.png` and of `bench/side-by-side.sh`, drawn by JFreeChart (maintained, one jar
 * without dependencies of its own, log axes, PNG without a display): a value against message size, both axes
 * logarithmic (sizes in powers of two, values in powers of ten), one line per series, the units on the axes and the
 * machine (cores, CPU model, JVM) in the title. Sizes of 0 bytes have no place on a log axis and are left out.
 */
public object BenchPlot {
    public const val WIDTH: Int = 1000
    public const val HEIGHT: Int = 640

    /** The series' colours, in order (none of them grey, black or white: a reader of the PNG can count the lines). */
    internal val PALETTE: List<Color> =
        listOf(
            Color(0x1f77b4),
            Color(0xd62728),
            Color(0x2ca02c),
            Color(0xff7f0e),
            Color(0x9467bd),
            Color(0x8c564b),
            Color(0xe377c2),
            Color(0x17becf),
        )

    /** One line: its name and its points (size in bytes, value). */
    internal class Series(val name: String, val points: List<Pair<Double, Double>>)

    /** The plot of one `braid bench` run: one line per column of the benchmark (Messages/s left out: another unit). */
    internal fun write(file: Path, benchmark: Benchmark, layer: String, transport: String, rows: List<Row>) {
        val columns = if (benchmark.shape == Shape.MBW_MR) 1 else benchmark.columns.size
        val series =
            (0 until columns).map { c -> Series(benchmark.columns[c], rows.map { it.size.toDouble() to it.values[c] }) }
        val unit = if (benchmark.isLatency) "latency (us)" else "bandwidth (MB/s)"
        write(file, "braid bench ${benchmark.id} ($layer, $transport)", unit, series)
    }

    /** Draws [series] against message size into [file] (PNG, [WIDTH] × [HEIGHT]). */
    internal fun write(file: Path, title: String, valueLabel: String, series: List<Series>) {
        val data = XYSeriesCollection()
        for (s in series) {
            val xy = XYSeries(s.name, true, true)
            for ((x, y) in s.points) if (x > 0 && y > 0) xy.addOrUpdate(x, y)
            if (xy.itemCount > 0) data.addSeries(xy)
        }
        if (data.seriesCount == 0)
            throw CommandFailure("nothing to plot in $file: no positive size with a positive value")
        val sizes =
            LogAxis("message size (bytes)").apply {
                base = 2.0
                smallestValue = 1.0
                tickUnit = NumberTickUnit(1.0) // one tick per power of two
                numberFormatOverride = DecimalFormat("#,##0")
            }
        val values =
            LogAxis(valueLabel).apply {
                base = 10.0
                smallestValue = 1e-3
                numberFormatOverride = DecimalFormat("#,##0.###")
            }
        val renderer = XYLineAndShapeRenderer(true, true)
        for (i in 0 until data.seriesCount) {
            renderer.setSeriesStroke(i, BasicStroke(2f))
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.size])
        }
        val plot =
            XYPlot(data, sizes, values, renderer).apply {
                backgroundPaint = Color.WHITE
                rangeGridlinePaint = Color.GRAY
                domainGridlinePaint = Color.GRAY
            }
        val chart = JFreeChart("$title\n${Machine.describe()}", JFreeChart.DEFAULT_TITLE_FONT, plot, true)
        chart.backgroundPaint = Color.WHITE
        try {
            file.toAbsolutePath().parent?.let { Files.createDirectories(it) }
            ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT)
        } catch (e: IOException) {
            throw CommandFailure("cannot write the plot $file: ${e.message}", e)
        }
    }

    /**
     * `java -cp braid.jar braid.samples.bench.BenchPlot OUT.png TITLE VALUE-LABEL TABLE`: one line per column of a
     * whitespace-separated TABLE whose first line names the columns (`size braid fi_pingpong`) and whose other lines
     * are a size and its values (`-` for none); `bench/side-by-side.sh` draws its plots with it.
     */
    @JvmStatic
    public fun main(args: Array<String>) {
        if (args.size != 4) {
            System.err.println("usage: BenchPlot OUT.png TITLE VALUE-LABEL TABLE")
            exitProcess(2)
        }
        val lines =
            Files.readAllLines(Path.of(args[3])).map { it.trim() }.filter { it.isNotEmpty() && !it.startsWith("#") }
        val names = lines.first().split(Regex("\\s+")).drop(1)
        val rows = lines.drop(1).map { it.split(Regex("\\s+")) }
        val series =
            names.mapIndexed { c, name ->
                Series(
                    name,
                    rows.mapNotNull { r -> r.getOrNull(c + 1)?.toDoubleOrNull()?.let { r[0].toDouble() to it } },
                )
            }
        try {
            write(Path.of(args[0]), args[1], args[2], series)
        } catch (e: CommandFailure) {
            System.err.println("BenchPlot: ${e.message}")
            exitProcess(1)
        }
    }
}
