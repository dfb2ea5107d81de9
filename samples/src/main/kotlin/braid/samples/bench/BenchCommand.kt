package braid.samples.bench

import braid.bootstrap.Bootstrap
import braid.bootstrap.BootstrapException
import braid.bootstrap.JobLauncher
import braid.core.Settings
import braid.mpi.MpiParams
import braid.samples.CommandFailure
import braid.samples.DemoCommand
import braid.samples.OptionSpec
import braid.samples.TransferSizes
import braid.samples.UsageException
import braid.samples.intOption
import braid.samples.optionsHelp
import braid.samples.parseArgs
import java.io.ByteArrayOutputStream
import java.io.OutputStream
import java.io.PrintStream
import java.nio.file.Path

/**
 * `braid bench NAME`: an OSU micro-benchmark ([Benchmark]) at one layer — rail-core endpoints ([CoreLayer], `-p` or
 * `--config`), `braid.mpi` ([MpiLayer], `--layer mpi`) or the `mpi` package, Open MPI's Java API ([JavaMpiLayer],
 * `--layer java-mpi`) — printed in OSU's format (or CSV, JSON), with a plot.
 *
 * Under a launcher (`braid run`, `mpiexec`, `mpirun`, `srun`) it runs on the launcher's ranks. Started on its own, it
 * starts its ranks itself as `braid run` would (`-n`, default 2: this JVM's `java`, class path and options, as `braid
 * demo` starts its server), relays rank 0's output without the rank prefix, and returns the job's exit status.
 */
internal object BenchCommand {
    const val COMMAND: String = "bench"
    private const val JAVA_MPI = "java-mpi"
    private val LAYERS = listOf("core", "mpi", JAVA_MPI)

    private val PROVIDER =
        OptionSpec(
            'p',
            "provider",
            "provider",
            "provider at --layer core: shm, tcp, link (shm); at --layer mpi and java-mpi MPI_Init's choice unless given",
        )
    private val CONFIG =
        OptionSpec(null, "config", "file", "the link a config file describes, instead of -p (--layer core)")
    private val LAYER =
        OptionSpec(
            null,
            "layer",
            "layer",
            "core (rail-core endpoints), mpi (braid.mpi) or java-mpi (package mpi) (core)",
        )
    private val RANKS = OptionSpec('n', null, "ranks", "ranks to start when no launcher started this one (2)")
    private val SIZES =
        OptionSpec(
            'S',
            null,
            "sizes",
            "sizes: bytes (64, 4k, 1m), a comma-separated list, or 'all' (OSU's range, the default)",
        )
    private val ITERATIONS = OptionSpec('I', null, "number", "timed iterations per size (OSU's: by benchmark and size)")
    private val SKIP = OptionSpec('x', null, "number", "untimed iterations before them per size (OSU's skip)")
    private val WINDOW =
        OptionSpec(
            'W',
            null,
            "number",
            "messages in flight per iteration of bw, bibw, mbw_mr, put_bw (${Benchmark.WINDOW})",
        )
    private val FORMAT = OptionSpec(null, "format", "format", "text (OSU's), csv or json (text)")
    private val PLOT = OptionSpec(null, "plot", "file.png", "also draw the results against size into this PNG")
    private val WARMUP = OptionSpec(null, "warmup", "seconds", "untimed passes for the JIT before the first size (0)")
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    /** Given by the process that started the ranks: run as a rank even if the bootstrap looks like a singleton. */
    private val LAUNCHED = OptionSpec(null, "launched", null, "(internal) started by braid bench itself")
    /** Given with [LAUNCHED] when that process's standard error is a terminal: relay the progress line. */
    private val PROGRESS = OptionSpec(null, "progress", null, "(internal) relay the progress line")
    private val SPECS =
        listOf(
            PROVIDER,
            CONFIG,
            LAYER,
            RANKS,
            SIZES,
            ITERATIONS,
            SKIP,
            WINDOW,
            FORMAT,
            PLOT,
            WARMUP,
            HELP,
            LAUNCHED,
            PROGRESS,
        )

    fun usage(): String = buildString {
        append("Usage: braid bench NAME [OPTIONS]\n")
        append("\nRuns an OSU micro-benchmark over Braid and prints OSU's table (# Size and its columns),\n")
        append("with p50/p99/max beside the mean latency. NAME: ${Benchmark.entries.joinToString(", ") { it.id }}.\n")
        append("Under braid run, mpiexec or mpirun it runs on the launcher's ranks; on its own it starts -n ranks.\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS.filter { it != LAUNCHED && it != PROGRESS }))
    }

    fun run(args: List<String>, out: PrintStream, err: PrintStream): Int {
        val parsed = parseArgs(COMMAND, args, SPECS)
        if (parsed.has(HELP)) {
            out.print(usage())
            return 0
        }
        val name =
            parsed.positionals.firstOrNull()
                ?: throw UsageException(COMMAND, "name a benchmark: ${Benchmark.entries.joinToString(", ") { it.id }}")
        if (parsed.positionals.size > 1) throw UsageException(COMMAND, "unexpected argument '${parsed.positionals[1]}'")
        val benchmark =
            Benchmark.byName(name)
                ?: throw UsageException(
                    COMMAND,
                    "unknown benchmark '$name'; one of ${Benchmark.entries.joinToString(", ") { it.id }}",
                )
        val layer = parsed.value(LAYER) ?: "core"
        if (layer !in LAYERS)
            throw UsageException(COMMAND, "option '--layer': unknown layer '$layer'; use core, mpi or java-mpi")
        val config = parsed.value(CONFIG)?.let { Path.of(it) }
        if (config != null && parsed.value(PROVIDER) != null)
            throw UsageException(COMMAND, "give either -p or --config, not both")
        if (config != null && layer != "core")
            throw UsageException(
                COMMAND,
                "--config opens rail-core endpoints: use it with --layer core, or -p with --layer $layer",
            )
        val sizes =
            when {
                benchmark.shape == Shape.BARRIER -> listOf(0)
                parsed.value(SIZES) == null || parsed.value(SIZES).equals("all", ignoreCase = true) ->
                    benchmark.defaultSizes
                else -> TransferSizes.parse(COMMAND, "-S", parsed.value(SIZES)!!)
            }
        if (benchmark == Benchmark.FOP_LATENCY && sizes != listOf(8))
            throw UsageException(COMMAND, "fop_latency fetch-adds one 8-byte integer: leave out -S or give -S 8")
        val options =
            BenchOptions(
                benchmark = benchmark,
                layer = layer,
                provider = parsed.value(PROVIDER),
                config = config,
                sizes = sizes,
                iterations =
                    parsed.value(ITERATIONS)?.let {
                        intOption(COMMAND, "-I", it, 1, Int.MAX_VALUE, "a number of iterations")
                    },
                skip =
                    parsed.value(SKIP)?.let {
                        intOption(COMMAND, "-x", it, 0, Int.MAX_VALUE, "a number of iterations")
                    },
                window =
                    parsed.value(WINDOW)?.let { intOption(COMMAND, "-W", it, 1, 4096, "a window size") }
                        ?: Benchmark.WINDOW,
                format =
                    parsed.value(FORMAT)?.let {
                        Format.parse(it)
                            ?: throw UsageException(
                                COMMAND,
                                "option '--format': unknown format '$it'; use text, csv or json",
                            )
                    } ?: Format.TEXT,
                plot = parsed.value(PLOT)?.let { Path.of(it) },
                warmupSeconds =
                    parsed.value(WARMUP)?.let { intOption(COMMAND, "--warmup", it, 0, 3600, "a number of seconds") }
                        ?: 0,
            )
        val ranks = parsed.value(RANKS)?.let { intOption(COMMAND, "-n", it, 1, 256, "a number of ranks") } ?: 2

        if (layer == JAVA_MPI)
            return runJavaMpi(args, parsed.has(LAUNCHED), parsed.has(PROGRESS), options, ranks, out, err)
        val boot = Bootstrap.detect()
        if (boot.kind == "singleton" && !parsed.has(LAUNCHED)) {
            boot.close()
            Refusals.of(layer, benchmark, ranks)?.let { throw CommandFailure(it) }
            return launch(args, ranks, emptyMap(), out, err)
        }
        try {
            Refusals.of(layer, benchmark, boot.size)?.let { throw CommandFailure(it) }
        } catch (e: CommandFailure) {
            boot.close()
            throw e
        }
        val progress = progress(boot.rank, parsed.has(LAUNCHED), parsed.has(PROGRESS), err)
        val maxBytes = options.sizes.max()
        val opened =
            try {
                if (layer == "mpi") MpiLayer.open(boot, options.provider, maxBytes, options.window)
                else CoreLayer.open(boot, options.provider ?: "shm", options.config, maxBytes)
            } catch (t: Throwable) {
                runCatching { boot.close() }
                throw t
            }
        try {
            opened.use { BenchRunner(it, options, out, progress).run() }
        } finally {
            if (layer == "core") runCatching { boot.close() } // braid.mpi's finalize closes it at --layer mpi
        }
        return 0
    }

    /**
     * `--layer java-mpi`: `MPI.Init` finds the launcher's ranks itself, so this process does not open the bootstrap; on
     * its own it starts its ranks with `-p` as `BRAID_MPI_PROVIDER`, the variable `MPI.Init` reads. Under another
     * launcher `-p` must agree with that variable, since nothing else reaches `MPI.Init`.
     */
    private fun runJavaMpi(
        args: List<String>,
        launched: Boolean,
        relayProgress: Boolean,
        options: BenchOptions,
        ranks: Int,
        out: PrintStream,
        err: PrintStream,
    ): Int {
        val provider = options.provider
        if (Bootstrap.detectedKind() == "singleton" && !launched) {
            Refusals.of(JAVA_MPI, options.benchmark, ranks)?.let { throw CommandFailure(it) }
            val env = if (provider != null) mapOf(MpiParams.PROVIDER.env to provider) else emptyMap()
            return launch(args, ranks, env, out, err)
        }
        val asked = Settings.DEFAULT[MpiParams.PROVIDER]
        if (provider != null && provider != asked)
            throw CommandFailure(
                "--layer java-mpi: MPI.Init opens the provider ${MpiParams.PROVIDER.env} names ('$asked'), not -p " +
                    "'$provider'; set ${MpiParams.PROVIDER.env}=$provider in the launcher's environment instead of -p"
            )
        val layer = JavaMpiLayer.open(options.sizes.max(), options.window)
        layer.use {
            Refusals.of(JAVA_MPI, options.benchmark, it.size)?.let { why -> throw CommandFailure(why) }
            BenchRunner(it, options, out, progress(it.rank, launched, relayProgress, err)).run()
        }
        return 0
    }

    private fun progress(rank: Int, launched: Boolean, relayed: Boolean, err: PrintStream): Progress =
        Progress(
            when {
                rank != 0 -> Progress.Mode.OFF
                relayed -> Progress.Mode.RELAYED
                !launched && System.console() != null -> Progress.Mode.TERMINAL
                else -> Progress.Mode.OFF
            },
            err,
        )

    /**
     * Starts [ranks] ranks of this command on this machine ([JobLauncher], as `braid run`), each with `--launched`;
     * relays their output without the `[rank] ` prefix, and their relayed progress line as a line rewritten in place.
     */
    private fun launch(
        args: List<String>,
        ranks: Int,
        environment: Map<String, String>,
        out: PrintStream,
        err: PrintStream,
    ): Int {
        val terminal = System.console() != null
        val command =
            DemoCommand.childJvmCommand() +
                listOf(COMMAND) +
                args +
                listOf("--launched") +
                (if (terminal) listOf("--progress") else emptyList())
        val relayErr = Relay(err, progressOn = terminal)
        val relayOut = Relay(out, progressOn = false, clearFirst = relayErr)
        return try {
            JobLauncher(
                    ranks,
                    command,
                    PrintStream(relayOut, true, Charsets.UTF_8),
                    PrintStream(relayErr, true, Charsets.UTF_8),
                    environment,
                )
                .run()
        } catch (e: BootstrapException) {
            throw CommandFailure((e.message ?: e.toString()).removePrefix("braid run: "), e)
        } finally {
            relayErr.clear()
        }
    }

    /**
     * The ranks' lines as `braid run` forwards them (`[rank] text`), written to [to] as `text`. A relayed progress line
     * ([Progress.MARK]) is drawn in place on [to] when [progressOn], else dropped; [clearFirst]'s progress line is
     * cleared before a line of results is written.
     */
    private class Relay(
        private val to: PrintStream,
        private val progressOn: Boolean,
        private val clearFirst: Relay? = null,
    ) : OutputStream() {
        private val line = ByteArrayOutputStream()
        private var showing = false

        override fun write(b: Int) {
            if (b == '\n'.code) {
                emit(line.toString(Charsets.UTF_8))
                line.reset()
            } else {
                line.write(b)
            }
        }

        @Synchronized
        private fun emit(raw: String) {
            val text = raw.replaceFirst(PREFIX, "")
            if (text.startsWith(Progress.MARK)) {
                if (!progressOn) return
                to.print("\r" + text.removePrefix(Progress.MARK) + Progress.CLEAR_TO_END)
                showing = text.length > Progress.MARK.length
            } else {
                clearFirst?.clear()
                clear()
                to.println(text)
            }
            to.flush()
        }

        @Synchronized
        fun clear() {
            if (!showing) return
            to.print("\r" + Progress.CLEAR_TO_END)
            to.flush()
            showing = false
        }

        companion object {
            private val PREFIX = Regex("^\\[\\d+] ")
        }
    }
}
