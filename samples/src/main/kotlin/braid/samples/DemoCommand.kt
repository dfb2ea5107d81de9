package braid.samples

import braid.core.Braid
import braid.core.Caps
import braid.core.Hints
import java.io.File
import java.io.PrintStream
import java.lang.management.ManagementFactory
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/**
 * `braid demo`: a pingpong between two processes with one command. It starts the server as a child JVM (this JVM's
 * `java`, class path and memory and system-property options; main class [BraidCommand]) on a free control port, runs
 * the client in this process against 127.0.0.1 on that port as soon as the server listens, prints the client's table,
 * and waits for the server to finish. The server's own output (its table) goes to a log file, shown only if it fails.
 *
 * The child never outlives the demo: it is killed if the client fails, on Ctrl-C (a shutdown hook), and, should this
 * JVM die abruptly before connecting, it gives up by itself after `--accept-timeout`.
 */
internal object DemoCommand {
    const val COMMAND: String = "demo"

    /** The default sizes: one from each protocol regime of the shm rail (inject, eager, rendezvous). */
    val DEFAULT_SIZES: List<Int> = listOf(64, 4096, 65536, 1048576)
    private const val DEFAULT_ITERATIONS = 10_000

    /** How long the server waits for this process to connect, and this process for the server to end. */
    private const val CHILD_TIMEOUT_SECONDS = 60L

    private val ITERATIONS = OptionSpec('I', null, "number", "number of iterations per size ($DEFAULT_ITERATIONS)")
    private val SIZE =
        OptionSpec(
            'S',
            null,
            "size",
            "transfer size: bytes (64, 4k, 1m), a comma-separated list, or 'all' (0 to 6m) (64,4k,64k,1m)",
        )
    private val PROVIDER = OptionSpec('p', null, "provider", "provider name (shm)")
    private val MODE = OptionSpec('m', null, "transmit mode", "transmit mode type: msg|tagged (msg)")
    private val CHECK = OptionSpec('c', null, null, "enables data integrity checks")
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    private val SPECS = listOf(ITERATIONS, SIZE, PROVIDER, MODE, CHECK, HELP)

    fun usage(): String = buildString {
        append("Usage: braid demo [OPTIONS]\n")
        append("\nRuns a pingpong between this process and a server process it starts on this machine,\n")
        append("and prints the client's table (as 'braid pingpong' and fi_pingpong print it).\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS))
    }

    /** Runs `braid demo [args]`; returns the exit status (failures are thrown). */
    fun run(args: List<String>, out: PrintStream, err: PrintStream): Int {
        val parsed = parseArgs(COMMAND, args, SPECS)
        if (parsed.has(HELP)) {
            out.print(usage())
            return 0
        }
        if (parsed.positionals.isNotEmpty()) {
            throw UsageException(COMMAND, "unexpected argument '${parsed.positionals.first()}'")
        }
        val iterations =
            parsed.value(ITERATIONS)?.let { intOption(COMMAND, "-I", it, 0, Int.MAX_VALUE, "a number of iterations") }
                ?: DEFAULT_ITERATIONS
        val sizes = parsed.value(SIZE)?.let { TransferSizes.parse(COMMAND, "-S", it) } ?: DEFAULT_SIZES
        val tagged =
            when (val m = parsed.value(MODE)) {
                null,
                "msg" -> false
                "tagged" -> true
                else -> throw UsageException(COMMAND, "option '-m': unknown transmit mode '$m'; use msg or tagged")
            }
        val provider = parsed.value(PROVIDER) ?: "shm"
        val check = parsed.has(CHECK)

        // Fail here, before starting a server, if the provider is unknown or unusable.
        Braid.getInfo(Hints(caps = if (tagged) Caps.TAGGED else Caps.MSG, provider = provider))

        val port = freePort()
        val serverArgs = buildList {
            add(PingpongOptions.COMMAND)
            add("-p")
            add(provider)
            add("-B")
            add(port.toString())
            add("-I")
            add(iterations.toString())
            add("-S")
            add(TransferSizes.format(sizes))
            add("-m")
            add(if (tagged) "tagged" else "msg")
            if (check) add("-c")
            add("--accept-timeout")
            add(CHILD_TIMEOUT_SECONDS.toString())
        }
        val log = Files.createTempFile("braid-demo-server-", ".log").toFile()
        val child = ProcessBuilder(childJvmCommand() + serverArgs).redirectErrorStream(true).redirectOutput(log).start()
        val killer = Thread {
            child.destroyForcibly()
            child.waitFor(5, TimeUnit.SECONDS)
            log.delete()
        }
        Runtime.getRuntime().addShutdownHook(killer)
        var succeeded = false
        try {
            out.println(
                "braid demo: $provider pingpong between this process (pid ${ProcessHandle.current().pid()}, client) and pid ${child.pid()} (server)"
            )
            out.flush()
            val client =
                PingpongOptions(
                    provider = provider,
                    iterations = iterations,
                    sizes = sizes,
                    destinationPort = port,
                    tagged = tagged,
                    check = check,
                    serverAddress = "127.0.0.1",
                )
            PingpongCommand.execute(
                client,
                out,
                connectAbort = {
                    if (child.isAlive) null
                    else "the server process exited with status ${child.exitValue()} before accepting a connection"
                },
            )
            if (!child.waitFor(CHILD_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw CommandFailure(
                    "the server process (pid ${child.pid()}) did not exit within $CHILD_TIMEOUT_SECONDS s after the run"
                )
            }
            if (child.exitValue() != 0) {
                throw CommandFailure("the server process (pid ${child.pid()}) exited with status ${child.exitValue()}")
            }
            succeeded = true
            return 0
        } finally {
            if (child.isAlive) {
                child.destroyForcibly()
                child.waitFor(10, TimeUnit.SECONDS)
            }
            runCatching { Runtime.getRuntime().removeShutdownHook(killer) }
            if (succeeded || log.length() == 0L) {
                log.delete()
            } else {
                err.println("braid demo: the server's output (${log.path}), last lines:")
                log.readLines().takeLast(40).forEach { err.println("  | $it") }
            }
        }
    }

    /** A TCP port free on this machine right now (the child binds it a moment later). */
    private fun freePort(): Int = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }

    /**
     * `java [options] -cp <class path> braid.samples.BraidCommand`: this JVM's launcher and class path, and its
     * command-line options except agents and debuggers (whose ports would clash).
     */
    fun childJvmCommand(): List<String> {
        val java =
            ProcessHandle.current()
                .info()
                .command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java")
        val inherited =
            ManagementFactory.getRuntimeMXBean().inputArguments.filterNot { arg ->
                EXCLUDED_JVM_OPTIONS.any { arg.startsWith(it) }
            }
        return listOf(java) +
            inherited +
            listOf("-cp", System.getProperty("java.class.path"), BraidCommand::class.java.name)
    }

    private val EXCLUDED_JVM_OPTIONS = listOf("-agentlib", "-agentpath", "-javaagent", "-Xrunjdwp", "-Xdebug")
}
