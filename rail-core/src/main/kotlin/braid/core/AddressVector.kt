package braid.core

import braid.provider.PeerAddress

/**
 * An address vector (`fid_av`): maps peer address blobs to compact fabric addresses (`fi_addr`)
 * used by data operations. TABLE addresses are indices 0, 1, 2, … in insertion order and never
 * reused; MAP addresses carry a generation in their upper half, so a removed address that is
 * used again is refused instead of reaching whoever took its slot.
 */
public class AddressVector internal constructor(
    public val domain: Domain,
    public val type: AvType,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : PeerAddressVector, AutoCloseable {
    private val peers = ArrayList<PeerAddress?>()
    private val generations = ArrayList<Int>()
    private val byKey = HashMap<String, Long>()
    private val freeSlots = ArrayDeque<Int>()

    /** Bumped on every insert and remove, so providers can refresh what they cached. */
    @Volatile
    public var generation: Long = 0
        private set

    /** Addresses currently inserted. */
    public val count: Int get() = synchronized(domain.lock) { peers.count { it != null } }

    /**
     * Inserts one address blob (`fi_av_insert`) and returns its fabric address. A malformed blob
     * is refused with [FabricException] naming what is wrong.
     */
    public fun insert(address: ByteArray): Long = synchronized(domain.lock) {
        val peer = domain.provider.parseAddress(address)
        val slot = if (type == AvType.MAP && freeSlots.isNotEmpty()) freeSlots.removeFirst() else {
            peers += null; generations += 0; peers.size - 1
        }
        peers[slot] = peer
        val gen = generations[slot] + 1
        generations[slot] = gen
        val fiAddr = if (type == AvType.MAP) (gen.toLong() shl 32) or slot.toLong() else slot.toLong()
        byKey.putIfAbsent(peer.key, fiAddr)
        for (k in peer.partKeys) byKey.putIfAbsent(k, fiAddr)
        generation++
        fiAddr
    }

    /** Inserts several blobs, returning their fabric addresses in order. */
    public fun insert(addresses: List<ByteArray>): LongArray = LongArray(addresses.size) { insert(addresses[it]) }

    /** Removes [fiAddr] (`fi_av_remove`); later use of it fails with `-EINVAL`. */
    public fun remove(fiAddr: Long): Unit = synchronized(domain.lock) {
        val slot = slotOf(fiAddr)
        if (slot < 0) throw FabricException(Errno.ENOENT, "address vector: fi_addr $fiAddr is not inserted")
        val peer = peers[slot]!!
        peers[slot] = null
        if (byKey[peer.key] == fiAddr) byKey.remove(peer.key)
        for (k in peer.partKeys) if (byKey[k] == fiAddr) byKey.remove(k)
        if (type == AvType.MAP) freeSlots.addLast(slot)
        generation++
    }

    /** The blob inserted as [fiAddr] (`fi_av_lookup`). */
    public fun lookup(fiAddr: Long): ByteArray = synchronized(domain.lock) {
        val slot = slotOf(fiAddr)
        if (slot < 0) throw FabricException(Errno.ENOENT, "address vector: fi_addr $fiAddr is not inserted")
        peers[slot]!!.raw.copyOf()
    }

    /** A printable form of an address blob (`fi_av_straddr`). */
    public fun straddr(address: ByteArray): String = domain.provider.parseAddress(address).render()

    /** A printable form of an inserted address. */
    public fun straddr(fiAddr: Long): String = straddr(lookup(fiAddr))

    override fun query(): AvAttr = AvAttr(type, count)

    override fun epAddr(endpoint: Endpoint): Long = synchronized(domain.lock) {
        val key = try {
            domain.provider.parseAddress(endpoint.address).key
        } catch (e: FabricException) {
            return FiAddr.NOTAVAIL // an endpoint of another provider cannot be in this AV
        }
        reverse(key)
    }

    /** A new AV set (`fi_av_set`) of [addrs], each of which must be inserted here. */
    public fun avSet(vararg addrs: Long): AvSet = AvSet(this).also { set -> addrs.forEach { set.insert(it) } }

    /** Whether [fiAddr] is inserted. */
    public fun contains(fiAddr: Long): Boolean = synchronized(domain.lock) { slotOf(fiAddr) >= 0 }

    /** The parsed peer behind [fiAddr], or null if it is not inserted. Caller holds the lock. */
    internal fun peer(fiAddr: Long): PeerAddress? {
        val slot = slotOf(fiAddr)
        return if (slot < 0) null else peers[slot]
    }

    /**
     * The fabric address of the peer whose key, or the key of one of whose rail parts, is [key],
     * or [FiAddr.NOTAVAIL]. Caller holds the lock.
     */
    internal fun reverse(key: String): Long = byKey[key] ?: FiAddr.NOTAVAIL

    private fun slotOf(fiAddr: Long): Int {
        if (fiAddr < 0) return -1
        val slot = (fiAddr and 0xffff_ffffL).toInt()
        if (slot >= peers.size || peers[slot] == null) return -1
        if (type == AvType.MAP && (fiAddr ushr 32).toInt() != generations[slot]) return -1
        if (type != AvType.MAP && fiAddr ushr 32 != 0L) return -1
        return slot
    }

    override fun close() {}
}
