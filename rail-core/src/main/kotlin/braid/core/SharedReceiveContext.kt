package braid.core

import java.util.IdentityHashMap
import org.agrona.DirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.collections.LongArrayList

/**
 * The one matching engine of an endpoint (`fid_peer_srx`): the posted-receive queue and the unexpected queue, for
 * untagged and tagged messages separately, shared by every provider that receives for the endpoint. Providers use the
 * owner operations of fi_peer(3) ([getMsg], [getTag], [queueMsg], [queueTag], [freeEntry]); the application side posts,
 * peeks, claims and cancels through [Endpoint].
 *
 * Matching rules (MPI's, which libfabric's tagged interface also keeps):
 * - an arriving message takes the earliest-posted receive that matches it, whether that receive names the sender or
 *   accepts any source;
 * - messages from one sender match in the order they were sent (each sender's messages are queued in arrival order, and
 *   providers deliver them in send order);
 * - a posted receive takes the earliest-arrived unexpected message that matches it;
 * - a message whose sender was not in the AV when it arrived waits under [FiAddr.NOTAVAIL]; any-source receives take
 *   it, and once its provider resolves the sender ([foreachUnspecAddr]) it is that sender's, for the receives already
 *   posted for it too.
 *
 * Receives and unexpected messages are indexed by source, so a receive that names its sender looks only at that
 * sender's messages: O(1) expected time however many messages other senders left unexpected. Tagged receives that
 * accept any source with an exact tag (all of braid.mpi's that name their source and tag: the rank is in the tag) are
 * binned by tag, so an arriving message looks at one bin's head however many other tags have receives waiting; the
 * other receives that accept any source (masked tags, untagged) are kept in one list. The candidates of the three kinds
 * are compared by posting sequence number, so order holds between them.
 *
 * Not thread-safe: callers hold the domain's lock.
 */
public class SharedReceiveContext
internal constructor(
    /** Unexpected messages held before providers must push senders back. */
    public val unexpectedLimit: Int,
    /** The lock of the domain whose endpoint owns this context; importers must share it. */
    @get:JvmSynthetic internal val lock: Any = Any(),
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) {
    private val msgQueue = MatchQueue(tagged = false)
    private val tagQueue = MatchQueue(tagged = true)
    private val pool = ArrayDeque<RxEntry>()
    private val claimed = IdentityHashMap<Any, RxEntry>()
    private var nextSeq = 0L
    /** Messages matched at resolution, started once both queues are consistent again. */
    private val resolvedMatches = ArrayDeque<RxEntry>()
    private val matchResolved: (RxEntry, RxEntry) -> Unit = { posted, message ->
        postedChanged(-1)
        unexpectedChanged(-1)
        fill(message, posted.context, posted.flags, posted.buffer)
        freeEntry(posted)
        resolvedMatches.addLast(message)
    }

    /** Queue depths, for statistics (BRAID_LINK_DUMP_STATS and [stats]). */
    private var postedNow = 0
    private var unexpectedNow = 0
    private var postedMax = 0
    private var unexpectedMax = 0
    private var postedSum = 0L
    private var unexpectedSum = 0L
    private var samples = 0L

    /** Whether providers must stop taking unexpected messages and push their senders back. */
    public val unexpectedFull: Boolean
        get() = unexpectedNow >= unexpectedLimit

    public val unexpectedCount: Int
        get() = unexpectedNow

    public val postedCount: Int
        get() = postedNow

    /** Queue entries examined by matching so far (a cost measure for tests and benchmarks). */
    @get:JvmSynthetic
    internal val examined: Long
        get() = msgQueue.examined + tagQueue.examined

    // ## Owner operations (called by providers) ##

    /**
     * Finds the receive for an untagged message of [size] bytes from [addr] ([FiAddr.NOTAVAIL] when the sender is not
     * in the AV). The entry returned is either a posted receive, now removed from the queue ([RxEntry.peer] is null),
     * or a fresh entry the provider must fill ([RxEntry.peerContext]) and hand to [queueMsg], or give back with
     * [freeEntry].
     */
    public fun getMsg(addr: Long, size: Long): RxEntry = get(msgQueue, addr, 0, size)

    /** [getMsg] for a tagged message. */
    public fun getTag(addr: Long, tag: Long, size: Long): RxEntry = get(tagQueue, addr, tag, size)

    /** Whether [entry], returned by [getMsg] or [getTag], is a matched posted receive. */
    public fun isMatched(entry: RxEntry): Boolean = entry.peer == null && entry.seq >= 0

    /** Queues an unexpected untagged message held by [peer] until a receive matches it. */
    public fun queueMsg(entry: RxEntry, peer: SrxPeer): Unit = queue(msgQueue, entry, peer)

    /** Queues an unexpected tagged message held by [peer] until a receive matches it. */
    public fun queueTag(entry: RxEntry, peer: SrxPeer): Unit = queue(tagQueue, entry, peer)

    /** Returns [entry] to the pool once the provider has completed it. */
    public fun freeEntry(entry: RxEntry) {
        check(entry.inUse) { "SRX: entry freed twice: $entry" }
        entry.inUse = false
        entry.reset()
        pool.addLast(entry)
    }

    /**
     * Re-resolves the sender of every unexpected message that arrived before its sender was in the AV
     * (`foreach_unspec_addr`): [resolve] returns the sender's address now, or [FiAddr.NOTAVAIL]. Resolved messages join
     * their sender's queue in arrival order, and the receives already posted for that sender take them as if it had
     * been known all along: each, in posting order, the earliest-arrived message that matches it. Their providers are
     * told to start them ([SrxPeer.startMsg], [SrxPeer.startTag]) before this returns.
     */
    public fun foreachUnspecAddr(resolve: java.util.function.ToLongFunction<RxEntry>) {
        msgQueue.resolveUnspec(resolve, matchResolved)
        tagQueue.resolveUnspec(resolve, matchResolved)
        // Only now: a start may complete a receive, and a completion may post another (triggered work).
        while (true) {
            val message = resolvedMatches.removeFirstOrNull() ?: break
            start(message)
        }
    }

    // ## Application side (called by Endpoint) ##

    /**
     * Posts a receive. If an unexpected message matches, it is returned with the receive's buffer and context filled
     * in, and its provider has been told to start it; otherwise the receive is queued and null is returned.
     */
    @JvmSynthetic
    internal fun post(
        tagged: Boolean,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
    ): RxEntry? {
        val queue = if (tagged) tagQueue else msgQueue
        val unexpected = queue.takeUnexpected(src, tag, ignore)
        if (unexpected != null) {
            unexpectedChanged(-1)
            fill(unexpected, context, flags, buffer, offset, length)
            start(unexpected)
            return unexpected
        }
        val e = alloc()
        e.tagged = tagged
        e.addr = src
        e.tag = tag
        e.ignore = if (tagged) ignore else -1L
        e.flags = flags
        e.context = context
        e.size = length.toLong()
        e.buffer.wrap(buffer, offset, length)
        e.seq = nextSeq++
        queue.addPosted(e)
        postedChanged(+1)
        return null
    }

    /** The earliest unexpected message matching the receive, left in place (FI_PEEK). */
    @JvmSynthetic
    internal fun peek(tagged: Boolean, src: Long, tag: Long, ignore: Long): RxEntry? =
        (if (tagged) tagQueue else msgQueue).findUnexpected(src, tag, ignore)

    /** Takes [entry] (from [peek]) out of the unexpected queue and reserves it for [context] (FI_CLAIM). */
    @JvmSynthetic
    internal fun claim(entry: RxEntry, context: Any) {
        (if (entry.tagged) tagQueue else msgQueue).removeUnexpected(entry)
        unexpectedChanged(-1)
        claimed[context] = entry
    }

    /** Takes [entry] (from [peek]) out of the unexpected queue to be discarded. */
    @JvmSynthetic
    internal fun remove(entry: RxEntry) {
        (if (entry.tagged) tagQueue else msgQueue).removeUnexpected(entry)
        unexpectedChanged(-1)
    }

    /** The message claimed earlier for [context], now handed over. */
    @JvmSynthetic internal fun takeClaimed(context: Any): RxEntry? = claimed.remove(context)

    /** Removes the posted receive whose context is [context], or returns null. */
    @JvmSynthetic
    internal fun cancel(context: Any): RxEntry? {
        val e = msgQueue.removePosted(context) ?: tagQueue.removePosted(context) ?: return null
        postedChanged(-1)
        return e
    }

    /** Removes every posted receive that names [addr] as its only source, calling [each]. */
    @JvmSynthetic
    internal fun drainDirected(addr: Long, each: (RxEntry) -> Unit) {
        for (q in arrayOf(msgQueue, tagQueue)) {
            while (true) {
                val e = q.removeFirstDirected(addr) ?: break
                postedChanged(-1)
                each(e)
            }
        }
    }

    /** Calls [each] with every source that has receives posted for it alone. */
    @JvmSynthetic
    internal fun forEachDirectedSource(each: (Long) -> Unit) {
        msgQueue.forEachDirectedSource(each)
        tagQueue.forEachDirectedSource(each)
    }

    /** Depth statistics: current, maximum and average over every change. */
    public fun stats(): SrxStats =
        SrxStats(
            postedNow,
            postedMax,
            if (samples == 0L) 0.0 else postedSum.toDouble() / samples,
            unexpectedNow,
            unexpectedMax,
            if (samples == 0L) 0.0 else unexpectedSum.toDouble() / samples,
        )

    @JvmSynthetic
    internal fun start(e: RxEntry) {
        val peer = checkNotNull(e.peer) { "SRX: unexpected entry without a peer: $e" }
        if (e.tagged) peer.startTag(e) else peer.startMsg(e)
    }

    @JvmSynthetic
    internal fun discard(e: RxEntry) {
        val peer = checkNotNull(e.peer) { "SRX: unexpected entry without a peer: $e" }
        if (e.tagged) peer.discardTag(e) else peer.discardMsg(e)
    }

    /** Gives an unexpected [message] the receive that matched it: its context, flags and buffer. */
    private fun fill(
        message: RxEntry,
        context: Any?,
        flags: Long,
        buffer: DirectBuffer,
        offset: Int = 0,
        length: Int = buffer.capacity(),
    ) {
        message.context = context
        message.flags = message.flags or flags
        message.buffer.wrap(buffer, offset, length)
    }

    private fun get(queue: MatchQueue, addr: Long, tag: Long, size: Long): RxEntry {
        val posted = queue.takePosted(addr, tag)
        if (posted != null) {
            postedChanged(-1)
            posted.addr = addr
            posted.tag = tag
            posted.size = size
            return posted
        }
        val e = alloc()
        e.tagged = queue.tagged
        e.addr = addr
        e.tag = tag
        e.size = size
        e.seq = -1 // not a posted receive
        return e
    }

    private fun queue(queue: MatchQueue, entry: RxEntry, peer: SrxPeer) {
        entry.peer = peer
        entry.seq = nextSeq++
        queue.addUnexpected(entry)
        unexpectedChanged(+1)
    }

    private fun alloc(): RxEntry {
        val e = pool.removeLastOrNull() ?: RxEntry()
        e.inUse = true
        return e
    }

    private fun postedChanged(delta: Int) {
        postedNow += delta
        if (postedNow > postedMax) postedMax = postedNow
        sample()
    }

    private fun unexpectedChanged(delta: Int) {
        unexpectedNow += delta
        if (unexpectedNow > unexpectedMax) unexpectedMax = unexpectedNow
        sample()
    }

    private fun sample() {
        samples++
        postedSum += postedNow
        unexpectedSum += unexpectedNow
    }
}

/** Queue depths of a [SharedReceiveContext]. */
public data class SrxStats(
    val posted: Int,
    val postedMax: Int,
    val postedAverage: Double,
    val unexpected: Int,
    val unexpectedMax: Int,
    val unexpectedAverage: Double,
)

/** Posted and unexpected queues of one matching space (untagged or tagged). */
internal class MatchQueue(val tagged: Boolean) {
    /** Entries examined by matching so far: lets tests check the cost of a match without a clock. */
    var examined: Long = 0
    private val postedBySource = Long2ObjectHashMap<EntryList>()
    /** Receives for any source that mask some tag bits (or untagged ones), in posting order. */
    private val postedAny = EntryList(EntryList.BY_SOURCE)
    /**
     * Tagged receives for any source with an exact tag (no ignored bits), one bin per tag in posting order, threaded
     * through the entries' tag links (a posted receive uses no others). Bins are dropped when they empty and pooled
     * (shared with [unexpectedByTag]'s), so a warm exchange allocates none and a million distinct tags leave nothing
     * behind. [lastBin] is the bin the previous arrival or post used: a window of receives for one tag finds it without
     * a hash look-up. A non-empty list is always the one its key maps to (emptied lists leave the map at once).
     */
    private val postedByTag = Long2ObjectHashMap<EntryList>()
    private var lastBin: EntryList? = null
    private val unexpectedBySource = Long2ObjectHashMap<EntryList>()
    private val unexpectedAll = EntryList(EntryList.ALL)
    /**
     * Unexpected tagged messages by tag, each list in arrival order: an any-source receive for one exact tag takes the
     * head of its tag's list, however many messages of other tags wait. A list is dropped when it empties (a million
     * distinct tags must not stay behind) and pooled, so a warm exchange allocates none.
     */
    private val unexpectedByTag = Long2ObjectHashMap<EntryList>()
    private val tagListPool = ArrayDeque<EntryList>()
    /** Senders [resolveUnspec] found messages of, with receives posted for them (reused). */
    private val resolved = LongArrayList()

    /** The earliest-posted receive that matches a message from [addr] with [tag], removed. */
    fun takePosted(addr: Long, tag: Long): RxEntry? {
        // Each kind's candidate is its earliest-posted match; the earliest of the (up to) three wins. A kind with no
        // receive posted costs one emptiness test: no hash look-up, no scan.
        var winner: RxEntry? =
            // Receives that name no source (all of braid.mpi's) leave the map empty: no hash look-up per arrival.
            if (addr == FiAddr.NOTAVAIL || postedBySource.isEmpty()) null
            else
                postedBySource.get(addr)?.first {
                    examined++
                    it.matches(tag)
                }
        if (!postedByTag.isEmpty()) {
            // Every receive of a bin matches the tag exactly: its head is the bin's earliest match.
            val exact = bin(tag)?.head
            if (exact != null) {
                examined++
                if (winner == null || exact.seq < winner.seq) winner = exact
            }
        }
        if (!postedAny.isEmpty()) {
            // Only the receives posted before the winner so far can win: the scan stops at the first later one.
            val before = winner?.seq ?: Long.MAX_VALUE
            val any =
                postedAny.first {
                    examined++
                    it.seq > before || it.matches(tag)
                }
            if (any != null && any.seq < before) winner = any
        }
        if (winner == null) return null
        removePosted(winner)
        return winner
    }

    fun addPosted(e: RxEntry) {
        when {
            e.addr != FiAddr.UNSPEC -> listFor(postedBySource, e.addr).add(e)
            tagged && e.ignore == 0L -> {
                var list = bin(e.tag)
                if (list == null) {
                    list = tagListPool.removeLastOrNull() ?: EntryList(EntryList.BY_TAG)
                    list.key = e.tag
                    postedByTag.put(e.tag, list)
                    lastBin = list
                }
                list.add(e)
            }
            else -> postedAny.add(e)
        }
    }

    /** The bin of exact-tag receives for [tag], or null when none waits. */
    private fun bin(tag: Long): EntryList? {
        val last = lastBin
        if (last != null && last.key == tag && !last.isEmpty()) return last
        val list = postedByTag.get(tag) ?: return null
        lastBin = list
        return list
    }

    /** Takes the posted receive [e] out of whichever list holds it, dropping an exact-tag bin it empties. */
    private fun removePosted(e: RxEntry) {
        val bin = e.tagList
        if (bin == null) {
            e.srcList!!.remove(e)
            return
        }
        bin.remove(e)
        if (bin.isEmpty()) dropTagList(postedByTag, bin)
    }

    fun removePosted(context: Any): RxEntry? {
        var found = postedAny.first { HmemStage.carries(it.context, context) }
        if (found == null) found = firstIn(postedByTag, context)
        if (found == null) found = firstIn(postedBySource, context)
        found?.let { removePosted(it) }
        return found
    }

    private fun firstIn(lists: Long2ObjectHashMap<EntryList>, context: Any): RxEntry? {
        for (list in lists.values) {
            val found = list.first { HmemStage.carries(it.context, context) }
            if (found != null) return found
        }
        return null
    }

    fun forEachDirectedSource(each: (Long) -> Unit) {
        val it = postedBySource.entries.iterator()
        while (it.hasNext()) {
            val e = it.next()
            if (!e.value.isEmpty()) each(e.key)
        }
    }

    fun removeFirstDirected(addr: Long): RxEntry? {
        val list = postedBySource.get(addr) ?: return null
        val e = list.head ?: return null
        list.remove(e)
        return e
    }

    /**
     * The earliest-arrived unexpected message a receive for [src], [tag] and [ignore] takes. An any-source receive for
     * an exact tag reads its tag's list: the head of that list is the earliest message with the tag, from whichever
     * sender, so arrival order and each sender's order hold without looking at other tags. A masked any-source receive
     * scans in arrival order.
     */
    fun findUnexpected(src: Long, tag: Long, ignore: Long): RxEntry? {
        // Every unexpected message is in unexpectedAll: a receive posted ahead of its message (the common case of a
        // window of receives) looks no further, not even at a hash map.
        if (unexpectedAll.isEmpty()) return null
        if (tagged && ignore == 0L && src == FiAddr.UNSPEC) {
            examined++
            return unexpectedByTag.get(tag)?.head
        }
        val list = if (src == FiAddr.UNSPEC) unexpectedAll else unexpectedBySource.get(src) ?: return null
        return if (!tagged) list.head
        else
            list.first {
                examined++
                (it.tag or ignore) == (tag or ignore)
            }
    }

    fun takeUnexpected(src: Long, tag: Long, ignore: Long): RxEntry? {
        val e = findUnexpected(src, tag, ignore) ?: return null
        removeUnexpected(e)
        return e
    }

    fun addUnexpected(e: RxEntry) {
        unexpectedAll.add(e)
        listFor(unexpectedBySource, e.addr).add(e)
        if (tagged) {
            var list = unexpectedByTag.get(e.tag)
            if (list == null) {
                list = tagListPool.removeLastOrNull() ?: EntryList(EntryList.BY_TAG)
                list.key = e.tag
                unexpectedByTag.put(e.tag, list)
            }
            list.add(e)
        }
    }

    fun removeUnexpected(e: RxEntry) {
        e.allList?.remove(e)
        e.srcList?.remove(e)
        val byTag = e.tagList ?: return
        byTag.remove(e)
        if (byTag.isEmpty()) dropTagList(unexpectedByTag, byTag)
    }

    /** [list], now empty, leaves [map] and waits in the pool for another tag. */
    private fun dropTagList(map: Long2ObjectHashMap<EntryList>, list: EntryList) {
        map.remove(list.key)
        // The pool serves both maps: a bin reused for an unexpected tag must not pass for a receive bin.
        if (lastBin === list) lastBin = null
        if (tagListPool.size < TAG_LIST_POOL) tagListPool.addLast(list)
    }

    /**
     * Moves the messages [resolve] now finds a sender for into that sender's queue, then gives each receive posted for
     * such a sender, in posting order, the earliest message of it that matches, calling [matched] with the pair, both
     * already out of their queues.
     *
     * Only the directed receives need a look: an any-source receive is matched against unknown senders' messages when
     * it is posted and when they arrive, so none posted matches them.
     */
    fun resolveUnspec(
        resolve: java.util.function.ToLongFunction<RxEntry>,
        matched: (posted: RxEntry, message: RxEntry) -> Unit,
    ) {
        val unknown = unexpectedBySource.get(FiAddr.NOTAVAIL) ?: return
        var e = unknown.head
        while (e != null) {
            val next = unknown.next(e)
            val addr = resolve.applyAsLong(e)
            if (addr != FiAddr.NOTAVAIL) {
                unknown.remove(e)
                e.addr = addr
                insertBySeq(listFor(unexpectedBySource, addr), e)
                if (postedBySource.get(addr)?.isEmpty() == false && !resolved.containsLong(addr)) resolved.addLong(addr)
            }
            e = next
        }
        for (i in 0 until resolved.size) matchPosted(resolved.getLong(i), matched)
        resolved.clear()
    }

    private fun matchPosted(addr: Long, matched: (RxEntry, RxEntry) -> Unit) {
        val posted = postedBySource.get(addr) ?: return
        val messages = unexpectedBySource.get(addr) ?: return
        var p = posted.head
        while (p != null && !messages.isEmpty()) {
            val next = posted.next(p)
            val m = findUnexpected(addr, p.tag, p.ignore)
            if (m != null) {
                posted.remove(p)
                removeUnexpected(m)
                matched(p, m)
            }
            p = next
        }
    }

    private fun insertBySeq(list: EntryList, e: RxEntry) {
        // Messages that waited unresolved arrived before the ones queued under the sender's
        // address since; keep the per-source list in arrival (sequence) order.
        val after = list.first { it.seq > e.seq }
        if (after == null) {
            list.add(e)
            return
        }
        list.insertBefore(after, e)
    }

    private companion object {
        /** Empty per-tag lists kept for reuse: enough for the tags a warm exchange cycles through. */
        const val TAG_LIST_POOL = 64
    }

    private fun listFor(map: Long2ObjectHashMap<EntryList>, addr: Long): EntryList {
        var list = map.get(addr)
        if (list == null) {
            list = EntryList(EntryList.BY_SOURCE)
            map.put(addr, list)
        }
        return list
    }
}
