package braid.provider.tcp

import braid.core.OpFlags
import braid.provider.ArrivalOrder
import braid.provider.ControlOutlet
import braid.provider.MsgInbound
import braid.provider.MsgTxOp
import braid.provider.SendOutlet
import braid.provider.SendOutlet.Companion.HEAD_EAGER
import braid.provider.SendOutlet.Companion.HEAD_NONE
import braid.provider.SendOutlet.Companion.HEAD_RTS
import braid.provider.tcp.TcpFrameDescriptor.ACK
import braid.provider.tcp.TcpFrameDescriptor.CTS
import braid.provider.tcp.TcpFrameDescriptor.DATA
import braid.provider.tcp.TcpFrameDescriptor.DISCARDED
import braid.provider.tcp.TcpFrameDescriptor.EAGER
import braid.provider.tcp.TcpFrameDescriptor.FLAG_LINK_ACK
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.RTS
import braid.provider.tcp.TcpFrameDescriptor.frameCost
import java.nio.ByteBuffer
import org.agrona.DirectBuffer

/**
 * One tcp peer's outbound buffer as the message engine's outlets, both ways: heads within the credit the peer lent
 * ([SendOutlet]), DATA frames written from the sender's memory (straight from direct memory, a chunk at a time, for
 * large ones), and control frames back ([ControlOutlet]). Every frame written marks the peer busy, so the transport
 * flushes it.
 *
 * The direct views (of the message being streamed, and of a receive being filled) are this rail's state, kept here and
 * in the peer's [TcpPeer.Rx], not in the engine's records.
 */
internal class TcpPeerOutlet(
    private val p: TcpPeer,
    private val eagerSize: Int,
    private val busy: TcpBusy,
    /** A link's reorder stage, whose acknowledgements for this peer EAGER heads carry ([ArrivalOrder.takeAck]). */
    private val order: ArrivalOrder? = null,
) : SendOutlet, ControlOutlet {
    override val open: Boolean
        get() = p.established

    /**
     * Before the connection is up (no credit yet) an inject waits as a copy, up to the minimum window's worth of heads.
     */
    override val queuesInject: Boolean
        get() = !p.established && p.sendPath.backlog.size < MIN_WINDOW / HEAD_COST

    /** The send being streamed now (the first in the engine's streaming queue), and whether it streams from [view]. */
    private var streamOp: MsgTxOp? = null
    private var streamDirect = false

    /** A view of the sender's direct memory for writing straight to the socket, cached per buffer. */
    private var view: ByteBuffer? = null
    private var viewSource: ByteBuffer? = null
    private var viewBase = 0

    /**
     * EAGER when the message is small enough for the peer's window and the credit covers its bytes, else an RTS (never
     * for an inject, nor a link's [SendOutlet.KEPT] message the eager size allows) if the credit covers a head. A
     * link's sequenced message ([seq] not 0) leaves one eager message's credit ([resendHead]) unspent unless it is a
     * [SendOutlet.RESEND]: the receiver lends a link's senders that much beside their share ([TcpCredit]) so that a
     * message sent again after another rail died gets through even when every other byte of this rail's credit is in
     * messages the receiver holds early, waiting for it.
     */
    override fun writeHead(
        buffer: DirectBuffer,
        length: Int,
        tag: Long,
        data: Long,
        flags: Long,
        msgId: Long,
        seq: Long,
        stripe: Long,
    ): Int {
        val wire =
            TcpFrameDescriptor.wireFlags(
                flags and OpFlags.TAGGED != 0L,
                flags and OpFlags.REMOTE_CQ_DATA != 0L,
                flags and OpFlags.DELIVERY_COMPLETE != 0L,
            )
        val eagerCost = frameCost(length)
        val credit = if (seq != 0L && flags and SendOutlet.RESEND == 0L) p.credit - resendHead() else p.credit
        val limit = eagerLimit()
        if (length <= limit && credit >= eagerCost && p.ensureRoom(HEADER_LENGTH + length)) {
            // A link's acknowledgement for this peer rides along (a striped part is never EAGER): none of its own.
            val ack = if (order != null && stripe == 0L) order.takeAck(p.recvPath.fiAddr) else 0L
            if (ack != 0L)
                p.putHeader(EAGER, wire or FLAG_LINK_ACK, length, msgId, tag, data, length.toLong(), seq, ack)
            else p.putHeader(EAGER, wire, length, msgId, tag, data, length.toLong(), seq, stripe)
            p.out.append(buffer, 0, length)
            p.spend(eagerCost)
            return HEAD_EAGER
        }
        if (flags and OpFlags.INJECT != 0L) return HEAD_NONE
        if (flags and SendOutlet.KEPT != 0L && length <= limit) return HEAD_NONE // whole, once the credit allows
        if (credit >= frameCost(0) && p.ensureRoom(HEADER_LENGTH)) {
            p.putHeader(RTS, wire, 0, msgId, tag, data, length.toLong(), seq, stripe)
            p.spend(frameCost(0))
            return HEAD_RTS
        }
        return HEAD_NONE
    }

    /** Above the eager limit a message is always an RTS whose bytes are streamed. */
    override fun streamsStaged(length: Int): Boolean = length > eagerLimit()

    private fun eagerLimit(): Int = minOf(eagerSize.toLong(), p.theirWindow / 2 - HEAD_COST).toInt()

    /**
     * The credit a link's sequenced messages leave for a resent one: one eager message's, by the smaller of the two
     * ends' eager sizes (the peer's from its address), so never more than the peer lends for it ([TcpCredit]'s spare):
     * reserving more would leave a sender with a small share no credit to send with. The link keeps no message larger
     * than the peer's eager size ([TcpTransport.resendLimit]).
     */
    private fun resendHead(): Long {
        val theirs = p.address?.eagerSize ?: -1
        return frameCost(if (theirs >= 0) minOf(eagerLimit(), theirs) else eagerLimit())
    }

    override fun streamStarting(op: MsgTxOp) {
        if (streamOp === op) streamOp = null // a pooled op starting again: set it up afresh
        busy.mark(p)
    }

    /**
     * Whether [op]'s bytes can go to the socket straight from the sender's (direct) memory; if so [view] shows them.
     */
    private fun directView(op: MsgTxOp): Boolean {
        val bb = op.buffer.byteBuffer() ?: return false
        if (!bb.isDirect || op.accepted < DIRECT_MIN) return false
        if (viewSource !== bb) {
            view = bb.duplicate()
            viewSource = bb
        }
        viewBase = op.buffer.wrapAdjustment()
        return true
    }

    /** Puts the next part of a CTS'd message in the stream; true once all accepted bytes have gone. */
    override fun stream(op: MsgTxOp): Boolean {
        if (op !== streamOp) {
            streamOp = op
            streamDirect = directView(op)
        }
        val out = p.out
        if (streamDirect) {
            if (out.directPending) return false // the previous chunk is still being written
            if (op.sent == op.accepted) return done()
            if (!out.ensureRoom(HEADER_LENGTH)) return false
            val n = minOf(DIRECT_CHUNK.toLong(), op.accepted - op.sent).toInt()
            p.putHeader(DATA, 0, n, op.msgId, 0, 0, op.sent)
            val v = view!!
            val from = viewBase + op.sent.toInt()
            v.limit(from + n).position(from)
            out.putDirect(v)
            op.sent += n
            return false
        }
        while (op.sent < op.accepted) {
            val want = minOf(COPY_CHUNK.toLong(), op.accepted - op.sent).toInt()
            if (!out.ensureRoom(HEADER_LENGTH + minOf(want, MIN_COPY_CHUNK, out.capacity - HEADER_LENGTH))) return false
            val n = minOf(want, out.capacity - out.tail - HEADER_LENGTH)
            p.putHeader(DATA, 0, n, op.msgId, 0, 0, op.sent)
            out.append(op.buffer, op.sent.toInt(), n)
            op.sent += n
        }
        return done()
    }

    private fun done(): Boolean {
        streamOp = null
        return true
    }

    override fun writeSkip(seq: Long): Boolean = writeLink(TcpFrameDescriptor.SKIP, seq)

    override fun writeLinkAck(seq: Long): Boolean = writeLink(TcpFrameDescriptor.LACK, seq)

    /** A link control frame ([TcpFrameDescriptor.SKIP], [TcpFrameDescriptor.LACK]) carrying [seq]. */
    private fun writeLink(type: Int, seq: Long): Boolean {
        if (p.dead) return true
        if (!p.established || !p.ensureRoom(HEADER_LENGTH)) return false
        busy.mark(p)
        p.putHeader(type, 0, 0, 0, 0, 0, 0, seq)
        return true
    }

    override fun writeControl(type: Int, msgId: Long, value: Long): Boolean {
        if (p.dead) return true // nothing more goes to a dead peer
        busy.mark(p)
        if (!p.ensureRoom(HEADER_LENGTH)) return false
        val frame =
            when (type) {
                ControlOutlet.CTS -> CTS
                ControlOutlet.ACK -> ACK
                else -> DISCARDED
            }
        p.putHeader(frame, 0, 0, msgId, 0, 0, value)
        return true
    }

    override fun release(cost: Long) = p.lender.returned(cost)

    /** A large receive into direct memory is read from the socket straight into it (see [TcpInbound]). */
    override fun inboundStarted(inb: MsgInbound) {
        if (readsDirect(inb)) p.rx.directPending++
    }

    override fun inboundEnded(inb: MsgInbound) {
        if (readsDirect(inb)) p.rx.directPending--
    }

    internal companion object {
        /** Payloads at least this large go between the socket and direct application memory without a copy. */
        const val DIRECT_MIN = 64 * 1024
        const val DIRECT_CHUNK = 1 shl 20
        const val COPY_CHUNK = 256 * 1024
        const val MIN_COPY_CHUNK = 4096

        /** Whether [inb]'s payload is read from the socket straight into its receive's (direct) memory. */
        fun readsDirect(inb: MsgInbound): Boolean {
            val bb = inb.entry!!.buffer.byteBuffer()
            return bb != null && bb.isDirect && inb.expected >= DIRECT_MIN
        }
    }
}
