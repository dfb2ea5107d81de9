package braid.provider.tcp

import braid.core.FiAddr
import braid.core.RxEntry
import braid.provider.shm.TripleQueue
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.util.zip.CRC32C

/**
 * Everything one tcp endpoint keeps about one peer endpoint, in both directions: the frames
 * waiting to go out (one buffer, so frames written before the connection is up survive a
 * simultaneous-connect tie-break and keep their order), the sends waiting for credit, a CTS or
 * an ACK, the credit both ways, and the rendezvous receives being filled.
 *
 * A peer has at most one data connection in its life ([conn] once established); when that
 * connection fails the peer is dead for this endpoint, as a process that died stays dead.
 */
internal class TcpPeer(val id: Long, val index: Int, bufferSize: Int) {
    var address: TcpAddress? = null
    val key: String = TcpAddress.keyOf(id)
    /** The connection carrying this peer's frames: pending (handshake) or established. */
    var conn: TcpConnection? = null
    val established: Boolean get() = conn?.state == TcpConnection.State.ESTABLISHED

    var dead = false
    var deadErr = 0
    var deadWhy = ""

    var fiAddr = FiAddr.NOTAVAIL
    var avGeneration = -1L
    /** After a simultaneous-connect tie-break went the peer's way: wait for its connection until then. */
    var awaitIncomingUntil = 0L
    /** In the transport's list of peers with frames to write. */
    var busy = false

    // ## Outbound frames ##

    var out: ByteBuffer = ByteBuffer.allocateDirect(bufferSize); private set
    val outView = UnsafeBuffer(out)
    private var crcView = out.duplicate()
    private val crc = CRC32C()
    var outHead = 0
    var outTail = 0
    /** A chunk written to the socket straight from the sender's memory, after out[outHead, directMark). */
    var direct: ByteBuffer? = null
    var directMark = 0
    private val gather = arrayOf(out, out)
    /** The socket took less than offered: wait for OP_WRITE before trying again. */
    var blocked = false
    var bytesSent = 0L

    val backlog = ArrayDeque<TcpTxOp>()
    val waitingCts = Long2ObjectHashMap<TcpTxOp>()
    val streaming = ArrayDeque<TcpTxOp>()
    val waitingAck = Long2ObjectHashMap<TcpTxOp>()
    /** Control frames (type, message id, value) waiting for room in [out]. */
    val ctrl = TripleQueue()
    var nextMsgId = 1L
    /** Credit left to send message heads to this peer. */
    var credit = MIN_WINDOW.toLong()
    var theirWindow = MIN_WINDOW.toLong()

    // ## Inbound state ##

    var rxNextId = 1L
    val inflight = Long2ObjectHashMap<TcpInbound>()
    /** Receives in [inflight] whose payload is read straight into application memory. */
    var directPending = 0
    /** Credit charged for this peer's messages we still hold, and credit freed but not yet returned. */
    var rxOutstanding = 0L
    var pendingReturn = 0L
    /** The EAGER frame being read: its matched receive, or the bytes held for it. */
    var rxEntry: RxEntry? = null
    var rxBytes: UnsafeBuffer? = null
    /** The DATA frame being read. */
    var rxInbound: TcpInbound? = null

    val unflushed: Boolean get() = outTail > outHead || direct != null

    /** Whether [n] more bytes fit in [out], compacting it if that makes room. */
    fun ensureRoom(n: Int): Boolean {
        if (out.capacity() - outTail >= n) return true
        if (outHead == 0) return false
        val live = outTail - outHead
        if (live > 0) outView.putBytes(0, outView, outHead, live)
        if (direct != null) directMark -= outHead
        outTail = live
        outHead = 0
        return out.capacity() - outTail >= n
    }

    /** Appends a frame header (the caller made room) carrying the credit we owe the peer. */
    fun putHeader(type: Int, flags: Int, payloadLength: Int, msgId: Long, tag: Long, data: Long, value: Long) {
        val back = minOf(pendingReturn, 0xffff_ffffL)
        pendingReturn -= back
        outTail += TcpFrameDescriptor.putHeader(outView, crcView, crc, outTail, type, flags, payloadLength, back, msgId, tag, data, value)
    }

    /**
     * Writes what is pending to [channel]: the buffered frames, then a direct chunk, then the
     * frames written behind it. Returns true when everything went; false when the socket is
     * full ([blocked]). Throws what the channel throws.
     */
    @Throws(IOException::class)
    fun flush(channel: SocketChannel): Boolean {
        while (true) {
            val d = direct
            if (d != null && outHead < directMark) {
                // The DATA header and its payload in one system call (and one segment, not a 48-byte one first).
                out.limit(directMark).position(outHead)
                gather[0] = out
                gather[1] = d
                val n = channel.write(gather, 0, 2)
                bytesSent += n
                outHead = out.position()
                if (outHead < directMark || d.hasRemaining()) { blocked = true; return false }
                direct = null
                continue
            }
            val limit = if (d != null) directMark else outTail
            if (outHead < limit) {
                out.limit(limit).position(outHead)
                val n = channel.write(out)
                outHead += n
                bytesSent += n
                if (outHead < limit) { blocked = true; return false }
            }
            if (d != null) {
                val n = channel.write(d)
                bytesSent += n
                if (d.hasRemaining()) { blocked = true; return false }
                direct = null
                continue
            }
            outHead = 0
            outTail = 0
            blocked = false
            return true
        }
    }

    /** Drops every frame not yet written and the buffer itself (the peer is gone; nothing more is written to it). */
    fun discardOutbound() {
        outHead = 0; outTail = 0; direct = null; directMark = 0
        while (!ctrl.isEmpty()) ctrl.removeFirst()
        out = EMPTY
        outView.wrap(out)
        crcView = out.duplicate()
    }

    private companion object {
        val EMPTY: ByteBuffer = ByteBuffer.allocateDirect(0)
    }

    override fun toString(): String = address?.render() ?: "fi_tcp://${conn?.remote?.removePrefix("/") ?: "?"}/${TcpAddress.idString(id)}"
}

/** A pending send: waiting for credit or room, a CTS, its stream, or an ACK. */
internal class TcpTxOp {
    val buffer = UnsafeBuffer(0L, 0)
    var length = 0
    var tag = 0L
    var data = 0L
    var flags = 0L
    var context: Any? = null
    var msgId = 0L
    var accepted = 0L
    var sent = 0L
    /** A view of the sender's direct memory for writing straight to the socket, cached per buffer. */
    var view: ByteBuffer? = null
    var viewSource: ByteBuffer? = null
    var viewBase = 0
    var directMode = false
}

/** A matched rendezvous receive whose DATA frames are arriving. */
internal class TcpInbound {
    var entry: RxEntry? = null
    var expected = 0L
    var received = 0L
    var wantAck = false
    /** A view of the receive buffer's direct memory for reading straight from the socket, cached per buffer. */
    var view: ByteBuffer? = null
    var viewSource: ByteBuffer? = null
    var viewBase = 0
    var directMode = false
}

/** What the rail keeps for an unexpected message: its bytes (eager) or its id (rendezvous). */
internal class TcpHeld {
    var peer: TcpPeer? = null
    var bytes: UnsafeBuffer? = null
    var msgId = 0L
    var rendezvous = false
    var wantAck = false
    var cost = 0L
}
