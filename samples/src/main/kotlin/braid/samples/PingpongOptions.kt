package braid.samples

/**
 * The options of `braid pingpong`, fi_pingpong's (`-B -P -p -e -I -S -c -m -h`) plus Braid's `--api` and
 * `--accept-timeout`. Without a positional address the process is the server; with one it is the client of the server
 * at that address.
 */
internal data class PingpongOptions(
    val provider: String = "shm",
    val iterations: Int = 10,
    val sizes: List<Int> = TransferSizes.DEFAULT,
    /** `-B`: the server's listening port; the client's local port (0: any). */
    val sourcePort: Int = 0,
    /** `-P`: the port the client connects to. */
    val destinationPort: Int = 0,
    val tagged: Boolean = false,
    val check: Boolean = false,
    val api: String = API_RAW,
    /** The server's address: null for the server itself. */
    val serverAddress: String? = null,
    /** Server: how long to wait for a client; null for ever. */
    val acceptTimeoutSeconds: Int? = null,
    /** `--config FILE`: the link a topology file describes, instead of provider [provider]. */
    val config: String? = null,
) {
    val isClient: Boolean
        get() = serverAddress != null

    /** The port the server listens on. */
    val listenPort: Int
        get() = if (sourcePort != 0) sourcePort else ControlChannel.DEFAULT_PORT

    /** The port the client connects to. */
    val connectPort: Int
        get() = if (destinationPort != 0) destinationPort else ControlChannel.DEFAULT_PORT

    /** What this side requires the peer to have set identically. */
    fun agreement(): PingpongAgreement =
        PingpongAgreement(api, if (config != null) "--config" else provider, tagged, check, iterations, sizes)

    companion object {
        const val COMMAND: String = "pingpong"
        const val API_RAW: String = "raw"
        const val API_SUSPEND: String = "suspend"
        const val API_FUTURE: String = "future"
        val APIS: List<String> = listOf(API_RAW, API_SUSPEND, API_FUTURE)

        val SOURCE_PORT = OptionSpec('B', null, "src_port", "source control port number (server: 47592, client: auto)")
        val DESTINATION_PORT = OptionSpec('P', null, "dst_port", "destination control port number (client: 47592)")
        val PROVIDER = OptionSpec('p', null, "provider", "provider name (shm); see 'braid info -l'")
        val ENDPOINT = OptionSpec('e', null, "ep_type", "endpoint type: rdm, the only one Braid offers (rdm)")
        val ITERATIONS = OptionSpec('I', null, "number", "number of iterations (10)")
        val SIZE =
            OptionSpec(
                'S',
                null,
                "size",
                "transfer size: bytes (64, 4k, 1m), a comma-separated list, or 'all' (0 to 6m); " +
                    "default 64,256,1k,4k,64k,1m as fi_pingpong",
            )
        val CHECK = OptionSpec('c', null, null, "enables data integrity checks")
        val MODE = OptionSpec('m', null, "transmit mode", "transmit mode type: msg|tagged (msg)")
        val API =
            OptionSpec(
                null,
                "api",
                "api",
                "API of the data path: raw (polling try-calls), suspend (coroutines) or future (CompletableFuture) (raw)",
            )
        val ACCEPT_TIMEOUT =
            OptionSpec(
                null,
                "accept-timeout",
                "seconds",
                "server: give up if no client connects in time (wait for ever)",
            )
        val CONFIG =
            OptionSpec(
                null,
                "config",
                "file",
                "run over the link a topology file (.json, .conf) describes, instead of -p; see 'braid info --config'",
            )
        val HELP = OptionSpec('h', "help", null, "display this help output")

        val SPECS: List<OptionSpec> =
            listOf(
                SOURCE_PORT,
                DESTINATION_PORT,
                PROVIDER,
                CONFIG,
                ENDPOINT,
                ITERATIONS,
                SIZE,
                CHECK,
                MODE,
                API,
                ACCEPT_TIMEOUT,
                HELP,
            )

        /** The usage text of `braid pingpong --help`. */
        fun usage(): String = buildString {
            append("Usage:\n")
            append("  braid pingpong [OPTIONS]\t\tstart server\n")
            append("  braid pingpong [OPTIONS] <srv_addr>\tconnect to server\n")
            append("\nPing pong client and server over one Braid RDM endpoint; fi_pingpong's options and table.\n")
            append(
                "Both sides must be given the same -p (or both --config), -m, -c, -I and -S. Unlike fi_pingpong, each size is\n"
            )
            append("preceded by an untimed warm-up: before the first size sent by inject, eager send or\n")
            append("rendezvous, until the JIT compilers of both sides are done with that path (0.2 to 5 s);\n")
            append("20 ms before the others.\n")
            append("\nOptions:\n")
            append(optionsHelp(SPECS))
        }

        /** Parses `braid pingpong` arguments; null when only help was asked for. */
        fun parse(args: List<String>): PingpongOptions? {
            val parsed = parseArgs(COMMAND, args, SPECS)
            if (parsed.has(HELP)) return null
            if (parsed.positionals.size > 1) {
                throw UsageException(
                    COMMAND,
                    "expected at most one server address, got ${parsed.positionals.joinToString(" ")}",
                )
            }
            parsed.value(ENDPOINT)?.let {
                if (!it.equals("rdm", ignoreCase = true)) {
                    throw UsageException(
                        COMMAND,
                        "option '-e': endpoint type '$it' is not available; Braid offers rdm endpoints only",
                    )
                }
            }
            val tagged =
                when (val m = parsed.value(MODE)) {
                    null,
                    "msg" -> false
                    "tagged" -> true
                    else -> throw UsageException(COMMAND, "option '-m': unknown transmit mode '$m'; use msg or tagged")
                }
            if (parsed.value(PROVIDER) != null && parsed.value(CONFIG) != null) {
                throw UsageException(COMMAND, "options '-p' and '--config' both choose the endpoint; give one")
            }
            val api = parsed.value(API) ?: API_RAW
            if (api !in APIS) {
                throw UsageException(COMMAND, "option '--api': unknown API '$api'; use one of ${APIS.joinToString()}")
            }
            return PingpongOptions(
                provider = parsed.value(PROVIDER) ?: "shm",
                iterations =
                    parsed.value(ITERATIONS)?.let {
                        intOption(COMMAND, "-I", it, 0, Int.MAX_VALUE, "a number of iterations")
                    } ?: 10,
                sizes = parsed.value(SIZE)?.let { TransferSizes.parse(COMMAND, "-S", it) } ?: TransferSizes.DEFAULT,
                sourcePort = parsed.value(SOURCE_PORT)?.let { intOption(COMMAND, "-B", it, 0, 65535, "a port") } ?: 0,
                destinationPort =
                    parsed.value(DESTINATION_PORT)?.let { intOption(COMMAND, "-P", it, 0, 65535, "a port") } ?: 0,
                tagged = tagged,
                check = parsed.has(CHECK),
                api = api,
                serverAddress = parsed.positionals.firstOrNull(),
                acceptTimeoutSeconds =
                    parsed.value(ACCEPT_TIMEOUT)?.let {
                        intOption(COMMAND, "--accept-timeout", it, 1, Int.MAX_VALUE, "a number of seconds")
                    },
                config = parsed.value(CONFIG),
            )
        }
    }
}
