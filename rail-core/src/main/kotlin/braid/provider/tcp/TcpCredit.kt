package braid.provider.tcp

import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.frameCost

// The tcp rail's credit, receiver side: how an endpoint's unexpected bounds become the credit its
// senders send message heads against. Extensions of TcpTransport, under its lock.
//
// - The budget is what the endpoint's bounds leave this rail (braid.provider.UnexpectedBounds:
//   the bounds less what its other rails claim, and less the floor each of them keeps in a
//   link): bytes, and messages at HEAD_COST each (every head is charged at least that). Credit
//   committed to all senders together never passes it, and every unexpected message a sender
//   sends is charged against its committed credit until it is taken, so what tcp holds
//   unexpected — bytes and messages — never passes the bounds, whatever the senders do.
// - Credit is granted lazily, so what tcp promises reflects what its senders use: a sender
//   that connects is granted a first grant (a few eager messages' worth, `firstGrant`); its
//   target doubles each time it has used half of what it holds, up to its fair share — the
//   budget over the established senders, at most the window; a sender that sent no head for a
//   keepalive period has its target halved (not below the first grant) and the credit above it
//   asked back (`creditIdle`). One below its target waits in `starved` and is granted from what
//   is free, in turn. Credit a message freed goes back to its sender up to its target; past it,
//   to the budget. When the budget cannot serve a starved sender, senders above their target
//   are asked for their unspent credit (RECLAIM; they answer GIVEBACK), so an idle sender
//   cannot keep another waiting for ever.
// - What tcp has committed but not yet received is its promise on the endpoint's bounds
//   (UnexpectedBounds.Account.promise), so another rail of a link holds only the rest.
// - No credit is needed for anything else (control, a CTS'd message's DATA, RMA): the receiver
//   never stops reading a connection, so frames it waits for always arrive.

/**
 * Credit the bounds allow tcp now, beyond what it has committed (negative: overcommitted). A
 * head's HEAD_COST counts against the message bound, not the byte bound (which bounds
 * payloads): the heads charged now give their cost back to the bytes side, so a sender held
 * back at the byte bound can still send RTS heads (no payload) while the message bound has room.
 */
internal fun TcpTransport.creditFree(): Long {
    val b = engine.bounds
    return minOf(b.availableBytes() + rxHeadsTotal * HEAD_COST, b.availableMsgs().toLong() * HEAD_COST) - committedTotal
}

/** One established sender's fair share of the bounds: at least one head, at most the window. */
internal fun TcpTransport.creditShare(): Long {
    val budget = minOf(ep.bounds.bytesLimit, ep.bounds.msgsLimit.toLong() * HEAD_COST)
    return minOf(window, maxOf(frameCost(0), budget / maxOf(1, creditPeers)))
}

/** What a sender is granted when it connects: a few eager messages' worth (or its share, if less). */
internal fun TcpTransport.firstGrant(): Long = minOf(creditShare(), maxOf(MIN_WINDOW.toLong(), FIRST_GRANT_MESSAGES * frameCost(eagerSize)))

/** The credit [p] is to have committed now: its target, within its fair share. */
private fun TcpTransport.creditLimit(p: TcpPeer): Long = minOf(p.target, creditShare())

/** [p]'s connection is up: it joins the senders that share the credit, with a first grant. */
internal fun TcpTransport.creditJoined(p: TcpPeer) {
    if (p.sharing) return
    p.sharing = true
    creditPeers++
    p.target = firstGrant()
    p.headsRecent = 0
    starve(p)
    rebalance()
}

/** [p] is gone: its committed credit goes back to the budget, and the others' shares grow. */
internal fun TcpTransport.creditLeft(p: TcpPeer) {
    if (!p.sharing) return
    p.sharing = false
    committedTotal -= p.committed
    rxOutstandingTotal -= p.rxOutstanding
    rxHeadsTotal -= p.rxHeads
    p.committed = 0
    p.rxOutstanding = 0
    p.rxHeads = 0
    p.pendingReturn = 0
    p.reclaiming = false
    p.reclaimToSend = 0
    p.target = 0
    creditPeers--
    for (j in 0 until peers.size) {
        val q = peers[j]
        if (q !== p && q.established && !q.dead && q.committed < creditLimit(q)) starve(q)
    }
    rebalance()
}

/**
 * [p] sent a head charged against its credit: when it has used half of what it holds, its
 * target doubles (up to its share) and it waits for the rest to be granted.
 */
internal fun TcpTransport.creditUsed(p: TcpPeer) {
    p.headsRecent++
    if (p.committed < p.target) return // still waiting for its target to be granted
    val share = creditShare()
    if (p.target >= share || p.committed - p.rxOutstanding - p.pendingReturn >= p.target / 2) return
    p.target = minOf(share, p.target * 2)
    starve(p)
}

/**
 * Once a keepalive period: a sender that sent no head since the last one has its target halved
 * (not below the first grant) and the credit above it asked back, so idle senders do not hold
 * the endpoint's bounds as promises; what comes back goes to those short of theirs.
 */
internal fun TcpTransport.creditIdle() {
    val first = firstGrant()
    for (j in 0 until peers.size) {
        val q = peers[j]
        if (!q.sharing || q.dead || !q.established) continue
        if (q.headsRecent == 0 && q.target > first) {
            q.target = maxOf(first, q.target / 2)
            trim(q, creditLimit(q))
        }
        q.headsRecent = 0
    }
    topUp()
}

private fun TcpTransport.starve(p: TcpPeer) {
    if (p.starved) return
    p.starved = true
    starved.addLast(p)
}

/**
 * Grants free credit to the starved senders in turn, each up to its target; if some are still
 * short, asks the senders above their target for their unspent credit.
 */
internal fun TcpTransport.rebalance() {
    topUp()
    if (starved.isEmpty()) return
    for (j in 0 until peers.size) {
        val q = peers[j]
        if (!q.dead && q.established) trim(q, creditLimit(q))
    }
    topUp()
}

/** Brings [q]'s committed credit down to [limit]: first what is owed it and not yet sent, then (RECLAIM) what it holds unspent. */
private fun TcpTransport.trim(q: TcpPeer, limit: Long) {
    if (q.reclaiming || q.committed <= limit) return
    val excess = q.committed - limit
    val unsent = minOf(q.pendingReturn, excess)
    q.pendingReturn -= unsent
    uncommit(q, unsent)
    val unspent = minOf(excess - unsent, q.committed - q.rxOutstanding - q.pendingReturn)
    if (unspent > 0) {
        q.reclaimToSend = unspent
        q.reclaiming = true
        markBusy(q)
    }
}

/** Grants free credit to the starved senders, oldest first, each up to its target. */
internal fun TcpTransport.topUp() {
    var n = starved.size
    while (n-- > 0 && starved.isNotEmpty()) {
        val free = creditFree()
        if (free <= 0) break
        val p = starved.removeFirst()
        p.starved = false
        if (p.dead || !p.established) continue
        val want = creditLimit(p) - p.committed
        if (want <= 0) continue
        val g = minOf(want, free)
        p.committed += g
        committedTotal += g
        p.pendingReturn += g
        markBusy(p)
        if (g < want) starve(p)
    }
    reserveCredit()
}

/** A message of [p]'s that cost [cost] no longer occupies this endpoint: its credit goes back to [p] up to its target, the rest to the budget. */
internal fun TcpTransport.creditFreed(p: TcpPeer, cost: Long) {
    p.rxOutstanding -= cost
    rxOutstandingTotal -= cost
    p.rxHeads--
    rxHeadsTotal--
    val excess = p.committed - creditLimit(p)
    val keep = if (excess <= 0) cost else maxOf(0L, cost - excess)
    p.pendingReturn += keep
    if (keep < cost) {
        uncommit(p, cost - keep)
        if (starved.isNotEmpty()) topUp()
    }
    reserveCredit()
}
/** [p] gave back [value] bytes of unspent credit (GIVEBACK): they return to the budget. */
internal fun TcpTransport.gaveBack(p: TcpPeer, value: Long): String? {
    if (!p.reclaiming) return "GIVEBACK of $value bytes, but no credit was asked back"
    if (value < 0 || value > p.committed - p.rxOutstanding - p.pendingReturn) {
        return "GIVEBACK of $value bytes, more than was lent and unspent (${p.committed - p.rxOutstanding - p.pendingReturn})"
    }
    p.reclaiming = false
    uncommit(p, value)
    rebalance()
    return null
}

/** [p] asks back up to [value] bytes of the credit it lent us (RECLAIM): we give up what we have not spent. */
internal fun TcpTransport.reclaimed(p: TcpPeer, value: Long) {
    val g = minOf(maxOf(0L, value), p.credit)
    p.credit -= g
    p.giveBack = maxOf(0L, p.giveBack) + g
    markBusy(p)
}

private fun TcpTransport.uncommit(p: TcpPeer, n: Long) {
    p.committed -= n
    committedTotal -= n
}

/**
 * Tells the endpoint's bounds how much of them tcp's senders may still fill: credit committed and
 * not yet charged, plus the unexpected payloads being read now (charged, not yet held).
 */
internal fun TcpTransport.reserveCredit() {
    val uncharged = committedTotal - rxOutstandingTotal
    engine.bounds.promise(uncharged + holdingBytes, (uncharged / HEAD_COST).toInt() + holding)
}

/** How many eager messages (at this endpoint's eager size) a sender's first grant covers. */
private const val FIRST_GRANT_MESSAGES = 4L
