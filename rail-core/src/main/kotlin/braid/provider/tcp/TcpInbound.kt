package braid.provider.tcp

import braid.core.Errno
import braid.core.RxEntry
import braid.provider.tcp.TcpFrameAdapter.Companion.CONTINUE
import braid.provider.tcp.TcpFrameAdapter.Companion.FAIL
import braid.provider.tcp.TcpFrameAdapter.Companion.STOP
import braid.provider.tcp.TcpFrameDescriptor.ACK
import braid.provider.tcp.TcpFrameDescriptor.BYE
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
import braid.provider.tcp.TcpFrameDescriptor.RECLAIM
import braid.provider.tcp.TcpFrameDescriptor.RMA
import braid.provider.tcp.TcpFrameDescriptor.RTS
import braid.provider.tcp.TcpFrameDescriptor.frameCost
import java.lang.System.Logger.Level

// The tcp rail's inbound decoding: bytes from a connection's socket through its TcpFrameAdapter
// into the message engine (heads, DATA, control), TcpRma (RMA frames) and TcpHandshake. Written
// as extensions of TcpTransport, whose peers and connections they work on, under its lock.

private const val READS_PER_CYCLE = 8

/** What a read at a frame boundary takes while a rendezvous payload is due. */
private const val RENDEZVOUS_PREFETCH = 8192

/**
 * Reads what [c]'s socket has (a few reads at most) and decodes it; a rendezvous payload is read
 * straight into its receive buffer when that is direct memory.
 */
internal fun TcpTransport.read(c: TcpConnection) {
    var reads = 0
    var drained = false
    var filled: Boolean
    while (true) {
        val buf = c.inbound
        if (buf.position() > 0) {
            buf.flip()
            val rc = c.adapter.decode(buf, c.handler)
            buf.compact()
            if (c.state == TcpConnection.State.CLOSED) return
            if (rc == FAIL) { corrupt(c); return }
            if (rc == STOP) {
                if (c.established) c.growInbound(bufferSize)
                continue
            }
        }
        // A read that did not fill what it was offered emptied the socket: no second system call to learn that.
        if (drained || reads >= READS_PER_CYCLE) return
        val n: Int
        val inb = c.peer?.rxInbound
        if (inb != null && inb.directMode && c.adapter.sinkRemaining >= TcpPeerOutlet.DIRECT_MIN && c.established) {
            // A rendezvous payload: read it straight into the receive buffer.
            val v = inb.view!!
            val from = inb.viewBase + c.adapter.sinkPosition
            v.limit(from + c.adapter.sinkRemaining).position(from)
            n = c.channel.read(v)
            if (n > 0) {
                c.bytesReceived += n
                bytesReadDirect += n
                reads++
                drained = v.hasRemaining()
                val rc = c.adapter.advanceDirect(n, c.handler)
                if (c.state == TcpConnection.State.CLOSED) return
                if (rc == FAIL) { corrupt(c); return }
                continue
            }
            filled = false
        } else {
            // At a frame boundary while a rendezvous payload is due, read a little only: the
            // payload behind its header then goes straight into the receive buffer, not through
            // this one (as libfabric's tcp provider reads into a small prefetch buffer).
            val prefetch = buf.position() == 0 && !c.adapter.midFrame && (c.peer?.directPending ?: 0) > 0
            if (prefetch) buf.limit(minOf(RENDEZVOUS_PREFETCH, buf.capacity()))
            n = c.channel.read(buf)
            filled = !buf.hasRemaining()
            if (prefetch) buf.limit(buf.capacity())
        }
        if (n < 0) { endOfStream(c); return }
        if (n == 0) return
        c.bytesReceived += n
        reads++
        drained = !filled
    }
}

internal fun TcpTransport.endOfStream(c: TcpConnection) {
    val why = if (c.adapter.midFrame) {
        "closed the connection in the middle of a ${c.adapter.describePosition()}: truncated frame"
    } else {
        "closed the connection"
    }
    lost(c, Errno.ECONNRESET, why, if (c.adapter.midFrame) Level.WARNING else Level.INFO)
}

internal fun TcpTransport.corrupt(c: TcpConnection) {
    lost(c, Errno.EIO, "sent a corrupt frame: ${c.adapter.error}; connection closed", Level.WARNING)
}


// ## Frames ##

internal fun TcpTransport.onHeader(c: TcpConnection, a: TcpFrameAdapter): Int {
    if (!c.established) return handshake.onHeader(c, a)
    val p = c.peer!!
    if (a.credit != 0L) {
        p.credit += a.credit
        if (p.credit > p.theirWindow) return a.fail("${a.typeName()} returned ${a.credit} bytes of credit, more than was lent (window ${p.theirWindow})")
        if (p.sendPath.backlog.isNotEmpty()) markBusy(p)
    }
    return when (a.type) {
        EAGER -> onEagerHeader(p, a)
        DATA -> onDataHeader(p, a)
        RMA -> rma.onHeader(p, a)
        else -> CONTINUE
    }
}

internal fun TcpTransport.onFrame(c: TcpConnection, a: TcpFrameAdapter): Int {
    if (!c.established) return handshake.onFrame(c, a)
    val p = c.peer!!
    return when (a.type) {
        EAGER -> onEagerFrame(p, a)
        RTS -> onRts(p, a)
        CTS -> onCts(p, a)
        DATA -> onDataFrame(p, a)
        ACK -> if (engine.onAck(p.sendPath, a.msgId)) CONTINUE else a.fail("ACK for message ${a.msgId}, which waits for none")
        DISCARDED -> if (engine.onDiscarded(p.sendPath, a.msgId)) CONTINUE else a.fail("DISCARDED for message ${a.msgId}, which is not outstanding")
        CREDIT, HEARTBEAT -> CONTINUE
        RECLAIM -> { reclaimed(p, a.value); CONTINUE }
        GIVEBACK -> gaveBack(p, a.value)?.let { a.fail(it) } ?: CONTINUE
        RMA -> rma.onFrame(p, a)
        BYE -> {
            lost(c, Errno.ECONNRESET, TcpTransport.CLOSED_ITS_ENDPOINT)
            STOP
        }
        else -> a.fail("${a.typeName()} frame after the handshake")
    }
}

/** Checks a message head's sequence and credit; returns null if fine, else the failure. */
internal fun TcpTransport.admit(p: TcpPeer, a: TcpFrameAdapter, cost: Long): String? {
    if (a.msgId != p.rxNextId) return "${a.typeName()} message id ${a.msgId} out of sequence (expected ${p.rxNextId})"
    if (p.rxOutstanding + cost > p.committed) return "${a.typeName()} of ${a.value} bytes past the credit lent (${p.rxOutstanding} of ${p.committed} bytes in use)"
    p.rxNextId++
    p.rxOutstanding += cost
    rxOutstandingTotal += cost
    p.rxHeads++
    rxHeadsTotal++
    creditUsed(p)
    return null
}

/** The receive context's entry for the message [a] heads; [count]: false when looking the same message up again. */
internal fun TcpTransport.entryFor(p: TcpPeer, a: TcpFrameAdapter, size: Long, count: Boolean = true): RxEntry {
    resolve(p)
    return engine.arrived(p.recvPath, a.flags and FLAG_TAGGED != 0, a.tag, size, a.flags and FLAG_DATA != 0, a.data, count)
}

internal fun TcpTransport.onEagerHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
    val len = a.payloadLength
    if (a.value != len.toLong()) return a.fail("EAGER frame of $len payload bytes for a message of ${a.value}")
    admit(p, a, frameCost(len))?.let { return a.fail(it) }
    val e = entryFor(p, a, len.toLong())
    if (engine.isMatched(e)) {
        p.rxEntry = e
        a.sinkTo(e.buffer, 0, minOf(len, e.buffer.capacity()))
    } else {
        // Hold the bytes; match again once they are all here (a receive may be posted meanwhile).
        ep.srx.freeEntry(e)
        val bytes = engine.payload(len)
        p.rxBytes = bytes
        holding++
        holdingBytes += len
        a.sinkTo(bytes, 0, len)
    }
    reserveCredit()
    return CONTINUE
}

internal fun TcpTransport.onEagerFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
    val len = a.payloadLength
    val cost = frameCost(len)
    val wantAck = a.flags and FLAG_ACK != 0
    val matched = p.rxEntry
    if (matched != null) {
        p.rxEntry = null
        engine.delivered(p.recvPath, matched, wantAck, a.msgId, cost)
        return CONTINUE
    }
    val bytes = p.rxBytes!!
    p.rxBytes = null
    holding--
    holdingBytes -= len
    val e = entryFor(p, a, len.toLong(), count = false)
    if (engine.isMatched(e)) {
        engine.deliver(p.recvPath, e, bytes, 0, wantAck, a.msgId, cost)
        engine.releasePayload(bytes)
    } else {
        engine.hold(p.recvPath, e, bytes, a.msgId, false, wantAck, cost, 0)
    }
    reserveCredit()
    return CONTINUE
}

internal fun TcpTransport.onRts(p: TcpPeer, a: TcpFrameAdapter): Int {
    if (a.value < 0 || a.value > Int.MAX_VALUE) return a.fail("RTS for a message of ${a.value} bytes")
    val cost = frameCost(0)
    admit(p, a, cost)?.let { return a.fail(it) }
    val wantAck = a.flags and FLAG_ACK != 0
    val e = entryFor(p, a, a.value)
    if (engine.isMatched(e)) {
        returnCredit(p, cost)
        engine.startRendezvous(p.recvPath, e, a.msgId, wantAck, 0)
    } else {
        engine.hold(p.recvPath, e, null, a.msgId, true, wantAck, cost, 0)
        reserveCredit()
    }
    return CONTINUE
}

internal fun TcpTransport.onCts(p: TcpPeer, a: TcpFrameAdapter): Int {
    val op = p.sendPath.waitingCts.get(a.msgId) ?: return a.fail("CTS for message ${a.msgId}, which is not waiting for one")
    if (!engine.onCts(p.sendPath, a.msgId, a.value)) return a.fail("CTS accepting ${a.value} bytes of a ${op.length}-byte message")
    return CONTINUE
}

internal fun TcpTransport.onDataHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
    val inb = engine.inbound(p.recvPath, a.msgId) ?: return a.fail("DATA for message ${a.msgId}, which no receive is waiting for")
    if (a.value != inb.received) return a.fail("DATA at offset ${a.value} of message ${a.msgId}, expected ${inb.received}")
    if (inb.received + a.payloadLength > inb.expected) return a.fail("DATA past the ${inb.expected} bytes accepted for message ${a.msgId}")
    p.rxInbound = inb
    a.sinkTo(inb.entry!!.buffer, inb.received.toInt(), a.payloadLength)
    return CONTINUE
}

internal fun TcpTransport.onDataFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
    val inb = p.rxInbound!!
    p.rxInbound = null
    engine.fragment(p.recvPath, a.msgId, inb, a.payloadLength)
    return CONTINUE
}

