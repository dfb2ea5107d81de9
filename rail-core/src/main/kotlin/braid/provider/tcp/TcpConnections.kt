package braid.provider.tcp

import braid.core.Errno
import braid.provider.tcp.TcpFrameAdapter.Companion.STOP
import braid.provider.tcp.TcpFrameDescriptor.BYE
import java.io.IOException
import java.lang.System.Logger.Level
import java.net.StandardSocketOptions
import java.nio.channels.CancelledKeyException
import java.nio.channels.SelectionKey
import java.nio.channels.SocketChannel
import java.util.function.Consumer

/**
 * The connections of one tcp endpoint: its listening socket and [Selector], accepting and connecting, the handshake's
 * endpoint side (the tie-break, and what a refusal means for the peer), the frame size limits before and after the
 * handshake, and losing a connection, which kills its peer ([failPeer]). Connections are opened on first use (a send,
 * or a receive directed at the peer) and kept for the endpoint's life. When two endpoints connect to each other at
 * once, the connection opened by the smaller endpoint id is kept and the other refused (REJECT duplicate); frames queue
 * in the peer's outbound buffer, not in a connection, so per-peer order survives that. Not thread-safe: the transport
 * calls in under the domain lock.
 */
internal class TcpConnections(
    private val listener: TcpListener,
    /**
     * This endpoint in words, for messages; its id and host; the most credit it lends one sender (the handshake's
     * window).
     */
    private val self: String,
    private val id: Long,
    hostId: Long,
    private val window: Long,
    private val settings: TcpSettings,
    private val peers: TcpPeers,
    private val inbound: TcpInbound,
    private val busy: TcpBusy,
    /** Whether peers that died may connect again ([braid.provider.RailHost.reconnects]), asked when one does. */
    private val reconnects: () -> Boolean = { false },
) {
    private val timeoutNanos = settings.timeoutMillis * 1_000_000

    private val handshake = TcpHandshake(settings.jobKey, id, window, hostId, HandshakeHost())

    private val connections = ArrayList<TcpConnection>()
    private var closed = false
    private var readyCount = 0
    private val readyAction = Consumer<SelectionKey> { onReady(it) }
    private val limitsFor: (TcpConnection) -> TcpFrameAdapter.Limits = { c ->
        TcpFrameAdapter.Limits { type ->
            if (c.established) TcpFrameDescriptor.payloadLimit(type, window) else HandshakeDescriptor.payloadLimit(type)
        }
    }

    var opened = 0
        private set

    var accepted = 0
        private set

    val size: Int
        get() = connections.size

    operator fun get(i: Int): TcpConnection = connections[i]

    fun establishedCount(): Int = connections.count { it.established }

    /** Handles every socket that is ready now, without blocking; returns how many were. */
    fun poll(): Int {
        readyCount = 0
        try {
            listener.select(readyAction)
        } catch (e: IOException) {
            log.log(Level.WARNING, "tcp endpoint $self: select failed: ${e.message}")
        }
        return readyCount
    }

    private fun onReady(key: SelectionKey) {
        readyCount++
        val a = key.attachment()
        if (a === TcpListener.SERVER) {
            acceptAll()
            return
        }
        val c = a as TcpConnection
        if (!key.isValid || c.state == TcpConnection.State.CLOSED) return
        try {
            val ops = key.readyOps()
            if (ops and SelectionKey.OP_CONNECT != 0) {
                finishConnect(c)
                if (c.state == TcpConnection.State.CLOSED) return
            }
            if (ops and SelectionKey.OP_WRITE != 0) writable(c)
            if (ops and SelectionKey.OP_READ != 0 && c.state != TcpConnection.State.CLOSED) {
                when (inbound.read(c)) {
                    TcpInbound.CORRUPT ->
                        lost(c, Errno.EIO, "sent a corrupt frame: ${c.adapter.error}; connection closed", Level.WARNING)
                    TcpInbound.END -> {
                        val truncated = c.adapter.truncation()
                        val level = if (truncated != null) Level.WARNING else Level.INFO
                        lost(c, Errno.ECONNRESET, truncated ?: "closed the connection", level)
                    }
                }
            }
        } catch (e: IOException) {
            lost(c, Errno.ECONNRESET, "reset the connection (${e.message})")
        } catch (e: CancelledKeyException) {
            // closed during this cycle
        }
    }

    private fun acceptAll() {
        for (i in 0 until ACCEPTS_PER_CYCLE) {
            val ch =
                try {
                    listener.accept() ?: return
                } catch (e: IOException) {
                    log.log(Level.WARNING, "tcp endpoint $self: accept failed: ${e.message}")
                    return
                }
            try {
                ch.configureBlocking(false)
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true)
                val c = newConnection(ch, outgoing = false, peer = null)
                c.key = listener.register(ch, SelectionKey.OP_READ, c)
                accepted++
            } catch (e: IOException) {
                runCatching { ch.close() }
            }
        }
    }

    private fun newConnection(ch: SocketChannel, outgoing: Boolean, peer: TcpPeer?): TcpConnection {
        val c = TcpConnection(ch, outgoing, peer, System.nanoTime(), limitsFor)
        c.handler =
            object : TcpFrameAdapter.Handler {
                override fun onHeader(a: TcpFrameAdapter): Int =
                    if (c.established) inbound.onHeader(c.peer!!, a) else handshake.onHeader(c, a)

                override fun onFrame(a: TcpFrameAdapter): Int =
                    when {
                        !c.established -> handshake.onFrame(c, a)
                        a.type == BYE -> {
                            lost(c, Errno.ECONNRESET, CLOSED_ITS_ENDPOINT)
                            STOP
                        }
                        else -> inbound.onFrame(c.peer!!, a)
                    }
            }
        connections += c
        return c
    }

    /** Opens the connection to [p] unless one exists, it is dead, or it is due to connect to us. */
    fun ensureConnection(p: TcpPeer) {
        if (p.conn != null || p.dead || closed) return
        val target = p.address ?: return
        if (p.awaitIncomingUntil != 0L && System.nanoTime() - p.awaitIncomingUntil < 0) return
        val ch =
            try {
                SocketChannel.open()
            } catch (e: IOException) {
                failPeer(p, Errno.EIO, "cannot be connected to: no socket to open (${e.message})")
                return
            }
        val c = newConnection(ch, outgoing = true, peer = p)
        c.remote = target.socket.toString()
        p.conn = c
        opened++
        try {
            ch.configureBlocking(false)
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true)
            if (ch.connect(target.socket)) {
                c.key = listener.register(ch, SelectionKey.OP_READ, c)
                handshake.start(c)
            } else {
                c.key = listener.register(ch, SelectionKey.OP_CONNECT, c)
            }
        } catch (e: Exception) {
            lost(c, Errno.ECONNREFUSED, "cannot be connected to at ${target.socket} (${e.message})")
        }
    }

    private fun finishConnect(c: TcpConnection) {
        try {
            if (!c.channel.finishConnect()) return
        } catch (e: IOException) {
            lost(
                c,
                Errno.ECONNREFUSED,
                "refused the connection at ${c.remote} (${e.message}): the endpoint is closed, or its process is gone",
            )
            return
        }
        c.key.interestOps(SelectionKey.OP_READ)
        handshake.start(c)
    }

    /** Writes [c]'s pending handshake frames, asking for OP_WRITE if the socket takes less. */
    fun flushHandshake(c: TcpConnection) {
        try {
            if (!c.flushHandshake()) c.key.interestOps(c.key.interestOps() or SelectionKey.OP_WRITE)
        } catch (e: IOException) {
            lost(c, Errno.ECONNRESET, "reset the connection during the handshake (${e.message})")
        }
    }

    private fun writable(c: TcpConnection) {
        if (!c.flushHandshake()) return
        c.key.interestOps(SelectionKey.OP_READ)
        val p = c.peer
        if (c.established && p != null) {
            p.out.blocked = false
            busy.mark(p)
        }
    }

    /** [c] is gone: close it, and if it was its peer's connection the peer is dead. Logged once, at [level]. */
    fun lost(c: TcpConnection, err: Int, why: String, level: Level = Level.INFO) {
        if (c.state == TcpConnection.State.CLOSED) return
        close(c)
        val p = c.peer
        if (p != null && p.conn === c) {
            p.conn = null
            failPeer(p, err, why, level)
        } else {
            // Not (or no longer) a peer's connection: a handshake that failed or lost a tie-break.
            log.log(
                if (level == Level.WARNING) level else Level.DEBUG,
                "tcp endpoint $self: closed connection $c: $why",
            )
        }
    }

    private fun close(c: TcpConnection) {
        c.close()
        connections.remove(c)
    }

    /** [p] is gone: its connection closes, and every operation that needs it completes in error ([TcpPeers.fail]). */
    fun failPeer(p: TcpPeer, err: Int, why: String, level: Level = Level.INFO) {
        if (p.dead) return
        p.conn?.let { close(it) }
        p.conn = null
        peers.fail(p, err, why, if (why == CLOSED_ITS_ENDPOINT) Level.DEBUG else level)
    }

    /** [c] is [p]'s connection now: credit flows both ways from here (none is lent before). */
    private fun establish(c: TcpConnection, p: TcpPeer) {
        c.peer = p
        c.state = TcpConnection.State.ESTABLISHED
        p.established(c, c.theirWindow)
        c.rxSeenAt = System.nanoTime()
        c.txSeenAt = c.rxSeenAt
        flushHandshake(c)
        busy.mark(p)
        p.lender.join()
    }

    /** Closes every connection (the transport said BYE on them first), the listening socket and the selector. */
    fun close() {
        closed = true
        for (c in connections) c.close()
        connections.clear()
        listener.close()
    }

    /** The endpoint's side of the handshake: the tie-break, and what a refusal or a failure means for the peer. */
    private inner class HandshakeHost : TcpHandshake.Host {
        override val name: String
            get() = self

        override fun accepted(c: TcpConnection): Int {
            val theirId = c.theirId
            if (theirId == id) {
                // This endpoint connecting to itself: the receiving side gets a peer record of its own.
                val p = peers.selfIncoming(id)
                if (p.conn != null) {
                    return handshake.reject(c, HandshakeDescriptor.REJECT_CONNECTED, "already connected to itself")
                }
                handshake.welcome(c)
                establish(c, p)
                return STOP
            }
            val p = peers.byId(theirId) ?: peers.add(theirId)
            if (peers.revivable(p, reconnects())) peers.revive(p) // a link's rail coming back
            if (p.dead) {
                return handshake.reject(
                    c,
                    HandshakeDescriptor.REJECT_DEAD,
                    "$self declared endpoint ${TcpAddress.idString(theirId)} dead: ${p.deadWhy}",
                )
            }
            val cur = p.conn
            if (cur != null) {
                if (!cur.outgoing || cur.established) {
                    return handshake.reject(
                        c,
                        HandshakeDescriptor.REJECT_CONNECTED,
                        "$self is already connected to endpoint ${TcpAddress.idString(theirId)}",
                    )
                }
                // Both connected at once: the connection opened by the smaller id stays.
                if (id < theirId) {
                    val why = "simultaneous connect: $self keeps its own connection"
                    return handshake.reject(c, HandshakeDescriptor.REJECT_DUPLICATE, why)
                }
                close(cur) // ours loses; the frames it would have carried wait in the peer's buffer
            }
            handshake.welcome(c)
            establish(c, p)
            return STOP
        }

        override fun welcomed(c: TcpConnection) = establish(c, c.peer!!)

        override fun refused(c: TcpConnection, reason: Int, text: String) {
            val p = c.peer!!
            if (reason != HandshakeDescriptor.REJECT_DUPLICATE) {
                lost(c, Errno.ECONNREFUSED, "refused the connection: $text")
                return
            }
            // The peer keeps the connection it opened to us: wait for it (and retry if it never comes).
            close(c)
            if (p.conn === c) {
                p.conn = null
                p.awaitIncomingUntil = System.nanoTime() + timeoutNanos
            }
        }

        override fun failed(c: TcpConnection, err: Int, why: String, level: Level) = lost(c, err, why, level)

        override fun close(c: TcpConnection) = this@TcpConnections.close(c)

        override fun flush(c: TcpConnection) = flushHandshake(c)
    }

    override fun toString(): String = "${connections.size} connections"

    internal companion object {
        val log: System.Logger = System.getLogger("braid.provider.tcp")

        const val CLOSED_ITS_ENDPOINT = "closed its endpoint"
        const val ACCEPTS_PER_CYCLE = 16
    }
}
