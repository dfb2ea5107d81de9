package braid.provider.tcp

import braid.core.Errno
import braid.provider.tcp.TcpFrameDescriptor.ACK
import braid.provider.tcp.TcpFrameDescriptor.BYE
import braid.provider.tcp.TcpFrameDescriptor.CREDIT
import braid.provider.tcp.TcpFrameDescriptor.CTS
import braid.provider.tcp.TcpFrameDescriptor.DATA
import braid.provider.tcp.TcpFrameDescriptor.DISCARDED
import braid.provider.tcp.TcpFrameDescriptor.EAGER
import braid.provider.tcp.TcpFrameDescriptor.GIVEBACK
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.HEARTBEAT
import braid.provider.tcp.TcpFrameDescriptor.MAX_RMA_PAYLOAD
import braid.provider.tcp.TcpFrameDescriptor.RECLAIM
import braid.provider.tcp.TcpFrameDescriptor.RMA
import braid.provider.tcp.TcpFrameDescriptor.RTS
import java.io.IOException
import java.lang.System.Logger.Level
import java.net.StandardSocketOptions
import java.nio.channels.SelectionKey
import java.nio.channels.SocketChannel

// The tcp rail's connections: accepting, connecting, the handshake's flushes, losing one (which
// kills its peer), and the frame size limits before and after the handshake. Extensions of
// TcpTransport, whose selector and peers they work on, under its lock.

internal fun TcpTransport.acceptAll() {
    for (i in 0 until TcpTransport.ACCEPTS_PER_CYCLE) {
        val ch = try {
            server.accept() ?: return
        } catch (e: IOException) {
            TcpTransport.log.log(Level.WARNING, "tcp endpoint $self: accept failed: ${e.message}")
            return
        }
        try {
            ch.configureBlocking(false)
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true)
            val c = newConnection(ch, outgoing = false, peer = null)
            c.key = ch.register(selector, SelectionKey.OP_READ, c)
            connectionsAccepted++
        } catch (e: IOException) {
            runCatching { ch.close() }
        }
    }
}

internal fun TcpTransport.newConnection(ch: SocketChannel, outgoing: Boolean, peer: TcpPeer?): TcpConnection {
    val c = TcpConnection(ch, outgoing, peer, System.nanoTime(), limitsFor)
    c.handler = object : TcpFrameAdapter.Handler {
        override fun onHeader(a: TcpFrameAdapter): Int = this@newConnection.onHeader(c, a)
        override fun onFrame(a: TcpFrameAdapter): Int = this@newConnection.onFrame(c, a)
    }
    connections += c
    return c
}

/** Opens the connection to [p] unless one exists, it is dead, or it is due to connect to us. */
internal fun TcpTransport.ensureConnection(p: TcpPeer) {
    if (p.conn != null || p.dead || closed) return
    val target = p.address ?: return
    if (p.awaitIncomingUntil != 0L && System.nanoTime() - p.awaitIncomingUntil < 0) return
    val ch = try {
        SocketChannel.open()
    } catch (e: IOException) {
        failPeer(p, Errno.EIO, "cannot be connected to: no socket to open (${e.message})")
        return
    }
    val c = newConnection(ch, outgoing = true, peer = p)
    c.remote = target.socket.toString()
    p.conn = c
    connectionsOpened++
    try {
        ch.configureBlocking(false)
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true)
        if (ch.connect(target.socket)) {
            c.key = ch.register(selector, SelectionKey.OP_READ, c)
            handshake.start(c)
        } else {
            c.key = ch.register(selector, SelectionKey.OP_CONNECT, c)
        }
    } catch (e: Exception) {
        lost(c, Errno.ECONNREFUSED, "cannot be connected to at ${target.socket} (${e.message})")
    }
}

internal fun TcpTransport.finishConnect(c: TcpConnection) {
    try {
        if (!c.channel.finishConnect()) return
    } catch (e: IOException) {
        lost(c, Errno.ECONNREFUSED, "refused the connection at ${c.remote} (${e.message}): the endpoint is closed, or its process is gone")
        return
    }
    c.key.interestOps(SelectionKey.OP_READ)
    handshake.start(c)
}

internal fun TcpTransport.flushHandshake(c: TcpConnection) {
    try {
        if (!c.flushHandshake()) c.key.interestOps(c.key.interestOps() or SelectionKey.OP_WRITE)
    } catch (e: IOException) {
        lost(c, Errno.ECONNRESET, "reset the connection during the handshake (${e.message})")
    }
}

internal fun TcpTransport.writable(c: TcpConnection) {
    if (!c.flushHandshake()) return
    c.key.interestOps(SelectionKey.OP_READ)
    val p = c.peer
    if (c.established && p != null) {
        p.blocked = false
        markBusy(p)
    }
}

/** [c] is gone: close it, and if it was its peer's connection the peer is dead. Logged once, at [level]. */
internal fun TcpTransport.lost(c: TcpConnection, err: Int, why: String, level: Level = Level.INFO) {
    if (c.state == TcpConnection.State.CLOSED) return
    closeConnection(c)
    val p = c.peer
    if (p != null && p.conn === c) {
        p.conn = null
        failPeer(p, err, why, level)
    } else {
        // Not (or no longer) a peer's connection: a handshake that failed or lost a tie-break.
        TcpTransport.log.log(if (level == Level.WARNING) level else Level.DEBUG, "tcp endpoint $self: closed connection $c: $why")
    }
}

internal fun TcpTransport.closeConnection(c: TcpConnection) {
    c.close()
    connections.remove(c)
}

internal fun TcpTransport.maxPayload(c: TcpConnection, type: Int): Int {
    if (!c.established) return HandshakeDescriptor.payloadLimit(type)
    return when (type) {
        EAGER -> (window - HEAD_COST).toInt()
        DATA -> TcpTransport.MAX_DATA_PAYLOAD
        RTS, CTS, ACK, DISCARDED, CREDIT, HEARTBEAT, BYE, RECLAIM, GIVEBACK -> 0
        RMA -> MAX_RMA_PAYLOAD
        else -> -1
    }
}
