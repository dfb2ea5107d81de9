package braid.provider.tcp

import braid.provider.UnexpectedBounds
import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.frameCost

/**
 * The tcp rail's credit, receiver side: how an endpoint's unexpected bounds become the credit its senders send message
 * heads against. It owns the endpoint-wide state, and one [Account] per sender holds what is lent to it; both change
 * only through the rules below. Not thread-safe: the transport calls in under the domain lock.
 * - The budget is what the endpoint's bounds leave this rail ([UnexpectedBounds]: the bounds less what its other rails
 *   claim, and less the floor each of them keeps in a link): bytes, and messages at HEAD_COST each (every head is
 *   charged at least that). Credit committed to all senders together never passes it, and every unexpected message a
 *   sender sends is charged against its committed credit until it is taken, so what tcp holds unexpected — bytes and
 *   messages — never passes the bounds, whatever the senders do.
 * - Credit is granted lazily, so what tcp promises reflects what its senders use: a sender that connects is granted a
 *   first grant (a few eager messages' worth, [firstGrant]); its target doubles each time it has used half of what it
 *   holds, up to its fair share — the budget over the established senders, at most the window; a sender that sent no
 *   head for a keepalive period has its target halved (not below the first grant) and the credit above it asked back
 *   ([idle]). One below its target waits in [starved] and is granted from what is free, in turn. Credit a message freed
 *   goes back to its sender up to its target; past it, to the budget. When the budget cannot serve a starved sender,
 *   senders above their target are asked for their unspent credit (RECLAIM; they answer GIVEBACK), so an idle sender
 *   cannot keep another waiting for ever.
 * - What tcp has committed but not yet received is its promise on the endpoint's bounds
 *   ([UnexpectedBounds.Account.promise]), so another rail of a link holds only the rest.
 * - No credit is needed for anything else (control, a CTS'd message's DATA, RMA): the receiver never stops reading a
 *   connection, so frames it waits for always arrive.
 */
internal class TcpCredit(
    private val bounds: UnexpectedBounds,
    /** This rail's account on [bounds] (the message engine's). */
    private val account: UnexpectedBounds.Account,
    /** The most credit this endpoint lends one sender (the handshake's window). */
    private val window: Long,
    private val eagerSize: Int,
    private val busy: TcpBusy,
    /**
     * Credit each sender is lent beside its share (one eager message), which a link's sender spends only on a message
     * it sends again after another rail died ([TcpPeerOutlet]; 0 for an endpoint that is not a rail of a link).
     */
    private val spare: Long = 0,
) {
    /** Credit committed to senders, the part charged for their messages, and the heads charged. */
    var committedTotal = 0L
        private set

    private var rxOutstandingTotal = 0L
    private var rxHeadsTotal = 0L

    /** The senders sharing the credit (joined and not left), in the order the endpoint met them. */
    private val members = ArrayList<Account>()

    /** Senders below their fair share of credit, waiting for some to be free. */
    private val starved = ArrayDeque<Account>()

    /**
     * Unexpected eager payloads being read now, and their bytes: held once read, so they count against the bounds
     * already.
     */
    private var holding = 0
    private var holdingBytes = 0L

    /** Senders waiting for credit to be free: [topUp] is due when another rail may have freed some of the bounds. */
    val anyStarved: Boolean
        get() = starved.isNotEmpty()

    /**
     * A sender's account: what this endpoint lends [peer], by the rules above; it joins the sharing once connected
     * ([join]).
     */
    inner class Account internal constructor(private val peer: TcpPeer) {
        /**
         * Credit committed to this peer out of the bounds: unspent at the peer, charged ([outstanding], with its
         * [heads]) or not yet sent back ([pendingReturn]). Never less than [outstanding]: a head past it is a protocol
         * fault.
         */
        private var committed = 0L
        private var outstanding = 0L
        private var heads = 0
        private var pendingReturn = 0L

        /**
         * The credit this peer is to have committed now (grows with use, shrinks when idle); its heads this keepalive
         * period.
         */
        private var target = 0L
        private var headsRecent = 0

        /** Credit asked back from this peer: to write in a RECLAIM frame (> 0), and whether its GIVEBACK is due. */
        var reclaimToSend = 0L
            private set

        private var reclaiming = false

        /** Counted among the senders that share this endpoint's credit; and in its queue of those below their share. */
        private var sharing = false
        private var isStarved = false

        /**
         * Whether to send credit back now rather than wait for a frame to carry it: much is owed, or the sender is
         * short.
         */
        val needsFrame: Boolean
            get() =
                pendingReturn > 0 &&
                    (pendingReturn >= committed / 4 || committed - outstanding - pendingReturn < committed / 2)

        /** Takes what a frame header going to this peer carries back: what is owed, up to the field's 32 bits. */
        fun takeReturn(): Long = minOf(pendingReturn, 0xffff_ffffL).also { pendingReturn -= it }

        /** Takes the credit to ask back in a RECLAIM frame (0: none). */
        fun takeReclaim(): Long = reclaimToSend.also { reclaimToSend = 0 }

        /**
         * Checks a message head costing [cost] against what was lent and charges it; null if fine, else the failure.
         */
        fun charge(cost: Long, what: String, length: Long): String? {
            if (outstanding + cost > committed) {
                return "$what of $length bytes past the credit lent ($outstanding of $committed bytes in use)"
            }
            outstanding += cost
            rxOutstandingTotal += cost
            heads++
            rxHeadsTotal++
            used()
            // Credit owed since the sender last ran short goes back now that it is short again (not at the next
            // heartbeat): what it spent may be all it had.
            if (needsFrame) busy.mark(peer)
            return null
        }

        /**
         * This peer sent a head charged against its credit: when it has used half of what it holds, its target doubles
         * (up to its share) and it waits for the rest to be granted.
         */
        private fun used() {
            headsRecent++
            if (committed < target) return // still waiting for its target to be granted
            val share = share()
            if (target >= share || committed - outstanding - pendingReturn >= target / 2) return
            target = minOf(share, target * 2)
            starve()
        }

        /**
         * A message of this peer's that cost [cost] no longer occupies this endpoint: its credit goes back with the
         * next frame, or a CREDIT frame, up to the peer's target; the rest to the budget (and so to another sender).
         */
        fun returned(cost: Long) {
            if (peer.dead) return
            freed(cost)
            if (needsFrame) busy.mark(peer)
        }

        private fun freed(cost: Long) {
            outstanding -= cost
            rxOutstandingTotal -= cost
            heads--
            rxHeadsTotal--
            // Above its limit, the credit goes back to the budget, not to the peer; but never so much that the peer
            // is left without its [spare] head unspent (see [floor]).
            val excess = committed - limit()
            val drop = if (excess <= 0) 0L else minOf(cost, excess, maxOf(0L, committed - floor()))
            pendingReturn += cost - drop
            if (drop > 0) {
                uncommit(drop)
                if (starved.isNotEmpty()) topUp()
            }
            reserve()
        }

        /**
         * The peer gave back [value] bytes of unspent credit (GIVEBACK) to the budget; null if fine, else the failure.
         */
        fun gaveBack(value: Long): String? {
            if (!reclaiming) return "GIVEBACK of $value bytes, but no credit was asked back"
            if (value < 0 || value > committed - outstanding - pendingReturn) {
                return "GIVEBACK of $value bytes, more than was lent and unspent (${committed - outstanding - pendingReturn})"
            }
            reclaiming = false
            uncommit(value)
            rebalance()
            return null
        }

        /** The peer's connection is up: it joins the senders that share the credit, with a first grant. */
        fun join() {
            if (sharing) return
            sharing = true
            var at = members.size
            while (at > 0 && members[at - 1].peer.index > peer.index) at--
            members.add(at, this)
            target = firstGrant()
            headsRecent = 0
            starve()
            rebalance()
        }

        /** The peer is gone: its committed credit goes back to the budget, and the others' shares grow. */
        fun leave() {
            if (!sharing) return
            sharing = false
            members.remove(this)
            committedTotal -= committed
            rxOutstandingTotal -= outstanding
            rxHeadsTotal -= heads
            committed = 0
            outstanding = 0
            heads = 0
            pendingReturn = 0
            reclaiming = false
            reclaimToSend = 0
            target = 0
            for (j in 0 until members.size) {
                val q = members[j]
                if (q.peer.established && !q.peer.dead && q.committed < q.limit()) q.starve()
            }
            rebalance()
        }

        /**
         * Once a keepalive period: halves an idle sender's target (not below [first]) and asks back the credit above
         * it.
         */
        internal fun idle(first: Long) {
            if (peer.dead || !peer.established) return
            if (headsRecent == 0 && target > first) {
                target = maxOf(first, target / 2)
                trim(limit())
            }
            headsRecent = 0
        }

        /** The credit this peer is to have committed now: its target, within its fair share, and the [spare] head. */
        private fun limit(): Long = minOf(target, share()) + spare

        /**
         * The least credit this peer keeps committed whatever its limit: what it has in use here and the [spare] head
         * beside it. A link's sender holds the spare for a message it sends again after another rail died, and the
         * messages this endpoint holds early waiting for that one may be all the rest of its credit: taking the spare
         * back (the target halves while the sender, out of credit, sends nothing) would leave the resend waiting for
         * credit that only its own arrival frees.
         */
        private fun floor(): Long = outstanding + spare

        internal fun starve() {
            if (isStarved) return
            isStarved = true
            starved.addLast(this)
        }

        /** Grants up to [free] toward this peer's target; returns false if it still wants more. */
        internal fun grant(free: Long): Boolean {
            isStarved = false
            if (peer.dead || !peer.established) return true
            val want = limit() - committed
            if (want <= 0) return true
            val g = minOf(want, free)
            committed += g
            committedTotal += g
            pendingReturn += g
            busy.mark(peer)
            return g >= want
        }

        /**
         * Brings the committed credit down to [limit]: first what is owed and not yet sent, then (RECLAIM) what is
         * unspent.
         */
        internal fun trim(limit: Long = limit()) {
            if (peer.dead || !peer.established) return
            val keep = maxOf(limit, floor())
            if (reclaiming || committed <= keep) return
            val excess = committed - keep
            val unsent = minOf(pendingReturn, excess)
            pendingReturn -= unsent
            uncommit(unsent)
            val unspent = minOf(excess - unsent, committed - outstanding - pendingReturn)
            if (unspent > 0) {
                reclaimToSend = unspent
                reclaiming = true
                busy.mark(peer)
            }
        }

        private fun uncommit(n: Long) {
            committed -= n
            committedTotal -= n
        }

        override fun toString(): String = "committed $committed, outstanding $outstanding, owed $pendingReturn"
    }

    /**
     * Credit the bounds allow tcp now, beyond what it has committed (negative: overcommitted). A head's HEAD_COST
     * counts against the message bound, not the byte bound (which bounds payloads): the heads charged now give their
     * cost back to the bytes side, so a sender held back at the byte bound can still send RTS heads (no payload) while
     * the message bound has room.
     */
    fun free(): Long =
        minOf(account.availableBytes() + rxHeadsTotal * HEAD_COST, account.availableMsgs().toLong() * HEAD_COST) -
            committedTotal

    /**
     * One established sender's fair share of the bounds, less the [spare] head it is lent beside it (so that the shares
     * and their spare heads together fit the bounds): at least one head, at most the window.
     */
    fun share(): Long {
        val budget = minOf(bounds.bytesLimit, bounds.msgsLimit.toLong() * HEAD_COST)
        return minOf(window, maxOf(frameCost(0), budget / maxOf(1, members.size) - spare))
    }

    /** What a sender is granted when it connects: a few eager messages' worth (or its share, if less). */
    fun firstGrant(): Long = minOf(share(), maxOf(MIN_WINDOW.toLong(), FIRST_GRANT_MESSAGES * frameCost(eagerSize)))

    /**
     * Once a keepalive period: a sender that sent no head since the last one has its target halved (not below the first
     * grant) and the credit above it asked back, so idle senders do not hold the endpoint's bounds as promises; what
     * comes back goes to those short of theirs.
     */
    fun idle() {
        val first = firstGrant()
        for (j in 0 until members.size) members[j].idle(first)
        topUp()
    }

    /**
     * Grants free credit to the starved senders in turn, each up to its target; if some are still short, asks the
     * senders above their target for their unspent credit.
     */
    private fun rebalance() {
        topUp()
        if (starved.isEmpty()) return
        for (j in 0 until members.size) members[j].trim()
        topUp()
    }

    /** Grants free credit to the starved senders, oldest first, each up to its target. */
    fun topUp() {
        var n = starved.size
        while (n-- > 0 && starved.isNotEmpty()) {
            val free = free()
            if (free <= 0) break
            val a = starved.removeFirst()
            if (!a.grant(free)) a.starve()
        }
        reserve()
    }

    /** An unexpected eager payload of [length] bytes is being read now: it counts against the bounds already. */
    fun holdStarted(length: Int) {
        holding++
        holdingBytes += length
    }

    /** The payload [holdStarted] counted was read (the engine holds it now) or dropped. */
    fun holdEnded(length: Int) {
        holding--
        holdingBytes -= length
    }

    /**
     * Tells the endpoint's bounds how much of them tcp's senders may still fill: credit committed and not yet charged,
     * plus the unexpected payloads being read now (charged, not yet held).
     */
    fun reserve() {
        val uncharged = committedTotal - rxOutstandingTotal
        account.promise(uncharged + holdingBytes, (uncharged / HEAD_COST).toInt() + holding)
    }

    override fun toString(): String =
        "credit committed $committedTotal of ${free() + committedTotal}, ${starved.size} senders short"

    private companion object {
        /** How many eager messages (at this endpoint's eager size) a sender's first grant covers. */
        const val FIRST_GRANT_MESSAGES = 4L
    }
}
