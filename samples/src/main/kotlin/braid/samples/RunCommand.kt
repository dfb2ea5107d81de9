package braid.samples

import braid.bootstrap.BootstrapException
import braid.bootstrap.JobLauncher
import java.io.PrintStream

/**
 * `braid run -n N [--] COMMAND…`: N copies of COMMAND on this machine as one job, finding each other through `braid
 * run`'s own key-value server ([JobLauncher]; PMI-1 over loopback, so `Bootstrap.detect()` and MPICH-built programs
 * both work under it). Options end at the first argument that is not one (or at `--`), so the command's own options
 * pass through untouched. The exit status is the job's: 0, an abort's code, or the first failing rank's.
 */
internal object RunCommand {
    const val COMMAND: String = "run"

    private val RANKS = OptionSpec('n', "np", "ranks", "number of processes to start (required)")
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    private val SPECS = listOf(RANKS, HELP)

    fun usage(): String = buildString {
        append("Usage: braid run -n N [--] COMMAND [ARGS...]\n")
        append("\nStarts N processes of COMMAND on this machine as one job. Each finds the others through\n")
        append("braid run's key-value store (Bootstrap.detect() in Java/Kotlin; PMI-1 for MPICH programs).\n")
        append("Output lines are prefixed with the rank ('[0] ...'). When a rank aborts or exits with a\n")
        append("non-zero code the others are killed; the exit status is the job's.\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS))
    }

    /** The parsed command line: rank count and the command, or null when help was asked for. */
    internal class Parsed(val ranks: Int, val command: List<String>)

    /** Parses `braid run`'s arguments, stopping at the command; null for `--help`. */
    fun parse(args: List<String>): Parsed? {
        var ranks: Int? = null
        var i = 0
        while (i < args.size) {
            val a = args[i]
            when {
                a == "--" -> {
                    i++
                    break
                }
                a == "-h" || a == "--help" -> return null
                a == "-n" || a == "-np" || a == "--np" -> {
                    val v = args.getOrNull(i + 1) ?: throw UsageException(COMMAND, "option '$a' needs a value <ranks>")
                    ranks = intOption(COMMAND, "-n", v, 1, 4096, "a number of ranks")
                    i += 2
                }
                a.startsWith("--np=") -> {
                    ranks = intOption(COMMAND, "-n", a.substringAfter('='), 1, 4096, "a number of ranks")
                    i++
                }
                a.startsWith("-n") && a.length > 2 && a[2].isDigit() -> {
                    ranks = intOption(COMMAND, "-n", a.substring(2), 1, 4096, "a number of ranks")
                    i++
                }
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
        return Parsed(ranks, command)
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
            JobLauncher(parsed.ranks, parsed.command, out, err).run()
        } catch (e: BootstrapException) {
            // JobLauncher's messages stand alone ("braid run: cannot start rank 0 …"); braid adds its own prefix.
            throw CommandFailure((e.message ?: e.toString()).removePrefix("braid $COMMAND: "), e)
        }
    }
}
