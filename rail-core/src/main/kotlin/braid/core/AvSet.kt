package braid.core

/**
 * An AV set (`fid_av_set`): an ordered set of fi_addrs from one [AddressVector], the membership of a collective. Set
 * algebra as `fi_av_set_union`, `_intersect`, `_diff`, `_insert` and `_remove`; members keep the order they were first
 * inserted in. As a [PeerAvSet] it hands its members to an offload provider paired with the AV's provider.
 */
public class AvSet
internal constructor(public val av: AddressVector, @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden()) :
    PeerAvSet {
    private val order = LinkedHashSet<Long>()

    /** How many members the set has. */
    public val count: Int
        get() = order.size

    /** Adds [fiAddr], which must be inserted in [av]; adding a member twice is a no-op. */
    public fun insert(fiAddr: Long) {
        if (!av.contains(fiAddr))
            throw FabricException(Errno.ENOENT, "AV set: fi_addr $fiAddr is not inserted in the address vector")
        order += fiAddr
    }

    /** Removes [fiAddr]; ENOENT if it is not a member. */
    public fun remove(fiAddr: Long) {
        if (!order.remove(fiAddr)) throw FabricException(Errno.ENOENT, "AV set: fi_addr $fiAddr is not a member")
    }

    /** Adds every member of [other] (`fi_av_set_union`). */
    public fun union(other: AvSet) {
        sameAv(other)
        order += other.order
    }

    /** Keeps only members also in [other] (`fi_av_set_intersect`). */
    public fun intersect(other: AvSet) {
        sameAv(other)
        order.retainAll(other.order)
    }

    /** Removes every member of [other] (`fi_av_set_diff`). */
    public fun diff(other: AvSet) {
        sameAv(other)
        order.removeAll(other.order)
    }

    override fun members(out: LongArray): Int {
        if (out.size < order.size) return -Errno.ETOOSMALL
        var i = 0
        for (a in order) out[i++] = a
        return i
    }

    /** The members, in order. */
    public fun toLongArray(): LongArray = order.toLongArray()

    private fun sameAv(other: AvSet) {
        if (other.av !== av) throw FabricException.invalid("AV set: the other set belongs to another address vector")
    }

    override fun toString(): String = "AvSet(${order.joinToString()})"
}
