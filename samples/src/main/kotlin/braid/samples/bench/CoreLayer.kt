package braid.samples.bench

import braid.bootstrap.Bootstrap
import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.Event
import braid.core.EventType
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.Threading
import braid.dsl.OpenLink
import braid.dsl.Topology
import braid.dsl.TopologyFiles
import braid.samples.CommandFailure
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import org.HdrHistogram.Histogram
import org.agrona.concurrent.UnsafeBuffer

/**
 * `braid bench` over rail-core endpoints (`--layer core`, the default): one endpoint per rank, opened from `-p
 * PROVIDER` (its first Info, spinning, `Threading.DOMAIN`: one thread drives it, so its per-message path takes no lock)
 * or from `--config FILE` (the link the topology describes), with one completion queue; the ranks exchange addresses
 * and memory keys through the launcher's key-value store ([Bootstrap]).
 *
 * Messages are tagged: below the inject size injected (no completion), above it sent and their completion awaited, as
 * fi_pingpong does. Every wait polls the completion queue until each operation posted so far has completed ([waitAll]),
 * so the loops are OSU's with MPI's calls replaced by rail-core's `try…` calls. Barriers and sums go to rank 0 and back
 * as small tagged messages of their own tags. One-sided: rank 1 registers [Benchmark.MAX_P2P] bytes for remote access;
 * rank 0 writes, reads and fetch-adds there while rank 1 drives progress until rank 0 says it is done. A wait that sees
 * no completion for 30 s, or a peer-down event, fails the run rather than hanging.
 */
internal class CoreLayer private constructor(private val boot: Bootstrap, private val open: OpenLink, maxBytes: Int) :
    BenchLayer {
    override val name: String = "core"
    override val transport: String =
        open.resolved?.let { "link '${it.link.name}' (${open.info.provider})" } ?: open.info.provider
    override val rank: Int = boot.rank
    override val size: Int = boot.size

    private val ep = open.endpoint
    private val cq = open.cq
    private val eq = open.eq
    private val injectSize = open.info.txAttr.injectSize
    private val capacity = maxOf(maxBytes, 64)
    private val txBuf = UnsafeBuffer(direct(capacity))
    private val rxBuf = UnsafeBuffer(direct(capacity))
    private val ctlTx = UnsafeBuffer(direct(64))
    private val ctlRx = UnsafeBuffer(direct(8 * maxOf(size, 1)))
    private val memory = UnsafeBuffer(direct(capacity + 64))
    private val region: MemoryRegion
    private val peers: LongArray
    private val keys: LongArray

    private val completion = Completion()
    private val error = CompletionError()
    private val event = Event()
    private var posted = 0L
    private var completed = 0L
    private var spins = 0
    private var waitStarted = 0L

    init {
        region = open.domain.registerMemory(memory, MrAccess.REMOTE)
        boot.put(ADDRESS_KEY, ep.address)
        boot.put(MR_KEY, ByteBuffer.allocate(8).putLong(0, region.key).array())
        boot.fence()
        peers = LongArray(size) { r -> if (r == rank) -1L else open.av.insert(boot.get(r, ADDRESS_KEY)) }
        keys = LongArray(size) { r -> ByteBuffer.wrap(boot.get(r, MR_KEY)).getLong(0) }
    }

    // ## The loops ##

    override fun measure(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long =
        when (benchmark.shape) {
            Shape.LATENCY -> latency(bytes, plan, histogram)
            Shape.BW -> bandwidth(bytes, plan, window, if (rank == 0) 1 else if (rank == 1) 0 else -1)
            Shape.MBW_MR -> {
                val pairs = size / 2
                bandwidth(bytes, plan, window, if (rank < pairs) rank + pairs else rank - pairs, sender = rank < pairs)
            }
            Shape.BIBW -> bidirectional(bytes, plan, window)
            Shape.RMA_LATENCY,
            Shape.RMA_BW,
            Shape.ATOMIC_LATENCY -> oneSided(benchmark, bytes, plan, window, histogram)
            Shape.COLLECTIVE,
            Shape.BARRIER -> throw CommandFailure(Refusals.of(name, benchmark, size)!!)
        }

    /**
     * `osu_latency`: rank 0 posts its receive, sends, and waits for both; rank 1 echoes, and times each round trip
     * ([stampRoundTrip]).
     */
    private fun latency(bytes: Int, plan: Plan, histogram: Histogram): Long {
        if (rank > 1) return 0
        val peer = peers[1 - rank]
        var t0 = 0L
        var last = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            if (rank == 0) {
                recv(peer, DATA, rxBuf, bytes)
                send(peer, DATA, txBuf, bytes)
                waitAll("a $bytes-byte round trip")
            } else {
                recv(peer, DATA, rxBuf, bytes)
                waitAll("a $bytes-byte receive")
                send(peer, DATA, txBuf, bytes)
                waitAll("a $bytes-byte reply")
                last = stampRoundTrip(i, plan, last, histogram)
            }
        }
        return System.nanoTime() - t0
    }

    /**
     * `osu_bw` (and each pair of `osu_mbw_mr`): the sender posts [window] sends and waits for them, then for the
     * receiver's 4-byte ack; the receiver posts [window] receives, waits, and acks. Returns the sender's time.
     */
    private fun bandwidth(bytes: Int, plan: Plan, window: Int, partner: Int, sender: Boolean = rank == 0): Long {
        if (partner < 0) return 0
        val peer = peers[partner]
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            if (sender) {
                for (k in 0 until window) send(peer, DATA, txBuf, bytes)
                waitAll("a window of $window $bytes-byte sends")
                recv(peer, ACK, ctlRx, 4)
                waitAll("the receiver's ack")
            } else {
                for (k in 0 until window) recv(peer, DATA, rxBuf, bytes)
                waitAll("a window of $window $bytes-byte receives")
                send(peer, ACK, ctlTx, 4)
                waitAll("the ack")
            }
        }
        return if (sender) System.nanoTime() - t0 else 0
    }

    /** `osu_bibw`: both post [window] receives and [window] sends, then wait for all of them. */
    private fun bidirectional(bytes: Int, plan: Plan, window: Int): Long {
        if (rank > 1) return 0
        val peer = peers[1 - rank]
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            for (k in 0 until window) recv(peer, DATA, rxBuf, bytes)
            for (k in 0 until window) send(peer, DATA, txBuf, bytes)
            waitAll("a window of $window $bytes-byte messages each way")
        }
        return System.nanoTime() - t0
    }

    /**
     * `osu_put_latency`, `osu_get_latency`, `osu_put_bw`, `osu_fop_latency`: rank 0 writes, reads or fetch-adds in rank
     * 1's registered memory and waits for each operation (each window for put_bw); rank 1 drives progress until rank
     * 0's done message arrives.
     */
    private fun oneSided(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long {
        if (rank > 1) return 0
        if (rank == 1) {
            recv(peers[0], DONE, ctlRx, 0)
            waitAll("rank 0's ${benchmark.id} run")
            return 0
        }
        val peer = peers[1]
        val key = keys[1]
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            val start = System.nanoTime()
            when (benchmark) {
                Benchmark.PUT_LATENCY ->
                    post("a $bytes-byte write") { ep.tryWrite(txBuf, 0, bytes, peer, 0, key, CONTEXT) }
                Benchmark.GET_LATENCY ->
                    post("a $bytes-byte read") { ep.tryRead(rxBuf, 0, bytes, peer, 0, key, CONTEXT) }
                Benchmark.PUT_BW ->
                    for (k in 0 until window) post("a $bytes-byte write") {
                        ep.tryWrite(txBuf, 0, bytes, peer, 0, key, CONTEXT)
                    }
                else ->
                    post("a fetch-and-add") {
                        ep.tryFetchAtomic(
                            txBuf,
                            0,
                            1,
                            rxBuf,
                            0,
                            peer,
                            0,
                            key,
                            AtomicDatatype.INT64,
                            AtomicOp.SUM,
                            CONTEXT,
                        )
                    }
            }
            waitAll("${benchmark.id} of $bytes bytes")
            if (i >= plan.skip && benchmark.isLatency) histogram.recordValue(System.nanoTime() - start)
        }
        val elapsed = System.nanoTime() - t0
        send(peer, DONE, ctlTx, 0)
        waitAll("telling rank 1 the run is done")
        return elapsed
    }

    // ## Barrier and sums: to rank 0 and back ##

    override fun barrier() {
        if (size == 1) return
        if (rank == 0) {
            for (r in 1 until size) recv(peers[r], BARRIER_IN, ctlRx, 0)
            waitAll("the barrier's arrivals")
            for (r in 1 until size) send(peers[r], BARRIER_OUT, ctlTx, 0)
            waitAll("the barrier's release")
        } else {
            send(peers[0], BARRIER_IN, ctlTx, 0)
            recv(peers[0], BARRIER_OUT, ctlRx, 0)
            waitAll("the barrier")
        }
    }

    override fun sumToRoot(value: Double): Double {
        if (rank != 0) {
            ctlTx.putDouble(0, value)
            send(peers[0], SUM, ctlTx, 8)
            waitAll("sending a sum to rank 0")
            return value
        }
        for (r in 1 until size) recv(peers[r], SUM, ctlRx, 8, offset = 8 * r)
        waitAll("the sums of the other ranks")
        var sum = value
        for (r in 1 until size) sum += ctlRx.getDouble(8 * r)
        return sum
    }

    override fun fromRoot(value: Double): Double {
        if (rank == 0) {
            ctlTx.putDouble(0, value)
            for (r in 1 until size) send(peers[r], FROM_ROOT, ctlTx, 8)
            waitAll("sending a value to every rank")
            return value
        }
        recv(peers[0], FROM_ROOT, ctlRx, 8)
        waitAll("a value from rank 0")
        return ctlRx.getDouble(0)
    }

    // ## Posting and waiting ##

    /**
     * Sends [bytes] of [buffer]: injected below the inject size (as fi_pingpong does) unless [control], when the send
     * is always one whose completion is awaited: a rank closes its endpoint right after its last control message, and a
     * message injected but not yet written would be lost with it.
     */
    private fun send(peer: Long, tag: Long, buffer: UnsafeBuffer, bytes: Int, control: Boolean = tag != DATA) {
        if (bytes < injectSize && !control) {
            post("a $bytes-byte inject", counts = false) { ep.tryTinject(buffer, 0, bytes, peer, tag) }
        } else {
            post("a $bytes-byte send") { ep.tryTsend(buffer, 0, bytes, peer, tag, CONTEXT) }
        }
    }

    private fun recv(peer: Long, tag: Long, buffer: UnsafeBuffer, bytes: Int, offset: Int = 0) {
        post("a $bytes-byte receive") { ep.tryTrecv(buffer, offset, bytes, peer, tag, 0L, CONTEXT) }
    }

    /** Posts with [op] until it is accepted, driving progress while it answers EAGAIN. */
    private inline fun post(what: String, counts: Boolean = true, op: () -> Int) {
        beginWait()
        while (true) {
            val rc = op()
            if (rc == 0) break
            if (rc != -Errno.EAGAIN) throw CommandFailure("posting $what failed: ${Errno.name(rc)}")
            poll(what)
        }
        if (counts) posted++
    }

    /** Polls until every operation posted so far has completed. */
    private fun waitAll(what: String) {
        beginWait()
        while (completed < posted) poll(what)
    }

    private fun poll(what: String) {
        val rc = cq.read(completion)
        if (rc == 1) {
            completed++
            return
        }
        if (rc != -Errno.EAGAIN) {
            if (rc == -Errno.EAVAIL && cq.readErr(error) == 1)
                throw CommandFailure("$what failed: ${Errno.name(error.err)}: ${error.message}")
            throw CommandFailure("$what: reading the completion queue failed: ${Errno.name(rc)}")
        }
        if (++spins and WATCH_EVERY_MASK == 0) watch(what)
    }

    private fun beginWait() {
        spins = 0
        waitStarted = 0L
    }

    /** Every 2^14 polls of one wait: fails on a peer-down event, or once 30 s passed without progress. */
    private fun watch(what: String) {
        if (eq.read(event) == 1 && event.type == EventType.PEER_DOWN)
            throw CommandFailure("$what: a peer went away: ${event.message}")
        val now = System.nanoTime()
        if (waitStarted == 0L) waitStarted = now
        else if (now - waitStarted > STALL_NANOS)
            throw CommandFailure("$what: no completion for $STALL_SECONDS s; are the other ranks still running?")
    }

    override fun close() {
        runCatching { region.close() }
        open.close()
    }

    companion object {
        private const val ADDRESS_KEY = "braid.bench.addr"
        private const val MR_KEY = "braid.bench.mr"
        private const val DATA = 1L
        private const val ACK = 2L
        private const val BARRIER_IN = 0x10L
        private const val BARRIER_OUT = 0x11L
        private const val SUM = 0x12L
        private const val DONE = 0x13L
        private const val FROM_ROOT = 0x14L
        private val CONTEXT = Any()
        private const val STALL_SECONDS = 30L
        private val STALL_NANOS = TimeUnit.SECONDS.toNanos(STALL_SECONDS)
        private const val WATCH_EVERY_MASK = (1 shl 14) - 1

        private fun direct(bytes: Int): ByteBuffer =
            try {
                ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
            } catch (e: OutOfMemoryError) {
                throw CommandFailure(
                    "cannot allocate a direct buffer of $bytes bytes (${e.message}); raise -XX:MaxDirectMemorySize, e.g. BRAID_JAVA_OPTS=-XX:MaxDirectMemorySize=4g",
                    e,
                )
            }

        /**
         * Opens this rank's endpoint (from [config], else [provider]'s first Info, spinning) and exchanges addresses
         * and memory keys over [boot]; collective over the job.
         */
        fun open(boot: Bootstrap, provider: String, config: Path?, maxBytes: Int): CoreLayer {
            val link =
                if (config != null) {
                    Topology.open(TopologyFiles.read(config))
                } else {
                    val caps = Caps.TAGGED or Caps.RMA or Caps.ATOMIC
                    // One thread drives this rank's domain: FI_THREAD_DOMAIN, no lock on the per-message path.
                    val info =
                        Braid.getInfo(Hints(caps = caps, provider = provider, threading = Threading.DOMAIN)).first()
                    Topology.open(info.copy(domainAttr = info.domainAttr.copy(idle = IdlePolicy.SPIN)))
                }
            return try {
                CoreLayer(boot, link, maxBytes)
            } catch (t: Throwable) {
                runCatching { link.close() }
                throw t
            }
        }
    }
}
