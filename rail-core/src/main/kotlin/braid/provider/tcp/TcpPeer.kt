package braid.provider.tcp

import braid.core.RxEntry
import braid.provider.MsgInbound
import braid.provider.RecvPath
import braid.provider.SendPath
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import org.agrona.concurrent.UnsafeBuffer
import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.util.zip.CRC32C

/**
 * Everything one tcp endpoint keeps about one peer endpoint, in both directions: the frames
 * waiting to go out (one buffer, so frames written before the connection is up survive a
 * simultaneous-connect tie-break and keep their order), the credit both ways, the frame being
 * read, and the message engine's paths each way (sends waiting for credit, a CTS or an ACK;
 * rendezvous receives being filled).
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

    /** The message engine's state for this peer, each way (set by the transport, with this peer's [TcpPeerOutlet]). */
    lateinit var sendPath: SendPath
    lateinit var recvPath: RecvPath
    val fiAddr: Long get() = recvPath.fiAddr
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

    /** Credit left to send message heads to this peer: none until it grants some (see [TcpCredit]). */
    var credit = 0L
    var theirWindow = MIN_WINDOW.toLong()
    /** Credit this peer asked back (RECLAIM) that we gave up, to be written in a GIVEBACK frame; -1: none due. */
    var giveBack = -1L

    // ## Inbound state ##

    var rxNextId = 1L
    /** Rendezvous receives whose payload is read straight into application memory. */
    var directPending = 0
    /** Credit charged for this peer's messages we still hold, and credit freed (or granted) but not yet sent back. */
    var rxOutstanding = 0L
    var pendingReturn = 0L
    /** Heads charged in [rxOutstanding]. */
    var rxHeads = 0
    /**
     * Credit this endpoint has committed to this peer out of its unexpected bounds: unspent at
     * the peer, charged ([rxOutstanding]) or not yet sent ([pendingReturn]). Never less than
     * [rxOutstanding]: a head past it is a protocol fault.
     */
    var committed = 0L
    /** The credit this peer is to have committed now (lazy: grows with use, shrinks when idle; see `TcpCredit.kt`), and heads it sent this keepalive period. */
    var target = 0L
    var headsRecent = 0
    /** Credit asked back from this peer: to write in a RECLAIM frame (> 0), and whether its GIVEBACK is due. */
    var reclaimToSend = 0L
    var reclaiming = false
    /** Counted among the senders that share this endpoint's credit; and in its queue of those below their share. */
    var sharing = false
    var starved = false
    /** The EAGER frame being read: its matched receive, or the bytes held for it. */
    var rxEntry: RxEntry? = null
    var rxBytes: UnsafeBuffer? = null
    /** The DATA frame being read. */
    var rxInbound: MsgInbound? = null

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
        out = EMPTY
        outView.wrap(out)
        crcView = out.duplicate()
    }

    private companion object {
        val EMPTY: ByteBuffer = ByteBuffer.allocateDirect(0)
    }

    override fun toString(): String = address?.render() ?: "fi_tcp://${conn?.remote?.removePrefix("/") ?: "?"}/${TcpAddress.idString(id)}"
}
