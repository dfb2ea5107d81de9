package braid.provider.tcp

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.provider.RailHost
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Info
import braid.core.RailCounters
import braid.core.RxEntry
import braid.provider.MessageEngine
import braid.provider.RailAv
import braid.provider.RecvPath
import braid.provider.SendPath
import braid.provider.Transport
import braid.provider.tcp.TcpFrameDescriptor.BYE
import braid.provider.tcp.TcpFrameDescriptor.CREDIT
import braid.provider.tcp.TcpFrameDescriptor.GIVEBACK
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.RECLAIM
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import java.io.IOException
import java.lang.System.Logger.Level
import java.net.InetSocketAddress
import java.net.StandardSocketOptions
import java.nio.channels.SelectionKey
import java.nio.channels.Selector
import java.nio.channels.ServerSocketChannel
import java.security.SecureRandom
import java.util.function.Consumer

/**
 * The tcp rail's part of one endpoint: a listening socket, one connection per peer, and the
 * frames of [TcpFrameDescriptor] over it. Everything runs in [progress], under the domain lock,
 * without blocking: a [Selector] polled with `selectNow`, non-blocking channels, direct
 * buffers, pooled descriptors. The keepalive's work too, when the process's one
 * [braid.provider.RailTimer] raises its flag ([TcpKeepalive]); no thread of its own.
 *
 * The message protocol is [MessageEngine]'s and RMA's [braid.provider.RmaEngine]'s; this rail
 * supplies their outlets ([TcpPeerOutlet]: the peer's outbound buffer within its credit;
 * [TcpRma]) and the inbound decoding (`TcpInbound.kt`). Connections (`TcpConnections.kt`):
 * opened on first use (a send, or a receive directed at the peer) and kept for the endpoint's
 * life. The handshake ([TcpHandshake], [TcpHandshakeHost]) proves both sides hold the job key
 * before any data frame is read. When two endpoints connect to each other at once, the
 * connection opened by the smaller endpoint id is kept and the other refused (REJECT
 * duplicate); frames queue in the peer's outbound buffer, not in a connection, so per-peer
 * order survives that.
 *
 * Sends are written to the socket when posted ([writeNow]); DATA frames go from and into the
 * applications' memory directly when it is a direct buffer. Credit ([TcpFrameDescriptor])
 * bounds what each peer can have in flight, and the endpoint's unexpected bounds (messages and
 * bytes, shared by all its peers and rails) are kept by the credit it grants (`TcpCredit.kt`):
 * a sender sends message heads only against it, so this endpoint never stops reading a
 * connection, and frames it waits for (a rendezvous' DATA, CTS and ACK, RMA replies) are never
 * stuck behind messages it cannot hold. Past the bounds senders wait with their messages;
 * nothing is dropped.
 *
 * Failures: a corrupt or truncated frame, a reset, an end of stream, or silence past the
 * time-out ([TcpSettings]) closes that peer's connection and turns every operation waiting on
 * it into an error completion naming the peer; other peers are untouched.
 */
internal class TcpTransport(
    internal val ep: RailHost,
    internal val info: Info,
    internal val av: RailAv,
    bind: InetSocketAddress,
    internal val hostId: Long,
    internal val settings: TcpSettings,
) : Transport {
    /** This endpoint's id: random, non-zero, never reused. */
    val id: Long = newId()
    internal val bufferSize = maxOf(TcpParams.MIN_BUFFER, settings.bufferSize)
    internal val eagerSize = info.endpointAttr.eagerSize.coerceIn(0, bufferSize - HEADER_LENGTH)
    internal val txSize = info.txAttr.size

    /** The most credit this endpoint lends one sender (the handshake's window): the configured window, less if few unexpected messages are allowed. */
    val window: Long = maxOf(MIN_WINDOW.toLong(), minOf(settings.window.toLong(), info.rxAttr.unexpectedLimit.toLong() * HEAD_COST))
    internal val timeoutNanos = settings.timeoutMillis * 1_000_000
    internal val heartbeatNanos = timeoutNanos / 4

    internal val selector: Selector = Selector.open()
    internal val server: ServerSocketChannel = listen(bind)
    internal val listening = server.localAddress as InetSocketAddress
    override val address: ByteArray = TcpAddressDescriptor.encode(hostId, id, InetSocketAddress(bind.address, listening.port))
    internal val self = TcpAddressDescriptor.parse(address).render()
    internal val handshake = TcpHandshake(settings.jobKey, id, window, hostId, TcpHandshakeHost(this))

    internal val connections = ArrayList<TcpConnection>()
    internal val peers = ArrayList<TcpPeer>()
    internal val peersById = Long2ObjectHashMap<TcpPeer>()
    /** The receiving side of this endpoint's connection to itself, if it sends to itself. */
    internal var selfIncoming: TcpPeer? = null
    internal val byDest = Long2ObjectHashMap<TcpPeer>()
    internal var destGeneration = -1L
    internal var resolvedGeneration = -1L
    internal val busy = ArrayList<TcpPeer>()
    internal val engine = MessageEngine(ep, "tcp", txSize)
    internal val rma = TcpRma(ep, bufferSize, txSize, ::markBusy)
    private var readyCount = 0
    /** Credit committed to senders (see `TcpCredit.kt`), the part charged for their messages, and the senders sharing it. */
    internal var committedTotal = 0L
    internal var rxOutstandingTotal = 0L
    internal var rxHeadsTotal = 0L
    internal var creditPeers = 0
    /** Senders below their fair share of credit, waiting for some to be free. */
    internal val starved = ArrayDeque<TcpPeer>()
    /** Unexpected eager payloads being read now, and their bytes: held once read, so they count against the bounds already. */
    internal var holding = 0
    internal var holdingBytes = 0L
    internal var registered = false
    @Volatile internal var closed = false

    internal val keepalive = TcpKeepalive(this, TcpAddress.idString(id))
    internal val readyAction = Consumer<SelectionKey> { onReady(it) }
    internal val limitsFor: (TcpConnection) -> TcpFrameAdapter.Limits = { c -> TcpFrameAdapter.Limits { type -> maxPayload(c, type) } }
    internal val directedWatcher: (Long) -> Unit = { addr -> watchDirected(addr) }

    // ## Statistics, for diagnostics and tests ##

    /** Bytes of unexpected eager messages held now, and the most ever held at once. */
    val heldBytes: Long get() = engine.heldBytes
    val heldBytesMax: Long get() = engine.heldBytesMax
    var connectionsOpened = 0; internal set
    var connectionsAccepted = 0; internal set
    /** Payload bytes read from sockets straight into application memory. */
    var bytesReadDirect = 0L; internal set

    /** Bytes received so far into rendezvous receives not yet complete. */
    fun inflightBytes(): Long {
        var n = 0L
        for (p in peers) n += engine.inflightBytes(p.recvPath)
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

    internal fun listen(bind: InetSocketAddress): ServerSocketChannel {
        val ch = ServerSocketChannel.open()
        try {
            ch.configureBlocking(false)
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true)
            ch.bind(bind, 256)
            return ch
        } catch (e: IOException) {
            runCatching { ch.close() }
            runCatching { selector.close() }
            throw FabricException(Errno.EADDRNOTAVAIL, "tcp ${ep.name}: cannot listen on $bind (${e.message}); set BRAID_TCP_ADDR to a free address and port, or port 0", e)
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
        if (starved.isNotEmpty()) topUp() // another rail may have freed some of the bounds
        // The keepalive's work when the process's timer says it is due: one flag read, no clock read.
        if (keepalive.take()) timed()
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

    internal fun onReady(key: SelectionKey) {
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

    // ## Send side ##

    override val counters: RailCounters get() = engine.counters

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val p = peerFor(dest) ?: return -Errno.EINVAL
        if (p.dead) return refusal(p)
        if (p.conn == null) {
            ensureConnection(p)
            if (p.dead) return refusal(p)
        }
        val rc = engine.send(p.sendPath, buffer, tag, data, flags, context)
        if (rc == 0) {
            markBusy(p)
            writeNow(p)
        }
        return rc
    }

    /**
     * Writes what [p] has queued to its socket now, as libfabric's tcp provider does, rather
     * than at the next progress call: a process that posts and then computes (or blocks
     * elsewhere) must not hold its operation back, and a ping-pong saves a poll per hop.
     */
    internal fun writeNow(p: TcpPeer) {
        if (p.busy && !p.blocked) pump(p)
    }

    // ## RMA and atomics: RMA frames, handled in TcpRma ##

    override val rmaCaps: Long get() = Caps.RMA_ALL

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = rma.engine.maxAtomicCount(type, form)

    override fun write(buffer: DirectBuffer, dest: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int {
        val p = rmaPeer(dest)
        if (p !is TcpPeer) return p as Int
        return posted(p, rma.engine.write(rma.path(p), dest, buffer, remoteOffset, key, flags, context))
    }

    override fun read(buffer: MutableDirectBuffer, src: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int {
        val p = rmaPeer(src)
        if (p !is TcpPeer) return p as Int
        return posted(p, rma.engine.read(rma.path(p), src, buffer, remoteOffset, key, flags, context))
    }

    override fun atomic(
        operand: DirectBuffer, compare: DirectBuffer?, result: MutableDirectBuffer?, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, count: Int, flags: Long, context: Any?,
    ): Int {
        val p = rmaPeer(dest)
        if (p !is TcpPeer) return p as Int
        return posted(p, rma.engine.atomic(rma.path(p), dest, operand, compare, result, remoteOffset, key, type, op, count, flags, context))
    }

    /** The peer [dest] names, connecting if need be; or the negated errno (a cached boxed Int) saying why it cannot be reached. */
    private fun rmaPeer(dest: Long): Any {
        val p = peerFor(dest) ?: return -Errno.EINVAL
        if (p.conn == null && !p.dead) ensureConnection(p)
        if (p.dead) return refusal(p)
        return p
    }

    /** An RMA or atomic request just posted to [p] ([rc] 0) goes to the socket now, as a send does. */
    private fun posted(p: TcpPeer, rc: Int): Int {
        if (rc == 0) writeNow(p)
        return rc
    }

    /**
     * What a send to a dead peer returns: `-ECONNREFUSED` or `-EACCES` (wrong job key) if it never
     * let us in, else `-EHOSTDOWN`, as shm says; the cause is in the error completions and the
     * PEER_DOWN event that reported its death.
     */
    internal fun refusal(p: TcpPeer): Int =
        if (p.deadErr == Errno.ECONNREFUSED || p.deadErr == Errno.EACCES) -p.deadErr else -Errno.EHOSTDOWN

    /** Writes, then flushes, whatever [p] has ready: control frames, queued heads, DATA, credit. */
    internal fun pump(p: TcpPeer): Int {
        val c = p.conn
        if (p.dead || c == null || !c.established) return 0
        var work = 0
        var rounds = 0
        while (true) {
            if (p.recvPath.controlPending) work += engine.flushControl(p.recvPath)
            if (!rma.idle(p)) work += rma.pump(p)
            if (!p.sendPath.idle) work += engine.pumpSend(p.sendPath)
            if (needCreditFrame(p) && p.ensureRoom(HEADER_LENGTH)) p.putHeader(CREDIT, 0, 0, 0, 0, 0, 0)
            if (p.reclaimToSend > 0 && p.ensureRoom(HEADER_LENGTH)) {
                p.putHeader(RECLAIM, 0, 0, 0, 0, 0, p.reclaimToSend)
                p.reclaimToSend = 0
            }
            if (p.giveBack >= 0 && p.ensureRoom(HEADER_LENGTH)) {
                p.putHeader(GIVEBACK, 0, 0, 0, 0, 0, p.giveBack)
                p.giveBack = -1
            }
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
            if (++rounds >= PUMP_ROUNDS || (p.sendPath.idle && !p.recvPath.controlPending)) return work
        }
    }

    internal fun idle(p: TcpPeer): Boolean =
        p.dead || !p.established || (!p.unflushed && !p.recvPath.controlPending && p.sendPath.idle && !needCreditFrame(p) && rma.idle(p) &&
            p.reclaimToSend == 0L && p.giveBack < 0)

    /** Whether to send credit back now rather than wait for a frame to carry it: much is owed, or the sender is short of it. */
    internal fun needCreditFrame(p: TcpPeer): Boolean =
        p.pendingReturn > 0 && (p.pendingReturn >= p.committed / 4 || p.committed - p.rxOutstanding - p.pendingReturn < p.committed / 2)

    internal fun markBusy(p: TcpPeer) {
        if (p.busy) return
        p.busy = true
        busy += p
    }

    // ## Receive side ##

    /** Credit [cost] that a message of [p]'s held is free: it goes back with the next frame, or a CREDIT frame (or to another sender, see [creditFreed]). */
    internal fun returnCredit(p: TcpPeer, cost: Long) {
        if (p.dead) return
        creditFreed(p, cost)
        if (needCreditFrame(p)) markBusy(p)
    }

    /** Caches [p]'s fabric address; when it first becomes known, re-keys what it sent before. */
    internal fun resolve(p: TcpPeer) {
        if (!av.bound) return
        val generation = av.generation
        if (p.avGeneration == generation) return
        p.avGeneration = generation
        val before = p.fiAddr
        val now = av.epAddr(p.key)
        if (p.address == null && now != FiAddr.NOTAVAIL) p.address = av.query(now) as? TcpAddress
        if (before == FiAddr.NOTAVAIL && now != FiAddr.NOTAVAIL) engine.resolved(p.recvPath, now) else p.recvPath.fiAddr = now
    }

    // ## Peer operations of the shared receive context: the engine's ##

    override fun startMsg(entry: RxEntry) = engine.startMsg(entry)
    override fun startTag(entry: RxEntry) = engine.startTag(entry)
    override fun discardMsg(entry: RxEntry) = engine.discardMsg(entry)
    override fun discardTag(entry: RxEntry) = engine.discardTag(entry)

    // ## Peers and failure ##

    internal fun newPeer(peerId: Long): TcpPeer {
        val p = withPaths(TcpPeer(peerId, peers.size, bufferSize))
        peers += p
        peersById.put(peerId, p)
        return p
    }

    internal fun withPaths(p: TcpPeer): TcpPeer {
        val outlet = TcpPeerOutlet(this, p)
        p.sendPath = SendPath(outlet, p)
        p.recvPath = RecvPath(outlet, p)
        return p
    }

    /** The peer [dest] names in the AV, or null if it is not a tcp address there. */
    internal fun peerFor(dest: Long): TcpPeer? {
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
    internal fun failPeer(p: TcpPeer, err: Int, why: String, level: Level = Level.INFO) {
        if (p.dead) return
        p.dead = true
        p.deadErr = err
        p.deadWhy = why
        p.conn?.let { closeConnection(it) }
        p.conn = null
        resolve(p)
        val msg = "tcp: peer $p $why"
        log.log(if (why == CLOSED_ITS_ENDPOINT) Level.DEBUG else level, "tcp endpoint $self: $msg")
        engine.failSend(p.sendPath, err, msg)
        rma.peerFailed(p, err, msg)
        p.discardOutbound()
        p.rxEntry?.let { engine.failPartial(it, err, msg) }
        p.rxEntry = null
        p.rxBytes?.let {
            holding--
            holdingBytes -= it.capacity()
            engine.releasePayload(it)
        }
        p.rxBytes = null
        p.rxInbound = null
        engine.failRecv(p.recvPath, err, why, msg)
        p.directPending = 0
        creditLeft(p)
        failDirected(p)
        engine.peerDown(p.fiAddr, msg)
    }

    /** Fails the receives posted for [p] alone: nothing can arrive for them now. */
    internal fun failDirected(p: TcpPeer) = engine.failDirected(p.fiAddr, "tcp: peer $p ${p.deadWhy}")

    override fun abort(err: Int, why: String) {
        keepalive.stop() // the domain drives this rail no more; neither does the timer's servant
        ep.eventError(err, "tcp endpoint $self: $why")
        for (j in 0 until peers.size) failPeer(peers[j], err, "is unreachable: $why", Level.WARNING)
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
        append("tcp endpoint $self: ${connections.size} connections, held unexpected bytes $heldBytes (max $heldBytesMax), credit committed $committedTotal of ${creditFree() + committedTotal}, ${starved.size} senders short")
        for (p in peers) {
            append("\n  peer $p: ${p.conn ?: "no connection"}, dead ${p.dead}${if (p.dead) " (${p.deadWhy})" else ""}, credit ${p.credit}/${p.theirWindow}, ")
            append("${p.sendPath.describe()}, ")
            append("unflushed ${p.outTail - p.outHead} B, in flight ${p.recvPath.inflight.size}, committed ${p.committed}, outstanding ${p.rxOutstanding}, owed ${p.pendingReturn}")
        }
    }

    internal companion object {
        val log: System.Logger = System.getLogger("braid.provider.tcp")
        val SERVER = Any()
        private val random = SecureRandom()

        const val CLOSED_ITS_ENDPOINT = "closed its endpoint"
        const val ACCEPTS_PER_CYCLE = 16
        const val PUMP_ROUNDS = 8
        const val MAX_DATA_PAYLOAD = 64 shl 20

        fun newId(): Long {
            while (true) {
                val v = random.nextLong()
                if (v != 0L) return v
            }
        }
    }
}
