package braid.samples

import braid.core.AddressVector
import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CompletionQueue
import braid.core.Endpoint
import braid.core.Errno
import braid.core.Event
import braid.core.EventQueue
import braid.core.EventType
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.Info
import braid.core.inject
import braid.core.injectAsync
import braid.core.recv
import braid.core.recvAsync
import braid.core.send
import braid.core.sendAsync
import braid.core.tinject
import braid.core.tinjectAsync
import braid.core.trecv
import braid.core.trecvAsync
import braid.core.tsend
import braid.core.tsendAsync
import braid.dsl.OpenLink
import braid.dsl.Topology
import braid.dsl.TopologySpec
import java.nio.ByteBuffer
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/**
 * The data path of `braid pingpong --api raw`: one RDM endpoint of the rail-core object model used the way fi_pingpong
 * uses a libfabric endpoint.
 * - Setup: [open] ([Topology.open]: from `-p`, a provider's Info with a spinning idle policy; from `--config`, the link
 *   a topology file describes): fabric, domain, a transmit CQ and a receive CQ, an AV, an EQ for peer-down events, the
 *   endpoint bound to all of them and enabled.
 * - One receive is always posted, for any size up to the largest, directed at the peer: it is posted once at [connect]
 *   and again as soon as its completion has been read (and checked), so every message meets a posted receive and none
 *   arrives unexpected.
 * - Sends below the inject size are injected (no completion), larger ones are sent and their completion awaited, as
 *   fi_pingpong does.
 * - Completions are polled with [CompletionQueue.read] in a busy loop: no sleeping, no allocation (one reused
 *   [Completion], preallocated contexts, direct buffers allocated once). `-EAVAIL` is answered with `readErr` and fails
 *   the run with the error's message.
 * - `--api suspend` runs the same loop with the `suspend` forms in `runBlocking`, each side sending, then receiving
 *   into reused [Completion]s: a coroutine cannot post a receive and go on without a second coroutine, so the receive
 *   is posted right after the send, while the message is in flight (the reply still meets a posted receive: none
 *   arrives unexpected). `--api future` posts each receive before the send that provokes its message, as raw does.
 *
 * A wait that sees no completion for [STALL_SECONDS], or a peer-down event on the EQ, fails the run with a
 * [CommandFailure] rather than hanging. Closing closes [open].
 */
internal class RawPingpong(
    private val open: OpenLink,
    private val tagged: Boolean,
    maxSize: Int,
    private val check: Boolean,
    client: Boolean,
    /** `raw` (polling `try…` calls), `suspend` (Kotlin suspend forms) or `future` (CompletableFuture forms). */
    private val api: String = PingpongOptions.API_RAW,
) : AutoCloseable {
    val info: Info = open.info
    private val txCq: CompletionQueue = open.txCq
    private val rxCq: CompletionQueue = open.rxCq
    private val av: AddressVector = open.av
    private val eq: EventQueue = open.eq
    private val ep: Endpoint = open.endpoint
    private val txBuf: UnsafeBuffer
    private val rxBuf: UnsafeBuffer
    private val injectSize = info.txAttr.injectSize

    private val ownDirection = if (client) DataPattern.FROM_CLIENT else DataPattern.FROM_SERVER
    private val peerDirection = if (client) DataPattern.FROM_SERVER else DataPattern.FROM_CLIENT

    private val completion = Completion()
    private val sendCompletion = Completion()
    private val error = CompletionError()
    private val event = Event()
    private val txContext = OpContext("send")
    private val rxContext = OpContext("receive")

    private var peer = -1L
    private var sentMessages = 0L
    private var receivedMessages = 0L

    /** Polls since the current wait began, and when the watchdog first looked at it (0: not yet). */
    private var spins = 0
    private var waitStarted = 0L

    init {
        try {
            if (maxSize > info.endpointAttr.maxMsgSize) {
                throw CommandFailure(
                    "size $maxSize is larger than provider ${info.provider}'s largest message (${info.endpointAttr.maxMsgSize} bytes)"
                )
            }
            val capacity = maxOf(maxSize, MIN_BUFFER)
            try {
                txBuf = UnsafeBuffer(ByteBuffer.allocateDirect(capacity))
                rxBuf = UnsafeBuffer(ByteBuffer.allocateDirect(capacity))
            } catch (e: OutOfMemoryError) {
                throw CommandFailure(
                    "cannot allocate two direct buffers of $capacity bytes (${e.message}); raise -XX:MaxDirectMemorySize, e.g. BRAID_JAVA_OPTS=-XX:MaxDirectMemorySize=4g",
                    e,
                )
            }
        } catch (e: Throwable) {
            runCatching { open.close() }
            throw e
        }
    }

    /**
     * How messages of a size travel, each regime running its own code: below the inject size they are injected, up to
     * the eager size sent whole, above it by rendezvous.
     */
    enum class Regime {
        INJECT,
        EAGER,
        RENDEZVOUS,
    }

    fun regime(size: Int): Regime =
        when {
            size < injectSize -> Regime.INJECT
            size <= info.endpointAttr.eagerSize -> Regime.EAGER
            else -> Regime.RENDEZVOUS
        }

    /** This endpoint's address blob, for the peer's AV. */
    val address: ByteArray
        get() = ep.address

    /**
     * Runs [block] (the warm-up) with the endpoint's statistics paused: `BRAID_LINK_DUMP_STATS` counts timed traffic
     * only.
     */
    inline fun <T> uncounted(block: () -> T): T {
        pauseStats(true)
        try {
            return block()
        } finally {
            pauseStats(false)
        }
    }

    fun pauseStats(pause: Boolean) {
        if (pause) ep.pauseStats() else ep.resumeStats()
    }

    /**
     * The line above the table that says what carried the traffic: the rail, and for a link the rail or rails that
     * actually moved the counted (timed) messages, as `# rail: tcp (link shm+tcp:lo)`.
     */
    fun railLine(): String {
        if (info.rails.isEmpty()) return "# rail: ${info.provider} (${info.domainName})"
        val used = ep.stats().rails.filter { it.messagesSent + it.messagesReceived > 0 }.map { it.rail }
        val rails = if (used.isEmpty()) "none yet" else used.joinToString("+")
        return "# rail: $rails (${info.provider} ${info.domainName})"
    }

    /** Inserts the peer's [address] in the AV and posts the first receive. */
    fun connect(address: ByteArray) {
        peer = av.insert(address)
        if (api == PingpongOptions.API_RAW) postRecv()
    }

    /**
     * Client side of [iterations] round trips of [size] bytes: send, then await the reply. Returns the replies
     * received.
     */
    fun runClient(size: Int, iterations: Int, phase: String): Long {
        when (api) {
            PingpongOptions.API_SUSPEND ->
                return runBlocking {
                    for (i in 0 until iterations) {
                        sendSuspending(size)
                        received(recvSuspending(), size, i, phase)
                    }
                    iterations.toLong()
                }
            PingpongOptions.API_FUTURE -> {
                for (i in 0 until iterations) {
                    val reply = recvFuture()
                    sendFuture(size)
                    received(reply.join(), size, i, phase)
                }
                return iterations.toLong()
            }
        }
        val before = receivedMessages
        for (i in 0 until iterations) {
            send(size)
            awaitRecv(size, i, phase)
        }
        return receivedMessages - before
    }

    /**
     * Server side of [iterations] round trips of [size] bytes: await a message, then reply. Returns the messages
     * received.
     */
    fun runServer(size: Int, iterations: Int, phase: String): Long {
        when (api) {
            PingpongOptions.API_SUSPEND ->
                return runBlocking {
                    for (i in 0 until iterations) {
                        received(recvSuspending(), size, i, phase)
                        sendSuspending(size)
                    }
                    iterations.toLong()
                }
            PingpongOptions.API_FUTURE -> {
                // As raw: the next receive is posted before the reply is sent.
                var request = recvFuture()
                for (i in 0 until iterations) {
                    received(request.join(), size, i, phase)
                    if (i + 1 < iterations) request = recvFuture()
                    sendFuture(size)
                }
                return iterations.toLong()
            }
        }
        val before = receivedMessages
        for (i in 0 until iterations) {
            awaitRecv(size, i, phase)
            send(size)
        }
        return receivedMessages - before
    }

    // ## Sends ##

    private fun send(size: Int) {
        if (check) DataPattern.fill(txBuf, size, sentMessages, ownDirection)
        val inject = size < injectSize
        beginWait()
        while (true) {
            val rc =
                when {
                    inject && tagged -> ep.tryTinject(txBuf, 0, size, peer, TAG)
                    inject -> ep.tryInject(txBuf, 0, size, peer)
                    tagged -> ep.tryTsend(txBuf, 0, size, peer, TAG, txContext)
                    else -> ep.trySend(txBuf, 0, size, peer, txContext)
                }
            if (rc == 0) break
            if (rc != -Errno.EAGAIN) throw CommandFailure("posting a send of $size bytes failed: ${Errno.name(rc)}")
            // Out of resources for now: drive progress (a read does) and try again.
            val r = txCq.read(completion)
            if (r == 1) throw CommandFailure("unexpected send completion while no send was outstanding: $completion")
            if (r != -Errno.EAGAIN) failRead(txCq, r, "a send of $size bytes")
            if (++spins and WATCH_EVERY_MASK == 0) watch("a send of", size)
        }
        if (!inject) {
            await(txCq, txContext, "a send of", size)
        }
        sentMessages++
    }

    // ## The suspend and future forms (--api suspend|future) ##

    private suspend fun sendSuspending(size: Int) {
        if (check) DataPattern.fill(txBuf, size, sentMessages, ownDirection)
        when {
            size < injectSize && tagged -> ep.tinject(txBuf, 0, size, peer, TAG)
            size < injectSize -> ep.inject(txBuf, 0, size, peer)
            tagged -> ep.tsend(txBuf, 0, size, peer, TAG, sendCompletion)
            else -> ep.send(txBuf, 0, size, peer, sendCompletion)
        }
        sentMessages++
    }

    private suspend fun recvSuspending(): Completion =
        if (tagged) ep.trecv(rxBuf, 0, rxBuf.capacity(), peer, TAG, into = completion)
        else ep.recv(rxBuf, 0, rxBuf.capacity(), peer, completion)

    private fun sendFuture(size: Int) {
        if (check) DataPattern.fill(txBuf, size, sentMessages, ownDirection)
        when {
            size < injectSize && tagged -> ep.tinjectAsync(txBuf, 0, size, peer, TAG)
            size < injectSize -> ep.injectAsync(txBuf, 0, size, peer)
            tagged -> ep.tsendAsync(txBuf, 0, size, peer, TAG)
            else -> ep.sendAsync(txBuf, 0, size, peer)
        }.join()
        sentMessages++
    }

    private fun recvFuture(): java.util.concurrent.CompletableFuture<Completion> =
        if (tagged) ep.trecvAsync(rxBuf, 0, rxBuf.capacity(), peer, TAG)
        else ep.recvAsync(rxBuf, 0, rxBuf.capacity(), peer)

    /** Checks a reply received through the suspend or future forms. */
    private fun received(c: Completion, size: Int, iteration: Int, phase: String) {
        if (c.len != size.toLong()) {
            throw CommandFailure(
                "received ${c.len} bytes in $phase iteration $iteration, expected $size; are both sides running the same sizes?"
            )
        }
        if (check) verify(size, iteration, phase)
        receivedMessages++
    }

    // ## Receives ##

    private fun postRecv() {
        beginWait()
        while (true) {
            val rc =
                if (tagged) {
                    ep.tryTrecv(rxBuf, 0, rxBuf.capacity(), peer, TAG, 0L, rxContext)
                } else {
                    ep.tryRecv(rxBuf, 0, rxBuf.capacity(), peer, rxContext)
                }
            if (rc == 0) return
            if (rc != -Errno.EAGAIN) throw CommandFailure("posting a receive failed: ${Errno.name(rc)}")
            val r = rxCq.read(completion)
            if (r == 1) throw CommandFailure("unexpected receive completion while no receive was posted: $completion")
            if (r != -Errno.EAGAIN) failRead(rxCq, r, "posting a receive")
            if (++spins and WATCH_EVERY_MASK == 0) watch("posting a receive of", rxBuf.capacity())
        }
    }

    private fun awaitRecv(size: Int, iteration: Int, phase: String) {
        await(rxCq, rxContext, "a receive of", size)
        if (completion.len != size.toLong()) {
            throw CommandFailure(
                "received ${completion.len} bytes in $phase iteration $iteration, expected $size; are both sides running the same sizes?"
            )
        }
        if (check) verify(size, iteration, phase)
        receivedMessages++
        postRecv()
    }

    private fun verify(size: Int, iteration: Int, phase: String) {
        val bad = DataPattern.firstMismatch(rxBuf, size, receivedMessages, peerDirection)
        if (bad >= 0) {
            val got = rxBuf.getByte(bad).toInt() and 0xff
            val want = DataPattern.expected(receivedMessages, size, peerDirection, bad)
            throw CommandFailure(
                "data check failed: message ${receivedMessages + 1} received ($size bytes, $phase iteration $iteration): " +
                    "byte $bad is 0x${hex(got)}, expected 0x${hex(want)}"
            )
        }
    }

    // ## Completions ##

    /** Busy-polls [cq] until the completion of the operation posted with [context] is read into [completion]. */
    private fun await(cq: CompletionQueue, context: OpContext, what: String, size: Int) {
        beginWait()
        while (true) {
            val rc = cq.read(completion)
            if (rc == 1) {
                if (completion.context !== context) {
                    throw CommandFailure(
                        "$what $size bytes: unexpected completion $completion (expected context $context)"
                    )
                }
                return
            }
            if (rc != -Errno.EAGAIN) failRead(cq, rc, "$what $size bytes")
            if (++spins and WATCH_EVERY_MASK == 0) watch(what, size)
        }
    }

    private fun failRead(cq: CompletionQueue, rc: Int, what: String): Nothing {
        if (rc == -Errno.EAVAIL && cq.readErr(error) == 1) {
            throw CommandFailure("$what failed: ${Errno.name(error.err)}: ${error.message}")
        }
        throw CommandFailure("$what: reading the completion queue failed: ${Errno.name(rc)}")
    }

    private fun beginWait() {
        spins = 0
        waitStarted = 0L
    }

    /**
     * Called every 2^14 polls of one wait for "[what] [size] bytes": fails on a peer-down event, or once
     * [STALL_SECONDS] have passed without the completion.
     */
    private fun watch(what: String, size: Int) {
        when (eq.read(event)) {
            1 ->
                if (event.type == EventType.PEER_DOWN)
                    throw CommandFailure("$what $size bytes: the peer went away: ${event.message}")
            -Errno.EAVAIL ->
                if (eq.readErr(error) == 1)
                    throw CommandFailure("$what $size bytes: ${Errno.name(error.err)}: ${error.message}")
        }
        val now = System.nanoTime()
        if (waitStarted == 0L) {
            waitStarted = now
        } else if (now - waitStarted > STALL_NANOS) {
            throw CommandFailure("$what $size bytes: no completion for $STALL_SECONDS s; is the peer still running?")
        }
    }

    override fun close() {
        open.close()
    }

    /** A preallocated operation context, named for messages. */
    private class OpContext(private val name: String) {
        override fun toString(): String = name
    }

    companion object {
        /** The tag of every tagged message, fi_pingpong's. */
        private const val TAG = 1234L

        /** fi_pingpong's smallest buffer (`PP_MAX_CTRL_MSG`). */
        private const val MIN_BUFFER = 64

        private const val STALL_SECONDS = 30L
        private val STALL_NANOS = TimeUnit.SECONDS.toNanos(STALL_SECONDS)

        /** The watchdog looks every 2^14 polls: a few milliseconds apart. */
        private const val WATCH_EVERY_MASK = (1 shl 14) - 1

        private fun hex(b: Int) = Integer.toHexString(b).padStart(2, '0')

        /**
         * `-p NAME`: the provider's first Info. Raw polling spins for ever; the waiting forms get the same idle policy,
         * so the comparison measures the API, not parking.
         */
        fun openProvider(provider: String, tagged: Boolean): OpenLink {
            val info = Braid.getInfo(Hints(caps = if (tagged) Caps.TAGGED else Caps.MSG, provider = provider)).first()
            return Topology.open(
                info.copy(domainAttr = info.domainAttr.copy(idle = IdlePolicy.SPIN)),
                splitCompletionQueues = true,
            )
        }

        /** `--config FILE`: the link the topology describes (file, then environment), as it says. */
        fun openTopology(spec: TopologySpec, tagged: Boolean): OpenLink =
            Topology.open(spec, caps = if (tagged) Caps.TAGGED else Caps.MSG, splitCompletionQueues = true)
    }
}
