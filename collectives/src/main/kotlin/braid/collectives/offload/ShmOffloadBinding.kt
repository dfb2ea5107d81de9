package braid.collectives.offload

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOp
import braid.collectives.Datatype
import braid.collectives.InlineOffloadStep
import braid.collectives.OffloadBinding
import braid.collectives.ReduceOp
import braid.collectives.Schedule
import braid.collectives.ShapeKey
import braid.collectives.UserReduction
import braid.core.Errno
import java.util.IdentityHashMap
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A group's pairing with the [ShmOffload] provider ([CollectiveGroup.offload]): which calls go through the host's
 * shared-memory segment, which become hierarchical schedules, and counters of what carried each call.
 *
 * A call's path is chosen when its shape is first compiled (every rank compiles the same shape the same way, so all
 * ranks take the same path) and cached with its schedule:
 * - [isHierarchical] false (every member on this host): the calls [ShmOffload.queryCollective] accepts are one
 *   shared-memory phase; the others go through the main provider;
 * - [isHierarchical] true: barrier, broadcast, allgather and commutative reduce and allreduce are a shared-memory phase
 *   inside the host, then the main provider among the hosts' leaders (each host's lowest rank), then a shared-memory
 *   phase back inside the host ([HierarchicalSchedules] says how each runs). Non-commutative reductions and the
 *   operations the offload does not implement run flat between all ranks on the main provider. The leaders' messages
 *   carry the group's context and the call's sequence number, so they never meet another call's.
 *
 * [queryCollective] answers, for this group, which calls take the offload's path.
 */
internal class ShmOffloadBinding(
    override val provider: ShmOffload,
    private val group: CollectiveGroup,
    override val isHierarchical: Boolean,
    private val hostOfRank: IntArray,
    private val localRanks: IntArray,
    private val engine: OffloadEngine?,
) : OffloadBinding() {
    private class Entry(val phases: Array<OffloadPhase>, val hierarchical: Boolean, val transfers: Int)

    private val entries = IdentityHashMap<Schedule, Entry>()
    private val hierarchy = if (isHierarchical) HierarchicalSchedules(group, hostOfRank, engine) else null

    override val hostCount: Int
        get() = hierarchy?.hosts ?: 1

    override fun localRanks(): IntArray = localRanks.copyOf()

    override val isLeader: Boolean
        get() = localRanks[0] == group.rank

    /** Shared-memory phases carried through the segment by this rank. */
    override val segmentPhases: Long
        get() = engine?.phases ?: 0

    /** Bytes this rank copied into the segment. */
    override val segmentBytes: Long
        get() = engine?.bytesIn ?: 0

    /** The failure that ended this host's segment, or null. */
    override val failure: String?
        get() = engine?.failure

    /**
     * Unmaps the segment (removing its file if it is still named) and forgets the schedules it built; later offload
     * calls fail. [CollectiveGroup.close] calls it once no collective is in flight; closing it directly under a running
     * collective fails that collective's next phase.
     */
    override fun close() {
        engine?.close()
        entries.clear()
    }

    /**
     * Whether a call of [op] on [datatype] with the built-in [reduceOp] (null for operations without one) takes this
     * pairing's path in this group — one shared-memory phase on one host, a hierarchical schedule across hosts: 0 if
     * so, `-ENOSYS` if it runs on the main provider. `fi_query_collective` for the group rather than the provider
     * ([ShmOffload.queryCollective]): across hosts only barrier, broadcast, reduce, allreduce and allgather are
     * hierarchical.
     */
    override fun queryCollective(op: CollectiveOp, datatype: Datatype?, reduceOp: ReduceOp?): Int =
        query(op, datatype, reduceOp, 0)

    /**
     * [queryCollective] for a call of [count] elements with a user reduction: a non-commutative one runs flat on the
     * main provider across hosts (order-preserving), and one whose vector is longer than a slot runs on the main
     * provider (a user reduction sees its vector whole).
     */
    override fun queryCollective(op: CollectiveOp, datatype: Datatype, reduction: UserReduction, count: Int): Int =
        query(op, datatype, reduction, count)

    private fun query(op: CollectiveOp, datatype: Datatype?, reduction: Any?, count: Int): Int {
        val probe = ShapeKey().set(op, braid.collectives.CollectiveAlgorithm.AUTO, datatype, reduction, count, 0, false)
        return if (takes(probe)) 0 else -Errno.ENOSYS
    }

    private fun takes(key: ShapeKey): Boolean {
        val reduction = key.reduction
        if (!provider.supports(key.op, key.datatype, reduction)) return false
        // A user reduction sees its vector whole: longer than a slot, it is left to the main provider.
        if (reduction is UserReduction && key.count * (key.datatype?.size ?: 1) > provider.slotBytes) return false
        // Two ranks on one host: past maxBytes one point-to-point exchange is faster (ShmOffload.maxBytes says by how
        // much).
        if (
            !isHierarchical &&
                localRanks.size == 2 &&
                key.count.toLong() * (key.datatype?.size ?: 1) > provider.maxBytes
        )
            return false
        return !isHierarchical || hierarchy!!.takes(key)
    }

    // ## Called by the group ##

    /** The schedule of [key] through the offload, or null to leave the call to the main provider. */
    @JvmSynthetic
    override fun compile(key: ShapeKey): Schedule? =
        when {
            !takes(key) -> null
            isHierarchical -> hierarchical(key)
            else -> flat(key)
        }

    /**
     * A call is starting on [s] (under the group's lock, before its steps can fire). A [blocking] call carried wholly
     * by one shared-memory phase on this host is not queued as deferred work: its phase is returned, and the caller
     * carries it through the engine itself while it waits ([inlineCalls] counts these). Otherwise null, and the
     * schedule runs.
     */
    @JvmSynthetic
    override fun starting(s: Schedule, blocking: Boolean): InlineOffloadStep? {
        val e = entries[s]
        if (e == null) {
            mainCalls++
            return null
        }
        if (e.hierarchical) hierarchicalCalls++ else offloadCalls++
        leaderTransfers += e.transfers
        val inline = blocking && !e.hierarchical && e.phases.size == 1
        if (inline) inlineCalls++
        if (e.phases.isNotEmpty()) engine!!.starting(e.phases, inline)
        return if (inline) e.phases[0] else null
    }

    // ## Building ##

    private fun flat(key: ShapeKey): Schedule {
        val es = key.datatype?.size ?: 1
        val bytes = key.count * es
        val s =
            Schedule(
                group,
                null,
                "${key.op.name.lowercase()} (offload, ${key.count} × ${key.datatype ?: "-"}, rank ${group.rank} of ${group.size})",
            )
        val input = if (key.inPlace) s.recv else s.send
        val phases = ArrayList<OffloadPhase>(1)
        fun phase(
            kind: OffloadPhase.Kind,
            n: Int,
            root: Int,
            input: DirectBuffer,
            inputOffset: Int,
            output: MutableDirectBuffer,
        ) = s.offloadPhase(engine!!, group, key, phases, kind, n, root, input, inputOffset, output)
        when (key.op) {
            CollectiveOp.BARRIER -> phase(OffloadPhase.Kind.BARRIER, 0, 0, EMPTY, 0, EMPTY)
            CollectiveOp.BROADCAST -> phase(OffloadPhase.Kind.BCAST, bytes, key.root, s.recv, 0, s.recv)
            CollectiveOp.ALLREDUCE -> phase(OffloadPhase.Kind.ALLREDUCE, bytes, 0, input, 0, s.recv)
            CollectiveOp.REDUCE -> phase(OffloadPhase.Kind.REDUCE, bytes, key.root, input, 0, s.recv)
            CollectiveOp.ALLGATHER ->
                phase(OffloadPhase.Kind.ALLGATHER, bytes, 0, input, if (key.inPlace) group.rank * bytes else 0, s.recv)
            else -> error("offload: ${key.op} is not implemented")
        }
        s.seal()
        entries[s] = Entry(phases.toTypedArray(), false, 0)
        return s
    }

    private fun hierarchical(key: ShapeKey): Schedule {
        val built = hierarchy!!.build(key)
        entries[built.schedule] = Entry(built.phases, true, built.transfers)
        return built.schedule
    }

    override fun toString(): String =
        "ShmOffloadBinding(${if (isHierarchical) "hierarchical over $hostCount hosts" else "one host"}, ${localRanks.size} local ranks, $provider)"

    private companion object {
        val EMPTY = UnsafeBuffer(ByteArray(0))
    }
}
