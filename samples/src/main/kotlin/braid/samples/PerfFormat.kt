package braid.samples

import java.util.Locale

/**
 * The result table of `fi_pingpong` (libfabric `util/pingpong.c`, `show_perf`), reproduced character for character so
 * that a `braid pingpong` table and an `fi_pingpong` table can be compared line by line:
 * ```
 * bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec
 * 64      1k      =1k      125k        0.00s     59.87       1.07       0.94
 * ```
 *
 * Row layout is `"%-8s%-8s" + "=%-8s" + "%-8s" + "%8.2fs%10.2f%11.2f%11.2f"`: transfer size, iterations, `=` and the
 * acknowledged count, total bytes moved (both directions), seconds, bytes per microsecond (fi_pingpong's "MB/sec"),
 * microseconds per one-way transfer and millions of transfers per second.
 */
internal object PerfFormat {
    /** The header line, exactly as fi_pingpong prints it (`"%-8s%-8s%-9s%-8s%8s %10s%13s%13s"`). */
    val HEADER: String =
        String.format(
            Locale.ROOT,
            "%-8s%-8s%-9s%-8s%8s %10s%13s%13s",
            "bytes",
            "#sent",
            "#ack",
            "total",
            "time",
            "MB/sec",
            "usec/xfer",
            "Mxfers/sec",
        )

    /**
     * A byte count the way fi_pingpong prints sizes (`size_str`): powers of 1024 with `k`, `m`, `g`, and one fractional
     * digit, truncated, only when the integer part is below 10 and the digit is not zero: 1536 is `1.5k`, 1280 is
     * `1.2k`, 12800 is `12k`, 1228800 is `1.1m`.
     */
    fun sizeStr(size: Long): String {
        require(size >= 0) { "size $size must be >= 0" }
        val base: Long
        val magnitude: String
        when {
            size >= 1L shl 30 -> {
                base = 1L shl 30
                magnitude = "g"
            }
            size >= 1L shl 20 -> {
                base = 1L shl 20
                magnitude = "m"
            }
            size >= 1L shl 10 -> {
                base = 1L shl 10
                magnitude = "k"
            }
            else -> {
                base = 1
                magnitude = ""
            }
        }
        val whole = size / base
        val fraction = if (whole < 10) (size % base) * 10 / base else 0
        return if (fraction != 0L) "$whole.$fraction$magnitude" else "$whole$magnitude"
    }

    /**
     * A message count the way fi_pingpong prints counts (`cnt_str`): powers of 1000 with `k`, `m`, `b`, truncated, no
     * fraction: 1000 is `1k`, 1999 is `1k`, 100000 is `100k`.
     */
    fun countStr(count: Long): String =
        when {
            count >= 1_000_000_000 -> "${count / 1_000_000_000}b"
            count >= 1_000_000 -> "${count / 1_000_000}m"
            count >= 1_000 -> "${count / 1_000}k"
            else -> count.toString()
        }

    /**
     * One result row for [iterations] round trips of [size] bytes that took [elapsedNanos], the peer having
     * acknowledged [acked] of them. Each round trip is two transfers, one each way.
     */
    fun row(size: Int, iterations: Long, acked: Long, elapsedNanos: Long): String {
        val transfersPerIteration = 2
        val bytes = iterations * size * transfersPerIteration
        val elapsedMicros = maxOf(elapsedNanos, 1L) / 1000.0
        val usecPerTransfer = elapsedMicros / iterations / transfersPerIteration
        val ack =
            when {
                iterations == acked -> "=" + countStr(acked)
                iterations < acked -> "-" + countStr(acked - iterations)
                else -> "+" + countStr(iterations - acked)
            }
        return String.format(
            Locale.ROOT,
            "%-8s%-8s%-9s%-8s%8.2fs%10.2f%11.2f%11.2f",
            sizeStr(size.toLong()),
            countStr(iterations),
            ack,
            sizeStr(bytes),
            elapsedMicros / 1_000_000.0,
            bytes / elapsedMicros,
            usecPerTransfer,
            1.0 / usecPerTransfer,
        )
    }
}
