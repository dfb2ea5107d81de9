package braid.samples

import java.io.PrintStream
import java.util.concurrent.TimeUnit

/**
 * `braid pingpong`: fi_pingpong for Braid. The server (no address given) listens on the control
 * port; the client connects to it. Then, as fi_pingpong does:
 *
 * 1. Both open their endpoint ([RawPingpong]), exchange settings ([PingpongAgreement]) and
 *    endpoint addresses over the control connection ([ControlChannel]), and insert each other in
 *    their AV.
 * 2. For each size: an untimed warm-up ([warmUp]: one second before the first size of each
 *    protocol regime, so the JIT has compiled that path before the clock starts, 20 ms before
 *    the others), a
 *    sync on the control connection, the timed loop (the client sends then awaits the reply;
 *    the server awaits then replies), then an exchange of received counts, which also syncs
 *    the end.
 * 3. Both print fi_pingpong's table ([PerfFormat]), one row per size, as each size ends.
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
     * Runs one pingpong session as [options] say, printing the table to [out]. Client side,
     * [connectAbort] is asked before each connection attempt whether to give up; server side,
     * [onListening] runs once the control port is bound.
     */
    fun execute(
        options: PingpongOptions,
        out: PrintStream,
        connectAbort: () -> String? = { null },
        onListening: () -> Unit = {},
    ) {
        val client = options.isClient
        val maxSize = options.sizes.maxOrNull() ?: 0
        RawPingpong(options.provider, options.tagged, maxSize, options.check, client).use { session ->
            val control = if (client) {
                ControlChannel.connect(options.serverAddress!!, options.connectPort, options.sourcePort, connectAbort)
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
                val theirs = control.receive("receiving the peer's settings") { PingpongAgreement.read(this, control.peer) }
                val differences = mine.differences(theirs)
                if (differences.isNotEmpty()) {
                    throw CommandFailure("the two sides were started with different options: ${differences.joinToString("; ")}")
                }
                val peerAddress = control.receive("receiving the peer's address") {
                    val n = readInt()
                    if (n !in 1..MAX_ADDRESS_LENGTH) throw CommandFailure("the peer ${control.peer} sent an address of $n bytes; protocol error")
                    ByteArray(n).also { readFully(it) }
                }
                session.connect(peerAddress)

                var headerPrinted = false
                val regimesSeen = HashSet<RawPingpong.Regime>()
                for (size in options.sizes) {
                    val iterations = options.iterations
                    val newCode = regimesSeen.add(session.regime(size))
                    warmUp(session, control, client, size, iterations, if (newCode) FIRST_WARMUP_MILLIS else WARMUP_MILLIS)
                    control.sync(client, "synchronising before the $size-byte run")

                    val start = System.nanoTime()
                    val received = if (client) session.runClient(size, iterations, "timed") else session.runServer(size, iterations, "timed")
                    val elapsed = System.nanoTime() - start

                    // As fi_pingpong: the client reports how many replies it received; both print it.
                    val acked = if (client) {
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

    /**
     * The untimed warm-up before a timed run: rounds of [warmupChunk] round trips, until the
     * client has seen [millis] pass (or [WARMUP_MAX_ROUNDS] rounds). After each round the client
     * tells the server over the control connection whether another follows, so both run the same
     * number of round trips however fast or slow the machine is, and only the client decides.
     *
     * Why time, not a count: until HotSpot has compiled a path with C2 a round trip is several
     * times slower, and on a small machine the compiler threads compete with the two
     * busy-polling processes for cores. On two cores the first size of a regime (inject, eager
     * send, rendezvous: each runs different code) needs about a second of it; with half a second
     * the first 64-byte row of 100k round trips was still several times slower than the next,
     * and with 20 ms the first rendezvous size took a quarter of a second to reach its pace. A
     * time bound also keeps the warm-up short on a machine so loaded that round trips take
     * milliseconds; small rounds keep the overrun past the bound small.
     */
    private fun warmUp(session: RawPingpong, control: ControlChannel, client: Boolean, size: Int, iterations: Int, millis: Long) {
        if (iterations == 0) return
        val chunk = warmupChunk(iterations, size)
        val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis)
        var rounds = 0
        while (true) {
            if (client) session.runClient(size, chunk, "warm-up") else session.runServer(size, chunk, "warm-up")
            rounds++
            val more = if (client) {
                val again = System.nanoTime() - deadline < 0 && rounds < WARMUP_MAX_ROUNDS
                control.send("warming up for size $size") { writeBoolean(again) }
                again
            } else {
                control.receive("warming up for size $size") { readBoolean() }
            }
            if (!more) return
        }
    }

    /**
     * Round trips per warm-up round: at most the timed run's count and 100, and about 64 MiB
     * each way at most for large sizes; at least one.
     */
    fun warmupChunk(iterations: Int, size: Int): Int =
        minOf(iterations, 100, maxOf(1, WARMUP_BYTES / maxOf(size, 1)))

    /** Warm-up before the first size of each [RawPingpong.Regime], which pays for its JIT compilation. */
    private const val FIRST_WARMUP_MILLIS = 1000L

    /** Warm-up before every other size: caches, and the buffer pages of a larger size. */
    private const val WARMUP_MILLIS = 20L

    private const val WARMUP_MAX_ROUNDS = 100_000
    private const val WARMUP_BYTES = 64 shl 20
    private const val MAX_ADDRESS_LENGTH = 1 shl 16
}
