package braid.provider.tcp

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.Errno
import braid.core.Info
import braid.core.RailCounters
import braid.core.RxEntry
import braid.provider.MessageEngine
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import braid.provider.tcp.TcpFrameDescriptor.BYE
import braid.provider.tcp.TcpFrameDescriptor.CREDIT
import braid.provider.tcp.TcpFrameDescriptor.GIVEBACK
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.RECLAIM
import braid.provider.tcp.TcpFrameDescriptor.frameCost
import java.io.IOException
import java.lang.System.Logger.Level
import java.net.InetSocketAddress
import java.nio.channels.SelectionKey
import java.security.SecureRandom
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * The tcp rail's part of one endpoint: a listening socket, one connection per peer, and the frames of
 * [TcpFrameDescriptor] over it. Everything runs in [progress], under the domain lock, without blocking: a selector
 * polled with `selectNow`, non-blocking channels, direct buffers, pooled descriptors. The keepalive's work too, when
 * the process's one [braid.provider.RailTimer] raises its flag ([TcpKeepalive]); no thread of its own.
 *
 * This class composes the parts, each of which owns its state: [TcpPeers] (the peers met, and what the AV says of
 * them), [TcpConnections] (sockets, the handshake's endpoint side, losing a peer), [TcpInbound] (decoding), [TcpCredit]
 * (the credit this endpoint lends), [TcpKeepalive] and [TcpBusy] (the peers with frames to write). The message protocol
 * is [MessageEngine]'s and RMA's [braid.provider.RmaEngine]'s; this rail supplies their outlets ([TcpPeerOutlet]: the
 * peer's outbound buffer within its credit; [TcpRma]) and the inbound decoding. The handshake ([TcpHandshake]) proves
 * both sides hold the job key before any data frame is read.
 *
 * Sends are written to the socket when posted ([writeNow]); DATA frames go from and into the applications' memory
 * directly when it is a direct buffer. Credit bounds what each peer can have in flight, and the endpoint's unexpected
 * bounds (messages and bytes, shared by all its peers and rails) are kept by the credit it grants: a sender sends
 * message heads only against it, so this endpoint never stops reading a connection, and frames it waits for (a
 * rendezvous' DATA, CTS and ACK, RMA replies) are never stuck behind messages it cannot hold. Past the bounds senders
 * wait with their messages; nothing is dropped.
 *
 * Failures: a corrupt or truncated frame, a reset, an end of stream, or silence past the time-out ([TcpSettings])
 * closes that peer's connection and turns every operation waiting on it into an error completion naming the peer; other
 * peers are untouched.
 */
internal class TcpTransport(
    private val ep: RailHost,
    info: Info,
    av: RailAv,
    bind: InetSocketAddress,
    hostId: Long,
    settings: TcpSettings,
) : Transport {
    /** This endpoint's id: random, non-zero, never reused. */
    val id: Long = newId()
    private val bufferSize = maxOf(TcpParams.MIN_BUFFER, settings.bufferSize)
    private val eagerSize = info.endpointAttr.eagerSize.coerceIn(0, bufferSize - HEADER_LENGTH)

    /**
     * The most credit this endpoint lends one sender (the handshake's window): the configured window, less if few
     * unexpected messages are allowed.
     */
    val window: Long =
        maxOf(MIN_WINDOW.toLong(), minOf(settings.window.toLong(), info.rxAttr.unexpectedLimit.toLong() * HEAD_COST))

    private val engine = MessageEngine(ep, av.rail, info.txAttr.size)
    private val busy = TcpBusy()
    /**
     * A link's rail lends each sender one eager message (at its eager limit, as the sender reckons it) beside its
     * share, for the messages it resends ([TcpCredit], [TcpPeerOutlet]).
     */
    private val credit =
        TcpCredit(
            ep.bounds,
            engine.bounds,
            window,
            eagerSize,
            busy,
            if (ep.order != null) frameCost(minOf(eagerSize.toLong(), window / 2 - HEAD_COST).toInt()) else 0L,
        )
    private val rma = TcpRma(ep, bufferSize, info.txAttr.size, busy)
    private val listener = TcpListener(ep.name, bind)
    override val address: ByteArray =
        TcpAddressDescriptor.encode(hostId, id, InetSocketAddress(bind.address, listener.port), eagerSize)
    private val self = TcpAddressDescriptor.parse(address).render()
    private val peers = TcpPeers(self, av, engine, credit, rma, busy, bufferSize, eagerSize, ep.order)
    private val inbound = TcpInbound(ep, engine, rma, credit, peers, busy, bufferSize)
    private val connections =
        TcpConnections(listener, self, id, hostId, window, settings, peers, inbound, busy) { ep.reconnects }
    private val keepalive = TcpKeepalive(ep, TcpAddress.idString(id), settings, connections, peers, credit, busy)
    private val timeoutMillis = settings.timeoutMillis
    private val undriven = Runnable { ep.cycle { if (!closed && listener.enabled) progress() } }
    @Volatile private var closed = false

    // ## Statistics, for diagnostics and tests ##

    /** Bytes of unexpected eager messages held now, and the most ever held at once. */
    val heldBytes: Long
        get() = engine.heldBytes

    val heldBytesMax: Long
        get() = engine.heldBytesMax

    /** Connection, credit and buffer counts, for diagnostics and tests. */
    val stats = TcpStats(connections, inbound, credit, peers)

    /** The peer [dest] names in the AV, or null if it is not a tcp address there. */
    fun peerFor(dest: Long): TcpPeer? = peers.peerFor(dest)

    override fun enable() {
        if (listener.enable()) {
            ep.otherThreadsDrive() // the keepalive's undriven cycle runs on the timer's servant
            keepalive.start(undriven)
        }
    }

    // ## Duty cycle ##

    override fun progress(): Int {
        if (closed || !listener.enabled) return 0
        var work = connections.poll()
        if (credit.anyStarved) credit.topUp() // another rail may have freed some of the bounds
        // The keepalive's work when the process's timer says it is due: one flag read, no clock read.
        if (keepalive.take()) keepalive.timed()
        peers.resolveAll()
        var i = 0
        while (i < busy.size) {
            val p = busy[i]
            work += pump(p)
            if (idle(p)) busy.removeAt(i) else i++
        }
        return work
    }

    // ## Send side ##

    override val counters: RailCounters
        get() = engine.counters

    override fun peerGone(addr: Long): Boolean = peers.peerFor(addr)?.dead == true

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int =
        sendSequenced(buffer, dest, tag, data, flags, context, 0, 0)

    override val carriesSequence: Boolean
        get() = true

    override fun sendSkip(dest: Long, seq: Long): Int {
        val p = peers.peerFor(dest) ?: return -Errno.EINVAL
        if (p.dead) return refusal(p)
        if (!engine.sendSkip(p.sendPath, seq)) return -Errno.EAGAIN
        writeNow(p)
        return 0
    }

    override fun reconnect(dest: Long): Boolean {
        val p = peers.peerFor(dest) ?: return false
        if (!peers.revivable(p, ep.reconnects)) return false
        peers.revive(p)
        connections.ensureConnection(p)
        return true
    }

    override fun connected(dest: Long): Boolean = peers.peerFor(dest)?.let { !it.dead && it.established } == true

    override fun connectionGeneration(dest: Long): Long = peers.peerFor(dest)?.generation ?: 0L

    /** The peer's eager size, whose message its spare credit for resends covers ([TcpCredit]); unknown: no limit. */
    override fun resendLimit(dest: Long): Int =
        peers.peerFor(dest)?.address?.eagerSize?.takeIf { it >= 0 } ?: Int.MAX_VALUE

    override fun sendLinkAck(dest: Long, seq: Long): Int {
        val p = peers.peerFor(dest) ?: return -Errno.EINVAL
        if (p.dead) return refusal(p)
        if (!engine.sendLinkAck(p.sendPath, seq)) return -Errno.EAGAIN
        writeNow(p)
        return 0
    }

    override fun sendSequenced(
        buffer: DirectBuffer,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        seq: Long,
        stripe: Long,
    ): Int {
        val p = peers.peerFor(dest) ?: return -Errno.EINVAL
        if (p.dead) return refusal(p)
        if (p.conn == null) {
            connections.ensureConnection(p)
            if (p.dead) return refusal(p)
        }
        val rc = engine.send(p.sendPath, buffer, tag, data, flags, context, seq, stripe)
        if (rc == 0) {
            busy.mark(p)
            writeNow(p)
        }
        return rc
    }

    /**
     * Writes what [p] has queued to its socket now, as libfabric's tcp provider does, rather than at the next progress
     * call: a process that posts and then computes (or blocks elsewhere) must not hold its operation back, and a
     * ping-pong saves a poll per hop.
     */
    private fun writeNow(p: TcpPeer) {
        if (p.busy && !p.out.blocked) pump(p)
    }

    // ## RMA and atomics: RMA frames, handled in TcpRma ##

    override val rmaCaps: Long
        get() = Caps.RMA_ALL

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = rma.engine.maxAtomicCount(type, form)

    override fun write(
        buffer: DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val p = peers.peerFor(dest) ?: return -Errno.EINVAL
        if (!reachable(p)) return refusal(p)
        return posted(p, rma.engine.write(rma.path(p), dest, buffer, remoteOffset, key, flags, context))
    }

    override fun read(
        buffer: MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val p = peers.peerFor(src) ?: return -Errno.EINVAL
        if (!reachable(p)) return refusal(p)
        return posted(p, rma.engine.read(rma.path(p), src, buffer, remoteOffset, key, flags, context))
    }

    override fun atomic(
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int {
        val p = peers.peerFor(dest) ?: return -Errno.EINVAL
        if (!reachable(p)) return refusal(p)
        return posted(
            p,
            rma.engine.atomic(
                rma.path(p),
                dest,
                operand,
                compare,
                result,
                remoteOffset,
                key,
                type,
                op,
                count,
                flags,
                context,
            ),
        )
    }

    /** Whether [p] is alive, connecting to it if need be. */
    private fun reachable(p: TcpPeer): Boolean {
        if (p.conn == null && !p.dead) connections.ensureConnection(p)
        return !p.dead
    }

    /** An RMA or atomic request just posted to [p] ([rc] 0) goes to the socket now, as a send does. */
    private fun posted(p: TcpPeer, rc: Int): Int {
        if (rc == 0) writeNow(p)
        return rc
    }

    /**
     * What a send to a dead peer returns: `-ECONNREFUSED` or `-EACCES` (wrong job key) if it never let us in, else
     * `-EHOSTDOWN`, as shm says; the cause is in the error completions and the PEER_DOWN event that reported its death.
     */
    private fun refusal(p: TcpPeer): Int =
        if (p.deadErr == Errno.ECONNREFUSED || p.deadErr == Errno.EACCES) -p.deadErr else -Errno.EHOSTDOWN

    /** Writes, then flushes, whatever [p] has ready: control frames, queued heads, DATA, credit. */
    private fun pump(p: TcpPeer): Int {
        val c = p.conn
        if (p.dead || c == null || !c.established) return 0
        val lender = p.lender
        var work = 0
        var rounds = 0
        while (true) {
            if (p.recvPath.controlPending) work += engine.flushControl(p.recvPath)
            if (!rma.idle(p)) work += rma.pump(p)
            if (!p.sendPath.idle) work += engine.pumpSend(p.sendPath)
            if (lender.needsFrame && p.ensureRoom(HEADER_LENGTH)) p.putHeader(CREDIT, 0, 0, 0, 0, 0, 0)
            if (lender.reclaimToSend > 0 && p.ensureRoom(HEADER_LENGTH))
                p.putHeader(RECLAIM, 0, 0, 0, 0, 0, lender.takeReclaim())
            if (p.giveBackDue && p.ensureRoom(HEADER_LENGTH)) p.putHeader(GIVEBACK, 0, 0, 0, 0, 0, p.takeGiveBack())
            if (!p.unflushed || p.out.blocked) return work
            if (c.hs.position() > 0) {
                connections.flushHandshake(c) // a WELCOME still going out precedes every data frame
                if (c.hs.position() > 0 || c.state == TcpConnection.State.CLOSED) return work
            }
            val flushed =
                try {
                    p.out.flush(c.channel)
                } catch (e: IOException) {
                    connections.lost(c, Errno.ECONNRESET, "reset the connection (${e.message})")
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

    private fun idle(p: TcpPeer): Boolean =
        p.dead ||
            !p.established ||
            (!p.unflushed &&
                !p.recvPath.controlPending &&
                p.sendPath.idle &&
                !p.lender.needsFrame &&
                rma.idle(p) &&
                p.lender.reclaimToSend == 0L &&
                !p.giveBackDue)

    // ## Peer operations of the shared receive context: the engine's ##

    override fun startMsg(entry: RxEntry) = engine.startMsg(entry)

    override fun startTag(entry: RxEntry) = engine.startTag(entry)

    override fun discardMsg(entry: RxEntry) = engine.discardMsg(entry)

    override fun discardTag(entry: RxEntry) = engine.discardTag(entry)

    override fun abort(err: Int, why: String) {
        keepalive.stop() // the domain drives this rail no more; neither does the timer's servant
        ep.eventError(err, "tcp endpoint $self: $why")
        for (j in 0 until peers.size) connections.failPeer(peers[j], err, "is unreachable: $why", Level.WARNING)
    }

    // ## Close and diagnostics ##

    /** The credit this side has committed to its senders now (bytes they may send unasked). */
    override fun telemetry(): Map<String, Long> = mapOf(braid.core.telemetry.Telemetry.CREDIT to stats.committedTotal)

    override fun close() {
        if (closed) return
        closed = true
        keepalive.stop()
        val deadline = System.nanoTime() + minOf(timeoutMillis, 1000L) * 1_000_000
        for (j in 0 until peers.size) {
            val p = peers[j]
            val c = p.conn ?: continue
            if (!c.established || p.dead) continue
            // Best effort, bounded: what was sent goes out, then BYE, so the peer fails nothing it has.
            if (p.ensureRoom(HEADER_LENGTH)) p.putHeader(BYE, 0, 0, 0, 0, 0, 0)
            try {
                while (!p.out.flush(c.channel) && System.nanoTime() - deadline < 0) Thread.onSpinWait()
                c.channel.shutdownOutput()
            } catch (_: IOException) {}
        }
        connections.close()
    }

    /** The state of every connection and peer, in words, for diagnostics. */
    override fun toString(): String =
        "tcp endpoint $self: $connections, held unexpected bytes $heldBytes (max $heldBytesMax), $credit" +
            stats.describePeers()

    private companion object {
        private val random = SecureRandom()
        const val PUMP_ROUNDS = 8

        fun newId(): Long {
            while (true) {
                val v = random.nextLong()
                if (v != 0L) return v
            }
        }
    }
}
