package braid.provider.shm

import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicBoolean
import org.agrona.concurrent.ControlledMessageHandler
import org.agrona.concurrent.MessageHandler
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * Runs the ring code's rare branches once per process, before any channel's hot loop is compiled: a record that does
 * not fit before the end of the ring (padding, then a wrap), a full ring, a read stopped by its message limit, and a
 * record pushed back. On a small private ring; nothing is shared.
 *
 * Why: the JIT compiles a branch it never saw taken as a trap. A 4 MiB data ring first wraps after 65,536 one-byte
 * messages, which is the first row of a windowed benchmark (1,000 windows of 64 warm-up, then the timed ones): the
 * receiver's compiled progress loop, Agrona's read inlined in it, was thrown away at the wrap and ran interpreted until
 * it was compiled again (JFR: `jdk.Deoptimization`, `unstable_if` at `OneToOneRingBuffer.controlledRead` lines 247 and
 * 260, the end of the contiguous block and the padding record). On two cores, with both ranks spinning, that
 * recompilation took most of the row: 1 B at 1.1 MB/s first, 2.9–4.6 MB/s after another row had wrapped the ring.
 * Profiles are per method, not per ring, so branches seen here are compiled in everywhere.
 */
internal object ShmRingWarmup {
    private val done = AtomicBoolean()
    /** Rounds of fill-and-read: enough for the tiered compiler's profiling tier to see every branch many times. */
    private const val ROUNDS = 3_000
    private const val CAPACITY = 1024
    private const val TYPE = 1

    /**
     * Starts the warm-up once per process, on a daemon thread of its own (later calls return at once): 10–50 ms of one
     * core that an endpoint's start does not wait for. The rings' hot loops are compiled thousands of messages later.
     */
    fun start() {
        if (!done.compareAndSet(false, true)) return
        val t = Thread({ exercise(ROUNDS) }, "braid-shm-ring-warmup")
        t.isDaemon = true
        t.start()
    }

    /** How often [exercise] took each rare branch. */
    data class Branches(val wraps: Int, val fulls: Int, val limited: Int, val pushedBack: Int)

    /** [rounds] rounds of fill-and-read on a fresh private ring; returns how often each rare branch was taken. */
    fun exercise(rounds: Int): Branches {
        val ring =
            OneToOneRingBuffer(UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY + RingBufferDescriptor.TRAILER_LENGTH)))
        val src = UnsafeBuffer(ByteArray(CAPACITY))
        var seen = 0
        var pushedBack = 0
        val controlled = ControlledMessageHandler { _, _, _, _ ->
            // Now and then push a record back, as the data ring's reader does with an unexpected message over bounds.
            if (++seen % 5 == 0) {
                pushedBack++
                ControlledMessageHandler.Action.ABORT
            } else ControlledMessageHandler.Action.CONTINUE
        }
        val plain = MessageHandler { _, _, _, _ -> seen++ }
        var wraps = 0
        var fulls = 0
        var limited = 0
        var last = -1
        for (i in 0 until rounds) {
            // Fill to the brim with lengths that do not divide the capacity: records meet the end and wrap.
            var n = 0
            while (true) {
                val length = 8 + (i * 7 + n * 13) % 120
                val index = ring.tryClaim(TYPE, length)
                if (index < 0) {
                    fulls++
                    break
                }
                if (index < last) wraps++
                last = index
                ring.buffer().putLong(index, i.toLong())
                ring.commit(index)
                n++
            }
            if (!ring.write(TYPE, src, 0, 8 + i % 64)) fulls++ // a write into a full ring: refused
            val limit = 1 + i % 8
            if (i % 2 == 0) {
                while (true) {
                    val read = ring.controlledRead(controlled, limit)
                    if (read == limit) limited++
                    if (read == 0) break
                }
            } else {
                while (true) {
                    val read = ring.read(plain, limit)
                    if (read == limit) limited++
                    if (read == 0) break
                }
            }
            // Whatever a push-back left: drained for the next round.
            while (ring.read(plain) > 0) {}
        }
        return Branches(wraps, fulls, limited, pushedBack)
    }
}
