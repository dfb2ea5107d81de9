package braid.samples

import braid.bootstrap.BootstrapException
import braid.bootstrap.JobLauncher
import java.io.PrintStream

/**
 * `braid run -n N [OPTIONS] [--] COMMAND…`: N copies of COMMAND on this machine as one job, finding each other through
 * `braid run`'s own key-value server ([JobLauncher]; PMI-1 over loopback, so `Bootstrap.detect()` and MPICH-built
 * programs both work under it). It answers to the options of `mpirun`/`mpiexec` that scripts rely on: `-n`/`-np`,
 * `-l`/`--tag-output`, and Open MPI's `--oversubscribe`/`--allow-run-as-root` (accepted, nothing to do here). Options
 * end at the first argument that is not one (or at `--`), so the command's own options pass through untouched. Output
 * passes through untagged unless asked. The exit status is the job's: 0, an abort's code, or the first failing rank's.
 */
internal object RunCommand {
    const val COMMAND: String = "run"

    private val RANKS =
        OptionSpec('n', "np", "ranks", "number of processes to start (required; also -np N, -c N, --n N, -n N as -nN)")
    private val TAG =
        OptionSpec('l', "tag-output", null, "prefix every output line with its rank, '[2] ...' (mpiexec -l)")
    private val OVERSUBSCRIBE =
        OptionSpec(null, "oversubscribe", null, "accepted for mpirun compatibility: braid run never limits the ranks")
    private val AS_ROOT =
        OptionSpec(null, "allow-run-as-root", null, "accepted for mpirun compatibility: braid run runs as any user")
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    private val SPECS = listOf(RANKS, TAG, OVERSUBSCRIBE, AS_ROOT, HELP)

    fun usage(): String = buildString {
        append("Usage: braid run -n N [OPTIONS] [--] COMMAND [ARGS...]\n")
        append("\nStarts N processes of COMMAND on this machine as one job. Each finds the others through\n")
        append("braid run's key-value store (Bootstrap.detect() in Java/Kotlin; PMI-1 for MPICH programs).\n")
        append("Output lines pass through as the ranks print them (whole lines, untagged, like mpirun);\n")
        append("-l adds the rank to each. When a rank aborts or exits with a non-zero code the others are\n")
        append("killed and that code is the job's exit status (128 + N for a rank killed by signal N).\n")
        append("Options end at the first argument that is not one, or at '--'.\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS))
    }

    /**
     * The parsed command line: rank count, tagging, variables to set, and the command; null when help was asked for.
     */
    internal class Parsed(
        val ranks: Int,
        val command: List<String>,
        val tagOutput: Boolean = false,
        val environment: Map<String, String> = emptyMap(),
    )

    /** Parses `braid run`'s arguments, stopping at the command; null for `--help`. */
    fun parse(args: List<String>): Parsed? {
        var ranks: Int? = null
        var tag = false
        var i = 0
        fun value(a: String): String =
            args.getOrNull(i + 1) ?: throw UsageException(COMMAND, "option '$a' needs a value")
        fun ranks(v: String) = intOption(COMMAND, "-n", v, 1, 4096, "a number of ranks")
        while (i < args.size) {
            val a = args[i]
            when {
                a == "--" -> {
                    i++
                    break
                }
                a == "-h" || a == "--help" -> return null
                a == "-n" || a == "-np" || a == "--np" || a == "--n" || a == "-c" -> {
                    ranks = ranks(value(a))
                    i += 2
                }
                a.startsWith("--np=") || a.startsWith("--n=") -> {
                    ranks = ranks(a.substringAfter('='))
                    i++
                }
                a.startsWith("-n") && a.length > 2 && a[2].isDigit() -> {
                    ranks = ranks(a.substring(2))
                    i++
                }
                a == "-l" || a == "--tag-output" -> {
                    tag = true
                    i++
                }
                a == "--oversubscribe" || a == "--allow-run-as-root" -> i++
                a.startsWith("-") ->
                    throw UsageException(
                        COMMAND,
                        "unknown option '$a' (put the command after '--' if it starts with '-')",
                    )
                else -> break
            }
        }
        val command = args.subList(i, args.size)
        if (ranks == null) throw UsageException(COMMAND, "give the number of ranks with -n N")
        if (command.isEmpty()) throw UsageException(COMMAND, "no command to run")
        return Parsed(ranks, command, tag)
    }

    /** Runs `braid run [args]`; returns the job's exit status. */
    fun run(args: List<String>, out: PrintStream, err: PrintStream): Int {
        val parsed =
            parse(args)
                ?: run {
                    out.print(usage())
                    return 0
                }
        return try {
            JobLauncher(parsed.ranks, parsed.command, out, err).apply { tagOutput = parsed.tagOutput }.run()
        } catch (e: BootstrapException) {
            // JobLauncher's messages stand alone ("braid run: cannot start rank 0 …"); braid adds its own prefix.
            throw CommandFailure((e.message ?: e.toString()).removePrefix("braid $COMMAND: "), e)
        }
    }
}
