package braid.collectives.offload

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOffload
import braid.collectives.CollectiveOp
import braid.collectives.Datatype
import braid.collectives.ReduceOp
import braid.collectives.UserReduction
import braid.core.CoreParams
import braid.core.Errno
import braid.core.FabricException
import braid.core.PeerAvSet
import braid.core.shm.JobKeyProof
import braid.core.shm.SharedMemoryDir
import braid.provider.HostIds

/**
 * The intra-node collective offload provider (fi_peer(3)'s second model: "an offload provider implements a subset of
 * the libfabric API … paired with a main peer provider"). It implements only collectives, for the processes of one
 * host, through ONE shared-memory segment per host group ([OffloadSegment]): each rank copies its input into its slot
 * and the reduction is done by reading the peers' slots in place; broadcasts and allgathers copy straight out of the
 * slots; messages larger than a slot go through in slot-sized pieces.
 *
 * Pairing. Give it to a join ([braid.collectives.JoinOptions.withOffload]); when the join completes it imports the
 * group's members through the peer AV set ([PeerAvSet.members], growing its array while the owner answers
 * `-ETOOSMALL`), reads each member's host identity from its address, and decides:
 * - all members on this host, at least [minMembers] of them: the group's calls that [queryCollective] accepts go
 *   through the segment; the rest through the main provider;
 * - members on several hosts ([hierarchical]): barrier, broadcast, allgather and commutative reduce and allreduce
 *   become hierarchical schedules — inside each host through the segment, between hosts among one leader per host (its
 *   lowest rank) over the main provider; non-commutative reductions stay flat on the main provider, whose algorithms
 *   keep rank order;
 * - otherwise (the too-small rule: fewer than [minMembers] members on a one-host group, or a host of a multi-host group
 *   with more than one but fewer than [minMembers]) the group is left to the main provider ([CollectiveGroup.offload]
 *   stays null).
 *
 * Immutable; `with…` copies change it. [DEFAULT]: 128 KiB slots, 2 members at least, every operation it implements,
 * hierarchy on, and a two-rank one-host group's calls above 64 KiB left to the main provider ([maxBytes]).
 *
 * How a group gets it (then it is what the group's calls use by default, as above):
 * `JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT)` at the join; [CollectiveOffload.pairWith] for every group
 * joined on a domain's endpoints; in a topology, the DSL's `offload { link = …; operations(…) }` block or a config
 * file's `offloads = [ … ]` (`Topology.open` calls [CollectiveOffload.pairWith]).
 */
public class ShmOffload
private constructor(
    /** Bytes of one rank's slot (the piece size of large messages). */
    @get:JvmName("slotBytes") public val slotBytes: Int,
    /** The fewest members on this host for the offload to take a group. */
    @get:JvmName("minMembers") public val minMembers: Int,
    /** The operations it takes (a subset of [IMPLEMENTED]). */
    @get:JvmName("operations") public val operations: Set<CollectiveOp>,
    /** Whether groups spanning hosts get hierarchical schedules. */
    @get:JvmName("hierarchical") public val hierarchical: Boolean,
    /** How long a rank waits for the host's other ranks to map the segment. */
    @get:JvmName("attachTimeoutMillis") public val attachTimeoutMillis: Long,
    /** How often a waiting rank checks that the ranks it waits for still run. */
    @get:JvmName("livenessMillis") public val livenessMillis: Long,
    /**
     * The largest call (bytes of one rank's vector) a one-host group of two ranks sends through the segment; its larger
     * calls go through the main provider's point-to-point schedules (with two ranks an allreduce is one exchange of the
     * whole vector, a broadcast one message). [DEFAULT] has 64 KiB. Groups of three or more on a host, and hierarchical
     * groups, use the segment at every size.
     *
     * Where 64 KiB comes from: `CollBench run`, 2 ranks, one run at load 1–2 (2026-11-24 09:19; slowest rank's mean /
     * median µs, point-to-point vs segment): allreduce 8 B 28.6 / 1.24 vs 2.06 / 0.50 (p99 145 vs 1.0), 4 KiB 4.10 /
     * 1.46 vs 4.14 / 1.20, 64 KiB 47.0 / 15.3 vs 42.5 / 12.3, 1 MiB 329 / 284 vs 717 / 252; broadcast 8 B 1.95 / 0.28
     * vs 25.7 / 0.37, 64 KiB 97 / 7.0 vs 24 / 9.1, 1 MiB 86 / 80 vs 198 / 197; barrier 0.94 / 0.38 vs 0.83 / 0.41.
     * Under heavy load the small-call medians ranked the other way by 0.1–1.4 µs (below), so a quiet re-run should
     * confirm the crossover.
     *
     * Measured with `bench/coll-offload.sh` (2026-11-24, a 2-core machine under load 10–24 from other builds, so
     * rankings only; slowest rank's median µs, main provider vs segment): 2 ranks (SPIN) — allreduce 8 B 0.73 vs 0.69,
     * 4 KiB 2.86 vs 4.29, 64 KiB 30.5 vs 39.4; broadcast 8 B 0.31 vs 0.60, 64 KiB 7.4 vs 11.1, 1 MiB 99 vs 703; barrier
     * 0.78 vs 0.85 (`CollBench run`, three rounds: allreduce 8 B 0.87–0.96 vs 1.09–1.22). 3 ranks (YIELD) — allreduce 8
     * B 9.35 vs 8.79 (means 15.1 vs 6.6), 64 KiB 70.8 vs 32.9, 1 MiB 534 vs 438; broadcast 8 B 0.28 vs 7.65, 64 KiB
     * 20.8 vs 11.3; barrier 9.38 vs 7.70.
     */
    @get:JvmName("maxBytes") public val maxBytes: Int,
) : CollectiveOffload() {
    init {
        if (slotBytes < 64 || slotBytes > (1 shl 28))
            throw FabricException.invalid("offload: slot of $slotBytes bytes; give 64 B .. 256 MiB")
        if (minMembers < 2)
            throw FabricException.invalid(
                "offload: minMembers $minMembers; a group needs at least 2 members on a host for a shared segment to help"
            )
        val extra = operations - IMPLEMENTED
        if (extra.isNotEmpty())
            throw FabricException(
                Errno.ENOSYS,
                "offload: it does not implement ${extra.joinToString()}; it implements ${IMPLEMENTED.joinToString()}",
            )
        if (maxBytes < 0)
            throw FabricException.invalid(
                "offload: maxBytes $maxBytes; give ≥ 0 (0: only barriers through the segment)"
            )
        if (attachTimeoutMillis < 1 || livenessMillis < 1)
            throw FabricException.invalid(
                "offload: attach timeout $attachTimeoutMillis ms and liveness $livenessMillis ms must be ≥ 1 ms"
            )
    }

    public fun withSlotBytes(bytes: Int): ShmOffload =
        ShmOffload(bytes, minMembers, operations, hierarchical, attachTimeoutMillis, livenessMillis, maxBytes)

    public fun withMinMembers(n: Int): ShmOffload =
        ShmOffload(slotBytes, n, operations, hierarchical, attachTimeoutMillis, livenessMillis, maxBytes)

    public fun withOperations(ops: Set<CollectiveOp>): ShmOffload =
        ShmOffload(slotBytes, minMembers, ops.toSet(), hierarchical, attachTimeoutMillis, livenessMillis, maxBytes)

    public fun withHierarchical(on: Boolean): ShmOffload =
        ShmOffload(slotBytes, minMembers, operations, on, attachTimeoutMillis, livenessMillis, maxBytes)

    public fun withTimeouts(attachTimeoutMillis: Long, livenessMillis: Long): ShmOffload =
        ShmOffload(slotBytes, minMembers, operations, hierarchical, attachTimeoutMillis, livenessMillis, maxBytes)

    /**
     * A copy sending a two-rank one-host group's calls of up to [bytes] through the segment (`Int.MAX_VALUE`: every
     * size).
     */
    public fun withMaxBytes(bytes: Int): ShmOffload =
        ShmOffload(slotBytes, minMembers, operations, hierarchical, attachTimeoutMillis, livenessMillis, bytes)

    /**
     * Whether it carries [op] on [datatype] with [reduceOp] (`fi_query_collective`): 0 if so, `-ENOSYS` if not. Barrier
     * takes no datatype (null); broadcast and allgather any datatype; reduce and allreduce the built-in ops from MIN to
     * BXOR on the types MPI defines them on (like libfabric's `off_coll`, MINLOC and MAXLOC are left to the main
     * provider), and user reductions (a call whose vector is longer than a slot goes to the main provider: a user
     * reduction sees its vector whole). Operations outside [operations] answer `-ENOSYS`. This is the provider's
     * answer; a group's pairing answers for the group ([braid.collectives.OffloadBinding.queryCollective]: across
     * hosts, non-commutative reductions are not taken).
     */
    override fun queryCollective(op: CollectiveOp, datatype: Datatype?, reduceOp: ReduceOp?): Int =
        if (supports(op, datatype, reduceOp)) 0 else -Errno.ENOSYS

    @JvmSynthetic
    internal fun supports(op: CollectiveOp, datatype: Datatype?, reduction: Any?): Boolean {
        if (op !in operations) return false
        return when (op) {
            CollectiveOp.BARRIER -> true
            CollectiveOp.BROADCAST,
            CollectiveOp.ALLGATHER -> datatype != null
            CollectiveOp.REDUCE,
            CollectiveOp.ALLREDUCE ->
                datatype != null &&
                    when (reduction) {
                        is ReduceOp ->
                            reduction != ReduceOp.MINLOC && reduction != ReduceOp.MAXLOC && datatype.supports(reduction)
                        is UserReduction -> true
                        else -> false
                    }
            else -> false
        }
    }

    /**
     * Pairs with [group] (joined on [set]); the binding, or null when the group is left to the main provider (too
     * small, or members whose addresses carry no host identity).
     */
    @JvmSynthetic
    override fun pair(group: CollectiveGroup, set: PeerAvSet): ShmOffloadBinding? {
        var members = LongArray(8)
        var n = set.members(members)
        while (n == -Errno.ETOOSMALL) {
            members = LongArray(members.size * 2)
            n = set.members(members)
        }
        if (n < 0) return null
        members = members.copyOf(n)
        val av = group.avSet.av
        val hostIds = LongArray(n) { HostIds.of(av.lookup(members[it])) ?: return null }
        val mine = HostIds.of(group.endpoint.address) ?: return null
        val hostList = hostIds.distinct()
        val hostOfRank = IntArray(n) { hostList.indexOf(hostIds[it]) }
        val local = (0 until n).filter { hostIds[it] == mine }.toIntArray()
        if (hostList.size == 1 && local.size < minMembers) return null
        if (hostList.size > 1 && !hierarchical) return null
        // Across hosts every host needs a segment or no partner: a host of 2 .. minMembers−1 ranks
        // would have neither, and its non-leaders no way to the leader. Every member sees every
        // host's size, so all of them leave the group to the main provider alike.
        if (hostList.size > 1 && hostList.indices.any { h -> hostOfRank.count { it == h } in 2 until minMembers })
            return null
        val settings = group.endpoint.domain.info.settings
        val engine =
            if (local.size < minMembers) null
            else {
                val hash = groupHash(group.contextId, mine, local.map { av.lookup(members[it]) })
                OffloadEngine(
                    local.size,
                    local.indexOf(group.rank),
                    local,
                    SharedMemoryDir.of(settings).resolve("braid-coll-${java.lang.Long.toHexString(hash)}.seg"),
                    hash,
                    JobKeyProof(settings[CoreParams.JOB_KEY]),
                    slotBytes,
                    attachTimeoutMillis * 1_000_000,
                    livenessMillis * 1_000_000,
                    Array(local.size) { HostIds.processOf(av.lookup(members[local[it]])) },
                )
            }
        return ShmOffloadBinding(this, group, hostList.size > 1, hostOfRank, local, engine)
    }

    override fun toString(): String =
        "ShmOffload(slot $slotBytes B, ≥ $minMembers members, ${operations.joinToString { it.name.lowercase() }}, one-host calls ≤ ${if (maxBytes == Int.MAX_VALUE) "any size" else "$maxBytes B"}${if (hierarchical) ", hierarchical" else ""})"

    public companion object {
        /** What this provider implements: barrier, broadcast, reduce, allreduce, allgather. */
        @JvmField
        public val IMPLEMENTED: Set<CollectiveOp> =
            setOf(
                CollectiveOp.BARRIER,
                CollectiveOp.BROADCAST,
                CollectiveOp.REDUCE,
                CollectiveOp.ALLREDUCE,
                CollectiveOp.ALLGATHER,
            )

        @JvmField public val DEFAULT: ShmOffload = ShmOffload(128 * 1024, 2, IMPLEMENTED, true, 30_000, 50, 64 * 1024)

        private fun groupHash(context: Int, host: Long, locals: List<ByteArray>): Long {
            var h = -0x340d631b7bdddcdbL
            fun mix(v: Long) {
                for (k in 0 until 8) {
                    h = h xor ((v ushr (8 * k)) and 0xff)
                    h *= 0x100000001b3L
                }
            }
            mix(context.toLong())
            mix(host)
            for (a in locals) {
                for (b in a) {
                    h = h xor (b.toLong() and 0xff)
                    h *= 0x100000001b3L
                }
                mix(a.size.toLong())
            }
            return h
        }
    }
}
