package braid.provider.link

import braid.core.FiAddr
import braid.core.OpFlags
import braid.core.RxEntry
import braid.core.SharedReceiveContext
import braid.core.SrxPeer
import braid.provider.ArrivalOrder
import braid.provider.MessageEngine
import braid.provider.RailHost
import org.agrona.collections.Long2ObjectHashMap

/**
 * A link endpoint's reorder stage ([ArrivalOrder]): per sender, the sequence number of the next message the receive
 * context may see, and the messages that arrived before their turn, held by their rails until it comes. MPI's
 * non-overtaking rule then holds per sender whatever rail each message took: a small message sent after a striped one
 * is matched after it, even when it arrives first.
 *
 * Held messages stay what they were on their rail (eager bytes in the rail's pool, a rendezvous head with its sender)
 * and stay booked in that rail's account of the endpoint's unexpected bounds, so they count against the bounds like
 * unexpected messages. The rule that keeps this from deadlocking is the per-rail floor: each of a link's N rails keeps
 * `min(BRAID_UNEXPECTED_RAIL_FLOOR, 100 / N)` percent of the bounds that no other rail's holdings can take, so however
 * many early messages rails B and C hold, rail A can still take the message they wait for (tcp keeps lending credit out
 * of its floor; every sequenced message is one head, whose cost the floor covers).
 *
 * **Striping.** A message above the link's striping threshold travels as parts, each a rendezvous message with its own
 * sequence number and a stripe word (its offset and the whole length). The first part stands for the message in the
 * receive context (matched or queued with the message's tag and whole length); every part, the first included, is a
 * [StripeJoin] part: once the message has a receive, each part is started into that receive's buffer at its offset (a
 * CTS from the part's rail, whose fragments land in place), and the receive completes when every part has.
 *
 * A sender the receive context has not resolved (not in the AV, [FiAddr.NOTAVAIL]) cannot be told apart from another:
 * its messages pass as they come. Not thread-safe: callers hold the domain lock.
 */
internal class ReorderStage(private val host: RailHost) : ArrivalOrder, SrxPeer {
    private class Sender {
        var expected = 1L
        val held = Long2ObjectHashMap<Held>()
        var draining = false
        /** The striped message whose parts are arriving now. */
        var stripe: StripeJoin? = null
        /** A rail to this sender died: a gap may never fill. */
        var lossy = false
        /** When the stage last saw this sender's next message (or its gap begin), for [tick]. */
        var waitingSince = 0L
        /** The last acknowledgement sent to this sender (every message up to it passed), and whether one is due. */
        var acked = 0L
        var ackDue = false
    }

    /** Senders with messages passed since their last acknowledgement ([acksDue]). */
    private val ackList = ArrayList<Long>(4)

    /** Whether some sender has [ACK_EVERY] messages passed since its last acknowledgement: send them now. */
    var ackUrgent: Boolean = false
        private set

    /** Whether some sender has messages passed that no acknowledgement covers yet. */
    val acksDue: Boolean
        get() = ackList.isNotEmpty()

    /** Acknowledgements carried on message heads ([takeAck]) and sent as frames of their own ([sendAcks]). */
    var acksCarried = 0L
        private set

    var acksSent = 0L
        private set

    override fun takeAck(src: Long): Long {
        if (ackList.isEmpty() || src == FiAddr.NOTAVAIL) return 0L
        val s = senders.get(src) ?: return 0L
        if (!s.ackDue) return 0L
        s.ackDue = false
        for (i in ackList.indices) {
            if (ackList[i] == src) {
                ackList[i] = ackList[ackList.size - 1]
                ackList.removeAt(ackList.size - 1)
                break
            }
        }
        val upTo = s.expected - 1
        if (upTo <= s.acked) return 0L
        s.acked = upTo
        acksCarried++
        return upTo
    }

    /** Where [sendAcks] sends: true if the acknowledgement went. */
    fun interface AckSink {
        fun sendAck(src: Long, upTo: Long): Boolean
    }

    /**
     * Sends the acknowledgements due through [sink] (the sender, and the sequence number up to which every message of
     * it passed); those it could not send stay due.
     */
    fun sendAcks(sink: AckSink) {
        ackUrgent = false
        var i = 0
        while (i < ackList.size) {
            val src = ackList[i]
            val s = senders.get(src)
            val upTo = if (s == null) 0L else s.expected - 1
            if (s == null || upTo <= s.acked || sink.sendAck(src, upTo)) {
                if (s != null) {
                    if (upTo > s.acked) {
                        s.acked = upTo
                        acksSent++
                    }
                    s.ackDue = false
                }
                ackList[i] = ackList[ackList.size - 1]
                ackList.removeAt(ackList.size - 1)
            } else {
                i++
            }
        }
    }

    /** Senders a rail lost, whose gaps [tick] gives up on after [GAP_TIMEOUT_NANOS]. */
    private val lossy = ArrayList<Long>(2)

    /** A message the receive context may not see yet. */
    internal class Held(
        val seq: Long,
        val stripe: Long,
        val tagged: Boolean,
        val tag: Long,
        val size: Long,
        val hasData: Boolean,
        val data: Long,
        val peer: SrxPeer,
        val held: Any,
    ) {
        val offset: Long
            get() = stripe ushr 32

        val total: Long
            get() = stripe and 0xffff_ffffL
    }

    private val senders = Long2ObjectHashMap<Sender>()

    /** Per rail (by name): heads it handed here, held now, and the most held at once. */
    internal class RailOrder {
        var handed = 0L
        var depth = 0L
        var depthMax = 0L
    }

    private val perRail = HashMap<String, RailOrder>()

    /** What rail [name] handed to this stage (zeros if nothing). */
    fun rail(name: String): RailOrder = perRail.getOrPut(name) { RailOrder() }

    private fun railOf(peer: SrxPeer): RailOrder = rail((peer as? MessageEngine)?.rail ?: peer.toString())

    private val srx: SharedReceiveContext
        get() = host.srx

    /** Messages held now for their turn, and the most ever held at once. */
    var depth: Int = 0
        private set

    var depthMax: Int = 0
        private set

    private fun sender(src: Long): Sender = senders.get(src) ?: Sender().also { senders.put(src, it) }

    override fun isNext(src: Long, seq: Long): Boolean = src == FiAddr.NOTAVAIL || seq <= sender(src).expected

    override fun isDuplicate(src: Long, seq: Long): Boolean {
        if (src == FiAddr.NOTAVAIL) return false
        val s = senders.get(src) ?: return false
        if (seq < s.expected) return true
        val h = s.held.get(seq)
        return h != null && h.stripe != SKIPPED
    }

    override fun passed(src: Long, seq: Long) {
        if (src == FiAddr.NOTAVAIL) return
        val s = sender(src)
        if (seq >= s.expected) {
            s.expected = seq + 1
            s.waitingSince = 0L // progress: a gap the timer watches starts again
            if (!s.ackDue) {
                s.ackDue = true
                ackList += src
            }
            if (seq - s.acked >= ACK_EVERY) ackUrgent = true
        }
        drain(src, s)
    }

    override fun arrive(
        src: Long,
        seq: Long,
        stripe: Long,
        tagged: Boolean,
        tag: Long,
        size: Long,
        hasData: Boolean,
        data: Long,
        peer: SrxPeer,
        held: Any,
    ) {
        val h = Held(seq, stripe, tagged, tag, size, hasData, data, peer, held)
        val r = railOf(peer)
        r.handed++
        if (src != FiAddr.NOTAVAIL) {
            val s = sender(src)
            if (seq > s.expected) {
                s.held.put(seq, h)
                depth++
                if (depth > depthMax) depthMax = depth
                if (++r.depth > r.depthMax) r.depthMax = r.depth
                return
            }
        }
        present(src, h)
    }

    override fun skip(src: Long, seq: Long) {
        if (src == FiAddr.NOTAVAIL) return
        val s = sender(src)
        if (seq < s.expected || s.held.containsKey(seq)) return
        skipped++
        val h = Held(seq, SKIPPED, false, 0, 0, false, 0, this, SKIPPED)
        if (seq == s.expected) {
            present(src, h)
        } else {
            s.held.put(seq, h)
            depth++
            if (depth > depthMax) depthMax = depth
        }
    }

    /** Sequence numbers their senders said failed on a rail ([skip]). */
    var skipped: Long = 0
        private set

    override fun skipGaps(src: Long) {
        val s = sender(src)
        if (!s.lossy) {
            s.lossy = true
            lossy += src
        }
        s.waitingSince = 0L
        while (!s.held.isEmpty()) {
            var lowest = Long.MAX_VALUE
            for (k in s.held.keys) if (k < lowest) lowest = k
            s.expected = lowest
            drain(src, s)
        }
    }

    /**
     * Gives up on the gaps of senders a rail lost ([skipGaps]) once nothing has filled them for [GAP_TIMEOUT_NANOS]:
     * what the dead rail had in flight when the sender's end noticed (an eager send tcp completed at the socket write,
     * say) is lost, and the messages after it must not wait for ever. [now] is the caller's clock (nanoseconds).
     */
    fun tick(now: Long) {
        for (i in 0 until lossy.size) {
            val src = lossy[i]
            val s = senders.get(src) ?: continue
            if (s.held.isEmpty()) {
                s.waitingSince = 0L
                continue
            }
            if (s.waitingSince == 0L) {
                s.waitingSince = now
                continue
            }
            if (now - s.waitingSince >= GAP_TIMEOUT_NANOS) {
                gapsGivenUp++
                skipGaps(src)
            }
        }
    }

    /** Whether [tick] has senders to watch (a rail to some sender died). */
    val watching: Boolean
        get() = lossy.isNotEmpty()

    /** Gaps [tick] gave up on. */
    var gapsGivenUp: Long = 0
        private set

    /** Presents the held messages that are next, in order (a presented one passes, and so lets its follower go). */
    private fun drain(src: Long, s: Sender) {
        if (s.draining) return
        s.draining = true
        try {
            while (true) {
                val h = s.held.remove(s.expected) ?: break
                depth--
                if (h.stripe != SKIPPED) railOf(h.peer).depth--
                present(src, h)
                if (s.expected <= h.seq) s.expected = h.seq + 1
            }
        } finally {
            s.draining = false
        }
    }

    /** [h]'s turn: into the receive context (a whole message), or onto its striped message. */
    private fun present(src: Long, h: Held) {
        if (h.stripe == SKIPPED) {
            // A number its sender said failed (a rail of its own held nothing for it): the next may follow. While a
            // striped message is open, the number was one of its parts: that message fails, once its others are done.
            val s = sender(src)
            s.stripe?.let {
                s.stripe = null
                it.partLost(h.seq)
            }
            passed(src, h.seq)
            return
        }
        if (h.stripe == 0L) {
            val e = lookUp(src, h.tagged, h.tag, h.size, h.hasData, h.data)
            e.peerContext = h.held
            if (srx.isMatched(e)) {
                if (h.tagged) h.peer.startTag(e) else h.peer.startMsg(e)
                passed(src, h.seq)
            } else {
                if (h.tagged) srx.queueTag(e, h.peer) else srx.queueMsg(e, h.peer)
                passed(src, h.seq)
            }
            return
        }
        val s = sender(src)
        var join = s.stripe
        if (h.offset == 0L) {
            // The first part: the message as the receive context sees it, with its whole length.
            join = StripeJoin(this, src, h.total)
            s.stripe = join
            val e = lookUp(src, h.tagged, h.tag, h.total, h.hasData, h.data)
            if (srx.isMatched(e)) {
                join.parent = e
            } else {
                e.peerContext = join
                if (h.tagged) srx.queueTag(e, this) else srx.queueMsg(e, this)
            }
        }
        if (join == null) {
            // A part whose message never began here (its first part was lost with a rail): drop it.
            passed(src, h.seq)
            discardPart(h)
            return
        }
        // Attached before it passes: the parts and messages after it may begin the sender's next striped message.
        join.attach(h)
        if (join.covered >= join.total && s.stripe === join) s.stripe = null
        passed(src, h.seq)
    }

    private fun lookUp(src: Long, tagged: Boolean, tag: Long, size: Long, hasData: Boolean, data: Long): RxEntry {
        val e = if (tagged) srx.getTag(src, tag, size) else srx.getMsg(src, size)
        if (hasData) {
            e.data = data
            e.flags = e.flags or OpFlags.REMOTE_CQ_DATA
        }
        return e
    }

    // ## Parts of striped messages ##

    /**
     * Starts part [h] into [parent]'s buffer at its offset, for [join] (its completion comes back through the join).
     */
    internal fun startPart(join: StripeJoin, parent: RxEntry, h: Held) {
        val sub = subEntry(join, parent.tagged)
        val capacity = parent.buffer.capacity().toLong()
        val from = minOf(h.offset, capacity)
        val n = maxOf(0L, minOf(h.size, capacity - from))
        sub.buffer.wrap(parent.buffer, from.toInt(), n.toInt())
        sub.size = h.size
        sub.addr = parent.addr
        sub.peerContext = h.held
        if (h.tagged) h.peer.startTag(sub) else h.peer.startMsg(sub)
    }

    /** Drops part [h] (its message was discarded, or never began): its rail frees what it held and tells its sender. */
    internal fun discardPart(h: Held) {
        val sub = subEntry(null, h.tagged)
        sub.peerContext = h.held
        if (h.tagged) h.peer.discardTag(sub) else h.peer.discardMsg(sub)
    }

    /** An entry for one part: the receive context never sees it; its rail completes and frees it like any. */
    private fun subEntry(join: StripeJoin?, tagged: Boolean): RxEntry {
        val e = RxEntry()
        e.inUse = true
        e.tagged = tagged
        e.context = join
        return e
    }

    /** A striped message's receive completed or failed: reported as one receive. */
    internal fun finish(join: StripeJoin, parent: RxEntry) {
        val err = join.err
        if (err == 0) {
            host.rxComplete(parent, join.total)
        } else {
            host.rxError(
                parent.context,
                MessageEngine.recvFlags(parent),
                join.received,
                parent.data,
                parent.tag,
                0,
                err,
                parent.addr,
                join.errMessage ?: "a part of this striped message failed",
            )
            srx.freeEntry(parent)
        }
    }

    // ## The receive context's calls for a striped message it queued unexpected ##

    override fun startMsg(entry: RxEntry) = startJoin(entry)

    override fun startTag(entry: RxEntry) = startJoin(entry)

    override fun discardMsg(entry: RxEntry) = discardJoin(entry)

    override fun discardTag(entry: RxEntry) = discardJoin(entry)

    private fun startJoin(e: RxEntry) {
        val join = e.peerContext as StripeJoin
        e.peerContext = null
        join.matched(e)
    }

    private fun discardJoin(e: RxEntry) {
        val join = e.peerContext as StripeJoin
        e.peerContext = null
        srx.freeEntry(e)
        join.discard()
    }

    /** [src]'s state in words (for tests and diagnostics). */
    internal fun debugState(src: Long): String {
        val s = senders.get(src) ?: return "no sender $src"
        val keys = s.held.keys.sorted()
        return "expected ${s.expected}, acked ${s.acked}, held ${keys.size} (${keys.take(5)}..${keys.takeLast(3)}), " +
            "lossy ${s.lossy}, ackDue ${s.ackDue}"
    }

    override fun toString(): String =
        "reorder stage: $depth held (at most $depthMax), $skipped skipped, $gapsGivenUp gaps given up"

    internal companion object {
        /** The stripe word of a place held for a number its sender said failed ([skip]); no message has it. */
        const val SKIPPED: Long = -1L

        /**
         * How long a gap left by a lost rail may stay open before the messages after it go on, in a link that does not
         * resend ([LinkParams.RESEND_BYTES] 0); one that does waits for the resends until no rail to the sender is
         * left.
         */
        const val GAP_TIMEOUT_NANOS: Long = 2_000_000_000L

        /** A sender is acknowledged at least every this many messages passed (and when the stream pauses). */
        const val ACK_EVERY: Long = 64
    }
}

/**
 * One striped message on its way in: the receive it has ([parent], once matched), its parts so far ([covered] bytes of
 * [total]), those waiting for the receive, and those started and not yet complete. Part receives carry the join as
 * their context, so their rails' completions come back here ([LinkRailHost]).
 */
internal class StripeJoin(private val stage: ReorderStage, val src: Long, val total: Long) {
    var parent: RxEntry? = null
    var covered = 0L
        private set

    var received = 0L
        private set

    var err = 0
        private set

    var errMessage: String? = null
        private set

    private var discarded = false
    private var outstanding = 0
    private val waiting = ArrayList<ReorderStage.Held>(2)

    fun attach(h: ReorderStage.Held) {
        covered += h.size
        val p = parent
        when {
            discarded -> stage.discardPart(h)
            p != null -> start(p, h)
            else -> waiting += h
        }
    }

    fun matched(e: RxEntry) {
        parent = e
        for (h in waiting) start(e, h)
        waiting.clear()
        finishIfDone()
    }

    fun discard() {
        discarded = true
        for (h in waiting) stage.discardPart(h)
        waiting.clear()
    }

    private fun start(p: RxEntry, h: ReorderStage.Held) {
        outstanding++
        stage.startPart(this, p, h)
    }

    /** A part's receive completed with [bytes] placed. */
    fun partDone(bytes: Long) {
        outstanding--
        received += bytes
        finishIfDone()
    }

    /** Part [seq] failed at its sender: this message cannot complete whole; it fails once its other parts are done. */
    fun partLost(seq: Long) {
        if (err == 0) {
            err = braid.core.Errno.EIO
            errMessage = "part $seq of this striped message failed on its sender's rail; the other parts were received"
        }
        covered = total
        finishIfDone()
    }

    fun partFailed(err: Int, message: String) {
        outstanding--
        if (this.err == 0) {
            this.err = err
            errMessage = message
        }
        finishIfDone()
    }

    private fun finishIfDone() {
        val p = parent ?: return
        if (outstanding > 0 || covered < total) return
        parent = null
        outstanding = -1 // finished once
        stage.finish(this, p)
    }
}
