package braid.samples

import java.lang.management.ManagementFactory
import java.util.concurrent.TimeUnit

/**
 * The untimed warm-up before each timed run of a pingpong (fi_pingpong has none: C needs none).
 *
 * Until HotSpot has compiled the data path with C2, a round trip is several times slower; and on a small machine the
 * compiler threads compete for cores with the two busy-polling processes, so compilation trails far behind a fixed
 * count of warm-up round trips (on two cores, after a fixed half second the first 64-byte row of 100k round trips was
 * still three to five times slower than the next). So the warm-up runs until the JIT compilers of both processes have
 * gone quiet:
 * - The warm-up is rounds of [chunk] round trips. After each round the server reports its JVM's total compilation time
 *   over the control connection, and the client answers whether another round follows: both run the same round trips,
 *   and only the client decides.
 * - Before the first size of each [RawPingpong.Regime] (inject, eager send, rendezvous: each runs its own code), rounds
 *   go on until neither JVM has finished a compilation for [QUIET_MILLIS]; for at least [FIRST_MIN_MILLIS] and
 *   [FIRST_MIN_ROUND_TRIPS] (enough calls for HotSpot to queue the path for C2), at most [FIRST_MAX_MILLIS]. Whenever a
 *   compilation finished, the client pauses a moment before answering (the server meanwhile blocks on the socket), so
 *   the compiler threads get the cores.
 * - Before any other size, [OTHER_MILLIS] of rounds: caches, and the pages of a larger buffer.
 *
 * Time bounds, not counts, also keep the warm-up short on a machine so loaded that round trips take milliseconds;
 * rounds are small so the overrun past a bound is small.
 */
internal object Warmup {
    const val FIRST_MIN_MILLIS = 200L
    const val FIRST_MIN_ROUND_TRIPS = 20_000L
    const val FIRST_MAX_MILLIS = 5_000L
    const val QUIET_MILLIS = 200L
    private const val PAUSE_MILLIS = 10L
    private const val OTHER_MILLIS = 20L
    private const val MAX_ROUNDS = 1_000_000
    private const val MAX_BYTES = 64 shl 20

    private val compilation =
        ManagementFactory.getCompilationMXBean()?.takeIf { it.isCompilationTimeMonitoringSupported }

    /** Milliseconds this JVM has spent compiling so far, or -1 if it cannot tell. */
    fun compileMillis(): Long = compilation?.totalCompilationTime ?: -1L

    /** Round trips per round: 100, or fewer for large sizes, about 64 MiB each way at most; at least one. */
    fun chunk(size: Int): Int = minOf(100, maxOf(1, MAX_BYTES / maxOf(size, 1)))

    /** Warms up before the timed run of [iterations] round trips of [size] bytes. */
    fun run(
        session: RawPingpong,
        control: ControlChannel,
        client: Boolean,
        size: Int,
        iterations: Int,
        firstOfRegime: Boolean,
    ) {
        if (iterations == 0) return
        val chunk = chunk(size)
        val doing = "warming up for size $size"
        val start = System.nanoTime()
        var lastCompile = -1L
        var lastChange = start
        var rounds = 0
        while (true) {
            if (client) session.runClient(size, chunk, "warm-up") else session.runServer(size, chunk, "warm-up")
            rounds++
            if (!client) {
                control.send(doing) { writeLong(compileMillis()) }
                if (!control.receive(doing) { readBoolean() }) return
                continue
            }
            val peerCompile = control.receive(doing) { readLong() }
            val ownCompile = compileMillis()
            val now = System.nanoTime()
            val elapsed = TimeUnit.NANOSECONDS.toMillis(now - start)
            val again =
                if (!firstOfRegime) {
                    elapsed < OTHER_MILLIS
                } else
                    if (peerCompile < 0 || ownCompile < 0) {
                        elapsed < FIRST_MAX_MILLIS / 5 // no compilation figures: a fixed second
                    } else {
                        val total = peerCompile + ownCompile
                        if (total != lastCompile) {
                            lastCompile = total
                            lastChange = now
                            Thread.sleep(PAUSE_MILLIS)
                        }
                        val quiet = TimeUnit.NANOSECONDS.toMillis(now - lastChange)
                        val young = elapsed < FIRST_MIN_MILLIS || rounds.toLong() * chunk < FIRST_MIN_ROUND_TRIPS
                        elapsed < FIRST_MAX_MILLIS && (young || quiet < QUIET_MILLIS)
                    } && rounds < MAX_ROUNDS
            control.send(doing) { writeBoolean(again) }
            if (!again) return
        }
    }
}
