package braid.provider.link

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.EndpointStats
import braid.core.Errno
import braid.core.Info
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RailStats
import braid.core.RxEntry
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2LongHashMap
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer

/** One rail of a link endpoint: its identity ([name]), [provider], [weight], its view of the AV and its transport. */
internal class LinkRail(
    val name: String,
    val provider: String,
    val weight: Double,
    val av: RailAv,
    val transport: Transport,
    /** The rail's eager size: a part of a striped message is larger, so it travels as a rendezvous. */
    val eagerSize: Int = 0,
) {
    /** Peers pinned to this rail now (the [LinkShape.PER_PEER] spread). */
    var pinned: Int = 0

    /**
     * Per peer this rail lost: the connection it lost ([Transport.connectionGeneration]); a newer one brings it back.
     */
    val failedAt = Long2LongHashMap(0L)
}

/**
 * A link's part of one endpoint: the rails' transports side by side. Sends pass through to the rail the destination's
 * route picks — shm when the peer's host identity is this host's and both have shm, else a network rail — so one peer
 * is reached over one rail at a time and its messages keep their order. With several network rails the policy
 * ([LinkShape.PER_PEER]) pins each peer to one, choosing for a new peer the rail whose pinned peers are fewest for its
 * weight (the least `(pinned + 1) / weight`), among the rails the peer's address has a part for. Under
 * [LinkShape.ROUND_ROBIN] and [LinkShape.STRIPE] a peer's messages are spread instead, each with this endpoint's
 * sequence number for the peer ([sendSpread]), and the peer's [ReorderStage] puts them back in order. Receives never
 * pass through here: each rail matches against the endpoint's shared receive context and completes into its CQ, so an
 * any-source receive is matched exactly once whichever rail's message arrives first (all run under the domain lock).
 *
 * Failover without loss: with several network rails that carry sequence numbers, every message to another host is
 * numbered (under PER_PEER too), and an eager one is kept as a copy ([sendKept], bounded by [LinkParams.RESEND_BYTES])
 * until the receiver's link acknowledges it ([acked]). When a rail loses a peer ([railLost], [keptFailed]) the rail is
 * marked failed for it, the copies it carried go again on a surviving rail with the same numbers ([sendResends]), and
 * the receiver's [ReorderStage] drops any it had. The failed rail is retried and re-admitted once connected again
 * ([readmit]). Large messages, RMA and atomics fail over between operations only: one refused on a dead rail is posted
 * on the next (never carried twice, so an atomic is applied at most once); one in flight fails. When no rail to the
 * peer is left, operations fail and are refused (`-EHOSTDOWN`), and [describeRoute] names the rails tried. A rail that
 * loses a peer another rail still reaches neither fails the receives directed at it nor reports it down
 * ([LinkRailHost]).
 */
internal class LinkTransport(
    private val host: RailHost,
    private val av: RailAv,
    private val info: Info,
    private val hostId: Long,
    private val rails: List<LinkRail>,
    private val useSrq: Boolean,
    private val dumpStats: Boolean,
    /** One of [LinkShape.POLICIES]. */
    private val policy: String = LinkShape.PER_PEER,
    /** Under [LinkShape.STRIPE], messages larger than this are split over the rails. */
    private val stripeThreshold: Int = Int.MAX_VALUE,
    /** The receive side's reorder stage, shared with the rails' hosts ([LinkRailHost]). */
    private val stage: ReorderStage? = null,
    /** [LinkParams.RESEND_BYTES]: the copies of sent eager messages kept until acknowledged; 0 keeps none. */
    private val resendBytes: Long = 0,
) : Transport {
    private val shmRail: LinkRail? = rails.firstOrNull { it.provider == LinkProvider.SHM }
    private val shm: Transport? = shmRail?.transport
    private val networks: Array<LinkRail> = rails.filter { it.provider != LinkProvider.SHM }.toTypedArray()
    /** Every rail, as an array: the duty cycle walks it by index, allocating no iterator. */
    private val all: Array<LinkRail> = rails.toTypedArray()
    private val routes = Long2ObjectHashMap<LinkRail>()
    /** Per peer, a bit per network rail that failed it (cleared when the AV changes). */
    private val failed = Long2LongHashMap(0L)
    private var routesGeneration = -1L

    /**
     * Whether messages to another host are spread over the network rails one by one ([LinkShape.ROUND_ROBIN],
     * [LinkShape.STRIPE]): then each carries this endpoint's sequence number for its destination.
     */
    private val spreads: Boolean = LinkShape.spreadsMessages(policy) && networks.size > 1

    /**
     * Whether messages to another host carry this endpoint's sequence number for their destination: when they are
     * spread, and under [LinkShape.PER_PEER] too when the link resends (so that a resent message and its first copy are
     * told apart, and what follows it on the surviving rail waits for it).
     */
    private val sequenced: Boolean =
        networks.size > 1 && networks.all { it.transport.carriesSequence } && (spreads || resendBytes > 0)

    /** Messages up to this many bytes are kept until acknowledged (the smallest eager size of the rails); -1: none. */
    private val keepLimit: Int = if (sequenced && resendBytes > 0) networks.minOf { it.eagerSize } else -1

    /** Per destination, the sequence number its next message carries (from 1). */
    private val nextSeq = Long2LongHashMap(1L)

    /** The weighted round robin's running credit per network rail (smooth weighted round robin). */
    private val rrCredit = DoubleArray(networks.size)

    /**
     * Parts of striped messages a rail had no room for when they were sent, in sequence order: sent from [progress].
     */
    private val pendingParts = ArrayDeque<Part>()

    /** A part of a striped message waiting for room. */
    private class Part(
        val buffer: DirectBuffer,
        val dest: Long,
        val tag: Long,
        val data: Long,
        val flags: Long,
        val join: StripeSend,
        val seq: Long,
        val stripe: Long,
        var rail: LinkRail,
    )

    override val address: ByteArray =
        LinkAddressDescriptor.encode(
            hostId,
            rails.map { it.name },
            rails.map { braid.provider.AddressHeader.kindOf(it.provider) to it.transport.address },
        )

    override val counters: RailCounters = RailCounters("link")

    override val acceptsAnySource: Boolean
        get() = useSrq

    override fun railStats(): List<RailStats> =
        rails.flatMap { r ->
            r.transport.railStats().map { st ->
                val order = stage?.rail(st.rail) ?: return@map st
                st.copy(reordered = order.handed, reorderDepthMax = order.depthMax)
            }
        }

    override fun telemetry(): Map<String, Long> {
        val sum = HashMap<String, Long>()
        for (r in rails) for ((k, v) in r.transport.telemetry()) sum.merge(k, v, Long::plus)
        return sum
    }

    override fun pauseStats(pause: Boolean) {
        counters.pause(pause)
        rails.forEach { it.transport.pauseStats(pause) }
    }

    override fun enable() {
        for (r in rails) r.transport.enable()
    }

    /**
     * Polls shm every time and the network rails when [schedule] says (every time while one is busy, else about once
     * per [NetworkPollSchedule.IDLE_POLL_NANOS]), reading the clock only when the schedule's countdown runs out.
     */
    override fun progress(): Int {
        if (pendingParts.isNotEmpty()) sendPendingParts()
        if (!skips.isEmpty()) sendSkips()
        if (resendDue.isNotEmpty()) sendResends()
        if (stage != null && stage.acksDue && stage.ackUrgent) stage.sendAcks(ackSink)
        if (--clockCountdown <= 0) timed()
        val shm = shm
        if (shm == null || networks.isEmpty()) {
            var work = 0
            for (i in all.indices) work += all[i].transport.progress()
            if (stage?.watching == true) stage.tick(System.nanoTime())
            return work
        }
        val work = shm.progress()
        if (--schedule.countdown > 0) return work
        val now = System.nanoTime()
        if (!schedule.due(now)) return work
        var w = 0
        for (i in networks.indices) w += networks[i].transport.progress()
        schedule.polled(now, w)
        if (stage?.watching == true) stage.tick(now)
        return work + w
    }

    private val schedule = NetworkPollSchedule()

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        var rail = railFor(dest) ?: return unrouted(dest)
        if (sequenced && rail !== shmRail) return sendSpread(buffer, dest, tag, data, flags, context)
        while (true) {
            val rc = rail.transport.send(buffer, dest, tag, data, flags, context)
            rail = failover(dest, rail, rc) ?: return rc
        }
    }

    // ## Spreading one peer's messages: round robin and striping, each message with its sequence number ##

    /**
     * A message to [dest] under [LinkShape.ROUND_ROBIN] or [LinkShape.STRIPE]: whole over the next rail of the round
     * robin, or (STRIPE, above the threshold, not an inject) split over the rails by weight. Its sequence number is
     * taken only once its rail (or its first part's) accepted it, so a refused send leaves no gap.
     */
    private fun sendSpread(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        // Each rail takes its messages in sequence order: none overtakes a part still waiting for room. (One that did
        // would be held early at the receiver, on the credit of the very rail the part it waits for needs.)
        if (pendingParts.isNotEmpty()) {
            sendPendingParts()
            if (pendingParts.isNotEmpty()) return -Errno.EAGAIN
        }
        // Nor a message resent after its rail died (it would hold the new one early at the receiver).
        if (resendDue.isNotEmpty()) {
            sendResends()
            if (resendDue.isNotEmpty()) return -Errno.EAGAIN
        }
        val seq = nextSeq.get(dest)
        val length = buffer.capacity()
        if (policy == LinkShape.STRIPE && length > stripeThreshold && flags and OpFlags.INJECT == 0L) {
            val rc = sendStriped(buffer, dest, tag, data, flags, context, seq)
            if (rc != NOT_STRIPED) return rc
        }
        var rail = pick(dest) ?: return unrouted(dest)
        if (length <= keepLimit && length <= keepableTo(dest))
            return sendKept(buffer, dest, tag, data, flags, context, seq, rail)
        // An inject has no completion, and no error to announce: it goes as it is.
        val ctx: Any? = if (flags and OpFlags.INJECT != 0L) context else flight(context, dest, seq)
        while (true) {
            val rc = rail.transport.sendSequenced(buffer, dest, tag, data, flags, ctx, seq, 0)
            if (rc == 0) {
                nextSeq.put(dest, seq + 1)
                return 0
            }
            val next = failSpread(dest, rail, rc)
            if (next == null) {
                if (ctx is Flight) release(ctx)
                return rc
            }
            rail = next
        }
    }

    /** Per destination, the largest message its rails' peers can take again ([keepableTo]), for one AV generation. */
    private val keepTo = Long2LongHashMap(-1L)
    private var keepGeneration = -1L

    /**
     * The largest message to [dest] kept for resending: the least [Transport.resendLimit] of the rails that reach it
     * (the peer's eager size on tcp, which the credit it keeps for resends covers). A larger one goes unkept, as a
     * rendezvous does: it fails if its rail dies. Looked up once per destination and AV generation.
     */
    private fun keepableTo(dest: Long): Int {
        if (av.generation != keepGeneration) {
            keepTo.clear()
            keepGeneration = av.generation
        }
        val known = keepTo.get(dest)
        if (known >= 0) return known.toInt()
        var limit = Int.MAX_VALUE
        for (i in networks.indices) {
            val r = networks[i]
            if (r.av.query(dest) != null) limit = minOf(limit, r.transport.resendLimit(dest))
        }
        keepTo.put(dest, limit.toLong())
        return limit
    }

    /** The rail for [dest]'s next sequenced message: the round robin's next ([spreads]), else the peer's pinned one. */
    private fun pick(dest: Long): LinkRail? = if (spreads) nextRail(dest) else route(dest)

    // ## Resending: a copy of each eager message kept until its receiver acknowledges it ##

    /** Per destination, the kept messages not yet acknowledged, in sequence order. */
    private val keptBy = Long2ObjectHashMap<ArrayDeque<Kept>>()
    private val keptPool = ArrayDeque<Kept>()
    private val copies = braid.provider.PayloadPool(resendBytes)

    /** Bytes kept now (at most [resendBytes]). */
    private var keptBytes = 0L

    /** Destinations with kept messages to send again, on a surviving rail. */
    private val resendDue = ArrayList<Long>(2)

    /** Kept messages marked for sending again so far ([resendTo] tells a resend that a rail lost at once by it). */
    private var pendingMarks = 0L

    /**
     * Sends a copy of [buffer] as message [seq] on [first] (or the next rail if the peer is gone there), keeping the
     * copy until [dest] acknowledges it. The application's send completes when a rail has written it, as on one rail:
     * the copy, not its buffer, is what is sent again.
     */
    private fun sendKept(
        buffer: DirectBuffer,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        seq: Long,
        first: LinkRail,
    ): Int {
        val length = buffer.capacity()
        if (keptBytes + length > resendBytes) return -Errno.EAGAIN // acknowledgements make room
        val k = keptPool.removeLastOrNull() ?: Kept()
        val copy = copies.acquire(length)
        copy.putBytes(0, buffer, 0, length)
        k.copy = copy
        k.length = length
        k.dest = dest
        k.seq = seq
        k.tag = tag
        k.data = data
        k.flags = flags
        k.context = context
        keptBytes += length
        // Kept before it is sent: the rail may write it, complete it and then find its connection gone within this
        // very call (tcp flushes at once), and [railLost] must find the copy then to send it again.
        val q = keptBy.get(dest) ?: ArrayDeque<Kept>().also { keptBy.put(dest, it) }
        q.addLast(k)
        var rail = first
        while (true) {
            k.rail = rail
            k.onRail = 1
            val rc = rail.transport.sendSequenced(copy, dest, tag, data, k.wireFlags, k, seq, 0)
            if (rc == 0) {
                nextSeq.put(dest, seq + 1)
                return 0
            }
            k.onRail = 0
            val next = failSpread(dest, rail, rc)
            if (next == null) {
                // Refused, so never carried (and nothing was queued after it): it was never sent.
                if (q.lastOrNull() === k) q.removeLast()
                k.completed = true
                releaseKept(k)
                return rc
            }
            rail = next
        }
    }

    /** [k]'s rail wrote it: the application's send completes (once); the copy stays until acknowledged. */
    internal fun keptSent(k: Kept) {
        k.onRail--
        complete(k)
        if ((k.acked || k.dead) && k.onRail == 0) releaseKept(k)
    }

    /** [k]'s rail failed it (the peer died on it): it goes again on another rail, unless the receiver has it. */
    internal fun keptFailed(k: Kept) {
        k.onRail--
        if (k.acked || k.dead) {
            if (k.acked) complete(k)
            if (k.onRail == 0) releaseKept(k)
            return
        }
        k.rail?.let { markFailed(k.dest, it) }
        if (!k.pending) {
            k.pending = true
            pendingMarks++
            resendDue(k.dest)
        }
    }

    private fun resendDue(dest: Long) {
        if (!resendDue.contains(dest)) resendDue += dest
    }

    /** [dest]'s link has every message up to [upTo]: the kept copies up to it go. */
    internal fun acked(dest: Long, upTo: Long) {
        val q = keptBy.get(dest) ?: return
        while (q.isNotEmpty() && q.first().seq <= upTo) {
            val k = q.removeFirst()
            k.acked = true
            k.pending = false
            if (k.onRail == 0) {
                complete(k)
                releaseKept(k)
            }
        }
    }

    /**
     * Rail [name] lost [addr]'s peer. What it carried to the peer and was not acknowledged goes again on the surviving
     * rails, with the same sequence numbers (what it had not written yet comes back through [keptFailed]); and the
     * messages held after the gaps the peer's lost messages leave wait for the peer's resends, unless no rail to it is
     * left (or this link does not resend): then they go on now.
     */
    internal fun railLost(name: String, addr: Long) {
        val rail = networks.firstOrNull { it.name == name }
        if (rail != null && keepLimit >= 0) {
            markFailed(addr, rail)
            keptBy.get(addr)?.let { q ->
                var any = false
                for (k in q) {
                    if (k.rail === rail && !k.pending && k.onRail == 0) {
                        k.pending = true
                        pendingMarks++
                        any = true
                    }
                }
                if (any) resendDue(addr)
            }
        }
        if (keepLimit < 0 || !reachedElsewhere(addr, name)) stage?.skipGaps(addr)
    }

    /** Sends again what is due, in sequence order per destination, as far as the rails take it. */
    private fun sendResends() {
        var i = 0
        while (i < resendDue.size) {
            if (resendTo(resendDue[i])) resendDue.removeAt(i) else i++
        }
    }

    /**
     * Sends [dest]'s pending kept messages again; true when none is left pending (a rail that dies under a resend,
     * within the very call that wrote it, marks what it carried pending again: that goes on the next call).
     */
    private fun resendTo(dest: Long): Boolean {
        val q = keptBy.get(dest) ?: return true
        val moved = Moved(dest)
        val marks = pendingMarks
        for (k in q) {
            if (!k.pending) continue
            var rail = pick(dest)
            while (true) {
                if (rail == null) {
                    moved.report()
                    failKept(dest)
                    return true
                }
                val from = k.rail
                k.rail = rail
                k.onRail++
                // Not pending while its rail has it: if the rail writes it and then loses its connection within this
                // call, [railLost] or [keptFailed] marks it pending again, and that must stand.
                k.pending = false
                // RESEND: the rail may spend the credit it keeps back for it (the receiver may hold all the rest of
                // this rail's credit in messages sent after this one, waiting for it).
                val flags = k.wireFlags or braid.provider.SendOutlet.RESEND
                val rc = rail.transport.sendSequenced(k.copy!!, dest, k.tag, k.data, flags, k, k.seq, 0)
                if (rc == 0) {
                    rail.transport.counters.retransmissions++
                    moved.add(from, rail)
                    break
                }
                k.pending = true
                k.onRail--
                if (rc == -Errno.EAGAIN) {
                    moved.report()
                    return false
                }
                rail = failSpread(dest, rail, rc)
            }
        }
        moved.report()
        return pendingMarks == marks
    }

    /** Resent messages to [dest] counted per move from one rail to another, reported to the host (JFR) as runs. */
    private inner class Moved(private val dest: Long) {
        private var from: LinkRail? = null
        private var to: LinkRail? = null
        private var count = 0L

        fun add(from: LinkRail?, to: LinkRail) {
            if (from !== this.from || to !== this.to) report()
            this.from = from
            this.to = to
            count++
        }

        fun report() {
            val to = to ?: return
            if (count > 0) host.failover(dest, from?.name ?: "?", to.name, count)
            count = 0
        }
    }

    /** No rail reaches [dest] any more: its kept messages whose sends have not completed fail, naming the rails. */
    private fun failKept(dest: Long) {
        val q = keptBy.remove(dest) ?: return
        val why = describeRoute(dest) ?: "no rail of link '${info.domainName}' reaches it"
        for (k in q) {
            k.dead = true
            k.pending = false
            if (!k.completed) {
                k.completed = true
                if (k.flags and OpFlags.INJECT == 0L)
                    host.txError(
                        k.context,
                        k.flags,
                        k.length.toLong(),
                        k.tag,
                        Errno.EHOSTDOWN,
                        "link: peer $dest is lost on every rail ($why); send of ${k.length} bytes not delivered",
                    )
                k.context = null
            }
            if (k.onRail == 0) releaseKept(k)
        }
    }

    private fun complete(k: Kept) {
        if (k.completed) return
        k.completed = true
        if (k.flags and OpFlags.INJECT == 0L) host.txComplete(k.context, k.flags, k.length.toLong(), k.tag)
        k.context = null
    }

    private fun releaseKept(k: Kept) {
        keptBytes -= k.length
        k.copy?.let { copies.release(it) }
        k.copy = null
        k.context = null
        k.rail = null
        k.onRail = 0
        k.pending = false
        k.acked = false
        k.completed = false
        k.dead = false
        keptPool.addLast(k)
    }

    /**
     * Sends [upTo] to [src] as its acknowledgement over the first rail that takes it; true if one did (or none can).
     */
    private val ackSink =
        ReorderStage.AckSink { src, upTo ->
            var busy = false
            for (i in networks.indices) {
                val r = networks[i]
                if (!r.transport.carriesSequence || r.av.query(src) == null || r.transport.peerGone(src)) continue
                val rc = r.transport.sendLinkAck(src, upTo)
                if (rc == 0) return@AckSink true
                if (rc == -Errno.EAGAIN) busy = true
            }
            !busy
        }

    /** Progress calls until the next look at the clock ([timed]). */
    private var clockCountdown = CLOCK_POLLS
    private var ackedAt = 0L

    /**
     * Every [CLOCK_POLLS] progress calls: acknowledgements not yet [ReorderStage.ACK_EVERY] due go when the stream
     * pauses (at most every [ACK_DELAY]), and failed rails are retried ([readmit]).
     */
    private fun timed() {
        clockCountdown = CLOCK_POLLS
        val stage = stage ?: return
        if (!stage.acksDue && (!reconnects || failed.isEmpty())) return
        val now = System.nanoTime()
        if (stage.acksDue && now - ackedAt >= ACK_DELAY) {
            ackedAt = now
            stage.sendAcks(ackSink)
        }
        if (reconnects && !failed.isEmpty() && now - retryAt >= 0) readmit(now)
    }

    // ## Reconnecting a failed rail, and re-admitting it ##

    /** Whether failed rails are retried: a link that resends (a rail that comes back has lost nothing). */
    internal val reconnects: Boolean = keepLimit >= 0

    private var retryAt = 0L
    private var retryMin = RETRY_MIN
    private var retryMax = RETRY_MAX
    private var retryBackoff = RETRY_MIN

    /**
     * For each peer with failed rails: a rail that came back ([cameBack]) is re-admitted ([readmitBack]); one still
     * down is retried (the rail reconnects) while another rail still reaches the peer, with a back-off from [RETRY_MIN]
     * doubling to [RETRY_MAX] while any stays down.
     */
    private fun readmit(now: Long) {
        var down = false
        for (dest in failed.keys.toList()) {
            readmitBack(dest)
            val bits = failed.get(dest)
            for (i in networks.indices) {
                if (bits and (1L shl i) == 0L) continue
                val r = networks[i]
                if (!reachedElsewhere(dest, r.name)) continue
                if (!r.transport.connected(dest)) r.transport.reconnect(dest)
                down = true
            }
        }
        retryBackoff = if (down) minOf(retryBackoff * 2, retryMax) else retryMin
        retryAt = now + retryBackoff
    }

    /**
     * Re-admits [dest]'s failed rails that came back: the peer's traffic may take them again, and under PER_PEER it is
     * pinned afresh. At the retry tick ([readmit]), and at once when an operation finds no other rail left ([route],
     * [nextRail]) rather than refusing it. Whether any was.
     */
    private fun readmitBack(dest: Long): Boolean {
        val before = failed.get(dest)
        var bits = before
        for (i in networks.indices) {
            val bit = 1L shl i
            if (bits and bit != 0L && cameBack(dest, networks[i])) bits = bits and bit.inv()
        }
        if (bits == before) return false
        if (bits == 0L) failed.remove(dest) else failed.put(dest, bits)
        routes.remove(dest)?.let { it.pinned-- }
        return true
    }

    /**
     * Whether failed [rail] reaches [dest] again: connected over a connection established after the one it lost
     * ([Transport.connectionGeneration] above what [markFailed] recorded). Never over the lost connection itself: a
     * reset tcp reports itself connected until it reads the reset, and traffic sent there would be lost.
     */
    private fun cameBack(dest: Long, rail: LinkRail): Boolean =
        rail.transport.connected(dest) && rail.transport.connectionGeneration(dest) > rail.failedAt.get(dest)

    /**
     * Tests: failed rails are retried every [nanos] (the back-off neither shorter nor longer), the next time at [from]
     * (a System.nanoTime() value; 0: at the next look at the clock).
     */
    internal fun retryEvery(nanos: Long, from: Long) {
        retryMin = nanos
        retryMax = nanos
        retryBackoff = nanos
        retryAt = from
    }

    /** Whether [dest] has rail [name] failed now (for tests and diagnostics). */
    internal fun railFailed(dest: Long, name: String): Boolean {
        val i = networks.indexOfFirst { it.name == name }
        return i >= 0 && failed.get(dest) and (1L shl i) != 0L
    }

    // ## Flights: a sequenced message's completion, and a SKIP for its number when its rail fails it ##

    private val flights = ArrayDeque<Flight>()

    private fun flight(context: Any?, dest: Long, seq: Long): Flight {
        val f = flights.removeLastOrNull() ?: Flight()
        f.context = context
        f.dest = dest
        f.seq = seq
        return f
    }

    private fun release(f: Flight) {
        f.context = null
        flights.addLast(f)
    }

    /** [f]'s rail completed it: what it stood for (the application's context, or a striped send's join). */
    internal fun flightDone(f: Flight): Any? = f.context.also { release(f) }

    /**
     * [f]'s rail failed it (its error completion follows): the destination is told over another rail, from [progress],
     * not to wait for its sequence number (a SKIP), so the messages after it are not held for ever.
     */
    internal fun flightFailed(f: Flight): Any? {
        skips.add(f.dest, f.seq, 0)
        return flightDone(f)
    }

    /** SKIPs to send: destination, sequence number. */
    private val skips = braid.provider.TripleQueue()

    private fun sendSkips() {
        while (!skips.isEmpty()) {
            val dest = skips.first(0)
            val seq = skips.first(1)
            var rc = -Errno.EHOSTDOWN
            for (i in networks.indices) {
                val r = networks[i]
                if (!r.transport.carriesSequence || r.av.query(dest) == null || r.transport.peerGone(dest)) continue
                rc = r.transport.sendSkip(dest, seq)
                if (rc == 0 || rc == -Errno.EAGAIN) break
            }
            if (rc == -Errno.EAGAIN) return
            skips.removeFirst() // sent, or no rail reaches the peer any more
        }
    }

    /**
     * Splits [buffer] over the rails that reach [dest], in proportion to their weights, each part larger than the eager
     * size (a rail whose share would be smaller gives it to the others); returns [NOT_STRIPED] when fewer than two
     * parts result. Part k carries sequence number [seq] + k and its stripe word.
     */
    private fun sendStriped(
        buffer: DirectBuffer,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        seq: Long,
    ): Int {
        val length = buffer.capacity()
        val rails = reaching(dest)
        val minPart = rails.maxOf { it.eagerSize }.toLong() + 1
        // Drop the lightest rails until every share is larger than the eager size.
        while (rails.size > 1) {
            val sum = rails.sumOf { it.weight }
            val lightest = rails.minBy { it.weight }
            if ((length * lightest.weight / sum).toLong() >= minPart) break
            rails.remove(lightest)
        }
        if (rails.size < 2) return NOT_STRIPED
        // A device message staged chunk by chunk is cut into parts only once it is staged whole (each part a buffer).
        if (buffer is braid.provider.StagedView && !buffer.whole) buffer.stageAll()
        val sum = rails.sumOf { it.weight }
        val join = StripeSend(host, context, flags, length.toLong(), tag, rails.size)
        var offset = 0
        for ((k, rail) in rails.withIndex()) {
            val n =
                if (k == rails.size - 1) length - offset
                else ((length * rail.weight / sum).toLong() and ALIGN.inv()).toInt()
            val part =
                Part(
                    UnsafeBuffer(buffer, offset, n),
                    dest,
                    tag,
                    data,
                    flags,
                    join,
                    seq + k,
                    stripeWord(offset, length),
                    rail,
                )
            rail.transport.counters.fragments++
            rail.transport.counters.fragmentBytes += n
            offset += n
            if (k == 0) {
                // The first part decides: refused, nothing of the message went.
                var r = rail
                while (true) {
                    val rc =
                        r.transport.sendSequenced(
                            part.buffer,
                            dest,
                            tag,
                            data,
                            flags,
                            flight(join, dest, part.seq),
                            part.seq,
                            part.stripe,
                        )
                    if (rc == 0) break
                    r = failSpread(dest, r, rc) ?: return rc
                }
                nextSeq.put(dest, seq + rails.size)
            } else if (pendingParts.isNotEmpty() || !sendPart(part)) {
                pendingParts.addLast(part)
            }
        }
        return 0
    }

    /** Sends [part] now: true if a rail took it, or it failed for good (its join then carries the error). */
    private fun sendPart(part: Part): Boolean {
        while (true) {
            val rc =
                part.rail.transport.sendSequenced(
                    part.buffer,
                    part.dest,
                    part.tag,
                    part.data,
                    part.flags,
                    flight(part.join, part.dest, part.seq),
                    part.seq,
                    part.stripe,
                )
            if (rc == 0) return true
            if (rc == -Errno.EAGAIN) return false
            val next = failSpread(part.dest, part.rail, rc)
            if (next == null) {
                part.join.partDone(
                    -rc,
                    "part ${part.seq} to ${part.dest} refused: ${describeRoute(part.dest) ?: Errno.name(-rc)}",
                )
                return true
            }
            part.rail = next
        }
    }

    private fun sendPendingParts() {
        while (pendingParts.isNotEmpty()) {
            if (!sendPart(pendingParts.first())) return
            pendingParts.removeFirst()
        }
    }

    /** The network rails that reach [dest] and carry sequence numbers, and have not failed it. */
    private fun reaching(dest: Long): ArrayList<LinkRail> {
        val skip = failed.get(dest)
        val out = ArrayList<LinkRail>(networks.size)
        for (i in networks.indices) {
            val r = networks[i]
            if (skip and (1L shl i) == 0L && r.transport.carriesSequence && r.av.query(dest) != null) out += r
        }
        return out
    }

    /**
     * The next rail of the weighted round robin among those that reach [dest] (smooth weighted round robin: each rail
     * gains its weight, the richest is chosen and pays the sum, so weights 2:1 give A A B, interleaved).
     */
    private fun nextRail(dest: Long): LinkRail? {
        val skip = failed.get(dest)
        var best = -1
        var sum = 0.0
        for (i in networks.indices) {
            val r = networks[i]
            if (skip and (1L shl i) != 0L || !r.transport.carriesSequence || r.av.query(dest) == null) continue
            rrCredit[i] += r.weight
            sum += r.weight
            if (best < 0 || rrCredit[i] > rrCredit[best]) best = i
        }
        if (best < 0) return if (readmitBack(dest)) nextRail(dest) else null
        rrCredit[best] -= sum
        return networks[best]
    }

    /**
     * [rail] refused a spread message to [dest] with [rc]: the next rail to try if the peer is gone on it, else null.
     */
    private fun failSpread(dest: Long, rail: LinkRail, rc: Int): LinkRail? {
        if (!peerGone(rc) || networks.indexOf(rail) < 0) return null
        markFailed(dest, rail)
        return pick(dest)
    }

    /** Routes and failed rails hold for one generation of the AV: a new one starts them afresh. */
    private fun syncRoutes() {
        if (av.generation != routesGeneration) {
            routes.clear()
            failed.clear()
            for (r in networks) {
                r.pinned = 0
                r.failedAt.clear()
            }
            routesGeneration = av.generation
        }
    }

    /** [rail] lost [dest]: not tried for it again (until the AV changes), counted once as a failover. */
    private fun markFailed(dest: Long, rail: LinkRail) {
        val index = networks.indexOf(rail)
        if (index < 0) return
        if (av.bound) syncRoutes()
        // The connection it lost: only a newer one brings the rail back ([cameBack]).
        val generation = rail.transport.connectionGeneration(dest)
        if (generation > rail.failedAt.get(dest)) rail.failedAt.put(dest, generation)
        val bits = failed.get(dest)
        if (bits and (1L shl index) != 0L) return
        failed.put(dest, bits or (1L shl index))
        rail.transport.counters.failovers++
        if (routes.get(dest) === rail) {
            routes.remove(dest)
            rail.pinned--
        }
    }

    // ## RMA and atomics: to the rail the destination's route picks, as sends go; the target's
    // rail serves them against the endpoint's domain, whichever rail they arrive on ##

    override val rmaCaps: Long
        get() = rails.fold(Caps.RMA_ALL) { caps, r -> caps and r.transport.rmaCaps }

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int =
        rails.minOf { it.transport.maxAtomicCount(type, form) }

    override fun write(
        buffer: DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        var rail = railFor(dest) ?: return unrouted(dest)
        while (true) {
            val rc = rail.transport.write(buffer, dest, remoteOffset, key, flags, context)
            rail = failover(dest, rail, rc) ?: return rc
        }
    }

    override fun read(
        buffer: MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        var rail = railFor(src) ?: return unrouted(src)
        while (true) {
            val rc = rail.transport.read(buffer, src, remoteOffset, key, flags, context)
            rail = failover(src, rail, rc) ?: return rc
        }
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
        var rail = railFor(dest) ?: return unrouted(dest)
        while (true) {
            // A refused atomic was never sent: posting it on the next rail applies it once.
            val rc =
                rail.transport.atomic(
                    operand,
                    compare,
                    result,
                    dest,
                    remoteOffset,
                    key,
                    type,
                    op,
                    count,
                    flags,
                    context,
                )
            rail = failover(dest, rail, rc) ?: return rc
        }
    }

    /** [route], and the network rails count as busy (polled every time) once given work. */
    private fun railFor(dest: Long): LinkRail? {
        val rail = route(dest)
        if (rail != null && rail !== shmRail) schedule.kick()
        return rail
    }

    /**
     * After [rail] answered [rc] for an operation to [dest]: the rail to post it on next, when [rc] says the peer is
     * gone on [rail] and another network rail reaches it; else null (the caller returns [rc]).
     */
    private fun failover(dest: Long, rail: LinkRail, rc: Int): LinkRail? {
        if (!peerGone(rc) || rail === shmRail) return null
        if (networks.indexOf(rail) < 0) return null
        markFailed(dest, rail)
        val next = route(dest) ?: return null
        return if (next === rail) null else next
    }

    private fun peerGone(rc: Int): Boolean =
        rc == -Errno.EHOSTDOWN || rc == -Errno.ECONNREFUSED || rc == -Errno.ECONNRESET

    /**
     * The rail that reaches [dest] (shm for a peer on this host that has shm, else the network rail the policy pins it
     * to), or null if none does ([unrouted] says why).
     */
    private fun route(dest: Long): LinkRail? {
        if (!av.bound) return null
        syncRoutes()
        routes.get(dest)?.let {
            return it
        }
        val peer = av.peer(dest) as? LinkAddress ?: return null
        val shmRail = shmRail
        if (shmRail != null && peer.hostId == hostId && peer.part(LinkProvider.SHM) != null) {
            routes.put(dest, shmRail)
            return shmRail
        }
        val skip = failed.get(dest)
        var best: LinkRail? = null
        var bestLoad = Double.MAX_VALUE
        for (i in networks.indices) {
            val r = networks[i]
            if (skip and (1L shl i) != 0L || r.av.query(dest) == null) continue
            val load = (r.pinned + 1) / r.weight
            if (load < bestLoad) {
                best = r
                bestLoad = load
            }
        }
        if (best == null) return if (readmitBack(dest)) route(dest) else null
        best.pinned++
        routes.put(dest, best)
        return best
    }

    /**
     * Why [route] found no rail for [dest]: `-EINVAL` (no AV, not a link address), `-EHOSTDOWN` (every rail that
     * reaches it has failed it) or `-EHOSTUNREACH` (none reaches it).
     */
    private fun unrouted(dest: Long): Int {
        if (!av.bound || av.peer(dest) !is LinkAddress) return -Errno.EINVAL
        for (i in networks.indices) if (networks[i].av.query(dest) != null) return -Errno.EHOSTDOWN
        return -Errno.EHOSTUNREACH
    }

    /**
     * Whether a network rail other than [rail] still reaches [addr]'s peer: it has a part for it, has not failed it and
     * has not declared it gone. Never for a peer shm lost: the link reaches same-host peers over shm alone, and a peer
     * whose shm is gone is a process that is gone.
     */
    fun reachedElsewhere(addr: Long, rail: String): Boolean {
        if (rail == shmRail?.name) return false
        val skip = failed.get(addr)
        for (i in networks.indices) {
            val r = networks[i]
            if (r.name == rail || skip and (1L shl i) != 0L) continue
            if (r.av.query(addr) != null && !r.transport.peerGone(addr)) return true
        }
        return false
    }

    override fun describeRoute(addr: Long): String? {
        if (networks.size < 2) return null
        val skip = failed.get(addr)
        val tried =
            networks.indices
                .filter { networks[it].av.query(addr) != null }
                .joinToString { i ->
                    val r = networks[i]
                    val state =
                        when {
                            r.transport.peerGone(addr) -> "peer gone"
                            // Failed, and being reconnected: gone until the new connection is up.
                            skip and (1L shl i) != 0L && !r.transport.connected(addr) -> "peer gone"
                            skip and (1L shl i) != 0L -> "failed"
                            else -> "up"
                        }
                    "'${r.name}' ($state)"
                }
        return if (tried.isEmpty()) "no rail of link '${info.domainName}' has a part of its address"
        else "rails of link '${info.domainName}' tried: $tried"
    }

    /** [dest]'s state in words (for tests and diagnostics): kept copies, failed rails, the reorder stage's view. */
    internal fun debugState(dest: Long): String {
        val q = keptBy.get(dest)
        val kept =
            if (q == null || q.isEmpty()) "none"
            else
                "${q.size} from ${q.first().seq} (first: rail ${q.first().rail?.name} onRail ${q.first().onRail} " +
                    "pending ${q.first().pending} completed ${q.first().completed}), pending " +
                    "${q.count { it.pending }}"
        return "kept $kept, keptBytes $keptBytes, nextSeq ${nextSeq.get(dest)}, failed ${failed.get(dest)}, " +
            "resendDue $resendDue, skips ${!skips.isEmpty()}, stage ${stage?.debugState(dest)}\n$this"
    }

    /** The transport of the rail named [name] (for tests and diagnostics), or null. */
    internal fun rail(name: String): Transport? = rails.firstOrNull { it.name == name }?.transport

    /** The reorder stage (for tests and diagnostics), or null. */
    internal val reorder: ReorderStage?
        get() = stage

    /** The largest message to [dest] kept for resending (for tests and diagnostics). */
    internal fun keepLimitTo(dest: Long): Int = minOf(keepLimit, keepableTo(dest))

    /** The rail [dest] is routed to now, by name (for tests and diagnostics), or null. */
    internal fun routeName(dest: Long): String? = route(dest)?.name

    // The link never queues an entry of its own: each rail queues its unexpected messages
    // with itself as the entry's peer, and the receive context calls that rail back.
    override fun startMsg(entry: RxEntry): Unit = notOwned(entry)

    override fun startTag(entry: RxEntry): Unit = notOwned(entry)

    override fun discardMsg(entry: RxEntry): Unit = notOwned(entry)

    override fun discardTag(entry: RxEntry): Unit = notOwned(entry)

    private fun notOwned(entry: RxEntry): Nothing =
        throw IllegalStateException("link: entry $entry was queued by a rail, not by the link")

    override fun abort(err: Int, why: String) {
        for (r in rails) r.transport.abort(err, why)
    }

    override fun close() {
        if (dumpStats)
            System.err.println(
                "braid link '${info.domainName}' endpoint closing:\n" +
                    EndpointStats(railStats(), host.srx.stats()).render()
            )
        var first: Exception? = null
        for (r in rails) try {
            r.transport.close()
        } catch (e: Exception) {
            if (first == null) first = e
        }
        first?.let { throw it }
    }

    override fun toString(): String =
        "link '${info.domainName}'\n" + rails.joinToString("\n") { "  ${it.name}: ${it.transport}" }

    internal companion object {
        /** What [sendStriped] returns when the message goes whole after all. */
        private const val NOT_STRIPED = Int.MIN_VALUE

        /** Parts but the last are a multiple of this many bytes. */
        private const val ALIGN = 63L

        /** Progress calls between looks at the clock ([timed]). */
        private const val CLOCK_POLLS = 64

        /** The first retry of a failed rail, and the longest back-off between retries (nanoseconds). */
        private const val RETRY_MIN = 50_000_000L
        private const val RETRY_MAX = 2_000_000_000L

        /** Acknowledgements below [ReorderStage.ACK_EVERY] messages wait at most about this long (nanoseconds). */
        private const val ACK_DELAY = 200_000L

        /** A part's stripe word: its [offset] in the message (high 32 bits) and the message's [length] (low 32). */
        fun stripeWord(offset: Int, length: Int): Long = (offset.toLong() shl 32) or (length.toLong() and 0xffff_ffffL)
    }
}
