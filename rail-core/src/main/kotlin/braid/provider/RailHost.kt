package braid.provider

import braid.core.AddressVector
import braid.core.MemoryRegion
import braid.core.RxEntry
import braid.core.SharedReceiveContext

/**
 * Everything a rail, the [MessageEngine] and the [RmaEngine] may reach of the endpoint above them: the one upward seam
 * (the endpoint implements it; rails call it, never the endpoint's other members, the domain's lock, its deferred-work
 * queue or its progress hub). Completions and errors go to the endpoint's CQs and counters (or to the deferred work
 * that posted the operation); matching goes through [srx].
 *
 * Every call but [cycle] is made with the domain lock held, from inside a duty cycle.
 */
internal interface RailHost {
    /** The endpoint's name in messages ("endpoint on 'domain'"). */
    val name: String

    /** The shared receive context the rail matches against and queues unexpected messages in. */
    val srx: SharedReceiveContext

    /** The address vector bound to the endpoint, or null before it is bound (rails read it through [RailAv]). */
    val av: AddressVector?

    /**
     * The endpoint's bounds on unexpected messages, shared by all its rails (a link's rails share one host): each rail
     * books what it holds and promises in its own account, and [UnexpectedBounds] says what each may take; past it a
     * rail pushes its senders back.
     */
    val bounds: UnexpectedBounds

    /** The endpoint's copy overrides (over its domain's): what a rail copies into or out of device memory with. */
    val hmemOps: braid.core.HmemOverrides

    fun txComplete(context: Any?, flags: Long, len: Long, tag: Long)

    fun txError(context: Any?, flags: Long, len: Long, tag: Long, err: Int, message: String)

    /**
     * Completes a receive whose message of [msgSize] bytes was placed in the entry's buffer: a completion, or a
     * truncation error (the bytes that fit are delivered), then frees the entry.
     */
    fun rxComplete(e: RxEntry, msgSize: Long)

    fun rxError(
        context: Any?,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    )

    /** An RMA or atomic operation this endpoint started completed; [flags] say which (RMA|WRITE, ATOMIC|READ, …). */
    fun rmaComplete(context: Any?, flags: Long, len: Long)

    fun rmaError(context: Any?, flags: Long, len: Long, err: Int, message: String)

    /** A peer's RMA or atomic was carried out on this endpoint's memory (REMOTE_READ or REMOTE_WRITE). */
    fun remoteAccess(which: Long)

    /** The memory region registered under [key] in the endpoint's domain, or null. */
    fun region(key: Long): MemoryRegion?

    /** A peer is gone: PEER_DOWN on the bound event queue. */
    fun peerDown(addr: Long, message: String)

    /**
     * A link moved [resent] messages for [addr]'s peer off rail [fromRail], which lost it, onto [toRail]: a JFR
     * `braid.Failover` event where a recording has it on.
     */
    fun failover(addr: Long, fromRail: String, toRail: String, resent: Long) {}

    /**
     * The calling rail has lost [addr]'s peer: whether no other rail of the endpoint still reaches it, so that receives
     * directed at it can never complete and it is down. True for an endpoint of one rail; a link of several network
     * rails answers for the others ([braid.provider.link.LinkTransport]).
     */
    fun lostEverywhere(addr: Long): Boolean = true

    /**
     * The calling rail lost [addr]'s peer (both directions): by default the reorder stage stops waiting for what the
     * peer had in flight on it ([ArrivalOrder.skipGaps]); a link that resends what a dead rail carried re-sends its own
     * messages to the peer and waits for the peer's resends instead, until no rail to it is left.
     */
    fun railLost(addr: Long) {
        order?.skipGaps(addr)
    }

    /**
     * [addr]'s link has every message of this endpoint's link up to sequence number [seq] (its acknowledgement, over
     * any rail): nothing where no link keeps copies to resend.
     */
    fun linkAcked(addr: Long, seq: Long) {}

    /**
     * Whether a peer this rail lost may be connected again ([Transport.reconnect]): a link that resends what a dead
     * rail carried retries the rail and re-admits it; a rail alone keeps a dead peer dead.
     */
    val reconnects: Boolean
        get() = false

    /**
     * The reorder stage in front of [srx] for messages that carry a link's sequence number (a link's rails; null
     * elsewhere, and those messages pass as they come).
     */
    val order: ArrivalOrder?
        get() = null

    /** A control-path failure the application should hear of (a refused peer, a foreign file): an error event. */
    fun eventError(err: Int, message: String)

    /**
     * Runs [body] as a duty cycle from a thread that is not driving progress ([RailTimer]'s servant, when nobody ran an
     * endpoint's duty cycle for a timer period): under the domain lock, with deferred work that completions make due
     * held until [body] is over, and the completions of suspended and future operations handed out once the lock is
     * released — the rule every thread that drives a rail follows, kept here in one place.
     */
    fun <T> cycle(body: () -> T): T

    /**
     * Says that a thread other than the application's will run [cycle] from now on (the timer's servant): a domain
     * opened with `Threading.DOMAIN` then takes its lock on every call, as a thread-safe one does. Called on the thread
     * that enables the rail, before that other thread can run.
     */
    fun otherThreadsDrive() {}
}
