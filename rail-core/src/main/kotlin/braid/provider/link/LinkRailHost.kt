package braid.provider.link

import braid.core.RxEntry
import braid.provider.ArrivalOrder
import braid.provider.RailHost

/**
 * The endpoint as one rail of a link sees it: the endpoint itself ([inner]) in everything but
 * - whether a peer the rail lost is lost to the endpoint ([lostEverywhere]), which the link answers for its other
 *   rails, so that one rail's loss neither fails receives directed at a peer another rail still reaches nor reports
 *   that peer down;
 * - the reorder stage ([order]) the link keeps in front of the receive context, shared by its rails;
 * - the completions of a part of a striped message, sent ([StripeSend]) or received ([StripeJoin]), which go to the
 *   striped message and complete it once, when its last part does.
 */
internal class LinkRailHost(private val inner: RailHost, private val rail: String, private val stage: ReorderStage) :
    RailHost by inner {
    /** The link, once its rails are open (until then no rail has lost anything). */
    var link: LinkTransport? = null

    override fun lostEverywhere(addr: Long): Boolean = link?.reachedElsewhere(addr, rail) != true

    override val order: ArrivalOrder
        get() = stage

    override fun railLost(addr: Long) {
        val l = link
        if (l == null) stage.skipGaps(addr) else l.railLost(rail, addr)
    }

    override val reconnects: Boolean
        get() = link?.reconnects == true

    override fun linkAcked(addr: Long, seq: Long) {
        link?.acked(addr, seq)
    }

    override fun txComplete(context: Any?, flags: Long, len: Long, tag: Long) {
        if (context is Kept) return link!!.keptSent(context)
        val ctx = if (context is Flight) link!!.flightDone(context) else context
        if (ctx is StripeSend) ctx.partDone(0, null) else inner.txComplete(ctx, flags, len, tag)
    }

    override fun txError(context: Any?, flags: Long, len: Long, tag: Long, err: Int, message: String) {
        if (context is Kept) return link!!.keptFailed(context)
        val ctx = if (context is Flight) link!!.flightFailed(context) else context
        if (ctx is StripeSend) ctx.partDone(err, message) else inner.txError(ctx, flags, len, tag, err, message)
    }

    override fun rxComplete(e: RxEntry, msgSize: Long) {
        val join = e.context as? StripeJoin
        if (join == null) {
            inner.rxComplete(e, msgSize)
            return
        }
        val placed = minOf(msgSize, e.buffer.capacity().toLong())
        e.context = null
        join.partDone(placed)
    }

    override fun rxError(
        context: Any?,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    ) {
        if (context is StripeJoin) context.partFailed(err, message)
        else inner.rxError(context, flags, len, data, tag, olen, err, source, message)
    }
}

/**
 * One striped send: the application's operation ([context], [flags], [length], [tag]) that its parts' completions add
 * up to; it completes once, when the last part has, in error if any part failed.
 */
internal class StripeSend(
    private val host: RailHost,
    private val context: Any?,
    private val flags: Long,
    private val length: Long,
    private val tag: Long,
    parts: Int,
) {
    private var outstanding = parts
    private var err = 0
    private var message: String? = null

    fun partDone(err: Int, message: String?) {
        if (err != 0 && this.err == 0) {
            this.err = err
            this.message = message
        }
        if (--outstanding > 0) return
        if (this.err == 0) host.txComplete(context, flags, length, tag)
        else host.txError(context, flags, length, tag, this.err, "striped send: ${this.message}")
    }
}

/**
 * A sequenced message on its rail, as the rail's context for it: what it stands for ([context]: the application's, or a
 * striped send's [StripeSend]) and its place in its destination's sequence, so that when its rail fails it the link can
 * tell the destination not to wait for it ([LinkTransport.flightFailed]). Pooled by the link.
 */
internal class Flight {
    var context: Any? = null
    var dest = 0L
    var seq = 0L
}

/**
 * A copy of an eager message a link sent with sequence number [seq] to [dest], kept until [dest]'s link acknowledges
 * it, to be sent again ([pending]) on a surviving rail when [rail] dies first. [onRail]: the rails' operations that
 * carry it now (the copy is reused only once none does). Pooled by the link ([LinkTransport.sendKept]).
 */
internal class Kept {
    var copy: org.agrona.concurrent.UnsafeBuffer? = null
    var length = 0
    var dest = 0L
    var seq = 0L
    var tag = 0L
    var data = 0L
    /** The flags the application posted with; an inject's copy travels as an ordinary send (it needs its outcome). */
    var flags = 0L
    var context: Any? = null
    var rail: LinkRail? = null
    var onRail = 0
    var pending = false
    var acked = false
    /** The application's send has its completion (success when first written, or the error once no rail is left). */
    var completed = false
    /** No rail to [dest] is left: failed for good. */
    var dead = false

    /** An inject's copy travels as an ordinary send; every copy as [braid.provider.SendOutlet.KEPT] (whole). */
    val wireFlags: Long
        get() = flags and braid.core.OpFlags.INJECT.inv() or braid.provider.SendOutlet.KEPT
}
