package braid.provider.tcp

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.Endpoint
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Info
import braid.core.RailCounters
import braid.core.OpFlags
import braid.core.RxEntry
import braid.provider.RailAv
import braid.provider.RmaPath
import braid.provider.Transport
import braid.provider.shm.PayloadPool
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
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEARTBEAT
import braid.provider.tcp.TcpFrameDescriptor.MAX_RMA_PAYLOAD
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.RMA
import braid.provider.tcp.TcpFrameDescriptor.RTS
import braid.provider.tcp.TcpFrameDescriptor.frameCost
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer
import java.io.IOException
import java.lang.System.Logger.Level
import java.net.InetSocketAddress
import java.net.StandardSocketOptions
import java.nio.channels.SelectionKey
import java.nio.channels.Selector
import java.nio.channels.ServerSocketChannel
import java.nio.channels.SocketChannel
import java.security.SecureRandom
import java.util.function.Consumer

/**
 * The tcp rail's part of one endpoint: a listening socket, one connection per peer, and the
 * protocol of [TcpFrameDescriptor] over it. Everything runs in [progress] (and in [tick], on
 * the endpoint's [TcpKeepalive] thread), under the domain lock, without blocking: a [Selector]
 * polled with `selectNow`, non-blocking channels, direct buffers, pooled descriptors.
 *
 * Connections: opened on first use (a send, or a receive directed at the peer) and kept for the
 * endpoint's life. The handshake ([TcpHandshake]) proves both sides hold the job key before
 * any data frame is read. When two endpoints connect to each other at once, the connection
 * opened by the smaller endpoint id is kept and the other refused (REJECT duplicate); frames
 * queue in the peer's outbound buffer, not in a connection, so per-peer order survives that.
 *
 * Messages: up to the eager size, one EAGER frame copied straight into the matched receive, or
 * held if none is posted yet. Larger ones are an RTS; once matched the receiver answers CTS and
 * the sender streams DATA frames, written from and read into the applications' memory
 * directly when it is a direct buffer. Nothing waits for a large unexpected message but its
 * header. Credit ([TcpFrameDescriptor]) bounds what each peer can make this endpoint hold.
 *
 * Failures: a corrupt or truncated frame, a reset, an end of stream, or silence past the
 * time-out ([TcpSettings]) closes that peer's connection and turns every operation waiting on
 * it into an error completion naming the peer; other peers are untouched.
 *
 * The transport writes completions only through the endpoint (`ep.rxComplete`, `ep.txComplete`,
 * …) and matches only through `ep.srx`, so it can run beside other rails under one endpoint.
 */
internal class TcpTransport(
    private val ep: Endpoint,
    private val info: Info,
    private val av: RailAv,
    bind: InetSocketAddress,
    private val hostId: Long,
    private val settings: TcpSettings,
) : Transport {
    /** This endpoint's id: random, non-zero, never reused. */
    val id: Long = newId()
    private val bufferSize = maxOf(TcpParams.MIN_BUFFER, settings.bufferSize)
    private val eagerSize = info.endpointAttr.eagerSize.coerceIn(0, bufferSize - HEADER_LENGTH)
    private val txSize = info.txAttr.size

    /** Credit this endpoint lends each sender: the configured window, less if few unexpected messages are allowed. */
    val window: Long = maxOf(MIN_WINDOW.toLong(), minOf(settings.window.toLong(), info.rxAttr.unexpectedLimit.toLong() * HEAD_COST))
    private val timeoutNanos = settings.timeoutMillis * 1_000_000
    private val heartbeatNanos = timeoutNanos / 4

    private val selector: Selector = Selector.open()
    private val server: ServerSocketChannel = listen(bind)
    private val listening = server.localAddress as InetSocketAddress
    override val address: ByteArray = TcpAddressDescriptor.encode(hostId, id, InetSocketAddress(bind.address, listening.port))
    private val self = TcpAddressDescriptor.parse(address).render()
    private val handshake = TcpHandshake(settings.jobKey, id, window, hostId, HandshakeHost())

    private val connections = ArrayList<TcpConnection>()
    private val peers = ArrayList<TcpPeer>()
    private val peersById = Long2ObjectHashMap<TcpPeer>()
    /** The receiving side of this endpoint's connection to itself, if it sends to itself. */
    private var selfIncoming: TcpPeer? = null
    private val byDest = Long2ObjectHashMap<TcpPeer>()
    private var destGeneration = -1L
    private var resolvedGeneration = -1L
    private val busy = ArrayList<TcpPeer>()
    private val txPool = ArrayDeque<TcpTxOp>()
    private val heldPool = ArrayDeque<TcpHeld>()
    private val inboundPool = ArrayDeque<TcpInbound>()
    private val payloads = PayloadPool()
    private val rma = TcpRma(ep, bufferSize, txSize, ::markBusy)
    private var readyCount = 0
    private var registered = false
    @Volatile private var closed = false

    private val keepalive = TcpKeepalive(this, TcpAddress.idString(id))
    private val readyAction = Consumer<SelectionKey> { onReady(it) }
    private val limitsFor: (TcpConnection) -> TcpFrameAdapter.Limits = { c -> TcpFrameAdapter.Limits { type -> maxPayload(c, type) } }
    private val directedWatcher: (Long) -> Unit = { addr -> watchDirected(addr) }

    // ## Statistics, for diagnostics and tests ##

    /** Bytes of unexpected eager messages held now, and the most ever held at once. */
    var heldBytes = 0L; private set
    var heldBytesMax = 0L; private set
    var connectionsOpened = 0; private set
    var connectionsAccepted = 0; private set
    /** Payload bytes read from sockets straight into application memory. */
    var bytesReadDirect = 0L; private set

    /** Bytes received so far into rendezvous receives not yet complete. */
    fun inflightBytes(): Long {
        var n = 0L
        for (p in peers) for (inb in p.inflight.values) n += inb.received
        return n
    }

    /** Frame bytes written into peers' outbound buffers and not yet to a socket. */
    fun unflushedBytes(): Long {
        var n = 0L
        for (p in peers) n += p.outTail - p.outHead
        return n
    }

    /** Live connections (any state), and established ones. */
    fun connectionCount(): Int = connections.size
    fun establishedCount(): Int = connections.count { it.established }

    override fun enable() {
        if (registered) return
        server.register(selector, SelectionKey.OP_ACCEPT, SERVER)
        registered = true
        keepalive.start()
    }

    private fun listen(bind: InetSocketAddress): ServerSocketChannel {
        val ch = ServerSocketChannel.open()
        try {
            ch.configureBlocking(false)
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true)
            ch.bind(bind, 256)
            return ch
        } catch (e: IOException) {
            runCatching { ch.close() }
            runCatching { selector.close() }
            throw FabricException(Errno.EADDRNOTAVAIL, "tcp endpoint on '${ep.domain.name}': cannot listen on $bind (${e.message}); set BRAID_TCP_ADDR to a free address and port, or port 0", e)
        }
    }

    // ## Duty cycle ##

    override fun progress(): Int {
        if (closed || !registered) return 0
        readyCount = 0
        try {
            selector.selectNow(readyAction)
        } catch (e: IOException) {
            log.log(Level.WARNING, "tcp endpoint $self: select failed: ${e.message}")
        }
        var work = readyCount
        if (av.bound && av.generation != resolvedGeneration) {
            // The AV changed: messages held from senders it did not know may be theirs now.
            resolvedGeneration = av.generation
            for (j in 0 until peers.size) resolve(peers[j])
        }
        var i = 0
        while (i < busy.size) {
            val p = busy[i]
            work += pump(p)
            if (idle(p)) {
                p.busy = false
                val last = busy.size - 1
                busy[i] = busy[last]
                busy.removeAt(last)
            } else {
                i++
            }
        }
        return work
    }

    private fun onReady(key: SelectionKey) {
        readyCount++
        val a = key.attachment()
        if (a === SERVER) { acceptAll(); return }
        val c = a as TcpConnection
        if (!key.isValid || c.state == TcpConnection.State.CLOSED) return
        try {
            val ops = key.readyOps()
            if (ops and SelectionKey.OP_CONNECT != 0) {
                finishConnect(c)
                if (c.state == TcpConnection.State.CLOSED) return
            }
            if (ops and SelectionKey.OP_WRITE != 0) writable(c)
            if (ops and SelectionKey.OP_READ != 0 && c.state != TcpConnection.State.CLOSED) read(c)
        } catch (e: IOException) {
            lost(c, Errno.ECONNRESET, "reset the connection (${e.message})")
        } catch (e: java.nio.channels.CancelledKeyException) {
            // closed during this cycle
        }
    }

    /**
     * The keepalive thread's cycle: reads what arrived (so a peer is not judged silent because
     * the application did not drive progress), fails peers silent past the time-out, sends
     * heartbeats on idle connections, and watches peers that directed receives wait for.
     * Returns the nanoseconds until it wants to run again.
     */
    fun tick(): Long {
        // Completions here may make deferred work due: it fires once this cycle is over.
        synchronized(ep.domain.lock) { ep.domain.deferredWork.holding {
            if (closed || !registered) return heartbeatNanos
            progress()
            val now = System.nanoTime()
            var i = connections.size - 1
            while (i >= 0) {
                if (i < connections.size) checkConnection(connections[i], now)
                i--
            }
            for (j in 0 until peers.size) {
                val p = peers[j]
                if (p.conn == null && !p.dead && p.awaitIncomingUntil != 0L && now - p.awaitIncomingUntil >= 0) {
                    p.awaitIncomingUntil = 0
                    if (p.backlog.isNotEmpty() || p.unflushed) ensureConnection(p)
                }
            }
            if (ep.srx.postedCount > 0) ep.srx.forEachDirectedSource(directedWatcher)
            progress()
        } }
        // Like any thread that drives progress: fire what completed, now that the lock is released.
        ep.domain.hub.dispatchReady()
        return maxOf(1_000_000L, heartbeatNanos / 2)
    }

    private fun checkConnection(c: TcpConnection, now: Long) {
        if (!c.established) {
            if (now - c.openedAt > timeoutNanos) {
                lost(c, if (c.outgoing) Errno.EHOSTUNREACH else Errno.ETIMEDOUT,
                    "did not complete the connection handshake within ${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS)")
            }
            return
        }
        if (c.bytesReceived != c.rxSeenBytes) {
            c.rxSeenBytes = c.bytesReceived
            c.rxSeenAt = now
        } else if (now - c.rxSeenAt > timeoutNanos) {
            lost(c, Errno.EHOSTDOWN, "sent nothing for ${(now - c.rxSeenAt) / 1_000_000} ms, past the time-out of ${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS): stopped, hung or unreachable")
            return
        }
        val p = c.peer ?: return
        if (p.bytesSent != c.txSeenBytes) {
            c.txSeenBytes = p.bytesSent
            c.txSeenAt = now
        } else if (now - c.txSeenAt >= heartbeatNanos) {
            c.txSeenAt = now
            if (p.ensureRoom(HEADER_LENGTH)) p.putHeader(HEARTBEAT, 0, 0, 0, 0, 0, 0)
            markBusy(p)
        }
    }

    private fun watchDirected(addr: Long) {
        val p = peerFor(addr) ?: return
        if (p.dead) failDirected(p) else if (p.conn == null) ensureConnection(p)
    }

    // ## Connections ##

    private fun acceptAll() {
        for (i in 0 until ACCEPTS_PER_CYCLE) {
            val ch = try {
                server.accept() ?: return
            } catch (e: IOException) {
                log.log(Level.WARNING, "tcp endpoint $self: accept failed: ${e.message}")
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

    private fun newConnection(ch: SocketChannel, outgoing: Boolean, peer: TcpPeer?): TcpConnection {
        val c = TcpConnection(ch, outgoing, peer, System.nanoTime(), limitsFor)
        c.handler = object : TcpFrameAdapter.Handler {
            override fun onHeader(a: TcpFrameAdapter): Int = this@TcpTransport.onHeader(c, a)
            override fun onFrame(a: TcpFrameAdapter): Int = this@TcpTransport.onFrame(c, a)
        }
        connections += c
        return c
    }

    /** Opens the connection to [p] unless one exists, it is dead, or it is due to connect to us. */
    private fun ensureConnection(p: TcpPeer) {
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

    private fun finishConnect(c: TcpConnection) {
        try {
            if (!c.channel.finishConnect()) return
        } catch (e: IOException) {
            lost(c, Errno.ECONNREFUSED, "refused the connection at ${c.remote} (${e.message}): the endpoint is closed, or its process is gone")
            return
        }
        c.key.interestOps(SelectionKey.OP_READ)
        handshake.start(c)
    }

    private fun flushHandshake(c: TcpConnection) {
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
            p.blocked = false
            markBusy(p)
        }
    }

    private fun read(c: TcpConnection) {
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
            if (inb != null && inb.directMode && c.adapter.sinkRemaining >= DIRECT_MIN && c.established) {
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

    private fun endOfStream(c: TcpConnection) {
        val why = if (c.adapter.midFrame) {
            "closed the connection in the middle of a ${c.adapter.describePosition()}: truncated frame"
        } else {
            "closed the connection"
        }
        lost(c, Errno.ECONNRESET, why, if (c.adapter.midFrame) Level.WARNING else Level.INFO)
    }

    private fun corrupt(c: TcpConnection) {
        lost(c, Errno.EIO, "sent a corrupt frame: ${c.adapter.error}; connection closed", Level.WARNING)
    }

    /** [c] is gone: close it, and if it was its peer's connection the peer is dead. Logged once, at [level]. */
    private fun lost(c: TcpConnection, err: Int, why: String, level: Level = Level.INFO) {
        if (c.state == TcpConnection.State.CLOSED) return
        closeConnection(c)
        val p = c.peer
        if (p != null && p.conn === c) {
            p.conn = null
            failPeer(p, err, why, level)
        } else {
            // Not (or no longer) a peer's connection: a handshake that failed or lost a tie-break.
            log.log(if (level == Level.WARNING) level else Level.DEBUG, "tcp endpoint $self: closed connection $c: $why")
        }
    }

    private fun closeConnection(c: TcpConnection) {
        c.close()
        connections.remove(c)
    }

    // ## Handshake (the protocol is in TcpHandshake) ##

    private fun maxPayload(c: TcpConnection, type: Int): Int {
        if (!c.established) return HandshakeDescriptor.payloadLimit(type)
        return when (type) {
            EAGER -> (window - HEAD_COST).toInt()
            DATA -> MAX_DATA_PAYLOAD
            RTS, CTS, ACK, DISCARDED, CREDIT, HEARTBEAT, BYE -> 0
            RMA -> MAX_RMA_PAYLOAD
            else -> -1
        }
    }

    /** The endpoint's side of the handshake: the tie-break, and what a refusal or a failure means for the peer. */
    private inner class HandshakeHost : TcpHandshake.Host {
        override val name: String get() = self

        override fun accepted(c: TcpConnection): Int {
            val theirId = c.theirId
            if (theirId == id) {
                // This endpoint connecting to itself: the receiving side gets a peer record of its own.
                val p = selfIncoming ?: TcpPeer(id, peers.size, bufferSize).also { selfIncoming = it; peers += it }
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

        override fun welcomed(c: TcpConnection) = establish(c, c.peer!!)

        override fun refused(c: TcpConnection, reason: Int, text: String) {
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

        override fun failed(c: TcpConnection, err: Int, why: String, level: Level) = lost(c, err, why, level)

        override fun close(c: TcpConnection) = closeConnection(c)

        override fun flush(c: TcpConnection) = flushHandshake(c)
    }

    private fun establish(c: TcpConnection, p: TcpPeer) {
        c.peer = p
        c.state = TcpConnection.State.ESTABLISHED
        p.conn = c
        p.awaitIncomingUntil = 0
        p.credit += c.theirWindow - MIN_WINDOW
        p.theirWindow = c.theirWindow
        c.rxSeenAt = System.nanoTime()
        c.txSeenAt = c.rxSeenAt
        flushHandshake(c)
        markBusy(p)
    }

    // ## Send side ##

    override val counters: RailCounters = RailCounters("tcp")

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val rc = startSend(buffer, dest, tag, data, flags, context)
        if (rc == 0) counters.sent(buffer.capacity())
        return rc
    }

    private fun startSend(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val p = peerFor(dest) ?: return -Errno.EINVAL
        if (p.dead) return refusal(p)
        if (p.conn == null) {
            ensureConnection(p)
            if (p.dead) return refusal(p)
        }
        val inject = flags and OpFlags.INJECT != 0L
        val length = buffer.capacity()
        if (p.backlog.isEmpty() && (inject || p.established)) {
            if (writeHead(p, buffer, length, tag, data, flags, context, null)) {
                markBusy(p)
                writeNow(p)
                return 0
            }
        }
        if (inject) return -Errno.EAGAIN
        if (p.backlog.size >= txSize) return -Errno.EAGAIN
        p.backlog.addLast(txOp(buffer, length, tag, data, flags, context))
        markBusy(p)
        return 0
    }

    /**
     * Writes what [p] has queued to its socket now, as libfabric's tcp provider does, rather
     * than at the next progress call: a process that posts and then computes (or blocks
     * elsewhere) must not hold its operation back, and a ping-pong saves a poll per hop.
     */
    private fun writeNow(p: TcpPeer) {
        if (p.busy && !p.blocked) pump(p)
    }

    /**
     * Writes a message's head frame into [p]'s buffer if credit and room allow: EAGER when it is
     * small enough and the credit covers its bytes, else an RTS (never for inject). Returns
     * whether it was written; [queued] is the op when the send waited in the backlog.
     */
    private fun writeHead(p: TcpPeer, buffer: DirectBuffer, length: Int, tag: Long, data: Long, flags: Long, context: Any?, queued: TcpTxOp?): Boolean {
        val inject = flags and OpFlags.INJECT != 0L
        val ack = !inject && flags and OpFlags.DELIVERY_COMPLETE != 0L
        val wire = TcpFrameDescriptor.wireFlags(flags and OpFlags.TAGGED != 0L, flags and OpFlags.REMOTE_CQ_DATA != 0L, ack)
        val eagerCost = frameCost(length)
        if (length <= eagerLimit(p) && p.credit >= eagerCost && p.ensureRoom(HEADER_LENGTH + length)) {
            val msgId = p.nextMsgId++
            p.putHeader(EAGER, wire, length, msgId, tag, data, length.toLong())
            if (length > 0) {
                p.outView.putBytes(p.outTail, buffer, 0, length)
                p.outTail += length
            }
            p.credit -= eagerCost
            if (ack) {
                val op = queued ?: txOp(buffer, length, tag, data, flags, context)
                op.msgId = msgId
                p.waitingAck.put(msgId, op)
            } else {
                ep.txComplete(context, flags, length.toLong(), tag)
                if (queued != null) releaseOp(queued)
            }
            return true
        }
        if (inject) return false
        if (p.credit >= frameCost(0) && p.ensureRoom(HEADER_LENGTH)) {
            val op = queued ?: txOp(buffer, length, tag, data, flags, context)
            val msgId = p.nextMsgId++
            op.msgId = msgId
            p.putHeader(RTS, wire, 0, msgId, tag, data, length.toLong())
            p.credit -= frameCost(0)
            p.waitingCts.put(msgId, op)
            return true
        }
        return false
    }

    // ## RMA and atomics: RMA frames, handled in TcpRma ##

    override val rmaCaps: Long get() = Caps.RMA_ALL

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = rma.engine.maxAtomicCount(type, form)

    override fun write(buffer: DirectBuffer, dest: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int =
        rmaPath(dest)?.let { posted(it, rma.engine.write(it, dest, buffer, remoteOffset, key, flags, context)) } ?: rmaRefusal

    override fun read(buffer: MutableDirectBuffer, src: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int =
        rmaPath(src)?.let { posted(it, rma.engine.read(it, src, buffer, remoteOffset, key, flags, context)) } ?: rmaRefusal

    override fun atomic(
        operand: DirectBuffer, compare: DirectBuffer?, result: MutableDirectBuffer?, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, count: Int, flags: Long, context: Any?,
    ): Int = rmaPath(dest)?.let { posted(it, rma.engine.atomic(it, dest, operand, compare, result, remoteOffset, key, type, op, count, flags, context)) } ?: rmaRefusal

    private var rmaRefusal = 0

    /** [dest]'s RMA path, connecting if need be; null (and [rmaRefusal] set) if it cannot be reached. */
    private fun rmaPath(dest: Long): RmaPath? {
        val p = peerFor(dest) ?: run { rmaRefusal = -Errno.EINVAL; return null }
        if (p.conn == null && !p.dead) ensureConnection(p)
        if (p.dead) { rmaRefusal = refusal(p); return null }
        return rma.path(p)
    }

    /** An RMA or atomic request just posted on [path] ([rc] 0) goes to the socket now, as a send does. */
    private fun posted(path: RmaPath, rc: Int): Int {
        if (rc == 0) writeNow(path.peer as TcpPeer)
        return rc
    }

    /**
     * What a send to a dead peer returns: `-ECONNREFUSED` or `-EACCES` (wrong job key) if it never
     * let us in, else `-EHOSTDOWN`, as shm says; the cause is in the error completions and the
     * PEER_DOWN event that reported its death.
     */
    private fun refusal(p: TcpPeer): Int =
        if (p.deadErr == Errno.ECONNREFUSED || p.deadErr == Errno.EACCES) -p.deadErr else -Errno.EHOSTDOWN

    private fun eagerLimit(p: TcpPeer): Int = minOf(eagerSize.toLong(), p.theirWindow / 2 - HEAD_COST).toInt()

    /** Writes, then flushes, whatever [p] has ready: control frames, queued heads, DATA, credit. */
    private fun pump(p: TcpPeer): Int {
        val c = p.conn
        if (p.dead || c == null || !c.established) return 0
        var work = 0
        var rounds = 0
        while (true) {
            while (!p.ctrl.isEmpty() && p.ensureRoom(HEADER_LENGTH)) {
                p.putHeader(p.ctrl.first(0).toInt(), 0, 0, p.ctrl.first(1), 0, 0, p.ctrl.first(2))
                p.ctrl.removeFirst()
                work++
            }
            if (!rma.idle(p)) work += rma.pump(p)
            while (p.backlog.isNotEmpty()) {
                val op = p.backlog.first()
                if (!writeHead(p, op.buffer, op.length, op.tag, op.data, op.flags, op.context, op)) break
                p.backlog.removeFirst()
                work++
            }
            while (p.streaming.isNotEmpty()) {
                val op = p.streaming.first()
                if (!stream(p, op)) break
                p.streaming.removeFirst()
                finishStream(p, op)
                work++
            }
            if (needCreditFrame(p) && p.ensureRoom(HEADER_LENGTH)) p.putHeader(CREDIT, 0, 0, 0, 0, 0, 0)
            if (!p.unflushed || p.blocked) return work
            if (c.hs.position() > 0) {
                flushHandshake(c) // a WELCOME still going out precedes every data frame
                if (c.hs.position() > 0 || c.state == TcpConnection.State.CLOSED) return work
            }
            val flushed = try {
                p.flush(c.channel)
            } catch (e: IOException) {
                lost(c, Errno.ECONNRESET, "reset the connection (${e.message})")
                return work
            }
            work++
            if (!flushed) {
                c.key.interestOps(SelectionKey.OP_READ or SelectionKey.OP_WRITE)
                return work
            }
            if (++rounds >= PUMP_ROUNDS || (p.streaming.isEmpty() && p.backlog.isEmpty() && p.ctrl.isEmpty())) return work
        }
    }

    private fun idle(p: TcpPeer): Boolean =
        p.dead || !p.established || (!p.unflushed && p.ctrl.isEmpty() && p.backlog.isEmpty() && p.streaming.isEmpty() && !needCreditFrame(p) && rma.idle(p))

    /** Puts the next part of a CTS'd message in the stream; true once all accepted bytes have gone. */
    private fun stream(p: TcpPeer, op: TcpTxOp): Boolean {
        if (op.directMode) {
            if (p.direct != null) return false // the previous chunk is still being written
            if (op.sent == op.accepted) return true
            if (!p.ensureRoom(HEADER_LENGTH)) return false
            val n = minOf(DIRECT_CHUNK.toLong(), op.accepted - op.sent).toInt()
            p.putHeader(DATA, 0, n, op.msgId, 0, 0, op.sent)
            val v = op.view!!
            val from = op.viewBase + op.sent.toInt()
            v.limit(from + n).position(from)
            p.directMark = p.outTail
            p.direct = v
            op.sent += n
            return false
        }
        while (op.sent < op.accepted) {
            val want = minOf(COPY_CHUNK.toLong(), op.accepted - op.sent).toInt()
            if (!p.ensureRoom(HEADER_LENGTH + minOf(want, MIN_COPY_CHUNK, p.out.capacity() - HEADER_LENGTH))) return false
            val n = minOf(want, p.out.capacity() - p.outTail - HEADER_LENGTH)
            p.putHeader(DATA, 0, n, op.msgId, 0, 0, op.sent)
            p.outView.putBytes(p.outTail, op.buffer, op.sent.toInt(), n)
            p.outTail += n
            op.sent += n
        }
        return true
    }

    private fun finishStream(p: TcpPeer, op: TcpTxOp) {
        if (op.flags and OpFlags.DELIVERY_COMPLETE != 0L) p.waitingAck.put(op.msgId, op) else completeOp(op)
    }

    /** Whether to send credit back now rather than wait for a frame to carry it. */
    private fun needCreditFrame(p: TcpPeer): Boolean =
        p.pendingReturn > 0 && (p.pendingReturn >= window / 4 || window - p.rxOutstanding - p.pendingReturn < window / 2)

    private fun markBusy(p: TcpPeer) {
        if (p.busy) return
        p.busy = true
        busy += p
    }

    private fun txOp(buffer: DirectBuffer, length: Int, tag: Long, data: Long, flags: Long, context: Any?): TcpTxOp {
        val op = txPool.removeLastOrNull() ?: TcpTxOp()
        op.buffer.wrap(buffer, 0, length)
        op.length = length; op.tag = tag; op.data = data; op.flags = flags; op.context = context
        op.msgId = 0; op.accepted = 0; op.sent = 0; op.directMode = false
        return op
    }

    private fun releaseOp(op: TcpTxOp) {
        op.context = null
        op.buffer.wrap(0L, 0)
        txPool.addLast(op)
    }

    private fun completeOp(op: TcpTxOp) {
        ep.txComplete(op.context, op.flags, op.length.toLong(), op.tag)
        releaseOp(op)
    }

    /** Whether [op]'s bytes can go to the socket straight from the sender's (direct) memory. */
    private fun directView(op: TcpTxOp): Boolean {
        val bb = op.buffer.byteBuffer() ?: return false
        if (!bb.isDirect || op.accepted < DIRECT_MIN) return false
        if (op.viewSource !== bb) { op.view = bb.duplicate(); op.viewSource = bb }
        op.viewBase = op.buffer.wrapAdjustment()
        return true
    }

    // ## Receive side ##

    private fun onHeader(c: TcpConnection, a: TcpFrameAdapter): Int {
        if (!c.established) return handshake.onHeader(c, a)
        val p = c.peer!!
        if (a.credit != 0L) {
            p.credit += a.credit
            if (p.credit > p.theirWindow) return a.fail("${a.typeName()} returned ${a.credit} bytes of credit, more than was lent (window ${p.theirWindow})")
            if (p.backlog.isNotEmpty()) markBusy(p)
        }
        return when (a.type) {
            EAGER -> onEagerHeader(p, a)
            DATA -> onDataHeader(p, a)
            RMA -> rma.onHeader(p, a)
            else -> CONTINUE
        }
    }

    private fun onFrame(c: TcpConnection, a: TcpFrameAdapter): Int {
        if (!c.established) return handshake.onFrame(c, a)
        val p = c.peer!!
        return when (a.type) {
            EAGER -> onEagerFrame(p, a)
            RTS -> onRts(p, a)
            CTS -> onCts(p, a)
            DATA -> onDataFrame(p, a)
            ACK -> {
                val op = p.waitingAck.remove(a.msgId) ?: return a.fail("ACK for message ${a.msgId}, which waits for none")
                completeOp(op)
                CONTINUE
            }
            DISCARDED -> {
                val op = p.waitingCts.remove(a.msgId) ?: p.waitingAck.remove(a.msgId)
                    ?: return a.fail("DISCARDED for message ${a.msgId}, which is not outstanding")
                completeOp(op)
                CONTINUE
            }
            CREDIT, HEARTBEAT -> CONTINUE
            RMA -> rma.onFrame(p, a)
            BYE -> {
                lost(c, Errno.ECONNRESET, CLOSED_ITS_ENDPOINT)
                STOP
            }
            else -> a.fail("${a.typeName()} frame after the handshake")
        }
    }

    /** Checks a message head's sequence and credit; returns null if fine, else the failure. */
    private fun admit(p: TcpPeer, a: TcpFrameAdapter, cost: Long): String? {
        if (a.msgId != p.rxNextId) return "${a.typeName()} message id ${a.msgId} out of sequence (expected ${p.rxNextId})"
        if (p.rxOutstanding + cost > window) return "${a.typeName()} of ${a.value} bytes past the credit lent (${p.rxOutstanding} of $window bytes in use)"
        p.rxNextId++
        p.rxOutstanding += cost
        return null
    }

    private fun entryFor(p: TcpPeer, a: TcpFrameAdapter, size: Long): RxEntry {
        resolve(p)
        val e = if (a.flags and FLAG_TAGGED != 0) ep.srx.getTag(p.fiAddr, a.tag, size) else ep.srx.getMsg(p.fiAddr, size)
        if (a.flags and FLAG_DATA != 0) {
            e.data = a.data
            e.flags = e.flags or OpFlags.REMOTE_CQ_DATA
        }
        return e
    }

    private fun onEagerHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        val len = a.payloadLength
        if (a.value != len.toLong()) return a.fail("EAGER frame of $len payload bytes for a message of ${a.value}")
        admit(p, a, frameCost(len))?.let { return a.fail(it) }
        counters.received(len.toLong())
        val e = entryFor(p, a, len.toLong())
        if (ep.srx.isMatched(e)) {
            p.rxEntry = e
            a.sinkTo(e.buffer, 0, minOf(len, e.buffer.capacity()))
        } else {
            // Hold the bytes; match again once they are all here (a receive may be posted meanwhile).
            ep.srx.freeEntry(e)
            val bytes = payloads.acquire(len)
            p.rxBytes = bytes
            a.sinkTo(bytes, 0, len)
        }
        return CONTINUE
    }

    private fun onEagerFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
        val len = a.payloadLength
        val cost = frameCost(len)
        val wantAck = a.flags and FLAG_ACK != 0
        val matched = p.rxEntry
        if (matched != null) {
            p.rxEntry = null
            if (wantAck) ctrl(p, ACK, a.msgId, 0)
            returnCredit(p, cost)
            ep.rxComplete(matched, len.toLong())
            return CONTINUE
        }
        val bytes = p.rxBytes!!
        p.rxBytes = null
        val e = entryFor(p, a, len.toLong())
        if (ep.srx.isMatched(e)) {
            val n = minOf(len, e.buffer.capacity())
            if (n > 0) e.buffer.putBytes(0, bytes, 0, n)
            payloads.release(bytes)
            if (wantAck) ctrl(p, ACK, a.msgId, 0)
            returnCredit(p, cost)
            ep.rxComplete(e, len.toLong())
        } else {
            hold(p, e, bytes, a.msgId, false, wantAck, cost)
        }
        return CONTINUE
    }

    private fun onRts(p: TcpPeer, a: TcpFrameAdapter): Int {
        if (a.value < 0 || a.value > Int.MAX_VALUE) return a.fail("RTS for a message of ${a.value} bytes")
        val cost = frameCost(0)
        admit(p, a, cost)?.let { return a.fail(it) }
        counters.received(a.value)
        val wantAck = a.flags and FLAG_ACK != 0
        val e = entryFor(p, a, a.value)
        if (ep.srx.isMatched(e)) {
            returnCredit(p, cost)
            startRendezvous(p, e, a.msgId, wantAck)
        } else {
            hold(p, e, null, a.msgId, true, wantAck, cost)
        }
        return CONTINUE
    }

    private fun hold(p: TcpPeer, e: RxEntry, bytes: UnsafeBuffer?, msgId: Long, rendezvous: Boolean, wantAck: Boolean, cost: Long) {
        val h = heldPool.removeLastOrNull() ?: TcpHeld()
        h.peer = p; h.bytes = bytes; h.msgId = msgId; h.rendezvous = rendezvous; h.wantAck = wantAck; h.cost = cost
        if (bytes != null) {
            heldBytes += bytes.capacity()
            if (heldBytes > heldBytesMax) heldBytesMax = heldBytes
        }
        e.peerContext = h
        e.peerSource = p.index.toLong()
        if (e.tagged) ep.srx.queueTag(e, this) else ep.srx.queueMsg(e, this)
    }

    /** A receive matched an RTS: ask for the bytes that fit. */
    private fun startRendezvous(p: TcpPeer, e: RxEntry, msgId: Long, wantAck: Boolean) {
        val accept = minOf(e.size, e.buffer.capacity().toLong())
        ctrl(p, CTS, msgId, accept)
        if (accept == 0L) {
            if (wantAck) ctrl(p, ACK, msgId, 0)
            ep.rxComplete(e, e.size)
            return
        }
        val inb = inboundPool.removeLastOrNull() ?: TcpInbound()
        inb.entry = e; inb.expected = accept; inb.received = 0; inb.wantAck = wantAck
        val bb = e.buffer.byteBuffer()
        inb.directMode = bb != null && bb.isDirect && accept >= DIRECT_MIN
        if (inb.directMode) {
            p.directPending++
            if (inb.viewSource !== bb) { inb.view = bb!!.duplicate(); inb.viewSource = bb }
            inb.viewBase = e.buffer.wrapAdjustment()
        }
        p.inflight.put(msgId, inb)
    }

    private fun onCts(p: TcpPeer, a: TcpFrameAdapter): Int {
        val op = p.waitingCts.remove(a.msgId) ?: return a.fail("CTS for message ${a.msgId}, which is not waiting for one")
        if (a.value < 0 || a.value > op.length) {
            p.waitingCts.put(a.msgId, op) // failed with the peer below
            return a.fail("CTS accepting ${a.value} bytes of a ${op.length}-byte message")
        }
        op.accepted = a.value
        op.sent = 0
        if (op.accepted == 0L) {
            finishStream(p, op)
        } else {
            op.directMode = directView(op)
            p.streaming.addLast(op)
            markBusy(p)
        }
        return CONTINUE
    }

    private fun onDataHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        val inb = p.inflight.get(a.msgId) ?: return a.fail("DATA for message ${a.msgId}, which no receive is waiting for")
        if (a.value != inb.received) return a.fail("DATA at offset ${a.value} of message ${a.msgId}, expected ${inb.received}")
        if (inb.received + a.payloadLength > inb.expected) return a.fail("DATA past the ${inb.expected} bytes accepted for message ${a.msgId}")
        p.rxInbound = inb
        a.sinkTo(inb.entry!!.buffer, inb.received.toInt(), a.payloadLength)
        return CONTINUE
    }

    private fun onDataFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
        val inb = p.rxInbound!!
        p.rxInbound = null
        inb.received += a.payloadLength
        if (inb.received == inb.expected) {
            p.inflight.remove(a.msgId)
            if (inb.directMode) p.directPending--
            val e = inb.entry!!
            inb.entry = null
            inboundPool.addLast(inb)
            if (inb.wantAck) ctrl(p, ACK, a.msgId, 0)
            ep.rxComplete(e, e.size)
        }
        return CONTINUE
    }

    /** Queues a control frame to [p]. */
    private fun ctrl(p: TcpPeer, type: Int, msgId: Long, value: Long) {
        if (p.dead) return
        if (p.ctrl.isEmpty() && p.ensureRoom(HEADER_LENGTH)) p.putHeader(type, 0, 0, msgId, 0, 0, value)
        else p.ctrl.add(type.toLong(), msgId, value)
        markBusy(p)
    }

    private fun returnCredit(p: TcpPeer, cost: Long) {
        if (p.dead) return
        p.rxOutstanding -= cost
        p.pendingReturn += cost
        if (needCreditFrame(p)) markBusy(p)
    }

    /** Caches [p]'s fabric address; when it first becomes known, re-keys what it sent before. */
    private fun resolve(p: TcpPeer) {
        if (!av.bound) return
        val generation = av.generation
        if (p.avGeneration == generation) return
        p.avGeneration = generation
        val before = p.fiAddr
        p.fiAddr = av.epAddr(p.key)
        if (p.address == null && p.fiAddr != FiAddr.NOTAVAIL) p.address = av.query(p.fiAddr) as? TcpAddress
        if (before == FiAddr.NOTAVAIL && p.fiAddr != FiAddr.NOTAVAIL) {
            val addr = p.fiAddr
            ep.srx.foreachUnspecAddr { e -> if ((e.peerContext as? TcpHeld)?.peer === p) addr else FiAddr.NOTAVAIL }
        }
    }

    // ## Peer operations of the shared receive context ##

    override fun startMsg(entry: RxEntry) = start(entry)
    override fun startTag(entry: RxEntry) = start(entry)
    override fun discardMsg(entry: RxEntry) = discard(entry)
    override fun discardTag(entry: RxEntry) = discard(entry)

    private fun start(e: RxEntry) {
        val h = e.peerContext as TcpHeld
        val p = h.peer!!
        e.peerContext = null
        val bytes = h.bytes
        if (bytes != null) {
            val n = minOf(e.size, e.buffer.capacity().toLong()).toInt()
            if (n > 0) e.buffer.putBytes(0, bytes, 0, n)
            heldBytes -= bytes.capacity()
            payloads.release(bytes)
            if (h.wantAck) ctrl(p, ACK, h.msgId, 0)
            returnCredit(p, h.cost)
            ep.rxComplete(e, e.size)
        } else if (p.dead) {
            ep.rxError(e.context, recvFlags(e), 0, e.data, e.tag, 0, p.deadErr, e.addr,
                "tcp: peer $p ${p.deadWhy} before sending the ${e.size} bytes of this message")
            ep.srx.freeEntry(e)
        } else {
            returnCredit(p, h.cost)
            startRendezvous(p, e, h.msgId, h.wantAck)
        }
        releaseHeld(h)
    }

    private fun discard(e: RxEntry) {
        val h = e.peerContext as TcpHeld
        val p = h.peer!!
        e.peerContext = null
        val bytes = h.bytes
        if (bytes != null) {
            heldBytes -= bytes.capacity()
            payloads.release(bytes)
            if (h.wantAck) ctrl(p, ACK, h.msgId, 0)
        } else {
            ctrl(p, DISCARDED, h.msgId, 0)
        }
        returnCredit(p, h.cost)
        ep.srx.freeEntry(e)
        releaseHeld(h)
    }

    private fun releaseHeld(h: TcpHeld) {
        h.peer = null; h.bytes = null
        heldPool.addLast(h)
    }

    // ## Peers and failure ##

    private fun newPeer(peerId: Long): TcpPeer {
        val p = TcpPeer(peerId, peers.size, bufferSize)
        peers += p
        peersById.put(peerId, p)
        return p
    }

    /** The peer [dest] names in the AV, or null if it is not a tcp address there. */
    private fun peerFor(dest: Long): TcpPeer? {
        if (!av.bound) return null
        if (av.generation != destGeneration) {
            byDest.clear()
            destGeneration = av.generation
        }
        val cached = byDest.get(dest)
        if (cached != null) return cached
        val a = av.query(dest) as? TcpAddress ?: return null
        val p = peersById.get(a.endpointId) ?: newPeer(a.endpointId)
        if (p.address == null) p.address = a
        byDest.put(dest, p)
        return p
    }

    /** [p] is gone: every operation that needs it completes in error, naming it and why. */
    private fun failPeer(p: TcpPeer, err: Int, why: String, level: Level = Level.INFO) {
        if (p.dead) return
        p.dead = true
        p.deadErr = err
        p.deadWhy = why
        p.conn?.let { closeConnection(it) }
        p.conn = null
        resolve(p)
        val msg = "tcp: peer $p $why"
        log.log(if (why == CLOSED_ITS_ENDPOINT) Level.DEBUG else level, "tcp endpoint $self: $msg")
        for (op in p.backlog) failOp(op, err, msg)
        for (op in p.streaming) failOp(op, err, msg)
        for (op in p.waitingCts.values) failOp(op, err, msg)
        for (op in p.waitingAck.values) failOp(op, err, msg)
        p.backlog.clear(); p.streaming.clear(); p.waitingCts.clear(); p.waitingAck.clear()
        rma.peerFailed(p, err, msg)
        p.discardOutbound()
        p.rxEntry?.let { e ->
            ep.rxError(e.context, recvFlags(e), 0, e.data, e.tag, 0, err, e.addr, "$msg in the middle of this message")
            ep.srx.freeEntry(e)
        }
        p.rxEntry = null
        p.rxBytes?.let { payloads.release(it) }
        p.rxBytes = null
        p.rxInbound = null
        for (inb in p.inflight.values) {
            val e = inb.entry!!
            ep.rxError(e.context, recvFlags(e), inb.received, e.data, e.tag, 0, err, e.addr,
                "$msg mid-transfer: ${inb.received} of ${inb.expected} bytes received")
            ep.srx.freeEntry(e)
            inb.entry = null
            inboundPool.addLast(inb)
        }
        p.inflight.clear()
        p.directPending = 0
        failDirected(p)
        ep.peerDown(p.fiAddr, msg)
    }

    private fun failOp(op: TcpTxOp, err: Int, msg: String) {
        ep.txError(op.context, op.flags, op.length.toLong(), op.tag, err,
            "$msg; send of ${op.length} bytes (tag 0x${java.lang.Long.toHexString(op.tag)}) not delivered")
        releaseOp(op)
    }

    /** Fails the receives posted for [p] alone: nothing can arrive for them now. */
    private fun failDirected(p: TcpPeer) {
        val addr = p.fiAddr
        if (addr == FiAddr.NOTAVAIL) return
        ep.srx.drainDirected(addr) { e ->
            ep.rxError(e.context, recvFlags(e), 0, 0, e.tag, 0, Errno.EHOSTDOWN, addr, "tcp: peer $p ${p.deadWhy}; no message can arrive for this receive")
            ep.srx.freeEntry(e)
        }
    }

    // ## Close and diagnostics ##

    override fun close() {
        if (closed) return
        closed = true
        keepalive.stop()
        val deadline = System.nanoTime() + minOf(settings.timeoutMillis, 1000L) * 1_000_000
        for (p in peers) {
            val c = p.conn ?: continue
            if (!c.established || p.dead) continue
            // Best effort, bounded: what was sent goes out, then BYE, so the peer fails nothing it has.
            if (p.ensureRoom(HEADER_LENGTH)) p.putHeader(BYE, 0, 0, 0, 0, 0, 0)
            try {
                while (!p.flush(c.channel) && System.nanoTime() - deadline < 0) Thread.onSpinWait()
                c.channel.shutdownOutput()
            } catch (_: IOException) {
            }
        }
        for (c in connections) c.close()
        connections.clear()
        runCatching { server.close() }
        runCatching { selector.close() }
    }

    /** The state of every connection and peer, in words, for diagnostics. */
    override fun toString(): String = buildString {
        append("tcp endpoint $self: ${connections.size} connections, held unexpected bytes $heldBytes (max $heldBytesMax)")
        for (p in peers) {
            append("\n  peer $p: ${p.conn ?: "no connection"}, dead ${p.dead}${if (p.dead) " (${p.deadWhy})" else ""}, credit ${p.credit}/${p.theirWindow}, ")
            append("backlog ${p.backlog.size}, waiting CTS ${p.waitingCts.size}, streaming ${p.streaming.size}, waiting ACK ${p.waitingAck.size}, ")
            append("unflushed ${p.outTail - p.outHead} B, in flight ${p.inflight.size}, outstanding ${p.rxOutstanding}, owed ${p.pendingReturn}")
        }
    }

    private companion object {
        val log: System.Logger = System.getLogger("braid.provider.tcp")
        val SERVER = Any()
        private val random = SecureRandom()

        const val CLOSED_ITS_ENDPOINT = "closed its endpoint"
        const val ACCEPTS_PER_CYCLE = 16
        const val READS_PER_CYCLE = 8
        const val PUMP_ROUNDS = 8
        /** Payloads at least this large go between the socket and direct application memory without a copy. */
        const val DIRECT_MIN = 64 * 1024
        /** What a read at a frame boundary takes while a rendezvous payload is due. */
        const val RENDEZVOUS_PREFETCH = 8192
        const val DIRECT_CHUNK = 1 shl 20
        const val COPY_CHUNK = 256 * 1024
        const val MIN_COPY_CHUNK = 4096
        const val MAX_DATA_PAYLOAD = 64 shl 20

        fun newId(): Long {
            while (true) {
                val v = random.nextLong()
                if (v != 0L) return v
            }
        }

        fun recvFlags(e: RxEntry): Long = if (e.tagged) OpFlags.TAGGED else OpFlags.MSG
    }
}
