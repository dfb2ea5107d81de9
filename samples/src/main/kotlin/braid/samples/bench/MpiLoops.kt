package braid.samples.bench

import braid.samples.CommandFailure
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.HdrHistogram.Histogram

/**
 * OSU's loops over an MPI API, call for call as OSU's C makes them, written once for the two MPI layers: [MpiLayer]
 * (`braid.mpi`) and [JavaMpiLayer] (the `mpi` package, Open MPI's Java API). A layer supplies the calls (blocking send
 * and receive, windows of nonblocking ones and a wait for all of them, one collective call, a window's lock, put, get,
 * fetch-and-op, flush and unlock); the loops, their timing and what they record are here.
 *
 * Point to point: `MPI_Send`/`MPI_Recv` ping-pong, windows of `MPI_Isend`/`MPI_Irecv` and `MPI_Waitall` then a 4-byte
 * ack. Collectives: each call timed, then a barrier. One-sided (OSU's defaults: a window from `MPI_Win_allocate`,
 * passive target, flush synchronisation): rank 0 locks rank 1 shared, and per iteration puts (gets, fetch-and-adds one
 * 8-byte integer) and flushes, or for put_bw puts a window then flushes; the other ranks wait in the next barrier,
 * which drives their progress.
 */
internal abstract class MpiLoops(maxBytes: Int, window: Int) : BenchLayer {
    protected val capacity: Int = maxOf(maxBytes, 64)
    protected val sendBuf: ByteBuffer = direct(capacity)
    protected val recvBuf: ByteBuffer = direct(capacity)
    protected val ack: ByteBuffer = direct(4)
    /** The origin and result of a fetch-and-op: one 8-byte integer each. */
    protected val one: ByteBuffer = direct(8).putLong(0, 1)
    protected val old: ByteBuffer = direct(8)
    /** Slots for [isend]/[irecv] (`2 × window`, for bibw). */
    protected val slots: Int = 2 * window

    // ## What a layer supplies ##

    protected abstract fun send(bytes: Int, peer: Int, tag: Int)

    protected abstract fun recv(bytes: Int, peer: Int, tag: Int)

    protected abstract fun sendAck(peer: Int)

    protected abstract fun recvAck(peer: Int)

    /** `MPI_Isend` of [bytes] of the send buffer into request slot [slot]. */
    protected abstract fun isend(slot: Int, bytes: Int, peer: Int, tag: Int)

    /** `MPI_Irecv` of [bytes] into the receive buffer, into request slot [slot]. */
    protected abstract fun irecv(slot: Int, bytes: Int, peer: Int, tag: Int)

    /** `MPI_Waitall` on the first [n] slots, statuses ignored; the slots are free again after. */
    protected abstract fun waitAll(n: Int)

    /** One call of [benchmark] (a collective or the barrier) of [bytes]. */
    protected abstract fun collective(benchmark: Benchmark, bytes: Int)

    /** The window over [capacity] bytes (collective: every rank calls it; the first call allocates it). */
    protected abstract fun openWindow()

    protected abstract fun lockShared(target: Int)

    protected abstract fun put(bytes: Int, target: Int)

    protected abstract fun get(bytes: Int, target: Int)

    /** `MPI_Fetch_and_op` of one 8-byte integer, SUM. */
    protected abstract fun fetchAndAdd(target: Int)

    protected abstract fun flush(target: Int)

    protected abstract fun unlock(target: Int)

    // ## The loops ##

    override fun measure(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long =
        when (benchmark.shape) {
            Shape.LATENCY -> latency(bytes, plan, histogram)
            Shape.BW -> bandwidth(bytes, plan, window, if (rank == 0) 1 else if (rank == 1) 0 else -1, rank == 0)
            Shape.MBW_MR -> {
                val pairs = size / 2
                bandwidth(bytes, plan, window, if (rank < pairs) rank + pairs else rank - pairs, rank < pairs)
            }
            Shape.BIBW -> bidirectional(bytes, plan, window)
            Shape.COLLECTIVE,
            Shape.BARRIER -> collectives(benchmark, bytes, plan, histogram)
            Shape.RMA_LATENCY,
            Shape.RMA_BW,
            Shape.ATOMIC_LATENCY -> oneSided(benchmark, bytes, plan, window, histogram)
        }

    private fun latency(bytes: Int, plan: Plan, histogram: Histogram): Long {
        if (rank > 1) return 0
        val peer = 1 - rank
        var t0 = 0L
        var last = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            if (rank == 0) {
                send(bytes, peer, 1)
                recv(bytes, peer, 1)
            } else {
                recv(bytes, peer, 1)
                send(bytes, peer, 1)
                last = stampRoundTrip(i, plan, last, histogram)
            }
        }
        return System.nanoTime() - t0
    }

    private fun bandwidth(bytes: Int, plan: Plan, window: Int, partner: Int, sender: Boolean): Long {
        if (partner < 0) return 0
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            if (sender) {
                for (k in 0 until window) isend(k, bytes, partner, 100)
                waitAll(window)
                recvAck(partner)
            } else {
                for (k in 0 until window) irecv(k, bytes, partner, 100)
                waitAll(window)
                sendAck(partner)
            }
        }
        return if (sender) System.nanoTime() - t0 else 0
    }

    private fun bidirectional(bytes: Int, plan: Plan, window: Int): Long {
        if (rank > 1) return 0
        val peer = 1 - rank
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            for (k in 0 until window) irecv(k, bytes, peer, 100)
            for (k in 0 until window) isend(window + k, bytes, peer, 100)
            waitAll(2 * window)
        }
        return System.nanoTime() - t0
    }

    /** OSU's collective loop: time each call, then a barrier; every rank times. */
    private fun collectives(benchmark: Benchmark, bytes: Int, plan: Plan, histogram: Histogram): Long {
        var timed = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            val start = System.nanoTime()
            collective(benchmark, bytes)
            val t = System.nanoTime() - start
            if (i >= plan.skip) {
                timed += t
                histogram.recordValue(t)
            }
            barrier()
        }
        return timed
    }

    private fun oneSided(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long {
        openWindow()
        if (rank != 0) return 0
        val target = 1
        lockShared(target)
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            val start = System.nanoTime()
            when (benchmark) {
                Benchmark.PUT_LATENCY -> put(bytes, target)
                Benchmark.GET_LATENCY -> get(bytes, target)
                Benchmark.PUT_BW -> for (k in 0 until window) put(bytes, target)
                else -> fetchAndAdd(target)
            }
            flush(target)
            if (i >= plan.skip && benchmark.isLatency) histogram.recordValue(System.nanoTime() - start)
        }
        val elapsed = System.nanoTime() - t0
        unlock(target)
        return elapsed
    }

    companion object {
        fun direct(bytes: Long): ByteBuffer {
            if (bytes > Int.MAX_VALUE)
                throw CommandFailure("a buffer of $bytes bytes is too large; give smaller sizes (-S)")
            return direct(bytes.toInt())
        }

        fun direct(bytes: Int): ByteBuffer =
            try {
                ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
            } catch (e: OutOfMemoryError) {
                throw CommandFailure(
                    "cannot allocate a direct buffer of $bytes bytes (${e.message}); raise -XX:MaxDirectMemorySize, e.g. BRAID_JAVA_OPTS=-XX:MaxDirectMemorySize=4g",
                    e,
                )
            }
    }
}
