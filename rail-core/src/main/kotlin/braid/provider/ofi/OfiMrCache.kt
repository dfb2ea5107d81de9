package braid.provider.ofi

import org.agrona.DirectBuffer

/**
 * The registration cache: local descriptors for the buffers native operations use, so that a hot loop over the same
 * buffer registers it once, not per call (LNX's man page names per-call registration its weak spot). An entry covers an
 * address range with an access; a lookup hits any entry whose range holds the bytes asked for with at least the access
 * asked for, most recently used first.
 * - Bounded: at most [capacity] entries; past it the least recently used entry no operation holds is deregistered. When
 *   every entry is held, the registration is made for that one operation and closed when it [release]s it.
 * - Memory that stays registered stays allocated: an entry keeps a reference to the buffer's owner (its `ByteBuffer` or
 *   array), so the JVM cannot free the memory and hand the address to another buffer while the cache maps it. Memory
 *   with no owner (an `UnsafeBuffer` over a raw address) is registered per operation, never cached.
 * - Invalidated: [invalidate] drops the entries overlapping a range (a region deregistered, an owner that frees it);
 *   [close] deregisters everything, before the native domain closes.
 *
 * Not thread-safe: callers hold the domain lock.
 */
internal class OfiMrCache(private val memory: OfiMemory, private val capacity: Int) : AutoCloseable {
    /** One registration: [start, end) with [access]; [holds] operations in flight use it. */
    class Entry(
        val start: Long,
        val end: Long,
        val access: Int,
        val region: OfiRegion,
        /** What keeps the memory allocated while it is registered; null: not cached. */
        var owner: Any?,
    ) {
        var holds = 0
        val descriptor: Long
            get() = region.descriptor
    }

    /** Most recently used first. */
    private val entries = ArrayList<Entry>(capacity)

    var hits: Long = 0
        private set

    var misses: Long = 0
        private set

    val size: Int
        get() = entries.size

    /**
     * A registration covering `buffer[0, len)` with [access], held until [release]: from the cache, or made now.
     * Throws, naming the provider, when the native registration fails.
     */
    fun acquire(buffer: DirectBuffer, len: Int, access: Int): Entry {
        val start = buffer.addressOffset()
        val end = start + maxOf(len, 1)
        for (i in entries.indices) {
            val e = entries[i]
            if (e.start <= start && end <= e.end && e.access and access == access) {
                if (i != 0) {
                    entries.removeAt(i)
                    entries.add(0, e)
                }
                hits++
                e.holds++
                return e
            }
        }
        misses++
        val owner: Any? = buffer.byteBuffer() ?: buffer.byteArray()
        val e = Entry(start, end, access, memory.registerLocal(start, end - start, access), owner)
        e.holds++
        if (owner == null) return e
        if (entries.size >= capacity && !evictOne()) {
            e.owner = null // every entry is held: this one serves its operation alone
            return e
        }
        entries.add(0, e)
        return e
    }

    /** The operation that [acquire]d [e] is over. */
    fun release(e: Entry) {
        e.holds--
        if (e.owner == null && e.holds == 0) e.region.close()
    }

    private fun evictOne(): Boolean {
        for (i in entries.indices.reversed()) {
            val e = entries[i]
            if (e.holds == 0) {
                entries.removeAt(i)
                e.region.close()
                e.owner = null
                return true
            }
        }
        return false
    }

    /** Drops the entries overlapping [start, end): closed now, or when the operations holding them are over. */
    fun invalidate(start: Long, end: Long) {
        val it = entries.iterator()
        while (it.hasNext()) {
            val e = it.next()
            if (e.start < end && start < e.end) {
                it.remove()
                e.owner = null
                if (e.holds == 0) e.region.close()
            }
        }
    }

    override fun close() {
        for (e in entries) e.region.close()
        entries.clear()
    }
}
