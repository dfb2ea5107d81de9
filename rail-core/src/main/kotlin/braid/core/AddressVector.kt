package braid.core

import braid.provider.PeerAddress

/**
 * An address vector (`fid_av`): maps peer address blobs to compact fabric addresses (`fi_addr`) used by data
 * operations. TABLE addresses are indices 0, 1, 2, … in insertion order and never reused; MAP addresses carry a
 * generation in their upper half, so a removed address that is used again is refused instead of reaching whoever took
 * its slot.
 *
 * Bookkeeping follows libfabric's own AV (`fi_av(3)`, and its util AV for what the page leaves to providers): inserting
 * an address that is already in the AV returns the fi_addr it already has and counts the insert; [remove] undoes one
 * insert, and the address leaves the AV when its last insert is removed. So every fi_addr the application still holds
 * keeps resolving the peer's messages to it. A removed address may be inserted again (it gets a new fi_addr).
 *
 * Sized for millions of peers: blobs and the reverse index live off the heap ([AddressTable]); the heap holds a few
 * bytes per entry.
 */
public class AddressVector
internal constructor(
    public val domain: Domain,
    public val type: AvType,
    private val table: AddressTable,
    /** The AV's name (`fi_av_attr.name`): set for an AV shared by the processes of a host, else null. */
    public val name: String?,
    /** Whether this process opened the named AV read-only (`FI_READ`): it may look addresses up, never insert. */
    public val isReadOnly: Boolean,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : PeerAddressVector, AutoCloseable {
    /** Parsed addresses of recently used slots: rails ask for the same few peers again and again. */
    private val cacheSlot = IntArray(CACHE_SIZE) { -1 }
    private val cachePeer = arrayOfNulls<PeerAddress>(CACHE_SIZE)
    private var closed = false

    /**
     * Bumped on every insert and remove that changes what an fi_addr means, so providers can refresh what they cached.
     * A named AV's count is in its shared file, so the processes that opened it read-only see the creator's changes.
     */
    public val generation: Long
        get() = table.changes

    /** Addresses currently inserted (an address inserted twice counts once). */
    public val count: Int
        get() = synchronized(domain.lock) { table.live }

    /**
     * Inserts one address blob (`fi_av_insert`) and returns its fabric address. A malformed blob is refused with
     * [FabricException] naming what is wrong. An address already inserted returns its fi_addr again, and takes one more
     * [remove] to leave.
     */
    public fun insert(address: ByteArray): Long =
        synchronized(domain.lock) {
            checkWritable("insert")
            insertLocked(address)
        }

    /** Inserts several blobs, returning their fabric addresses in order. */
    public fun insert(addresses: List<ByteArray>): LongArray =
        synchronized(domain.lock) {
            checkWritable("insert")
            if (addresses.size > 1)
                table.reserve(addresses.size, domain.provider.parseAddress(addresses[0]).indexKeyCount)
            LongArray(addresses.size) { insertLocked(addresses[it]) }
        }

    /**
     * Removes one insert of [fiAddr] (`fi_av_remove`); once its last insert is removed, later use of it fails with
     * `-EINVAL`. Unknown or stale fi_addrs are refused with ENOENT.
     */
    public fun remove(fiAddr: Long): Unit =
        synchronized(domain.lock) {
            checkWritable("remove")
            val slot = slotOf(fiAddr)
            if (slot < 0) throw FabricException(Errno.ENOENT, "address vector: fi_addr $fiAddr is not inserted")
            val inserts = table.inserts(slot)
            if (inserts > 1) {
                table.setInserts(slot, inserts - 1)
                return
            }
            val peer = parsed(slot)
            for (k in 0 until peer.indexKeyCount) table.indexRemove(peer.indexKeyHash(k), slot)
            table.release(slot, reuse = type == AvType.MAP)
            cacheSlot[slot and CACHE_MASK] = -1
            cachePeer[slot and CACHE_MASK] = null
            table.changed()
        }

    /** The blob inserted as [fiAddr] (`fi_av_lookup`). */
    public fun lookup(fiAddr: Long): ByteArray =
        synchronized(domain.lock) {
            val slot = slotOf(fiAddr)
            if (slot < 0) throw FabricException(Errno.ENOENT, "address vector: fi_addr $fiAddr is not inserted")
            table.blob(slot)
        }

    /** A printable form of an address blob (`fi_av_straddr`). */
    public fun straddr(address: ByteArray): String = domain.provider.parseAddress(address).render()

    /** A printable form of an inserted address. */
    public fun straddr(fiAddr: Long): String = straddr(lookup(fiAddr))

    override fun query(): AvAttr = AvAttr(type, count, name)

    override fun epAddr(endpoint: Endpoint): Long =
        synchronized(domain.lock) {
            val peer =
                try {
                    domain.provider.parseAddress(endpoint.address)
                } catch (e: FabricException) {
                    return FiAddr.NOTAVAIL // an endpoint of another provider cannot be in this AV
                }
            val slot = table.indexFind(peer.indexKeyHash(0)) { table.holds(it, peer.raw) }
            if (slot < 0) FiAddr.NOTAVAIL else fiAddrOf(slot)
        }

    /** A new AV set (`fi_av_set`) of [addrs], each of which must be inserted here. */
    public fun avSet(vararg addrs: Long): AvSet = AvSet(this).also { set -> addrs.forEach { set.insert(it) } }

    /** Whether [fiAddr] is inserted. */
    public fun contains(fiAddr: Long): Boolean = synchronized(domain.lock) { slotOf(fiAddr) >= 0 }

    /** The parsed peer behind [fiAddr], or null if it is not inserted. Caller holds the lock. */
    @JvmSynthetic
    internal fun peer(fiAddr: Long): PeerAddress? {
        val slot = slotOf(fiAddr)
        return if (slot < 0) null else parsed(slot)
    }

    /**
     * The fabric address of the peer whose key, or the key of one of whose rail parts, is [key], or [FiAddr.NOTAVAIL].
     * Caller holds the lock.
     */
    @JvmSynthetic
    internal fun reverse(key: String): Long {
        val slot =
            table.indexFind(AddressTable.keyHash(key)) { s -> parsed(s).let { it.key == key || key in it.partKeys } }
        return if (slot < 0) FiAddr.NOTAVAIL else fiAddrOf(slot)
    }

    /** Heap and off-heap bytes the AV's storage holds now (for benchmarks). */
    @JvmSynthetic internal fun storageBytes(): LongArray = longArrayOf(table.heapBytes(), table.offHeapBytes())

    private fun insertLocked(address: ByteArray): Long {
        val peer = domain.provider.parseAddress(address)
        val raw = peer.raw
        val first = peer.indexKeyHash(0)
        val existing = table.indexFind(first) { table.holds(it, raw) }
        if (existing >= 0) {
            table.setInserts(existing, table.inserts(existing) + 1)
            return fiAddrOf(existing)
        }
        val slot = table.allocate(reuse = type == AvType.MAP)
        table.store(slot, raw)
        table.indexAdd(first, slot)
        for (k in 1 until peer.indexKeyCount) table.indexAdd(peer.indexKeyHash(k), slot)
        cacheSlot[slot and CACHE_MASK] = slot
        cachePeer[slot and CACHE_MASK] = peer
        table.changed()
        return fiAddrOf(slot)
    }

    /** The parsed address in [slot] (which holds one): from the cache, else parsed from its blob. */
    private fun parsed(slot: Int): PeerAddress {
        val i = slot and CACHE_MASK
        if (cacheSlot[i] == slot) return cachePeer[i]!!
        val peer = domain.provider.parseAddress(table.blob(slot))
        cacheSlot[i] = slot
        cachePeer[i] = peer
        return peer
    }

    private fun fiAddrOf(slot: Int): Long =
        if (type == AvType.MAP) (table.generation(slot).toLong() shl 32) or slot.toLong() else slot.toLong()

    private fun slotOf(fiAddr: Long): Int {
        if (fiAddr < 0) return -1
        val slot = (fiAddr and 0xffff_ffffL).toInt()
        if (slot < 0 || !table.occupied(slot)) return -1
        if (type == AvType.MAP && (fiAddr ushr 32).toInt() != table.generation(slot)) return -1
        if (type != AvType.MAP && fiAddr ushr 32 != 0L) return -1
        return slot
    }

    /**
     * Closes the AV. A named AV is unmapped; when its creator closes it, its name is removed too (processes that have
     * it open keep their mapping).
     */
    override fun close() {
        synchronized(domain.lock) {
            if (closed) return
            closed = true
            table.close(remove = name != null && !isReadOnly)
        }
    }

    private fun checkWritable(call: String) {
        if (closed)
            throw FabricException(Errno.EINVAL, "address vector${name?.let { " '$it'" } ?: ""}: $call after close")
        if (isReadOnly)
            throw FabricException(
                Errno.EACCES,
                "address vector '$name': $call refused: this process opened it read-only (FI_READ); the process that " +
                    "created it (pid ${table.owner}) inserts and removes addresses, and the others see them",
            )
    }

    private companion object {
        const val CACHE_SIZE = 1024
        const val CACHE_MASK = CACHE_SIZE - 1
    }
}
