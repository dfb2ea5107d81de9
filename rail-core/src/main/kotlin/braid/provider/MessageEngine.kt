package braid.provider

import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RxEntry
import braid.core.SrxPeer
import braid.provider.ControlOutlet.Companion.ACK
import braid.provider.ControlOutlet.Companion.CTS
import braid.provider.ControlOutlet.Companion.DISCARDED
import braid.provider.ControlOutlet.Companion.PULLED
import braid.provider.SendOutlet.Companion.HEAD_EAGER
import braid.provider.SendOutlet.Companion.HEAD_RTS
import org.agrona.DirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The rail-neutral message protocol of one endpoint's rail, as [RmaEngine] is for RMA: a rail supplies per-peer outlets
 * ([SendOutlet], [ControlOutlet]) and decodes what arrives into calls here; the engine owns the rest.
 * - A message up to the rail's eager rules is one EAGER record with its bytes. A larger one is an RTS; once a receive
 *   matches it, the receiver answers CTS with the bytes its buffer takes (or PULLED, having copied them itself) and the
 *   sender streams that many as fragments. DELIVERY_COMPLETE sends wait for an ACK; a discarded message (PEEK|DISCARD,
 *   CLAIM|DISCARD) answers DISCARDED, so its sender completes.
 * - Unexpected messages are held here (eager bytes in a pool, a rendezvous by its id) and queued in the shared receive
 *   context with this engine as their [SrxPeer]; a receive that matches one later starts it ([startMsg], [startTag]) or
 *   drops it ([discardMsg], [discardTag]).
 * - Truncation: a receive gets the bytes that fit and an ETRUNC error completion.
 * - Failure fan-out: a peer gone fails every send and receive waiting on it with an error completion naming it
 *   ([failSend], [failRecv], [failDirected]).
 *
 * Not thread-safe: callers hold the domain lock.
 */
internal class MessageEngine(
    private val ep: RailHost,
    /** The rail's name, first word of every error message. */
    val rail: String,
    /** Sends one destination may queue before [send] returns `-EAGAIN`. */
    private val backlogLimit: Int,
) : SrxPeer {
    val counters: RailCounters = RailCounters(rail)
    private val txPool = ArrayDeque<MsgTxOp>()
    private val heldPool = ArrayDeque<MsgHeld>()
    private val inboundPool = ArrayDeque<MsgInbound>()
    private val payloads = PayloadPool()

    /** This rail's part of the endpoint's unexpected bounds: what it holds is booked there. */
    val bounds: UnexpectedBounds.Account = ep.bounds.account(rail)

    /** Bytes of unexpected eager messages held now, and the most ever held at once. */
    var heldBytes = 0L
        private set

    var heldBytesMax = 0L
        private set

    /** Unexpected messages (eager and rendezvous) this engine holds now. */
    var heldCount = 0
        private set

    // ## Send side ##

    /**
     * Starts a send of [buffer] (the whole view) on [path]: its head now if nothing is queued before it and the outlet
     * has room, else queued (not for an inject: `-EAGAIN`). Returns 0 or a negated errno. The rail has checked that
     * [path]'s peer is reachable.
     */
    fun send(
        path: SendPath,
        buffer: DirectBuffer,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        seq: Long = 0,
        stripe: Long = 0,
    ): Int {
        val inject = flags and OpFlags.INJECT != 0L
        if (path.backlog.isEmpty() && (inject || path.outlet.open)) {
            if (writeHead(path, buffer, buffer.capacity(), tag, data, flags, context, null, seq, stripe)) {
                counters.sent(buffer.capacity())
                return 0
            }
        }
        if (path.backlog.size >= backlogLimit) return -Errno.EAGAIN
        if (inject) {
            // Buffer reusable on return: queued only as a copy, where the outlet allows it.
            if (!path.outlet.queuesInject) return -Errno.EAGAIN
            val copy = payloads.acquire(buffer.capacity())
            copy.putBytes(0, buffer, 0, buffer.capacity())
            val op = txOp(copy, buffer.capacity(), tag, data, flags, context)
            op.copy = copy
            op.seq = seq
            op.stripe = stripe
            path.backlog.addLast(op)
        } else {
            val op = txOp(buffer, buffer.capacity(), tag, data, flags, context)
            op.seq = seq
            op.stripe = stripe
            // A link's message sent again after its first rail died goes before the later ones still waiting here, so
            // that the receiver need not hold those early (on this rail's credit) until it comes.
            var at = path.backlog.size
            if (seq != 0L) while (at > 0 && path.backlog[at - 1].seq > seq) at--
            path.backlog.add(at, op)
        }
        counters.sent(buffer.capacity())
        return 0
    }

    /** Writes a message's head; [queued] is its op when it waited in the backlog. False: no room. */
    private fun writeHead(
        path: SendPath,
        buffer: DirectBuffer,
        length: Int,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        queued: MsgTxOp?,
        seq: Long,
        stripe: Long,
    ): Boolean {
        // An inject completes when copied: nothing waits for its ACK.
        val wire = if (flags and OpFlags.INJECT != 0L) flags and OpFlags.DELIVERY_COMPLETE.inv() else flags
        val msgId = path.nextMsgId
        // A device message staged chunk by chunk goes so only where its bytes are streamed; elsewhere staged whole now.
        if (buffer is StagedView && !buffer.whole && !path.outlet.streamsStaged(length)) {
            buffer.stageAll()
            queued?.buffer?.wrap(buffer, 0, length)
        }
        when (path.outlet.writeHead(buffer, length, tag, data, wire, msgId, seq, stripe)) {
            HEAD_EAGER -> {
                path.nextMsgId++
                if (wire and OpFlags.DELIVERY_COMPLETE != 0L) {
                    val op = queued ?: txOp(buffer, length, tag, data, flags, context)
                    op.msgId = msgId
                    path.waitingAck.put(msgId, op)
                } else {
                    ep.txComplete(context, flags, length.toLong(), tag)
                    if (queued != null) releaseOp(queued)
                }
            }
            HEAD_RTS -> {
                path.nextMsgId++
                val op = queued ?: txOp(buffer, length, tag, data, flags, context)
                op.msgId = msgId
                path.waitingCts.put(msgId, op)
            }
            else -> return false
        }
        return true
    }

    /** Writes [path]'s queued heads and streams what CTSs accepted, as far as room allows; returns how many moved. */
    fun pumpSend(path: SendPath): Int {
        var work = 0
        while (path.backlog.isNotEmpty()) {
            val op = path.backlog.first()
            val b = op.staged ?: op.buffer
            if (!writeHead(path, b, op.length, op.tag, op.data, op.flags, op.context, op, op.seq, op.stripe)) break
            path.backlog.removeFirst()
            work++
        }
        while (path.streaming.isNotEmpty()) {
            val op = path.streaming.first()
            if (!path.outlet.stream(op)) break
            work++
            if (op.accepted < op.limit) {
                nextWindow(op) // the rail took this chunk: stage the next one while it travels
                continue
            }
            path.streaming.removeFirst()
            finishStream(path, op)
        }
        return work
    }

    /** Stages [op]'s next window (a [StagedView] send) and lets the outlet stream up to its end. */
    private fun nextWindow(op: MsgTxOp) {
        val sv = op.staged!!
        sv.stageNext() // a failed copy still moves the window: the stream goes on, the send completes in error
        op.buffer.wrap(sv, 0, op.length)
        op.accepted = minOf(op.limit, sv.staged)
    }

    /** A CTS for [msgId] accepting [accepted] bytes: true if a send was waiting for it with at least that many. */
    fun onCts(path: SendPath, msgId: Long, accepted: Long): Boolean {
        val op = path.waitingCts.get(msgId) ?: return false
        if (accepted < 0 || accepted > op.length) return false
        path.waitingCts.remove(msgId)
        op.limit = accepted
        val sv = op.staged
        // A send staged chunk by chunk streams its staged window first; [pumpSend] stages the rest as it goes.
        op.accepted = if (sv != null && !sv.whole) minOf(accepted, sv.staged) else accepted
        op.sent = 0
        if (accepted == 0L) {
            finishStream(path, op)
        } else {
            path.outlet.streamStarting(op)
            path.streaming.addLast(op)
        }
        return true
    }

    /** An ACK for [msgId]: true if a send was waiting for it. */
    fun onAck(path: SendPath, msgId: Long): Boolean = path.waitingAck.remove(msgId)?.let { completeOp(it) } != null

    /** The receiver copied message [msgId] itself: true if it was waiting for a CTS. */
    fun onPulled(path: SendPath, msgId: Long): Boolean = path.waitingCts.remove(msgId)?.let { completeOp(it) } != null

    /** The receiver dropped message [msgId]: true if it was outstanding. */
    fun onDiscarded(path: SendPath, msgId: Long): Boolean =
        (path.waitingCts.remove(msgId) ?: path.waitingAck.remove(msgId))?.let { completeOp(it) } != null

    /** Tells [path]'s receiver not to wait for the link's message [seq] (it failed on another rail); false: no room. */
    fun sendSkip(path: SendPath, seq: Long): Boolean = path.dead || path.outlet.writeSkip(seq)

    /** [path]'s sender says its link message [seq] failed on another rail: the reorder stage stops waiting for it. */
    fun skipped(path: RecvPath, seq: Long) {
        if (path.fiAddr != FiAddr.NOTAVAIL) ep.order?.skip(path.fiAddr, seq)
    }

    /** Tells [path]'s receiver that this endpoint's link has its messages up to [seq]; false: no room. */
    fun sendLinkAck(path: SendPath, seq: Long): Boolean = path.dead || path.outlet.writeLinkAck(seq)

    /** [path]'s peer's link has this endpoint's link messages up to [seq]: its copies kept for resending can go. */
    fun linkAcked(path: RecvPath, seq: Long) {
        if (path.fiAddr != FiAddr.NOTAVAIL) ep.linkAcked(path.fiAddr, seq)
    }

    /** [path]'s peer is gone: every send waiting on it fails with [err]; [msg] names the peer and why. */
    fun failSend(path: SendPath, err: Int, msg: String) {
        path.dead = true
        for (op in path.backlog) failOp(op, err, msg)
        for (op in path.streaming) failOp(op, err, msg)
        for (op in path.waitingCts.values) failOp(op, err, msg)
        for (op in path.waitingAck.values) failOp(op, err, msg)
        path.backlog.clear()
        path.streaming.clear()
        path.waitingCts.clear()
        path.waitingAck.clear()
    }

    private fun finishStream(path: SendPath, op: MsgTxOp) {
        if (op.flags and OpFlags.DELIVERY_COMPLETE != 0L) path.waitingAck.put(op.msgId, op) else completeOp(op)
    }

    private fun failOp(op: MsgTxOp, err: Int, msg: String) {
        ep.txError(
            op.context,
            op.flags,
            op.length.toLong(),
            op.tag,
            err,
            "$msg; send of ${op.length} bytes (tag 0x${java.lang.Long.toHexString(op.tag)}) not delivered",
        )
        releaseOp(op)
    }

    private fun txOp(buffer: DirectBuffer, length: Int, tag: Long, data: Long, flags: Long, context: Any?): MsgTxOp {
        val op = txPool.removeLastOrNull() ?: MsgTxOp()
        op.buffer.wrap(buffer, 0, length)
        op.length = length
        op.tag = tag
        op.data = data
        op.flags = flags
        op.context = context
        op.staged = buffer as? StagedView
        op.msgId = 0
        op.accepted = 0
        op.limit = 0
        op.sent = 0
        op.seq = 0
        op.stripe = 0
        return op
    }

    private fun releaseOp(op: MsgTxOp) {
        op.context = null
        op.staged = null
        op.buffer.wrap(0L, 0)
        op.copy?.let { payloads.release(it) }
        op.copy = null
        txPool.addLast(op)
    }

    private fun completeOp(op: MsgTxOp) {
        ep.txComplete(op.context, op.flags, op.length.toLong(), op.tag)
        releaseOp(op)
    }

    // ## Receive side ##

    /**
     * A message head arrived on [path]: its entry in the shared receive context, matched to a posted receive if one
     * takes it ([isMatched]), else to be [hold]-ed (or freed, by a rail that pushes the sender back). [count]: false
     * when the rail looks the same message up again.
     *
     * A head that carries a link's sequence number [seq] (and [stripe] word, [Transport.sendSequenced]) goes past the
     * endpoint's [ArrivalOrder] first: the receive context sees it only in its sender's order. One that may not go
     * there yet (it is early, or is a part of a striped message) gets an unmatched entry of its own, which the rail
     * holds as it holds an unexpected message; [hold] then hands it to the reorder stage, booked in this rail's bounds.
     */
    fun arrived(
        path: RecvPath,
        tagged: Boolean,
        tag: Long,
        size: Long,
        hasData: Boolean,
        data: Long,
        count: Boolean = true,
        seq: Long = 0,
        stripe: Long = 0,
    ): RxEntry {
        if (count) counters.received(size)
        path.seq = seq
        path.stripe = stripe
        if (seq > path.unresolvedSeq && path.fiAddr == FiAddr.NOTAVAIL) path.unresolvedSeq = seq
        val order = if (seq != 0L) ep.order else null
        // A message its sender's link sent again (its rail died before the acknowledgement) that came the first time.
        if (order != null && order.isDuplicate(path.fiAddr, seq)) {
            return outOfOrder(path, tagged, tag, size).also { it.seq = ArrivalOrder.DUPLICATE }
        }
        val early = order != null && (stripe != 0L || !order.isNext(path.fiAddr, seq))
        val srx = ep.srx
        val e =
            when {
                early -> outOfOrder(path, tagged, tag, size)
                tagged -> srx.getTag(path.fiAddr, tag, size)
                else -> srx.getMsg(path.fiAddr, size)
            }
        if (hasData) {
            e.data = data
            e.flags = e.flags or OpFlags.REMOTE_CQ_DATA
        }
        // Matched: the receive context has it, and the sender's next messages may follow it there.
        if (order != null && !early && srx.isMatched(e)) order.passed(path.fiAddr, seq)
        return e
    }

    /** An entry the receive context never saw, for a head the reorder stage takes ([hold]); never matched. */
    private fun outOfOrder(path: RecvPath, tagged: Boolean, tag: Long, size: Long): RxEntry {
        val e = RxEntry()
        e.tagged = tagged
        e.tag = tag
        e.size = size
        e.addr = path.fiAddr
        e.seq = ArrivalOrder.OUT_OF_ORDER
        e.inUse = true // a rail may free it as it frees an entry it will look up again
        return e
    }

    fun isMatched(e: RxEntry): Boolean = ep.srx.isMatched(e)

    /**
     * Whether an unexpected message of [length] payload bytes must be pushed back rather than held, by a rail that
     * pushes back instead of promising (shm): the endpoint's bounds, shared by its rails, leave this rail no room for
     * it ([UnexpectedBounds]).
     */
    fun mustPushBack(length: Long): Boolean = bounds.mustPushBack(length)

    /** A pooled buffer of [length] bytes for an unexpected eager payload, given to [hold] or [releasePayload]. */
    fun payload(length: Int): UnsafeBuffer = payloads.acquire(length)

    fun releasePayload(bytes: UnsafeBuffer) = payloads.release(bytes)

    /**
     * Holds an unexpected message: [bytes] (from [payload]) for an eager one, or null for a rendezvous, which waits
     * with its sender until a receive matches it.
     */
    fun hold(
        path: RecvPath,
        e: RxEntry,
        bytes: UnsafeBuffer?,
        msgId: Long,
        rendezvous: Boolean,
        wantAck: Boolean,
        cost: Long,
        srcAddress: Long,
    ) {
        if (e.seq == ArrivalOrder.DUPLICATE) {
            // Delivered once already: dropped, its credit returned; a rendezvous' sender is told, so it completes.
            counters.duplicates++
            bytes?.let { payloads.release(it) }
            if (rendezvous) control(path, DISCARDED, msgId, 0)
            if (cost != 0L) path.outlet.release(cost)
            return
        }
        val h = heldPool.removeLastOrNull() ?: MsgHeld()
        h.path = path
        h.bytes = bytes
        h.msgId = msgId
        h.rendezvous = rendezvous
        h.wantAck = wantAck
        h.cost = cost
        h.srcAddress = srcAddress
        h.epoch = path.epoch
        heldCount++
        val n = bytes?.capacity() ?: 0
        heldBytes += n
        if (heldBytes > heldBytesMax) heldBytesMax = heldBytes
        bounds.held(n.toLong(), 1)
        val order = if (path.seq != 0L) ep.order else null
        if (order != null && e.seq == ArrivalOrder.OUT_OF_ORDER) {
            order.arrive(
                path.fiAddr,
                path.seq,
                path.stripe,
                e.tagged,
                e.tag,
                e.size,
                e.flags and OpFlags.REMOTE_CQ_DATA != 0L,
                e.data,
                this,
                h,
            )
            return
        }
        e.peerContext = h
        if (e.tagged) ep.srx.queueTag(e, this) else ep.srx.queueMsg(e, this)
        order?.passed(path.fiAddr, path.seq)
    }

    /** Copies an eager message into its matched receive [e] and completes it. */
    fun deliver(path: RecvPath, e: RxEntry, src: DirectBuffer, offset: Int, wantAck: Boolean, msgId: Long, cost: Long) {
        val n = minOf(e.size, e.buffer.capacity().toLong()).toInt()
        if (n > 0) e.buffer.putBytes(0, src, offset, n)
        delivered(path, e, wantAck, msgId, cost)
    }

    /** An eager message's bytes are in its matched receive [e] (the rail put them there): completes it. */
    fun delivered(path: RecvPath, e: RxEntry, wantAck: Boolean, msgId: Long, cost: Long) {
        if (wantAck) control(path, ACK, msgId, 0)
        if (cost != 0L) path.outlet.release(cost)
        ep.rxComplete(e, e.size)
    }

    /**
     * A receive matched an RTS: pull the bytes if the rail can, else ask for those that fit (CTS) and wait for their
     * fragments.
     */
    fun startRendezvous(path: RecvPath, e: RxEntry, msgId: Long, wantAck: Boolean, srcAddress: Long) {
        val accept = minOf(e.size, e.buffer.capacity().toLong())
        if (srcAddress != 0L && accept > 0 && path.outlet.pull(e, msgId, srcAddress, accept)) {
            control(path, PULLED, msgId, accept)
            ep.rxComplete(e, e.size)
            return
        }
        control(path, CTS, msgId, accept)
        if (accept == 0L) {
            if (wantAck) control(path, ACK, msgId, 0)
            ep.rxComplete(e, e.size)
            return
        }
        val inb = inboundPool.removeLastOrNull() ?: MsgInbound()
        inb.entry = e
        inb.expected = accept
        inb.received = 0
        inb.wantAck = wantAck
        path.outlet.inboundStarted(inb)
        path.inflight.put(msgId, inb)
    }

    /** The rendezvous receive filling for [msgId], or null. */
    fun inbound(path: RecvPath, msgId: Long): MsgInbound? = path.inflight.get(msgId)

    /** [n] more bytes of [msgId] are in [inb]'s buffer (the rail put them there); completes it when all are. */
    fun fragment(path: RecvPath, msgId: Long, inb: MsgInbound, n: Int) {
        inb.received += n
        if (inb.received < inb.expected) return
        path.inflight.remove(msgId)
        path.outlet.inboundEnded(inb)
        val e = inb.entry!!
        inb.entry = null
        inboundPool.addLast(inb)
        if (inb.wantAck) control(path, ACK, msgId, 0)
        ep.rxComplete(e, e.size)
    }

    /** Sends a control record to [path]'s sender, queued if its outlet has no room now. */
    fun control(path: RecvPath, type: Int, msgId: Long, value: Long) {
        if (path.dead) return
        if (path.pendingControl.isEmpty() && path.outlet.writeControl(type, msgId, value)) return
        path.pendingControl.add(type.toLong(), msgId, value)
    }

    /** Writes the control records waiting for room; returns how many went. */
    fun flushControl(path: RecvPath): Int {
        var n = 0
        val q = path.pendingControl
        while (!q.isEmpty()) {
            if (!path.outlet.writeControl(q.first(0).toInt(), q.first(1), q.first(2))) break
            q.removeFirst()
            n++
        }
        return n
    }

    /**
     * [path] has just been found in the AV as [addr]: messages it sent before, held with source NOTAVAIL, are its now
     * (and match receives directed at it).
     */
    fun resolved(path: RecvPath, addr: Long) {
        path.fiAddr = addr
        // Its sequenced messages so far passed as they came (no sender to order them by): the next ones follow them.
        if (path.unresolvedSeq != 0L) ep.order?.passed(addr, path.unresolvedSeq)
        ep.srx.foreachUnspecAddr { e -> if ((e.peerContext as? MsgHeld)?.path === path) addr else FiAddr.NOTAVAIL }
    }

    /**
     * [path]'s sender is gone: the rendezvous receives it was filling fail with [err] (what arrived stays delivered),
     * and later starts of its held rendezvous messages fail naming [why]. [msg] names the peer and why.
     */
    fun failRecv(path: RecvPath, err: Int, why: String, msg: String) {
        // What the sender had in flight on this rail is lost (or, in a link that resends, comes again on another rail).
        if (path.fiAddr != FiAddr.NOTAVAIL) ep.railLost(path.fiAddr)
        path.dead = true
        path.deadErr = err
        path.deadWhy = why
        for (inb in path.inflight.values) {
            val e = inb.entry!!
            ep.rxError(
                e.context,
                recvFlags(e),
                inb.received,
                e.data,
                e.tag,
                0,
                err,
                e.addr,
                "$msg mid-transfer: ${inb.received} of ${inb.expected} bytes received",
            )
            ep.srx.freeEntry(e)
            inb.entry = null
            inboundPool.addLast(inb)
        }
        path.inflight.clear()
        while (!path.pendingControl.isEmpty()) path.pendingControl.removeFirst()
    }

    /** A receive being filled by an eager message whose sender went mid-message fails with [err]. */
    fun failPartial(e: RxEntry, err: Int, msg: String) {
        ep.rxError(e.context, recvFlags(e), 0, e.data, e.tag, 0, err, e.addr, "$msg in the middle of this message")
        ep.srx.freeEntry(e)
    }

    /**
     * Fails the receives posted for [addr] alone with EHOSTDOWN: nothing can arrive for them (no rail of the endpoint
     * reaches the peer any more); [why] names the peer.
     */
    fun failDirected(addr: Long, why: String) {
        // Another rail of a link may still reach the peer: its receives can still complete there.
        if (addr == FiAddr.NOTAVAIL || !ep.lostEverywhere(addr)) return
        ep.srx.drainDirected(addr) { e ->
            ep.rxError(
                e.context,
                recvFlags(e),
                0,
                0,
                e.tag,
                0,
                Errno.EHOSTDOWN,
                addr,
                "$why; no message can arrive for this receive",
            )
            ep.srx.freeEntry(e)
        }
    }

    /** Reports [addr]'s peer down on the endpoint's event queue, unless another rail of a link still reaches it. */
    fun peerDown(addr: Long, msg: String) {
        if (ep.lostEverywhere(addr)) ep.peerDown(addr, msg)
    }

    /** Bytes received so far into the rendezvous receives [path] is filling. */
    fun inflightBytes(path: RecvPath): Long {
        var n = 0L
        for (inb in path.inflight.values) n += inb.received
        return n
    }

    // ## Peer operations of the shared receive context ##

    override fun startMsg(entry: RxEntry) = start(entry)

    override fun startTag(entry: RxEntry) = start(entry)

    override fun discardMsg(entry: RxEntry) = discard(entry)

    override fun discardTag(entry: RxEntry) = discard(entry)

    private fun start(e: RxEntry) {
        val h = e.peerContext as MsgHeld
        val path = h.path!!
        e.peerContext = null
        unhold(h)
        val bytes = h.bytes
        // Held from a connection before the peer reconnected: its credit, ACK and CTS belong to that one, gone.
        val stale = h.epoch != path.epoch
        if (bytes != null) {
            if (stale) deliver(path, e, bytes, 0, false, 0, 0)
            else deliver(path, e, bytes, 0, h.wantAck, h.msgId, h.cost)
            payloads.release(bytes)
        } else if (path.dead || stale) {
            ep.rxError(
                e.context,
                recvFlags(e),
                0,
                e.data,
                e.tag,
                0,
                if (stale) Errno.ECONNRESET else path.deadErr,
                e.addr,
                "$rail: peer ${path.peer.render()} ${if (stale) "reset the connection" else path.deadWhy} " +
                    "before sending the ${e.size} bytes of this message",
            )
            ep.srx.freeEntry(e)
        } else {
            if (h.cost != 0L) path.outlet.release(h.cost)
            startRendezvous(path, e, h.msgId, h.wantAck, h.srcAddress)
        }
        releaseHeld(h)
    }

    private fun discard(e: RxEntry) {
        val h = e.peerContext as MsgHeld
        val path = h.path!!
        e.peerContext = null
        unhold(h)
        val bytes = h.bytes
        val current = h.epoch == path.epoch
        if (bytes != null) {
            payloads.release(bytes)
            if (h.wantAck && current) control(path, ACK, h.msgId, 0)
        } else if (current) {
            control(path, DISCARDED, h.msgId, 0)
        }
        if (h.cost != 0L && current) path.outlet.release(h.cost)
        ep.srx.freeEntry(e)
        releaseHeld(h)
    }

    /**
     * [h]'s message is no longer held (for this rail and the endpoint's bounds): booked out before its credit or room
     * is freed.
     */
    private fun unhold(h: MsgHeld) {
        val n = h.bytes?.capacity() ?: 0
        heldCount--
        heldBytes -= n
        bounds.held(-n.toLong(), -1)
    }

    private fun releaseHeld(h: MsgHeld) {
        h.path = null
        h.bytes = null
        heldPool.addLast(h)
    }

    internal companion object {
        fun recvFlags(e: RxEntry): Long = if (e.tagged) OpFlags.TAGGED else OpFlags.MSG
    }
}
