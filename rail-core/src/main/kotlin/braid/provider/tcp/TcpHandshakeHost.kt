package braid.provider.tcp

import braid.core.Errno
import braid.provider.tcp.TcpFrameAdapter.Companion.STOP
import java.lang.System.Logger.Level

/** The endpoint's side of the handshake: the tie-break, and what a refusal or a failure means for the peer. */
internal class TcpHandshakeHost(private val t: TcpTransport) : TcpHandshake.Host {
    override val name: String get() = t.self

    override fun accepted(c: TcpConnection): Int = with(t) {
        val theirId = c.theirId
        if (theirId == id) {
            // This endpoint connecting to itself: the receiving side gets a peer record of its own.
            val p = selfIncoming ?: withPaths(TcpPeer(id, peers.size, bufferSize)).also { selfIncoming = it; peers += it }
            if (p.conn != null) return handshake.reject(c, HandshakeDescriptor.REJECT_CONNECTED, "already connected to itself")
            handshake.welcome(c)
            establish(c, p)
            return STOP
        }
        val p = peersById.get(theirId) ?: newPeer(theirId)
        if (p.dead) return handshake.reject(c, HandshakeDescriptor.REJECT_DEAD, "$self declared endpoint ${TcpAddress.idString(theirId)} dead: ${p.deadWhy}")
        val cur = p.conn
        if (cur != null) {
            if (!cur.outgoing || cur.established) {
                return handshake.reject(c, HandshakeDescriptor.REJECT_CONNECTED, "$self is already connected to endpoint ${TcpAddress.idString(theirId)}")
            }
            // Both connected at once: the connection opened by the smaller id stays.
            if (id < theirId) return handshake.reject(c, HandshakeDescriptor.REJECT_DUPLICATE, "simultaneous connect: $self keeps its own connection")
            closeConnection(cur) // ours loses; the frames it would have carried wait in the peer's buffer
        }
        handshake.welcome(c)
        establish(c, p)
        return STOP
    }

    override fun welcomed(c: TcpConnection) = t.establish(c, c.peer!!)

    override fun refused(c: TcpConnection, reason: Int, text: String) = with(t) {
        val p = c.peer!!
        if (reason != HandshakeDescriptor.REJECT_DUPLICATE) {
            lost(c, Errno.ECONNREFUSED, "refused the connection: $text")
            return
        }
        // The peer keeps the connection it opened to us: wait for it (and retry if it never comes).
        closeConnection(c)
        if (p.conn === c) {
            p.conn = null
            p.awaitIncomingUntil = System.nanoTime() + timeoutNanos
        }
    }

    override fun failed(c: TcpConnection, err: Int, why: String, level: Level) = t.lost(c, err, why, level)

    override fun close(c: TcpConnection) = t.closeConnection(c)

    override fun flush(c: TcpConnection) = t.flushHandshake(c)
}

/** [c] is [p]'s connection now: credit flows both ways from here (none is lent before). */
internal fun TcpTransport.establish(c: TcpConnection, p: TcpPeer) {
    c.peer = p
    c.state = TcpConnection.State.ESTABLISHED
    p.conn = c
    p.awaitIncomingUntil = 0
    p.theirWindow = c.theirWindow
    c.rxSeenAt = System.nanoTime()
    c.txSeenAt = c.rxSeenAt
    flushHandshake(c)
    markBusy(p)
    creditJoined(p)
}

