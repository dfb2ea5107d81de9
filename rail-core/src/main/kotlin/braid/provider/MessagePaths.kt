package braid.provider

import braid.core.FiAddr
import braid.core.RxEntry
import org.agrona.DirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer

/**
 * The sending direction of one peer connection as a rail offers it to the [MessageEngine]: it encodes message heads and
 * rendezvous fragments into the rail's medium (shm: the channel's data and bulk rings; tcp: the peer's outbound buffer,
 * within the credit the peer lent). The engine decides what to send and keeps the state; the outlet only writes bytes.
 */
internal interface SendOutlet {
    /** Whether heads may be written now (tcp: once the connection is up); an inject ignores it. */
    val open: Boolean
        get() = true

    /**
     * Whether an inject that finds no room (or credit) now may wait in the backlog as a copy rather than be refused
     * with `-EAGAIN` (tcp: before its connection is up, so an inject to a peer not yet connected goes out once the
     * receiver grants credit).
     */
    val queuesInject: Boolean
        get() = false

    /**
     * Writes the head of message [msgId] ([buffer], the whole view, is its payload): an EAGER record carrying the bytes
     * when the rail's eager rules and room allow, otherwise, unless [flags] has INJECT, an RTS carrying only the
     * length. [seq] and [stripe] (0 unless a link sequences the message, see [Transport.sendSequenced]) travel in the
     * head. Returns [HEAD_EAGER], [HEAD_RTS], or [HEAD_NONE] when there is no room (or credit) now.
     */
    fun writeHead(
        buffer: DirectBuffer,
        length: Int,
        tag: Long,
        data: Long,
        flags: Long,
        msgId: Long,
        seq: Long,
        stripe: Long,
    ): Int

    /**
     * A CTS accepted [op]'s bytes and it joins the streaming queue (the queue's first streams; [stream] is called for
     * it).
     */
    fun streamStarting(op: MsgTxOp) {}

    /**
     * Whether a message of [length] bytes from a [StagedView] that is not staged whole would go as an RTS whose bytes
     * are streamed through [stream] (never an eager record, never published for a pull); if not, the engine stages it
     * whole before [writeHead].
     */
    fun streamsStaged(length: Int): Boolean = false

    /** Writes as many of [op]'s accepted bytes as there is room for; true once all of them are out. */
    fun stream(op: MsgTxOp): Boolean

    /**
     * Tells the receiver that the link's message [seq], sent over another rail, failed there ([ArrivalOrder.skip]);
     * false if there is no room now. A rail that carries no sequence numbers never gets one.
     */
    fun writeSkip(seq: Long): Boolean = false

    /**
     * Tells the other end, as a receiver of this side's sender, that this endpoint's link has every message it sent up
     * to [seq] ([braid.provider.link.LinkTransport]'s acknowledgement); false if there is no room now.
     */
    fun writeLinkAck(seq: Long): Boolean = false

    companion object {
        const val HEAD_NONE = 0
        const val HEAD_EAGER = 1
        const val HEAD_RTS = 2

        /**
         * A bit of a send's flags (outside [braid.core.OpFlags], never in a completion) that a link sets on a message
         * it sends again after the rail that first carried it died ([Transport.sendSequenced]). A rail that lends
         * credit keeps one head of it back from the link's other sequenced messages for these (tcp, [writeHead]): the
         * receiver may hold every other message of this rail early, behind the one sent again, and its credit with
         * them, so only that head lets it through.
         */
        const val RESEND: Long = 1L shl 62

        /**
         * A bit of a send's flags, as [RESEND], that a link sets on a message it keeps a copy of to send again: it
         * travels whole (EAGER) or waits for the credit to, never as a rendezvous for lack of credit. A rendezvous the
         * receiver matched before its rail died would fail there, and the copy sent again would be dropped as a
         * duplicate.
         */
        const val KEPT: Long = 1L shl 61
    }
}

/**
 * The receiving direction of one peer connection as a rail offers it to the [MessageEngine]: the control records going
 * back to the sender ([CTS], [ACK], [DISCARDED], [PULLED]; the rail picks their wire form), and the rail's optional
 * extras.
 */
internal interface ControlOutlet {
    /** Writes one control record; false if there is no room now (the engine queues it). */
    fun writeControl(type: Int, msgId: Long, value: Long): Boolean

    /**
     * Copies [length] bytes of rendezvous message [msgId] from the sender's memory at [srcAddress] straight into [e]'s
     * buffer (shm's single-copy pull, or its split copy with the sender); false if the rail cannot, and the sender
     * streams the bytes instead.
     */
    fun pull(e: RxEntry, msgId: Long, srcAddress: Long, length: Long): Boolean = false

    /** Credit [cost] that a message from this sender held is free again (tcp returns it; shm has none). */
    fun release(cost: Long) {}

    /** A rendezvous receive starts filling (tcp: reads straight into direct memory); [inboundEnded] when it is done. */
    fun inboundStarted(inb: MsgInbound) {}

    fun inboundEnded(inb: MsgInbound) {}

    companion object {
        const val CTS = 1
        const val ACK = 2
        const val DISCARDED = 3
        const val PULLED = 4
    }
}

/**
 * How a path names the other end in messages, rendered when a message is written (a tcp peer's name grows its address
 * once the AV resolves it): shm's is the peer's endpoint name.
 */
internal fun interface PeerName {
    fun render(): String
}

/**
 * What the engine keeps per destination: sends waiting for room ([backlog]), for a CTS, being streamed, and for a
 * delivery ACK. [peer] names the destination in error messages.
 */
internal class SendPath(val outlet: SendOutlet, val peer: PeerName) {
    val backlog = ArrayDeque<MsgTxOp>()
    val waitingCts = Long2ObjectHashMap<MsgTxOp>()
    val streaming = ArrayDeque<MsgTxOp>()
    val waitingAck = Long2ObjectHashMap<MsgTxOp>()
    var nextMsgId = 1L
    /** The peer is gone: everything for it has failed and nothing more is written. */
    var dead = false

    val idle: Boolean
        get() = backlog.isEmpty() && streaming.isEmpty()

    fun describe(): String =
        "backlog ${backlog.size}, waiting CTS ${waitingCts.size}, streaming ${streaming.size}, waiting ACK ${waitingAck.size}"
}

/**
 * What the engine keeps per source: the rendezvous receives it is filling ([inflight]), the control records waiting for
 * room, and the fabric address the source has in the AV.
 */
internal class RecvPath(val outlet: ControlOutlet, val peer: PeerName) {
    var fiAddr = FiAddr.NOTAVAIL
    /** The link sequence number and stripe word of the head being decoded (see [MessageEngine.arrived]). */
    internal var seq = 0L
    internal var stripe = 0L
    /** The highest link sequence number that arrived while the source was not in the AV (they pass unordered). */
    internal var unresolvedSeq = 0L
    val inflight = Long2ObjectHashMap<MsgInbound>()
    internal val pendingControl = TripleQueue()
    var dead = false
    var deadErr = 0
    var deadWhy = ""
    /**
     * The connection this path's messages come over, counted: a rail that reconnects a dead peer (a link's) starts the
     * next. A message held from an earlier one is delivered without its credit, ACK or CTS going to the new one.
     */
    var epoch = 0

    val controlPending: Boolean
        get() = !pendingControl.isEmpty()
}

/** A pending send: queued for room, waiting for CTS, streaming, or waiting for an ACK. */
internal class MsgTxOp {
    val buffer = UnsafeBuffer(0L, 0)
    var length = 0
    var tag = 0L
    var data = 0L
    var flags = 0L
    var context: Any? = null
    /** A queued inject's copy of its bytes (pooled), which [buffer] wraps; released with the op. */
    var copy: UnsafeBuffer? = null
    /** The send's bytes when they are a device message staged chunk by chunk ([StagedView]), else null. */
    var staged: StagedView? = null
    var msgId = 0L
    /** Bytes the outlet may stream now: all the CTS accepted, or a staged send's window ([limit] is all). */
    var accepted = 0L
    /** Bytes the CTS accepted. */
    var limit = 0L
    var sent = 0L
    /** The link's sequence number and stripe word ([Transport.sendSequenced]), or 0. */
    var seq = 0L
    var stripe = 0L
}

/** A matched rendezvous receive whose fragments are arriving. */
internal class MsgInbound {
    var entry: RxEntry? = null
    var expected = 0L
    var received = 0L
    var wantAck = false
}

/** What the engine keeps for an unexpected message: its bytes (eager) or how to fetch them (rendezvous). */
internal class MsgHeld {
    var path: RecvPath? = null
    var bytes: UnsafeBuffer? = null
    var msgId = 0L
    var rendezvous = false
    var wantAck = false
    /** Credit the message holds at its sender's path (tcp), released when it is consumed. */
    var cost = 0L
    /** Where the sender's bytes are for a single-copy pull (shm), or 0. */
    var srcAddress = 0L
    /** The [RecvPath.epoch] it arrived in. */
    var epoch = 0
}
