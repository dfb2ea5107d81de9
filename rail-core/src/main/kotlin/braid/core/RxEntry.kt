package braid.core

import org.agrona.concurrent.UnsafeBuffer

/**
 * One receive in the shared receive context (`struct fi_peer_rx_entry`): either a receive the application posted,
 * waiting for a message, or a message that arrived first (unexpected), held by the provider that received it ([peer],
 * [peerContext]) until a receive claims it.
 *
 * Entries are pooled by their [SharedReceiveContext] and linked intrusively into up to three lists at once (one per
 * source, one in arrival order, and for an unexpected tagged message one per tag; a posted tagged receive for any
 * source with an exact tag is in its tag's bin alone), so matching and removal allocate nothing.
 */
public class RxEntry internal constructor(@Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden()) {
    /** Posted: the source filter ([FiAddr.UNSPEC] for any). Unexpected: the sender's address. */
    public var addr: Long = FiAddr.UNSPEC
        @JvmSynthetic internal set

    /** Posted: the receive's tag. Unexpected: the message's tag. */
    public var tag: Long = 0
        @JvmSynthetic internal set

    /** Posted: bits of [tag] to ignore. */
    public var ignore: Long = 0
        @JvmSynthetic internal set

    /** Posted: the buffer's length. Unexpected: the message's length. */
    public var size: Long = 0
        @JvmSynthetic internal set

    /**
     * Operation flags of the posted receive; for an unexpected message, [OpFlags.REMOTE_CQ_DATA] if it carries data.
     */
    public var flags: Long = 0
        @JvmSynthetic internal set

    /** Remote CQ data carried by the message. */
    public var data: Long = 0
        @JvmSynthetic internal set

    /** The application's context of the posted receive. */
    public var context: Any? = null
        @JvmSynthetic internal set

    /** The receive buffer: a view over the application's memory (valid once matched). */
    public val buffer: UnsafeBuffer = UnsafeBuffer(0L, 0)

    /** Whether this entry belongs to the tagged queue. */
    public var tagged: Boolean = false
        @JvmSynthetic internal set

    /** The provider that holds the unexpected message behind this entry. */
    @get:JvmSynthetic @set:JvmSynthetic internal var peer: SrxPeer? = null

    /** The provider's own state for the unexpected message (its bytes, its rendezvous id, …). */
    public var peerContext: Any? = null

    /** The provider's number for the sender, to re-resolve [addr] once the sender enters the AV. */
    public var peerSource: Long = -1

    // ## Intrusive links ##
    @get:JvmSynthetic @set:JvmSynthetic internal var seq: Long = 0
    @get:JvmSynthetic @set:JvmSynthetic internal var srcPrev: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var srcNext: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var srcList: EntryList? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var allPrev: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var allNext: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var allList: EntryList? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var tagPrev: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var tagNext: RxEntry? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var tagList: EntryList? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var inUse: Boolean = false

    @JvmSynthetic internal fun matches(msgTag: Long): Boolean = !tagged || (msgTag or ignore) == (tag or ignore)

    @JvmSynthetic
    internal fun reset() {
        addr = FiAddr.UNSPEC
        tag = 0
        ignore = 0
        size = 0
        flags = 0
        data = 0
        context = null
        buffer.wrap(0L, 0)
        tagged = false
        peer = null
        peerContext = null
        peerSource = -1
        seq = 0
    }

    override fun toString(): String =
        "RxEntry(addr=$addr, tag=0x${java.lang.Long.toHexString(tag)}, size=$size, tagged=$tagged)"
}

/**
 * The provider side of a shared receive context (`fi_ops_srx_peer`): the owner calls it when an unexpected message this
 * provider holds has been matched ([startMsg], [startTag]) or must be dropped ([discardMsg], [discardTag]). Control of
 * the entry passes back to the provider, which completes it and calls [SharedReceiveContext.freeEntry].
 */
public interface SrxPeer {
    public fun startMsg(entry: RxEntry)

    public fun startTag(entry: RxEntry)

    public fun discardMsg(entry: RxEntry)

    public fun discardTag(entry: RxEntry)
}

/**
 * A doubly-linked list threaded through one of an entry's three sets of links: per source ([BY_SOURCE]), arrival order
 * ([ALL]) or per tag ([BY_TAG]: unexpected tagged messages, and posted exact-tag receives for any source).
 */
internal class EntryList(private val links: Int) {
    var head: RxEntry? = null
        private set

    private var tail: RxEntry? = null
    var size: Int = 0
        private set

    /** The key this list is filed under, where a map of lists keeps it (the tag of a [BY_TAG] list). */
    var key: Long = 0

    fun isEmpty(): Boolean = head == null

    fun next(e: RxEntry): RxEntry? =
        when (links) {
            BY_SOURCE -> e.srcNext
            ALL -> e.allNext
            else -> e.tagNext
        }

    private fun prev(e: RxEntry): RxEntry? =
        when (links) {
            BY_SOURCE -> e.srcPrev
            ALL -> e.allPrev
            else -> e.tagPrev
        }

    private fun setNext(e: RxEntry, next: RxEntry?) {
        when (links) {
            BY_SOURCE -> e.srcNext = next
            ALL -> e.allNext = next
            else -> e.tagNext = next
        }
    }

    private fun setPrev(e: RxEntry, prev: RxEntry?) {
        when (links) {
            BY_SOURCE -> e.srcPrev = prev
            ALL -> e.allPrev = prev
            else -> e.tagPrev = prev
        }
    }

    private fun setList(e: RxEntry, list: EntryList?) {
        when (links) {
            BY_SOURCE -> e.srcList = list
            ALL -> e.allList = list
            else -> e.tagList = list
        }
    }

    fun add(e: RxEntry) {
        val t = tail
        setPrev(e, t)
        setNext(e, null)
        setList(e, this)
        if (t == null) head = e else setNext(t, e)
        tail = e
        size++
    }

    fun remove(e: RxEntry) {
        val prev = prev(e)
        val next = next(e)
        if (prev == null) head = next else setNext(prev, next)
        if (next == null) tail = prev else setPrev(next, prev)
        setPrev(e, null)
        setNext(e, null)
        setList(e, null)
        size--
    }

    /** Inserts [e] just before [at], which is in this list. */
    fun insertBefore(at: RxEntry, e: RxEntry) {
        val prev = prev(at)
        setPrev(e, prev)
        setNext(e, at)
        setList(e, this)
        setPrev(at, e)
        if (prev == null) head = e else setNext(prev, e)
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

    companion object {
        const val BY_SOURCE = 0
        const val ALL = 1
        const val BY_TAG = 2
    }
}
