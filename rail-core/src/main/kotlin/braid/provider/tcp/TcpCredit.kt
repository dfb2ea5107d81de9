package braid.provider.tcp

import braid.provider.tcp.TcpFrameDescriptor.HEAD_COST
import braid.provider.tcp.TcpFrameDescriptor.frameCost

// The tcp rail's credit, receiver side: how an endpoint's unexpected bounds become the credit its
// senders send message heads against. Extensions of TcpTransport, under its lock.
//
// - The budget is the endpoint's bounds less what its other rails hold (a link's shm rail):
//   bytes, and messages at HEAD_COST each (every head is charged at least that). Credit
//   committed to all senders together never passes it, and every unexpected message a sender
//   sends is charged against its committed credit until it is taken, so what tcp holds
//   unexpected — bytes and messages — never passes the bounds, whatever the senders do.
// - Each sender's fair share is the budget over the established senders, at most the window;
//   one that has less (new, or the share grew) waits in `starved` and is granted from what is
//   free, in turn. Credit a message freed goes back to its sender up to its share; past it, to
//   the budget. When the budget cannot serve a starved sender, senders above their share are
//   asked for their unspent credit (RECLAIM; they answer GIVEBACK), so an idle sender cannot
//   keep another waiting for ever.
// - What tcp has committed but not yet received is reserved on the endpoint (RailHost.reserve),
//   so another rail of a link holds only the rest.
// - No credit is needed for anything else (control, a CTS'd message's DATA, RMA): the receiver
//   never stops reading a connection, so frames it waits for always arrive.

/** Credit the bounds allow tcp now, beyond what it has committed (negative: overcommitted). */
internal fun TcpTransport.creditFree(): Long {
    val srx = ep.srx
    val bytes = ep.unexpectedBytesLimit - (ep.heldBytes - engine.heldBytes)
    val msgs = (srx.unexpectedLimit - (srx.unexpectedCount - engine.heldCount)).toLong() * HEAD_COST
    return minOf(bytes, msgs) - committedTotal
}

/** One established sender's fair share of the bounds: at least one head, at most the window. */
internal fun TcpTransport.creditShare(): Long {
    val budget = minOf(ep.unexpectedBytesLimit, ep.srx.unexpectedLimit.toLong() * HEAD_COST)
    return minOf(window, maxOf(frameCost(0), budget / maxOf(1, creditPeers)))
}

/** [p]'s connection is up: it joins the senders that share the credit. */
internal fun TcpTransport.creditJoined(p: TcpPeer) {
    if (p.sharing) return
    p.sharing = true
    creditPeers++
    starve(p)
    rebalance()
}

/** [p] is gone: its committed credit goes back to the budget, and the others' shares grow. */
internal fun TcpTransport.creditLeft(p: TcpPeer) {
    if (!p.sharing) return
    p.sharing = false
    committedTotal -= p.committed
    rxOutstandingTotal -= p.rxOutstanding
    p.committed = 0
    p.rxOutstanding = 0
    p.pendingReturn = 0
    p.reclaiming = false
    p.reclaimToSend = 0
    creditPeers--
    val share = creditShare()
    for (j in 0 until peers.size) {
        val q = peers[j]
        if (q !== p && q.established && !q.dead && q.committed < share) starve(q)
    }
    rebalance()
}

private fun TcpTransport.starve(p: TcpPeer) {
    if (p.starved) return
    p.starved = true
    starved.addLast(p)
}

/**
 * Grants free credit to the starved senders in turn, each up to its share; if some are still
 * short, asks the senders above their share for their unspent credit.
 */
internal fun TcpTransport.rebalance() {
    topUp()
    if (starved.isEmpty()) return
    val share = creditShare()
    for (j in 0 until peers.size) {
        val q = peers[j]
        if (q.reclaiming || q.dead || !q.established || q.committed <= share) continue
        // First what is owed it and not yet sent, then what it holds unspent.
        val excess = q.committed - share
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
    topUp()
}

/** Grants free credit to the starved senders, oldest first, each up to its share. */
internal fun TcpTransport.topUp() {
    var n = starved.size
    while (n-- > 0 && starved.isNotEmpty()) {
        val free = creditFree()
        if (free <= 0) break
        val p = starved.removeFirst()
        p.starved = false
        if (p.dead || !p.established) continue
        val want = creditShare() - p.committed
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

/** A message of [p]'s that cost [cost] no longer occupies this endpoint: its credit goes back to [p] up to its share, the rest to the budget. */
internal fun TcpTransport.creditFreed(p: TcpPeer, cost: Long) {
    p.rxOutstanding -= cost
    rxOutstandingTotal -= cost
    val excess = p.committed - creditShare()
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
 * Tells the endpoint how much of its bounds tcp's senders may still fill: credit committed and
 * not yet charged, plus the unexpected payloads being read now (charged, not yet held).
 */
internal fun TcpTransport.reserveCredit() {
    val uncharged = committedTotal - rxOutstandingTotal
    ep.reserve(uncharged + holdingBytes, (uncharged / HEAD_COST).toInt() + holding)
}
