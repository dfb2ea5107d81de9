package braid.core

import java.nio.ByteBuffer
import org.agrona.BitUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * The storage under an [AddressVector], sized for millions of peers: the address blobs live off-heap in an arena of 4
 * MiB chunks, the reverse index (rail address key → slot) is an off-heap open-addressing table, and the heap holds two
 * ints per slot (where its blob is, and its generation). No object and no string per entry: at a million entries the
 * heap cost is about 8 bytes per entry (16 while the arrays have just doubled).
 *
 * Arena record, 8-byte aligned (the record's location is its offset in 8-byte units, plus one, so 0 means an empty
 * slot):
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                    blob length (32)                           |
 * +---------------------------------------------------------------+
 * |                    insert count (32): duplicate inserts       |
 * +---------------------------------------------------------------+
 * |                    the address blob ... (padded to 8)         |
 * +---------------------------------------------------------------+
 * ```
 *
 * Index entry, 16 bytes: the key's 64-bit hash, then the slot + 1 (0 free, -1 deleted). A hash only names candidates:
 * the caller checks each against the blob itself, so two keys with one hash are told apart. In-process memory in host
 * byte order; it is never shared or persisted.
 *
 * Not thread-safe: the AV calls in with its domain's lock held.
 */
internal class AddressTable {
    private var where = IntArray(INITIAL)
    private var generations = IntArray(INITIAL)

    /** Slots handed out so far (the next fresh slot). */
    var slots: Int = 0
        private set

    /** Slots holding an address now. */
    var live: Int = 0
        private set

    private var freeSlots = IntArray(0)
    private var freeCount = 0

    private var chunks = ArrayList<UnsafeBuffer>()
    private var tailOffset = CHUNK_SIZE // forces a first chunk
    private var liveBytes = 0L
    private var garbageBytes = 0L

    private var index = UnsafeBuffer(ByteBuffer.allocateDirect(INDEX_INITIAL * INDEX_ENTRY))
    private var indexMask = INDEX_INITIAL - 1
    private var indexUsed = 0 // live and deleted entries: what probing walks past

    /** Whether [slot] holds an address. */
    fun occupied(slot: Int): Boolean = slot in 0 until slots && where[slot] != 0

    fun generation(slot: Int): Int = generations[slot]

    /**
     * A slot for a new address: a freed one when [reuse] (MAP) and one is free, else a fresh one. Its generation is
     * bumped, so fi_addrs of the slot's former address no longer match.
     */
    fun allocate(reuse: Boolean): Int {
        val slot =
            if (reuse && freeCount > 0) freeSlots[--freeCount]
            else {
                if (slots == Int.MAX_VALUE)
                    throw FabricException(
                        Errno.ENOSPC,
                        "address vector: ${Int.MAX_VALUE} slots used; remove addresses or open another AV",
                    )
                if (slots == where.size) grow()
                slots++
            }
        generations[slot]++
        return slot
    }

    /** Stores [raw] in [slot] (from [allocate]) with an insert count of one. */
    fun store(slot: Int, raw: ByteArray) {
        val length = recordLength(raw.size)
        if (tailOffset + length > CHUNK_SIZE) {
            if (chunks.size >= MAX_CHUNKS)
                throw FabricException(
                    Errno.ENOMEM,
                    "address vector: the address arena is full (${MAX_CHUNKS.toLong() * CHUNK_SIZE shr 30} GiB)",
                )
            chunks += UnsafeBuffer(ByteBuffer.allocateDirect(CHUNK_SIZE))
            tailOffset = 0
        }
        val chunk = chunks.size - 1
        val b = chunks[chunk]
        b.putInt(tailOffset, raw.size)
        b.putInt(tailOffset + 4, 1)
        b.putBytes(tailOffset + RECORD_HEADER, raw)
        where[slot] = ((chunk.toLong() * CHUNK_SIZE + tailOffset) ushr 3).toInt() + 1
        tailOffset += length
        liveBytes += length
        live++
    }

    /** Empties [slot]; a MAP slot ([reuse]) becomes free for a later insert. */
    fun release(slot: Int, reuse: Boolean) {
        val length = recordLength(blobLength(slot))
        where[slot] = 0
        liveBytes -= length
        garbageBytes += length
        live--
        if (reuse) {
            if (freeCount == freeSlots.size) freeSlots = freeSlots.copyOf(maxOf(16, freeCount * 2))
            freeSlots[freeCount++] = slot
        }
        if (garbageBytes > COMPACT_AT && garbageBytes > liveBytes) compact()
    }

    fun blobLength(slot: Int): Int = chunkOf(slot).getInt(offsetOf(slot))

    fun inserts(slot: Int): Int = chunkOf(slot).getInt(offsetOf(slot) + 4)

    fun setInserts(slot: Int, count: Int) = chunkOf(slot).putInt(offsetOf(slot) + 4, count)

    /** A copy of [slot]'s blob. */
    fun blob(slot: Int): ByteArray {
        val out = ByteArray(blobLength(slot))
        chunkOf(slot).getBytes(offsetOf(slot) + RECORD_HEADER, out)
        return out
    }

    /** Whether [slot] holds exactly [raw]. */
    fun holds(slot: Int, raw: ByteArray): Boolean {
        val b = chunkOf(slot)
        val at = offsetOf(slot)
        if (b.getInt(at) != raw.size) return false
        for (i in raw.indices) if (b.getByte(at + RECORD_HEADER + i) != raw[i]) return false
        return true
    }

    /**
     * Makes room for [entries] more addresses filed under [keys] index keys each, so a bulk insert grows the slot
     * arrays and rehashes the index once, not every time they fill.
     */
    fun reserve(entries: Int, keys: Int) {
        val need = slots.toLong() + entries
        if (need > where.size) {
            val size = minOf(Int.MAX_VALUE.toLong(), maxOf(need, where.size * 2L)).toInt()
            where = where.copyOf(size)
            generations = generations.copyOf(size)
        }
        val wantKeys = indexUsed.toLong() + entries.toLong() * keys
        if (wantKeys * 5 > (indexMask + 1) * 3L && wantKeys < (1L shl 27)) rehash(wantKeys.toInt())
    }

    // ## The reverse index ##

    /** Files [slot] under [hash]. */
    fun indexAdd(hash: Long, slot: Int) {
        if ((indexUsed + 1) * 5L > (indexMask + 1) * 3L) rehash()
        var i = mix(hash).toInt() and indexMask
        while (true) {
            val s = index.getInt(i * INDEX_ENTRY + 8)
            if (s == 0 || s == DELETED) break
            i = (i + 1) and indexMask
        }
        if (index.getInt(i * INDEX_ENTRY + 8) == 0) indexUsed++
        index.putLong(i * INDEX_ENTRY, hash)
        index.putInt(i * INDEX_ENTRY + 8, slot + 1)
    }

    /** Removes the entry filing [slot] under [hash], if there is one. */
    fun indexRemove(hash: Long, slot: Int) {
        var i = mix(hash).toInt() and indexMask
        while (true) {
            val s = index.getInt(i * INDEX_ENTRY + 8)
            if (s == 0) return
            if (s == slot + 1 && index.getLong(i * INDEX_ENTRY) == hash) {
                index.putInt(i * INDEX_ENTRY + 8, DELETED)
                return
            }
            i = (i + 1) and indexMask
        }
    }

    /** The first slot filed under [hash] that [accept] takes, or -1. */
    inline fun indexFind(hash: Long, accept: (Int) -> Boolean): Int {
        var i = mix(hash).toInt() and indexMask()
        while (true) {
            val s = indexSlotAt(i)
            if (s == 0) return -1
            if (s > 0 && indexHashAt(i) == hash && accept(s - 1)) return s - 1
            i = (i + 1) and indexMask()
        }
    }

    fun indexMask(): Int = indexMask

    fun indexSlotAt(i: Int): Int = index.getInt(i * INDEX_ENTRY + 8)

    fun indexHashAt(i: Int): Long = index.getLong(i * INDEX_ENTRY)

    /** Bytes of heap this table holds (its per-slot arrays), for the benchmark. */
    fun heapBytes(): Long = 4L * (where.size + generations.size + freeSlots.size)

    /** Bytes off the heap (arena and index). */
    fun offHeapBytes(): Long = chunks.size.toLong() * CHUNK_SIZE + index.capacity()

    // ## Inside ##

    private fun chunkOf(slot: Int): UnsafeBuffer = chunks[((where[slot] - 1).toLong() shl 3 ushr CHUNK_SHIFT).toInt()]

    private fun offsetOf(slot: Int): Int = (((where[slot] - 1).toLong() shl 3) and (CHUNK_SIZE - 1).toLong()).toInt()

    private fun grow() {
        val size = if (where.size >= (1 shl 30)) Int.MAX_VALUE else where.size * 2
        where = where.copyOf(size)
        generations = generations.copyOf(size)
    }

    private fun rehash(atLeast: Int = 0) {
        val liveKeys = maxOf(countIndexLive(), atLeast)
        val capacity = BitUtil.findNextPositivePowerOfTwo(maxOf(INDEX_INITIAL, liveKeys * 2 + 2))
        val old = index
        val oldSize = indexMask + 1
        index = UnsafeBuffer(ByteBuffer.allocateDirect(capacity * INDEX_ENTRY))
        indexMask = capacity - 1
        indexUsed = 0
        for (i in 0 until oldSize) {
            val s = old.getInt(i * INDEX_ENTRY + 8)
            if (s > 0) indexAdd(old.getLong(i * INDEX_ENTRY), s - 1)
        }
    }

    private fun countIndexLive(): Int {
        var n = 0
        for (i in 0..indexMask) if (index.getInt(i * INDEX_ENTRY + 8) > 0) n++
        return n
    }

    /** Copies the live records into fresh chunks, dropping the space removed ones left. */
    private fun compact() {
        val old = chunks
        val oldWhere = where.copyOf(slots)
        chunks = ArrayList()
        tailOffset = CHUNK_SIZE
        liveBytes = 0
        garbageBytes = 0
        live = 0
        for (slot in 0 until slots) {
            val w = oldWhere[slot]
            if (w == 0) continue
            val at = (w - 1).toLong() shl 3
            val b = old[(at ushr CHUNK_SHIFT).toInt()]
            val offset = (at and (CHUNK_SIZE - 1).toLong()).toInt()
            val raw = ByteArray(b.getInt(offset))
            b.getBytes(offset + RECORD_HEADER, raw)
            val inserts = b.getInt(offset + 4)
            store(slot, raw)
            setInserts(slot, inserts)
        }
    }

    companion object {
        private const val INITIAL = 16
        private const val CHUNK_SHIFT = 22
        const val CHUNK_SIZE = 1 shl CHUNK_SHIFT
        /** Locations are ints in 8-byte units: 16 GiB of arena at most. */
        private const val MAX_CHUNKS = (1 shl 12) - 1
        private const val RECORD_HEADER = 8
        private const val COMPACT_AT = 8L shl 20
        private const val INDEX_ENTRY = 16
        private const val INDEX_INITIAL = 64
        private const val DELETED = -1

        private fun recordLength(blob: Int): Int = (RECORD_HEADER + blob + 7) and 7.inv()

        /**
         * Spreads a key hash over the index (the stored hash stays as given): MurmurHash3's 64-bit finalizer, so that
         * every bit of the hash reaches the low bits the index uses (FNV-1a's low bits depend only on the low bits of
         * each character).
         */
        fun mix(h: Long): Long {
            var x = h xor (h ushr 33)
            x *= -0xae502812aa7333L
            x = x xor (x ushr 33)
            x *= -0x3b314601e57a13adL
            return x xor (x ushr 33)
        }

        /** The 64-bit hash of a rail address key (FNV-1a over its characters). */
        fun keyHash(key: String): Long {
            var h = KEY_HASH_SEED
            for (i in key.indices) h = keyHashStep(h, key[i])
            return h
        }

        /**
         * [keyHash] one character at a time, for a key hashed without building its string: start at [KEY_HASH_SEED].
         */
        const val KEY_HASH_SEED: Long = -0x340d631b7bdddcdbL

        fun keyHashStep(h: Long, c: Char): Long = (h xor c.code.toLong()) * 0x100000001b3L
    }
}
