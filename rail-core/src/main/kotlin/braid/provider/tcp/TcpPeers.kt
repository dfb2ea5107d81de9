package braid.provider.tcp

import braid.core.Errno
import braid.core.FiAddr
import braid.provider.MessageEngine
import braid.provider.RailAv
import braid.provider.RecvPath
import braid.provider.SendPath
import java.lang.System.Logger.Level
import org.agrona.collections.Long2ObjectHashMap

/**
 * The peers of one tcp endpoint: every peer endpoint it has met (by id, and by the fabric addresses the AV gives them),
 * each built with its outlets, paths and credit account, and kept for the endpoint's life; and what the AV says of them
 * ([resolve]). Not thread-safe: the transport calls in under the domain lock.
 */
internal class TcpPeers(
    /** This endpoint in words, for messages. */
    private val self: String,
    private val av: RailAv,
    private val engine: MessageEngine,
    private val credit: TcpCredit,
    private val rma: TcpRma,
    private val busy: TcpBusy,
    private val bufferSize: Int,
    private val eagerSize: Int,
    /** A link's reorder stage ([braid.provider.RailHost.order]): EAGER heads carry its acknowledgements. */
    private val order: braid.provider.ArrivalOrder? = null,
) {
    private val peers = ArrayList<TcpPeer>()
    private val byId = Long2ObjectHashMap<TcpPeer>()

    /** The receiving side of this endpoint's connection to itself, if it sends to itself. */
    private var selfIncoming: TcpPeer? = null

    /** fi_addr → peer, valid for one AV generation. */
    private val byDest = Long2ObjectHashMap<TcpPeer>()
    private var destGeneration = -1L
    private var resolvedGeneration = -1L

    val size: Int
        get() = peers.size

    operator fun get(i: Int): TcpPeer = peers[i]

    /** The peer endpoint [id], met before, or null. */
    fun byId(id: Long): TcpPeer? = byId.get(id)

    /** The peer endpoint [id], met now for the first time. */
    fun add(id: Long): TcpPeer = build(id).also { byId.put(id, it) }

    /** The receiving side of this endpoint's connection to itself ([id] is this endpoint's). */
    fun selfIncoming(id: Long): TcpPeer = selfIncoming ?: build(id).also { selfIncoming = it }

    private fun build(id: Long): TcpPeer {
        val p = TcpPeer(id, peers.size, bufferSize)
        val outlet = TcpPeerOutlet(p, eagerSize, busy, order)
        p.attach(SendPath(outlet, p), RecvPath(outlet, p), credit.Account(p))
        peers += p
        return p
    }

    /** The peer [dest] names in the AV, or null if it is not a tcp address there. */
    fun peerFor(dest: Long): TcpPeer? {
        if (!av.bound) return null
        if (av.generation != destGeneration) {
            byDest.clear()
            destGeneration = av.generation
        }
        val cached = byDest.get(dest)
        if (cached != null) return cached
        val a = av.query(dest) as? TcpAddress ?: return null
        val p = byId.get(a.endpointId) ?: add(a.endpointId)
        if (p.address == null) p.address = a
        byDest.put(dest, p)
        return p
    }

    /** When the AV changed, re-resolves every peer: messages held from senders it did not know may be theirs now. */
    fun resolveAll() {
        if (!av.bound || av.generation == resolvedGeneration) return
        resolvedGeneration = av.generation
        for (j in 0 until peers.size) resolve(peers[j])
    }

    /** Caches [p]'s fabric address; when it first becomes known, re-keys what it sent before. */
    fun resolve(p: TcpPeer) {
        if (!av.bound) return
        val generation = av.generation
        if (p.avGeneration == generation) return
        p.avGeneration = generation
        val before = p.fiAddr
        val now = av.epAddr(p.key)
        if (p.address == null && now != FiAddr.NOTAVAIL) p.address = av.query(now) as? TcpAddress
        if (before == FiAddr.NOTAVAIL && now != FiAddr.NOTAVAIL) engine.resolved(p.recvPath, now)
        else p.recvPath.fiAddr = now
    }

    /**
     * [p] is gone (its connection closed): it is dead for this endpoint, logged once at [level], and every operation
     * that needs it completes in error with [err], naming it and [why]; its credit goes back to the budget.
     */
    fun fail(p: TcpPeer, err: Int, why: String, level: Level) {
        if (p.dead) return
        p.died(err, why)
        resolve(p)
        val msg = "tcp: peer $p $why"
        log.log(level, "tcp endpoint $self: $msg")
        engine.failSend(p.sendPath, err, msg)
        rma.peerFailed(p, err, msg)
        p.out.discard()
        val rx = p.rx
        rx.entry?.let { engine.failPartial(it, err, msg) }
        rx.entry = null
        rx.bytes?.let {
            credit.holdEnded(it.capacity())
            engine.releasePayload(it)
        }
        rx.bytes = null
        rx.inbound = null
        rx.directPending = 0
        engine.failRecv(p.recvPath, err, why, msg)
        p.lender.leave()
        failDirected(p)
        engine.peerDown(p.fiAddr, msg)
    }

    /**
     * Whether dead [p] may be connected again: the endpoint is a rail of a link that reconnects
     * ([braid.provider.RailHost.reconnects]) and [p] did not prove it holds another job key.
     */
    fun revivable(p: TcpPeer, reconnects: Boolean): Boolean = reconnects && p.dead && p.deadErr != Errno.EACCES

    /** Dead [p] comes back, as if never met: nothing of its old connection is kept (it all failed with it). */
    fun revive(p: TcpPeer) {
        p.revive()
        p.sendPath.dead = false
        p.sendPath.nextMsgId = 1
        p.recvPath.dead = false
        p.recvPath.deadErr = 0
        p.recvPath.deadWhy = ""
        p.recvPath.epoch++ // what it held from the old connection stays, but owes that connection nothing
        p.out.reopen(bufferSize) // the old frames failed with the old connection
        log.log(Level.DEBUG, "tcp endpoint $self: reconnecting peer $p")
    }

    /** Fails the receives posted for dead [p] alone: nothing can arrive for them now. */
    fun failDirected(p: TcpPeer) = engine.failDirected(p.fiAddr, "tcp: peer $p ${p.deadWhy}")

    /** Bytes received so far into rendezvous receives not yet complete. */
    fun inflightBytes(): Long {
        var n = 0L
        for (p in peers) n += engine.inflightBytes(p.recvPath)
        return n
    }

    /** Frame bytes written into peers' outbound buffers and not yet to a socket. */
    fun unflushedBytes(): Long {
        var n = 0L
        for (p in peers) n += p.out.pendingBytes
        return n
    }

    private companion object {
        val log: System.Logger = System.getLogger("braid.provider.tcp")
    }
}

/**
 * The peers with frames to write: the transport's duty cycle pumps each until it is idle. A peer is in it at most once
 * ([TcpPeer.busy]).
 */
internal class TcpBusy {
    private val peers = ArrayList<TcpPeer>()

    val size: Int
        get() = peers.size

    operator fun get(i: Int): TcpPeer = peers[i]

    fun mark(p: TcpPeer) {
        if (p.busy) return
        p.busy = true
        peers += p
    }

    /** Takes the peer at [i] out (the last one takes its place). */
    fun removeAt(i: Int) {
        peers[i].busy = false
        val last = peers.size - 1
        peers[i] = peers[last]
        peers.removeAt(last)
    }
}
