package braid.core

import org.agrona.concurrent.UnsafeBuffer

/**
 * One receive in the shared receive context (`struct fi_peer_rx_entry`): either a receive the
 * application posted, waiting for a message, or a message that arrived first (unexpected), held
 * by the provider that received it ([peer], [peerContext]) until a receive claims it.
 *
 * Entries are pooled by their [SharedReceiveContext] and linked intrusively into up to two
 * lists at once (one per source, one in arrival order), so matching and removal allocate nothing.
 */
public class RxEntry internal constructor(@Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden()) {
    /** Posted: the source filter ([FiAddr.UNSPEC] for any). Unexpected: the sender's address. */
    public var addr: Long = FiAddr.UNSPEC
        internal set

    /** Posted: the receive's tag. Unexpected: the message's tag. */
    public var tag: Long = 0
        internal set

    /** Posted: bits of [tag] to ignore. */
    public var ignore: Long = 0
        internal set

    /** Posted: the buffer's length. Unexpected: the message's length. */
    public var size: Long = 0
        internal set

    /** Operation flags of the posted receive; for an unexpected message, [OpFlags.REMOTE_CQ_DATA] if it carries data. */
    public var flags: Long = 0
        internal set

    /** Remote CQ data carried by the message. */
    public var data: Long = 0
        internal set

    /** The application's context of the posted receive. */
    public var context: Any? = null
        internal set

    /** The receive buffer: a view over the application's memory (valid once matched). */
    public val buffer: UnsafeBuffer = UnsafeBuffer(0L, 0)

    /** Whether this entry belongs to the tagged queue. */
    public var tagged: Boolean = false
        internal set

    /** The provider that holds the unexpected message behind this entry. */
    internal var peer: SrxPeer? = null

    /** The provider's own state for the unexpected message (its bytes, its rendezvous id, …). */
    public var peerContext: Any? = null

    /** The provider's number for the sender, to re-resolve [addr] once the sender enters the AV. */
    public var peerSource: Long = -1

    // ## Intrusive links ##
    internal var seq: Long = 0
    internal var srcPrev: RxEntry? = null
    internal var srcNext: RxEntry? = null
    internal var srcList: EntryList? = null
    internal var allPrev: RxEntry? = null
    internal var allNext: RxEntry? = null
    internal var allList: EntryList? = null
    internal var inUse: Boolean = false

    internal fun matches(msgTag: Long): Boolean = !tagged || (msgTag or ignore) == (tag or ignore)

    internal fun reset() {
        addr = FiAddr.UNSPEC; tag = 0; ignore = 0; size = 0; flags = 0; data = 0; context = null
        buffer.wrap(0L, 0); tagged = false; peer = null; peerContext = null; peerSource = -1; seq = 0
    }

    override fun toString(): String =
        "RxEntry(addr=$addr, tag=0x${java.lang.Long.toHexString(tag)}, size=$size, tagged=$tagged)"
}

/**
 * The provider side of a shared receive context (`fi_ops_srx_peer`): the owner calls it when an
 * unexpected message this provider holds has been matched ([startMsg], [startTag]) or must be
 * dropped ([discardMsg], [discardTag]). Control of the entry passes back to the provider, which
 * completes it and calls [SharedReceiveContext.freeEntry].
 */
public interface SrxPeer {
    public fun startMsg(entry: RxEntry)
    public fun startTag(entry: RxEntry)
    public fun discardMsg(entry: RxEntry)
    public fun discardTag(entry: RxEntry)
}

/** A doubly-linked list threaded through either the per-source or the arrival-order links. */
internal class EntryList(private val bySource: Boolean) {
    var head: RxEntry? = null
        private set
    private var tail: RxEntry? = null
    var size: Int = 0
        private set

    fun isEmpty(): Boolean = head == null

    fun next(e: RxEntry): RxEntry? = if (bySource) e.srcNext else e.allNext

    fun add(e: RxEntry) {
        val t = tail
        if (bySource) { e.srcPrev = t; e.srcNext = null; e.srcList = this } else { e.allPrev = t; e.allNext = null; e.allList = this }
        if (t == null) head = e else if (bySource) t.srcNext = e else t.allNext = e
        tail = e
        size++
    }

    fun remove(e: RxEntry) {
        val prev = if (bySource) e.srcPrev else e.allPrev
        val next = if (bySource) e.srcNext else e.allNext
        if (prev == null) head = next else if (bySource) prev.srcNext = next else prev.allNext = next
        if (next == null) tail = prev else if (bySource) next.srcPrev = prev else next.allPrev = prev
        if (bySource) { e.srcPrev = null; e.srcNext = null; e.srcList = null } else { e.allPrev = null; e.allNext = null; e.allList = null }
        size--
    }

    /** Inserts [e] just before [at], which is in this list. */
    fun insertBefore(at: RxEntry, e: RxEntry) {
        val prev = if (bySource) at.srcPrev else at.allPrev
        if (bySource) { e.srcPrev = prev; e.srcNext = at; e.srcList = this; at.srcPrev = e } else { e.allPrev = prev; e.allNext = at; e.allList = this; at.allPrev = e }
        if (prev == null) head = e else if (bySource) prev.srcNext = e else prev.allNext = e
        size++
    }

    /** The first entry, in list order, that [accept] takes. */
    inline fun first(accept: (RxEntry) -> Boolean): RxEntry? {
        var e = head
        while (e != null) {
            if (accept(e)) return e
            e = next(e)
        }
        return null
    }
}
