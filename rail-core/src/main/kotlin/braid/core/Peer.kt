package braid.core

/**
 * The owner side of a peer CQ (`fid_peer_cq`, fi_peer(3)): a peer provider writes its completions into the owner's
 * queue through these two calls. [CompletionQueue] is one; a CQ opened with [Domain.importCompletionQueue] forwards
 * every write to its owner and refuses reads (ENOSYS): the application reads the owner's queue, which drives the peer's
 * progress too. Callers hold the owner domain's lock (a peer domain shares it).
 */
public interface PeerCq {
    public fun write(context: Any?, flags: Long, len: Long, data: Long, tag: Long, source: Long)

    public fun writeErr(
        context: Any?,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    )
}

/**
 * What [PeerAddressVector.query] reports (`fi_av_attr`): the AV's type, how many addresses it holds, and its name when
 * it is shared between the processes of a host ([Domain.createSharedAddressVector]).
 */
public data class AvAttr @JvmOverloads constructor(val type: AvType, val count: Int, val name: String? = null)

/**
 * The owner operations of a peer AV (`fi_ops_av_owner`): an offload provider that shares the main provider's addressing
 * asks it for the AV's attributes and for the fi_addr of a local endpoint. [AddressVector] implements them.
 */
public interface PeerAddressVector {
    /** The AV's current attributes (`query`). */
    public fun query(): AvAttr

    /** The fi_addr under which [endpoint]'s address is inserted, or [FiAddr.NOTAVAIL] (`ep_addr`). */
    public fun epAddr(endpoint: Endpoint): Long
}

/** The owner operation of a peer AV set (`fi_ops_av_set_owner`). [AvSet] implements it. */
public interface PeerAvSet {
    /**
     * Copies the set's fi_addrs into [out] and returns how many there are; when [out] is too small, copies nothing and
     * returns `-ETOOSMALL` (read [AvSet.count] for the size needed).
     */
    public fun members(out: LongArray): Int
}

/**
 * The callbacks of a peer transfer (`fi_ops_transfer_peer`): how an endpoint reports the outcome of a transfer that a
 * peer started over it ([Endpoint.peerTransfer]) — to the peer, never to the endpoint's CQ. Called with the domain lock
 * held; a callback may start further transfers.
 */
public interface PeerTransferOps {
    /** A transfer completed; [entry] is its completion, [source] the sender for a receive. */
    public fun complete(entry: Completion, source: Long)

    /** A transfer failed. */
    public fun compErr(error: CompletionError)
}

/**
 * A peer's virtual link over an owner endpoint (`FI_PEER_TRANSFER`): the peer sends and receives its control traffic
 * through the owner's rails and gets the outcomes through [ops]. Its messages are tagged with [TAG_BIT] set, a tag
 * space the owner's application can neither send into nor match (its tagged operations with that bit are refused with
 * EINVAL, and its receives never match it, whatever their ignore mask).
 */
public class PeerTransfer
internal constructor(
    public val endpoint: Endpoint,
    @get:JvmSynthetic internal val ops: PeerTransferOps,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) {
    /** Sends `buffer[offset, offset+length)` with [tag] (below [TAG_BIT]) to [dest], as the peer. */
    public fun trySend(
        buffer: org.agrona.DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        tag: Long,
        context: Any?,
    ): Int {
        if (PeerTags.outOfRange(tag)) return -Errno.EINVAL
        synchronized(endpoint.domain.lock) {
            val op = acquire(context)
            val rc = endpoint.postPeerSend(buffer, offset, length, dest, PeerTags.toPeer(tag), op)
            if (rc != 0) release(op)
            return rc
        }
    }

    /** [trySend] of [buffer]'s position..limit; -EINVAL for a read-only heap buffer. */
    public fun trySend(buffer: java.nio.ByteBuffer, dest: Long, tag: Long, context: Any?): Int {
        if (ByteBuffers.problem(buffer, false, "") != null) return -Errno.EINVAL
        return trySend(
            org.agrona.concurrent.UnsafeBuffer(buffer, buffer.position(), buffer.remaining()),
            0,
            buffer.remaining(),
            dest,
            tag,
            context,
        )
    }

    /** [tryRecv] into [buffer]'s position..limit; -EINVAL for a read-only buffer. */
    public fun tryRecv(buffer: java.nio.ByteBuffer, src: Long, tag: Long, ignore: Long, context: Any?): Int {
        if (ByteBuffers.problem(buffer, true, "") != null) return -Errno.EINVAL
        return tryRecv(
            org.agrona.concurrent.UnsafeBuffer(buffer, buffer.position(), buffer.remaining()),
            0,
            buffer.remaining(),
            src,
            tag,
            ignore,
            context,
        )
    }

    /** Posts a receive for the peer's traffic from [src] with [tag] / [ignore] (bit 63 aside). */
    public fun tryRecv(
        buffer: org.agrona.MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        context: Any?,
    ): Int {
        if (PeerTags.outOfRange(tag)) return -Errno.EINVAL
        synchronized(endpoint.domain.lock) {
            val op = acquire(context)
            val rc =
                endpoint.postRecv(
                    true,
                    buffer,
                    offset,
                    length,
                    src,
                    PeerTags.toPeer(tag),
                    PeerTags.peerMask(ignore),
                    0,
                    op,
                    peer = true,
                )
            if (rc != 0) release(op)
            return rc
        }
    }

    // Operation contexts are pooled: the `try…` forms allocate nothing once warm. Caller holds the domain lock.
    private val pool = ArrayDeque<PeerTransferOp>()

    private fun acquire(context: Any?): PeerTransferOp {
        val op = pool.removeLastOrNull() ?: PeerTransferOp(this)
        op.context = context
        return op
    }

    @JvmSynthetic
    internal fun release(op: PeerTransferOp) {
        op.context = null
        pool.addLast(op)
    }

    public companion object {
        /** The tag bit that marks peer-transfer traffic. */
        public const val TAG_BIT: Long = 1L shl 63
    }
}

/**
 * A peer transfer's operation context (pooled by its [PeerTransfer]): completions for it go to the peer's callbacks.
 */
internal class PeerTransferOp(private val transfer: PeerTransfer) {
    var context: Any? = null

    // The outcome is a fresh object the callbacks may keep (PeerTransferOps promises nothing
    // less); the posting side, the `try…` forms, allocates nothing.
    fun complete(flags: Long, len: Long, data: Long, tag: Long, source: Long) {
        val c = Completion()
        c.context = context
        c.flags = flags
        c.len = len
        c.data = data
        c.tag = PeerTags.fromPeer(tag)
        c.source = source
        transfer.release(this)
        transfer.ops.complete(c, source)
    }

    fun fail(flags: Long, len: Long, data: Long, tag: Long, olen: Long, err: Int, source: Long, message: String) {
        val e = CompletionError()
        e.context = context
        e.flags = flags
        e.len = len
        e.data = data
        e.tag = PeerTags.fromPeer(tag)
        e.olen = olen
        e.err = err
        e.source = source
        e.message = message
        transfer.release(this)
        transfer.ops.compErr(e)
    }
}

/**
 * The peer-transfer tag rules in one place: peer traffic carries [PeerTransfer.TAG_BIT]; once a peer transfer is open,
 * the application's tagged operations may not use that bit, and its receives never match it whatever their ignore mask.
 */
internal object PeerTags {
    private const val BIT = PeerTransfer.TAG_BIT

    /** A peer's own tag must leave the bit clear. */
    fun outOfRange(tag: Long): Boolean = tag and BIT != 0L

    fun toPeer(tag: Long): Long = tag or BIT

    fun fromPeer(tag: Long): Long = tag and BIT.inv()

    /** A peer's receive matches the bit exactly. */
    fun peerMask(ignore: Long): Long = ignore and BIT.inv()

    /**
     * Whether an application's operation ([tagged], [tag]) reaches into the peer tag space while a transfer is [open].
     */
    fun refused(open: Boolean, tagged: Boolean, tag: Long): Boolean = open && tagged && tag and BIT != 0L

    /**
     * An application's ignore mask: while a transfer is [open] it cannot ignore the bit, so never matches peer traffic.
     */
    fun applicationMask(open: Boolean, ignore: Long): Long = if (open) ignore and BIT.inv() else ignore
}
