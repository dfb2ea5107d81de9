package braid.samples

import braid.dsl.topology
import java.io.PrintStream

/**
 * `braid pingpong`: fi_pingpong for Braid. The server (no address given) listens on the control port; the client
 * connects to it. Then, as fi_pingpong does:
 * 1. Both open their endpoint ([RawPingpong]: provider `-p`, or the link of a topology file `--config`, printed as a
 *    `#` line before the table), exchange settings ([PingpongAgreement]) and endpoint addresses over the control
 *    connection ([ControlChannel]), and insert each other in their AV.
 * 2. For each size: an untimed [Warmup] (before the first size of each protocol regime, until the JIT compilers of both
 *    processes are done with that path; 20 ms before the others), a sync on the control connection, the timed loop (the
 *    client sends then awaits the reply; the server awaits then replies), then an exchange of received counts, which
 *    also syncs the end.
 * 3. Both print fi_pingpong's table ([PerfFormat]), one row per size, as each size ends.
 *
 * With a native provider (`-p ofi:tcp`) the session is [OfiPingpong], which speaks fi_pingpong's own protocol so that
 * the other end may be `fi_pingpong` itself.
 */
internal object PingpongCommand {
    /** Runs `braid pingpong [args]`; returns the exit status (failures are thrown). */
    fun run(args: List<String>, out: PrintStream): Int {
        val options = PingpongOptions.parse(args)
        if (options == null) {
            out.print(PingpongOptions.usage())
            return 0
        }
        execute(options, out)
        return 0
    }

    /**
     * Runs one pingpong session as [options] say, printing the table to [out]. Client side, [connectAbort] is asked
     * before each connection attempt whether to give up; server side, [onListening] runs once the control port is
     * bound.
     */
    fun execute(
        options: PingpongOptions,
        out: PrintStream,
        connectAbort: () -> String? = { null },
        onListening: () -> Unit = {},
    ) {
        if (options.config == null && OfiPingpong.isNative(options.provider)) {
            OfiPingpong.execute(options, out, connectAbort, onListening)
            return
        }
        val client = options.isClient
        val maxSize = options.sizes.maxOrNull() ?: 0
        val open =
            if (options.config != null) {
                val spec = topology { file(options.config) }
                RawPingpong.openTopology(spec, options.tagged).also { link ->
                    val r = link.resolved!!
                    out.println(
                        "# link '${r.link.name}' as ${link.info.domainName}, rails ${r.opened.joinToString { it.rail.linkPart }}" +
                            if (r.leftOut.isEmpty()) "" else ", left out ${r.leftOut.joinToString { it.rail.name }}"
                    )
                }
            } else {
                RawPingpong.openProvider(options.provider, options.tagged)
            }
        RawPingpong(open, options.tagged, maxSize, options.check, client, options.api).use { session ->
            val control =
                if (client) {
                    ControlChannel.connect(
                        options.serverAddress!!,
                        options.connectPort,
                        options.sourcePort,
                        connectAbort,
                    )
                } else {
                    ControlChannel.accept(options.listenPort, options.acceptTimeoutSeconds, onListening)
                }
            control.use {
                val mine = options.agreement()
                val own = session.address
                control.send("sending settings and address") {
                    mine.write(this)
                    writeInt(own.size)
                    write(own)
                }
                val theirs =
                    control.receive("receiving the peer's settings") { PingpongAgreement.read(this, control.peer) }
                val differences = mine.differences(theirs)
                if (differences.isNotEmpty()) {
                    throw CommandFailure(
                        "the two sides were started with different options: ${differences.joinToString("; ")}"
                    )
                }
                val peerAddress =
                    control.receive("receiving the peer's address") {
                        val n = readInt()
                        if (n !in 1..MAX_ADDRESS_LENGTH)
                            throw CommandFailure("the peer ${control.peer} sent an address of $n bytes; protocol error")
                        ByteArray(n).also { readFully(it) }
                    }
                session.connect(peerAddress)

                var headerPrinted = false
                val regimesSeen = HashSet<RawPingpong.Regime>()
                for (size in options.sizes) {
                    val iterations = options.iterations
                    val newCode = regimesSeen.add(session.regime(size))
                    session.uncounted {
                        Warmup.run(session, control, client, size, iterations, firstOfRegime = newCode)
                    }
                    control.sync(client, "synchronising before the $size-byte run")

                    val start = System.nanoTime()
                    val received =
                        if (client) session.runClient(size, iterations, "timed")
                        else session.runServer(size, iterations, "timed")
                    val elapsed = System.nanoTime() - start

                    // As fi_pingpong: the client reports how many replies it received; both print it.
                    val acked =
                        if (client) {
                            control.send("reporting the count for size $size") { writeLong(received) }
                            control.receive("waiting for the count acknowledgement for size $size") { readLong() }
                            received
                        } else {
                            val count = control.receive("receiving the count for size $size") { readLong() }
                            control.send("acknowledging the count for size $size") { writeLong(count) }
                            count
                        }
                    if (iterations > 0) {
                        if (!headerPrinted) {
                            out.println(session.railLine())
                            out.println(PerfFormat.HEADER)
                            headerPrinted = true
                        }
                        out.println(PerfFormat.row(size, iterations.toLong(), acked, elapsed))
                        out.flush()
                    }
                }
            }
        }
    }

    private const val MAX_ADDRESS_LENGTH = 1 shl 16
}
