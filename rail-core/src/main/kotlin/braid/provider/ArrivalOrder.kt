package braid.provider

import braid.core.SrxPeer

/**
 * The reorder stage between the [MessageEngine]s of an endpoint's rails and its shared receive context, for messages
 * that carry a link's per-sender sequence number ([Transport.sendSequenced]): it lets a message into the receive
 * context only once every message its sender sent before it is there (matched, or queued unexpected), so MPI's
 * non-overtaking rule holds per sender whatever rail each message took. A link implements it
 * ([braid.provider.link.ReorderStage]); an endpoint of one rail has none ([RailHost.order]).
 *
 * The engine asks [isNext] for each sequenced head. The next one goes to the receive context as any message does, and
 * the engine says [passed] once it is matched or queued there. Any other (early, or a part of a striped message) is
 * held by the rail that received it, as an unexpected message is, booked in that rail's account of the endpoint's
 * [UnexpectedBounds], and given to [arrive]; the stage presents it when its turn comes, by matching it in the receive
 * context and starting it ([SrxPeer.startMsg]/[SrxPeer.startTag] with [braid.core.RxEntry.peerContext] set to what the
 * rail holds) or queueing it there with its rail as peer.
 *
 * Not thread-safe: callers hold the domain lock.
 */
internal interface ArrivalOrder {
    /** Whether message [seq] from [src] may go to the receive context now. */
    fun isNext(src: Long, seq: Long): Boolean

    /**
     * Whether message [seq] from [src] came before (it passed, or is held): a copy its sender's link sent again because
     * the rail of the first went down before the acknowledgement. The engine drops it.
     */
    fun isDuplicate(src: Long, seq: Long): Boolean = false

    /** Message [seq] from [src] is in the receive context (matched or queued): the messages after it may follow. */
    fun passed(src: Long, seq: Long)

    /**
     * A head the receive context may not see yet: message [seq] from [src] ([stripe]: its part of a striped message, or
     * 0), of [size] bytes, held by [peer] as [held] until the stage presents it.
     */
    fun arrive(
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
    )

    /**
     * The acknowledgement to carry to [src] on a message head going to it now (tcp's EAGER frame): the sequence number
     * up to which every message of [src] passed, or 0 when none is due. A non-zero answer counts as sent, so no
     * acknowledgement frame of its own follows for it: a reply carries it for nothing.
     */
    fun takeAck(src: Long): Long = 0L

    /** [src] says its message [seq] failed on one of its rails: nothing comes under that number. */
    fun skip(src: Long, seq: Long)

    /**
     * A rail lost [src]: what the sender had in flight on it will not come, so the messages held after the gaps it
     * leaves are presented now, in their order.
     */
    fun skipGaps(src: Long)

    companion object {
        /** [braid.core.RxEntry.seq] of an entry the engine made for a head the receive context must not see yet. */
        const val OUT_OF_ORDER: Long = -2L

        /** [braid.core.RxEntry.seq] of an entry the engine made for a head [isDuplicate] says came before. */
        const val DUPLICATE: Long = -3L
    }
}
