package braid.samples.bench

import java.io.PrintStream

/**
 * The progress line of a long run: which benchmark, which size, how far (`braid bench latency: 4096 B, size 13 of 24`),
 * rewritten in place on [err]. [mode] says how: [Mode.TERMINAL] rewrites the line with a carriage return (rank 0 whose
 * standard error is a terminal), [Mode.RELAYED] prints each update as a marked line that the process which launched the
 * ranks turns back into the rewritten line on its terminal (`braid run` relays lines, not carriage returns), and
 * [Mode.OFF] prints nothing (output that is not a terminal: logs, pipes, tests).
 */
internal class Progress(private val mode: Mode, private val err: PrintStream) {
    enum class Mode {
        OFF,
        TERMINAL,
        RELAYED,
    }

    private var shown = false

    fun update(benchmark: Benchmark, size: Int, index: Int, total: Int) {
        if (mode != Mode.OFF) show(text(benchmark, size, index, total))
    }

    fun show(text: String) {
        when (mode) {
            Mode.OFF -> return
            Mode.TERMINAL -> err.print("\r$text$CLEAR_TO_END")
            Mode.RELAYED -> err.println(MARK + text)
        }
        err.flush()
        shown = true
    }

    /** Clears the line (the results stay on standard output). */
    fun done() {
        if (!shown) return
        when (mode) {
            Mode.OFF -> {}
            Mode.TERMINAL -> err.print("\r$CLEAR_TO_END")
            Mode.RELAYED -> err.println(MARK)
        }
        err.flush()
        shown = false
    }

    companion object {
        /**
         * The line for size [index] of [total]. The benchmark's warm-up builds it untimed: a string template's first
         * run bootstraps its call site (classes spun at run time), and the JIT compiling those took a core from the
         * first timed row.
         */
        fun text(benchmark: Benchmark, size: Int, index: Int, total: Int): String =
            if (benchmark.shape == Shape.BARRIER) "braid bench ${benchmark.id}: running"
            else "braid bench ${benchmark.id}: $size B, size ${index + 1} of $total"

        /** Starts a relayed progress line: a character no message of Braid's begins with. */
        const val MARK = "\u0001progress "
        const val CLEAR_TO_END = "\u001b[K"
    }
}
