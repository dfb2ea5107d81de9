package braid.provider.tcp

import braid.core.RxEntry
import braid.provider.MessageEngine
import braid.provider.RailHost
import braid.provider.tcp.TcpFrameAdapter.Companion.CONTINUE
import braid.provider.tcp.TcpFrameAdapter.Companion.FAIL
import braid.provider.tcp.TcpFrameAdapter.Companion.STOP
import braid.provider.tcp.TcpFrameDescriptor.ACK
import braid.provider.tcp.TcpFrameDescriptor.CREDIT
import braid.provider.tcp.TcpFrameDescriptor.CTS
import braid.provider.tcp.TcpFrameDescriptor.DATA
import braid.provider.tcp.TcpFrameDescriptor.DISCARDED
import braid.provider.tcp.TcpFrameDescriptor.EAGER
import braid.provider.tcp.TcpFrameDescriptor.FLAG_ACK
import braid.provider.tcp.TcpFrameDescriptor.FLAG_DATA
import braid.provider.tcp.TcpFrameDescriptor.FLAG_TAGGED
import braid.provider.tcp.TcpFrameDescriptor.GIVEBACK
import braid.provider.tcp.TcpFrameDescriptor.HEARTBEAT
import braid.provider.tcp.TcpFrameDescriptor.LACK
import braid.provider.tcp.TcpFrameDescriptor.RECLAIM
import braid.provider.tcp.TcpFrameDescriptor.RMA
import braid.provider.tcp.TcpFrameDescriptor.RTS
import braid.provider.tcp.TcpFrameDescriptor.SKIP
import braid.provider.tcp.TcpFrameDescriptor.frameCost

/**
 * The tcp rail's inbound decoding: bytes from a connection's socket through its [TcpFrameAdapter] into the message
 * engine (heads, DATA, control), [TcpRma] (RMA frames) and the credit rules ([TcpCredit]). The handshake's frames,
 * before a connection is established, go to [TcpHandshake] instead ([TcpConnections] routes them). What one peer's
 * stream is in the middle of is the peer's [TcpPeer.Rx]. Not thread-safe: the transport calls in under the domain lock.
 */
internal class TcpInbound(
    private val ep: RailHost,
    private val engine: MessageEngine,
    private val rma: TcpRma,
    private val credit: TcpCredit,
    private val peers: TcpPeers,
    private val busy: TcpBusy,
    private val bufferSize: Int,
) {
    /** Payload bytes read from sockets straight into application memory. */
    var bytesReadDirect = 0L
        private set

    /**
     * Reads what [c]'s socket has (a few reads at most) and decodes it; a rendezvous payload is read straight into its
     * receive buffer when that is direct memory. Returns [OK], or [CORRUPT] ([TcpFrameAdapter.error] says why) or [END]
     * (the stream ended) for the caller to lose [c]. Throws what the channel throws.
     */
    fun read(c: TcpConnection): Int {
        var reads = 0
        var drained = false
        var filled: Boolean
        while (true) {
            val buf = c.inbound
            if (buf.position() > 0) {
                buf.flip()
                val rc = c.adapter.decode(buf, c.handler)
                buf.compact()
                if (c.state == TcpConnection.State.CLOSED) return OK
                if (rc == FAIL) return CORRUPT
                if (rc == STOP) {
                    if (c.established) c.growInbound(bufferSize)
                    continue
                }
            }
            // A read that did not fill what it was offered emptied the socket: no second system call to learn that.
            if (drained || reads >= READS_PER_CYCLE) return OK
            val n: Int
            val rx = c.peer?.rx
            val direct = rx != null && rx.inbound != null && rx.direct
            if (direct && c.adapter.sinkRemaining >= TcpPeerOutlet.DIRECT_MIN && c.established) {
                // A rendezvous payload: read it straight into the receive buffer.
                val v = rx!!.view!!
                val from = rx.viewBase + c.adapter.sinkPosition
                v.limit(from + c.adapter.sinkRemaining).position(from)
                n = c.channel.read(v)
                if (n > 0) {
                    c.bytesReceived += n
                    bytesReadDirect += n
                    reads++
                    drained = v.hasRemaining()
                    val rc = c.adapter.advanceDirect(n, c.handler)
                    if (c.state == TcpConnection.State.CLOSED) return OK
                    if (rc == FAIL) return CORRUPT
                    continue
                }
                filled = false
            } else {
                // At a frame boundary while a rendezvous payload is due, read a little only: the
                // payload behind its header then goes straight into the receive buffer, not through
                // this one (as libfabric's tcp provider reads into a small prefetch buffer).
                val prefetch = buf.position() == 0 && !c.adapter.midFrame && (rx?.directPending ?: 0) > 0
                if (prefetch) buf.limit(minOf(RENDEZVOUS_PREFETCH, buf.capacity()))
                n = c.channel.read(buf)
                filled = !buf.hasRemaining()
                if (prefetch) buf.limit(buf.capacity())
            }
            if (n < 0) return END
            if (n == 0) return OK
            c.bytesReceived += n
            reads++
            drained = !filled
        }
    }

    // ## Frames of an established connection ##

    fun onHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        if (a.credit != 0L) {
            if (!p.lent(a.credit)) {
                val window = p.theirWindow
                return a.fail(
                    "${a.typeName()} returned ${a.credit} bytes of credit, more than was lent (window $window)"
                )
            }
            if (p.sendPath.backlog.isNotEmpty()) busy.mark(p)
        }
        if (a.linkAck != 0L) {
            if (a.type != EAGER) return a.fail("${a.typeName()} frame carrying a link acknowledgement (EAGER only)")
            peers.resolve(p)
            engine.linkAcked(p.recvPath, a.linkAck)
        }
        return when (a.type) {
            EAGER -> onEagerHeader(p, a)
            DATA -> onDataHeader(p, a)
            RMA -> rma.onHeader(p, a)
            else -> CONTINUE
        }
    }

    /** A whole frame from [p] (BYE is its connection's, not read here). */
    fun onFrame(p: TcpPeer, a: TcpFrameAdapter): Int =
        when (a.type) {
            EAGER -> onEagerFrame(p, a)
            RTS -> onRts(p, a)
            CTS -> onCts(p, a)
            DATA -> onDataFrame(p, a)
            ACK ->
                if (engine.onAck(p.sendPath, a.msgId)) CONTINUE
                else a.fail("ACK for message ${a.msgId}, which waits for none")
            DISCARDED ->
                if (engine.onDiscarded(p.sendPath, a.msgId)) CONTINUE
                else a.fail("DISCARDED for message ${a.msgId}, which is not outstanding")
            CREDIT,
            HEARTBEAT -> CONTINUE
            RECLAIM -> {
                p.reclaimed(a.value)
                busy.mark(p)
                CONTINUE
            }
            GIVEBACK -> p.lender.gaveBack(a.value)?.let { a.fail(it) } ?: CONTINUE
            SKIP -> {
                peers.resolve(p)
                engine.skipped(p.recvPath, a.seq)
                CONTINUE
            }
            LACK -> {
                peers.resolve(p)
                engine.linkAcked(p.recvPath, a.seq)
                CONTINUE
            }
            RMA -> rma.onFrame(p, a)
            else -> a.fail("${a.typeName()} frame after the handshake")
        }

    /** Checks a message head's sequence and credit and charges it; returns null if fine, else the failure. */
    private fun admit(p: TcpPeer, a: TcpFrameAdapter, cost: Long): String? {
        if (a.msgId != p.rx.nextId)
            return "${a.typeName()} message id ${a.msgId} out of sequence (expected ${p.rx.nextId})"
        p.lender.charge(cost, a.typeName(), a.value)?.let {
            return it
        }
        p.rx.nextId++
        return null
    }

    /** The receive context's entry for the message [a] heads; [count]: false when looking the same message up again. */
    private fun entryFor(p: TcpPeer, a: TcpFrameAdapter, size: Long, count: Boolean = true): RxEntry {
        peers.resolve(p)
        return engine.arrived(
            p.recvPath,
            a.flags and FLAG_TAGGED != 0,
            a.tag,
            size,
            a.flags and FLAG_DATA != 0,
            a.data,
            count,
            a.seq,
            a.stripe,
        )
    }

    private fun onEagerHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        val len = a.payloadLength
        if (a.value != len.toLong()) return a.fail("EAGER frame of $len payload bytes for a message of ${a.value}")
        // A link sends each part of a striped message larger than the eager size, so that it lands in place.
        if (a.stripe != 0L) return a.fail("EAGER frame carrying a part of a striped message (parts travel as RTS)")
        admit(p, a, frameCost(len))?.let {
            return a.fail(it)
        }
        val e = entryFor(p, a, len.toLong())
        if (engine.isMatched(e)) {
            p.rx.entry = e
            a.sinkTo(e.buffer, 0, minOf(len, e.buffer.capacity()))
        } else {
            // Hold the bytes; match again once they are all here (a receive may be posted meanwhile).
            ep.srx.freeEntry(e)
            val bytes = engine.payload(len)
            p.rx.bytes = bytes
            credit.holdStarted(len)
            a.sinkTo(bytes, 0, len)
        }
        credit.reserve()
        return CONTINUE
    }

    private fun onEagerFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
        val len = a.payloadLength
        val cost = frameCost(len)
        val wantAck = a.flags and FLAG_ACK != 0
        val matched = p.rx.entry
        if (matched != null) {
            p.rx.entry = null
            engine.delivered(p.recvPath, matched, wantAck, a.msgId, cost)
            return CONTINUE
        }
        val bytes = p.rx.bytes!!
        p.rx.bytes = null
        credit.holdEnded(len)
        val e = entryFor(p, a, len.toLong(), count = false)
        if (engine.isMatched(e)) {
            engine.deliver(p.recvPath, e, bytes, 0, wantAck, a.msgId, cost)
            engine.releasePayload(bytes)
        } else {
            engine.hold(p.recvPath, e, bytes, a.msgId, false, wantAck, cost, 0)
        }
        credit.reserve()
        return CONTINUE
    }

    private fun onRts(p: TcpPeer, a: TcpFrameAdapter): Int {
        if (a.value < 0 || a.value > Int.MAX_VALUE) return a.fail("RTS for a message of ${a.value} bytes")
        val cost = frameCost(0)
        admit(p, a, cost)?.let {
            return a.fail(it)
        }
        val wantAck = a.flags and FLAG_ACK != 0
        val e = entryFor(p, a, a.value)
        if (engine.isMatched(e)) {
            p.lender.returned(cost)
            engine.startRendezvous(p.recvPath, e, a.msgId, wantAck, 0)
        } else {
            engine.hold(p.recvPath, e, null, a.msgId, true, wantAck, cost, 0)
            credit.reserve()
        }
        return CONTINUE
    }

    private fun onCts(p: TcpPeer, a: TcpFrameAdapter): Int {
        val op =
            p.sendPath.waitingCts.get(a.msgId)
                ?: return a.fail("CTS for message ${a.msgId}, which is not waiting for one")
        if (!engine.onCts(p.sendPath, a.msgId, a.value)) {
            return a.fail("CTS accepting ${a.value} bytes of a ${op.length}-byte message")
        }
        return CONTINUE
    }

    private fun onDataHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        val inb =
            engine.inbound(p.recvPath, a.msgId)
                ?: return a.fail("DATA for message ${a.msgId}, which no receive is waiting for")
        if (a.value != inb.received)
            return a.fail("DATA at offset ${a.value} of message ${a.msgId}, expected ${inb.received}")
        if (inb.received + a.payloadLength > inb.expected) {
            return a.fail("DATA past the ${inb.expected} bytes accepted for message ${a.msgId}")
        }
        val rx = p.rx
        rx.inbound = inb
        val buffer = inb.entry!!.buffer
        rx.direct = TcpPeerOutlet.readsDirect(inb)
        if (rx.direct) rx.viewOf(buffer.byteBuffer()!!, buffer.wrapAdjustment())
        a.sinkTo(buffer, inb.received.toInt(), a.payloadLength)
        return CONTINUE
    }

    private fun onDataFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
        val inb = p.rx.inbound!!
        p.rx.inbound = null
        engine.fragment(p.recvPath, a.msgId, inb, a.payloadLength)
        return CONTINUE
    }

    companion object {
        /** What [read] returns: all read; a corrupt frame; the end of the stream. */
        const val OK = 0
        const val CORRUPT = 1
        const val END = 2

        private const val READS_PER_CYCLE = 8

        /** What a read at a frame boundary takes while a rendezvous payload is due. */
        private const val RENDEZVOUS_PREFETCH = 8192
    }
}
