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
 * byte order.
 *
 * A named AV ([AddressVector] with a name, `fi_av_attr.name`) keeps all of this in one shared file instead ([create],
 * [open]): header counters, the slot table, the arena and the index, laid out at creation for the count it was opened
 * for, never grown or compacted. Its creator writes; other processes on the host map it read-only and see each insert
 * once its slot is published (the record and the index entry are written before the slot count and the entry's slot
 * field, with release stores). The layout is in host byte order and read only on this host.
 *
 * Not thread-safe: the AV calls in with its domain's lock held.
 */
internal class AddressTable
private constructor(
    /** The shared file this table lives in, or null for a table of this process alone. */
    private val segment: braid.core.shm.ShmSegment?,
    /** Counters ([H_SLOTS] …): in the shared file's first bytes, so every process that maps it reads the same. */
    private val header: UnsafeBuffer,
) {
    /** Where each slot's record is and the slot's generation: two ints per slot. */
    private var slotTable: UnsafeBuffer
    /** Slots [slotTable] has room for. */
    private var capacity: Int
    private var chunks = ArrayList<UnsafeBuffer>()
    private var index: UnsafeBuffer
    private var indexMask: Int

    private var freeSlots = IntArray(0)
    private var freeCount = 0

    init {
        if (segment == null) {
            slotTable = UnsafeBuffer(ByteArray(INITIAL * SLOT_ENTRY))
            capacity = INITIAL
            index = UnsafeBuffer(ByteBuffer.allocateDirect(INDEX_INITIAL * INDEX_ENTRY))
            indexMask = INDEX_INITIAL - 1
            header.putInt(H_TAIL, CHUNK_SIZE) // forces a first chunk
        } else {
            val b = segment.buffer
            capacity = header.getInt(H_CAPACITY)
            val arenaChunks = header.getInt(H_ARENA_CHUNKS)
            val indexCapacity = header.getInt(H_INDEX_CAPACITY)
            slotTable = UnsafeBuffer(b, HEADER, capacity * SLOT_ENTRY)
            val arenaAt = arenaOffset(capacity)
            for (c in 0 until arenaChunks) chunks += UnsafeBuffer(b, arenaAt + c * CHUNK_SIZE, CHUNK_SIZE)
            index = UnsafeBuffer(b, arenaAt + arenaChunks * CHUNK_SIZE, indexCapacity * INDEX_ENTRY)
            indexMask = indexCapacity - 1
        }
    }

    /** Slots handed out so far (the next fresh slot). */
    var slots: Int
        get() = header.getIntVolatile(H_SLOTS)
        private set(value) = header.putIntOrdered(H_SLOTS, value)

    /** Slots holding an address now. */
    var live: Int
        get() = header.getIntVolatile(H_LIVE)
        private set(value) = header.putIntOrdered(H_LIVE, value)

    /** Bumped on every insert and remove that changes what an fi_addr means (see [AddressVector.generation]). */
    val changes: Long
        get() = header.getLongVolatile(H_CHANGES)

    fun changed() = header.putLongOrdered(H_CHANGES, header.getLong(H_CHANGES) + 1)

    /** The pid of the process that created this shared table, or 0 for a table of this process. */
    val owner: Long
        get() = header.getLong(H_OWNER)

    /** The AV type (its `AvType` ordinal) this shared table was created with. */
    val typeOrdinal: Int
        get() = header.getInt(H_TYPE)

    /** Arena chunks in use; the last one takes new records from [tailOffset]. */
    private var chunksUsed: Int
        get() = header.getInt(H_CHUNKS_USED)
        set(value) = header.putInt(H_CHUNKS_USED, value)

    private var tailOffset: Int
        get() = header.getInt(H_TAIL)
        set(value) = header.putInt(H_TAIL, value)

    private var indexUsed: Int // live and deleted entries: what probing walks past
        get() = header.getInt(H_INDEX_USED)
        set(value) = header.putInt(H_INDEX_USED, value)

    private var liveBytes: Long
        get() = header.getLong(H_LIVE_BYTES)
        set(value) = header.putLong(H_LIVE_BYTES, value)

    private var garbageBytes: Long
        get() = header.getLong(H_GARBAGE_BYTES)
        set(value) = header.putLong(H_GARBAGE_BYTES, value)

    private fun where(slot: Int): Int = slotTable.getIntVolatile(slot * SLOT_ENTRY)

    private fun setWhere(slot: Int, w: Int) = slotTable.putIntOrdered(slot * SLOT_ENTRY, w)

    /** Whether [slot] holds an address. */
    fun occupied(slot: Int): Boolean = slot in 0 until slots && where(slot) != 0

    fun generation(slot: Int): Int = slotTable.getInt(slot * SLOT_ENTRY + 4)

    /**
     * A slot for a new address: a freed one when [reuse] (MAP) and one is free, else a fresh one. Its generation is
     * bumped, so fi_addrs of the slot's former address no longer match.
     */
    fun allocate(reuse: Boolean): Int {
        val slot =
            if (reuse && freeCount > 0) freeSlots[--freeCount]
            else {
                val next = slots
                if (next == Int.MAX_VALUE)
                    throw FabricException(
                        Errno.ENOSPC,
                        "address vector: ${Int.MAX_VALUE} slots used; remove addresses or open another AV",
                    )
                if (next == capacity) grow(next + 1)
                next
            }
        slotTable.putInt(slot * SLOT_ENTRY + 4, generation(slot) + 1)
        return slot
    }

    /** Makes [slot] (from [allocate], now stored) count among the slots handed out: readers may look at it now. */
    private fun publish(slot: Int) {
        if (slot >= slots) slots = slot + 1
    }

    /** Stores [raw] in [slot] (from [allocate]) with an insert count of one, and makes it visible. */
    fun store(slot: Int, raw: ByteArray) {
        val length = recordLength(raw.size)
        if (tailOffset + length > CHUNK_SIZE) {
            if (chunksUsed >= chunks.size) {
                if (segment != null)
                    throw sharedFull("address arena of ${chunks.size.toLong() * CHUNK_SIZE shr 20} MiB")
                if (chunks.size >= MAX_CHUNKS)
                    throw FabricException(
                        Errno.ENOMEM,
                        "address vector: the address arena is full (${MAX_CHUNKS.toLong() * CHUNK_SIZE shr 30} GiB)",
                    )
                chunks += UnsafeBuffer(ByteBuffer.allocateDirect(CHUNK_SIZE))
            }
            chunksUsed++
            tailOffset = 0
        }
        val chunk = chunksUsed - 1
        val b = chunks[chunk]
        b.putInt(tailOffset, raw.size)
        b.putInt(tailOffset + 4, 1)
        b.putBytes(tailOffset + RECORD_HEADER, raw)
        setWhere(slot, ((chunk.toLong() * CHUNK_SIZE + tailOffset) ushr 3).toInt() + 1)
        tailOffset += length
        liveBytes += length
        live++
        publish(slot)
    }

    /** Empties [slot]; a MAP slot ([reuse]) becomes free for a later insert. */
    fun release(slot: Int, reuse: Boolean) {
        val length = recordLength(blobLength(slot))
        setWhere(slot, 0)
        liveBytes -= length
        garbageBytes += length
        live--
        // A shared table never hands a slot out twice: a reader's cached view of a slot stays true or empty.
        if (reuse && segment == null) {
            if (freeCount == freeSlots.size) freeSlots = freeSlots.copyOf(maxOf(16, freeCount * 2))
            freeSlots[freeCount++] = slot
        }
        if (segment == null && garbageBytes > COMPACT_AT && garbageBytes > liveBytes) compact()
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
        if (segment != null) return // fixed at creation
        val need = slots.toLong() + entries
        if (need > capacity) grow(minOf(Int.MAX_VALUE.toLong(), need).toInt())
        val wantKeys = indexUsed.toLong() + entries.toLong() * keys
        if (wantKeys * 5 > (indexMask + 1) * 3L && wantKeys < (1L shl 27)) rehash(wantKeys.toInt())
    }

    // ## The reverse index ##

    /** Files [slot] under [hash]. */
    fun indexAdd(hash: Long, slot: Int) {
        if (segment != null && (indexUsed + 1) * 4L > (indexMask + 1) * 3L)
            throw sharedFull("reverse index of ${indexMask + 1} keys")
        if (segment == null && (indexUsed + 1) * 5L > (indexMask + 1) * 3L) rehash()
        var i = mix(hash).toInt() and indexMask
        while (true) {
            val s = index.getInt(i * INDEX_ENTRY + 8)
            if (s == 0 || s == DELETED) break
            i = (i + 1) and indexMask
        }
        if (index.getInt(i * INDEX_ENTRY + 8) == 0) indexUsed++
        index.putLong(i * INDEX_ENTRY, hash)
        // The slot last: a reader probing the shared index sees a whole entry or a free one.
        index.putIntOrdered(i * INDEX_ENTRY + 8, slot + 1)
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

    fun indexSlotAt(i: Int): Int = index.getIntVolatile(i * INDEX_ENTRY + 8)

    fun indexHashAt(i: Int): Long = index.getLong(i * INDEX_ENTRY)

    /** Bytes of heap this table holds (its per-slot table, when not shared), for the benchmark. */
    fun heapBytes(): Long = (if (segment == null) slotTable.capacity().toLong() else 0L) + 4L * freeSlots.size

    /**
     * Bytes off the heap (arena and index; for a shared table, what its file has in use: the slot table, the arena's
     * used chunks and the index — the rest of the file is never touched, so tmpfs gives it no pages).
     */
    fun offHeapBytes(): Long =
        if (segment == null) chunks.size.toLong() * CHUNK_SIZE + index.capacity()
        else HEADER + slots.toLong() * SLOT_ENTRY + chunksUsed.toLong() * CHUNK_SIZE + index.capacity()

    /** Unmaps a shared table ([close] of its AV); the creator also removes its file. */
    fun close(remove: Boolean) {
        if (segment == null) return
        if (remove) segment.delete()
        segment.unmap()
    }

    // ## Inside ##

    private fun chunkOf(slot: Int): UnsafeBuffer = chunks[((where(slot) - 1).toLong() shl 3 ushr CHUNK_SHIFT).toInt()]

    private fun offsetOf(slot: Int): Int = (((where(slot) - 1).toLong() shl 3) and (CHUNK_SIZE - 1).toLong()).toInt()

    /** What a full shared table throws: its [part] cannot grow in a file laid out at creation. */
    private fun sharedFull(part: String) =
        FabricException(Errno.ENOSPC, "address vector: the shared $part is full; open it with a larger count")

    /** Room for at least [need] slots: doubled in this process's table; a shared table is full. */
    private fun grow(need: Int) {
        if (segment != null) throw sharedFull("table of $capacity addresses (its count when created)")
        var size = capacity
        while (size < need) size = if (size >= (1 shl 30)) Int.MAX_VALUE else size * 2
        val grown = UnsafeBuffer(ByteArray(size * SLOT_ENTRY))
        grown.putBytes(0, slotTable, 0, capacity * SLOT_ENTRY)
        slotTable = grown
        capacity = size
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
        val oldWhere = IntArray(slots) { where(it) }
        chunks = ArrayList()
        chunksUsed = 0
        tailOffset = CHUNK_SIZE
        liveBytes = 0
        garbageBytes = 0
        live = 0
        for (slot in oldWhere.indices) {
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
        /** A table of this process alone, growing as addresses are inserted. */
        fun local(): AddressTable = AddressTable(null, UnsafeBuffer(ByteArray(HEADER)))

        /**
         * Creates the shared table file [path] for [count] addresses (slot table, arena and index sized for them, all
         * in one file the kernel fills with pages only where written), owned by this process. Throws [FabricException]
         * if the file exists.
         */
        fun create(path: java.nio.file.Path, count: Int, type: Int): AddressTable {
            require(count in 1..MAX_SHARED) { "count $count: a shared AV holds 1 .. $MAX_SHARED addresses" }
            val arenaChunks = ((count.toLong() * ARENA_PER_ENTRY + CHUNK_SIZE - 1) / CHUNK_SIZE).toInt()
            // Filled to 3/4 at most (a table of this process rehashes at 3/5): its pages are touched all over.
            val indexCapacity =
                BitUtil.findNextPositivePowerOfTwo((count.toLong() * INDEX_KEYS_PER_ENTRY * 4 / 3).toInt())
            val length =
                arenaOffset(count).toLong() + arenaChunks.toLong() * CHUNK_SIZE + indexCapacity.toLong() * INDEX_ENTRY
            val segment = braid.core.shm.ShmSegment.create(path, length)
            val header = UnsafeBuffer(segment.buffer, 0, HEADER)
            header.putInt(H_CAPACITY, count)
            header.putInt(H_ARENA_CHUNKS, arenaChunks)
            header.putInt(H_INDEX_CAPACITY, indexCapacity)
            header.putInt(H_TAIL, CHUNK_SIZE)
            header.putLong(H_OWNER, ProcessHandle.current().pid())
            header.putInt(H_TYPE, type)
            header.putLongOrdered(H_MAGIC, MAGIC) // last: an opener that sees it sees a whole header
            return AddressTable(segment, header)
        }

        /**
         * Maps the shared table file [path] read-only, or returns null if it does not exist (or its creator has not
         * finished laying it out). Throws [FabricException] if the file is not a shared address table.
         */
        fun open(path: java.nio.file.Path): AddressTable? {
            val segment = braid.core.shm.ShmSegment.openReadOnly(path, HEADER.toLong()) ?: return null
            val header = UnsafeBuffer(segment.buffer, 0, HEADER)
            val magic = header.getLongVolatile(H_MAGIC)
            if (magic != MAGIC) {
                segment.unmap()
                if (magic == 0L) return null
                throw FabricException.invalid(
                    "address vector: $path is not a Braid shared address vector (magic ${magic.toString(16)})"
                )
            }
            return AddressTable(segment, header)
        }

        private const val MAGIC = 0x3156_4144_4941_5242L // "BRAIDAV1", little-endian
        private const val HEADER = 128
        private const val H_MAGIC = 0
        private const val H_CAPACITY = 8
        private const val H_ARENA_CHUNKS = 12
        private const val H_INDEX_CAPACITY = 16
        private const val H_SLOTS = 20
        private const val H_LIVE = 24
        private const val H_CHUNKS_USED = 28
        private const val H_TAIL = 32
        private const val H_INDEX_USED = 36
        private const val H_LIVE_BYTES = 40
        private const val H_GARBAGE_BYTES = 48
        private const val H_CHANGES = 56
        private const val H_OWNER = 64
        private const val H_TYPE = 72
        private const val SLOT_ENTRY = 8
        /** Arena bytes a shared table reserves per address: a link address of shm and tcp parts is 75–171 B. */
        private const val ARENA_PER_ENTRY = 256
        /** Index keys a shared table reserves per address: the address's own key and its rails' part keys. */
        private const val INDEX_KEYS_PER_ENTRY = 3
        /** The most addresses one shared file holds (it is one mapping of at most 2 GiB). */
        const val MAX_SHARED = 4_000_000

        private fun arenaOffset(capacity: Int): Int {
            val end = HEADER + capacity * SLOT_ENTRY
            return (end + 4095) and 4095.inv()
        }

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
