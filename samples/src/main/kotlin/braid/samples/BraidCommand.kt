package braid.samples

import braid.core.Braid
import braid.core.FabricException
import braid.dsl.TopologyException
import braid.samples.bench.BenchCommand
import java.io.PrintStream
import kotlin.system.exitProcess

/**
 * The `braid` command: `braid info`, `braid pingpong`, `braid demo`, `braid run`, `braid bench`.
 *
 * Exit status: 0 on success, 1 when a command fails while running (its message on stderr), 2 for a usage error (the
 * message and the command's usage on stderr).
 */
public object BraidCommand {
    private const val USAGE =
        """Usage: braid <command> [OPTIONS]

Commands:
  info       the fabric interfaces Braid offers here, like fi_info
  pingpong   ping pong client and server, like fi_pingpong
  demo       a pingpong between this process and a server process it starts
  bench      an OSU micro-benchmark (latency, bw, allreduce, put_latency, ...) over Braid
  run        N processes of a command on this machine as one job (braid run -n N COMMAND...)

Run 'braid <command> --help' for a command's options; 'braid --version' for the version.
"""

    @JvmStatic
    public fun main(args: Array<String>) {
        val status = run(args.toList(), System.out, System.err)
        System.out.flush()
        System.err.flush()
        exitProcess(status)
    }

    /**
     * Runs `braid [args]` with its output on [out] and [err]; returns the exit status. `braid info` reads the variables
     * [environment] holds instead of this process's when it is not null (tests).
     */
    internal fun run(
        args: List<String>,
        out: PrintStream,
        err: PrintStream,
        environment: Map<String, String>? = null,
    ): Int {
        val command = args.firstOrNull()
        val rest = args.drop(1)
        return try {
            when (command) {
                null -> throw UsageException(null, "no command given")
                "-h",
                "--help",
                "help" -> {
                    out.print(USAGE)
                    0
                }
                "--version" -> {
                    out.println("braid ${Braid.VERSION}")
                    0
                }
                InfoCommand.COMMAND -> InfoCommand.run(rest, out, environment)
                PingpongOptions.COMMAND -> PingpongCommand.run(rest, out)
                DemoCommand.COMMAND -> DemoCommand.run(rest, out, err)
                RunCommand.COMMAND -> RunCommand.run(rest, out, err)
                BenchCommand.COMMAND -> BenchCommand.run(rest, out, err)
                else -> throw UsageException(null, "unknown command '$command'")
            }
        } catch (e: UsageException) {
            out.flush()
            err.println(if (e.command == null) "braid: ${e.message}" else "braid ${e.command}: ${e.message}")
            err.println()
            err.print(usageOf(e.command))
            2
        } catch (e: CommandFailure) {
            out.flush()
            err.println("braid $command: ${e.message}")
            1
        } catch (e: FabricException) {
            out.flush()
            err.println("braid $command: ${e.message}")
            1
        } catch (e: TopologyException) {
            out.flush()
            err.println("braid $command: ${e.message}")
            1
        }
    }

    private fun usageOf(command: String?): String =
        when (command) {
            InfoCommand.COMMAND -> InfoCommand.usage()
            PingpongOptions.COMMAND -> PingpongOptions.usage()
            DemoCommand.COMMAND -> DemoCommand.usage()
            RunCommand.COMMAND -> RunCommand.usage()
            BenchCommand.COMMAND -> BenchCommand.usage()
            else -> USAGE
        }
}
