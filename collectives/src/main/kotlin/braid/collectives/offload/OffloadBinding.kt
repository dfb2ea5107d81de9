package braid.collectives.offload

import braid.collectives.Algorithms
import braid.collectives.CollectiveAlgorithm
import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOp
import braid.collectives.Schedule
import braid.collectives.ScheduleCompiler
import braid.collectives.ShapeKey
import braid.collectives.UserReduction
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer
import java.util.IdentityHashMap

/**
 * A group's pairing with the [ShmOffload] provider ([CollectiveGroup.offload]): which calls go
 * through the host's shared-memory segment, which become hierarchical schedules, and counters
 * of what carried each call.
 *
 * A call's path is chosen when its shape is first compiled (every rank compiles the same shape
 * the same way, so all ranks take the same path) and cached with its schedule:
 * - [isHierarchical] false (every member on this host): the calls [ShmOffload.queryCollective]
 *   accepts are one shared-memory phase; the others go through the main provider;
 * - [isHierarchical] true: barrier, broadcast and commutative allreduce are a shared-memory phase
 *   inside the host, then the main provider among the hosts' leaders (each host's lowest rank),
 *   then a shared-memory phase back inside the host. The leaders' messages carry the group's
 *   context and the call's sequence number, so they never meet another call's.
 */
public class OffloadBinding internal constructor(
    /** The provider paired with the group. */
    public val provider: ShmOffload,
    private val group: CollectiveGroup,
    /** Whether the group spans hosts (calls become hierarchical schedules). */
    @get:JvmName("isHierarchical") public val isHierarchical: Boolean,
    private val hostOfRank: IntArray,
    private val localRanks: IntArray,
    private val engine: OffloadEngine?,
) : AutoCloseable {
    private class Entry(val phases: Array<OffloadPhase>, val hierarchical: Boolean, val transfers: Int)

    private val entries = IdentityHashMap<Schedule, Entry>()
    private val hosts = hostOfRank.max() + 1
    private val leaders = IntArray(hosts) { h -> hostOfRank.indexOfFirst { it == h } }
    private val myHost = hostOfRank[group.rank]
    private val leaderIndex = if (leaders[myHost] == group.rank) myHost else -1
    private val leaderGroup: CollectiveGroup? = if (leaderIndex < 0 || hosts < 2) null else
        CollectiveGroup(group.endpoint, group.avSet, LongArray(hosts) { group.addressOf(leaders[it]) }, leaderIndex, group.contextId, group.tuning, 0)

    /** How many hosts the group spans. */
    public val hostCount: Int get() = hosts

    /** The group ranks on this host, in rank order. */
    public fun localRanks(): IntArray = localRanks.copyOf()

    /** Whether this rank is its host's leader (it carries the host's part between hosts). */
    public val isLeader: Boolean get() = leaderIndex >= 0

    /** Calls carried wholly through the segment. */
    @Volatile public var offloadCalls: Long = 0; private set
    /** Calls run as hierarchical schedules. */
    @Volatile public var hierarchicalCalls: Long = 0; private set
    /** Calls the offload declined (left to the main provider). */
    @Volatile public var mainCalls: Long = 0; private set
    /** Transfers this rank posted on the main provider for the between-host part of hierarchical calls. */
    @Volatile public var leaderTransfers: Long = 0; private set

    /** Shared-memory phases carried through the segment by this rank. */
    public val segmentPhases: Long get() = engine?.phases ?: 0
    /** Bytes this rank copied into the segment. */
    public val segmentBytes: Long get() = engine?.bytesIn ?: 0

    /** The failure that ended this host's segment, or null. */
    public val failure: String? get() = engine?.failure

    /** Unmaps the segment (removing its file if it is still named); later offload calls fail. */
    override fun close() { engine?.close() }

    // ## Called by the group ##

    /** The schedule of [key] through the offload, or null to leave the call to the main provider. */
    internal fun compile(key: ShapeKey): Schedule? {
        val reduction = key.reduction
        if (!provider.supports(key.op, key.datatype, reduction)) return null
        // A user reduction sees its vector whole: longer than a slot, it is left to the main provider.
        if (reduction is UserReduction && key.count * (key.datatype?.size ?: 1) > provider.slotBytes) return null
        // Two ranks on one host: past maxBytes one point-to-point exchange is faster (ShmOffload.maxBytes says by how much).
        if (!isHierarchical && localRanks.size == 2 && key.count.toLong() * (key.datatype?.size ?: 1) > provider.maxBytes) return null
        return if (!isHierarchical) flat(key) else {
            val commutative = reduction !is UserReduction || reduction.isCommutative()
            if (key.op == CollectiveOp.BARRIER || key.op == CollectiveOp.BROADCAST || (key.op == CollectiveOp.ALLREDUCE && commutative)) hierarchical(key) else null
        }
    }

    /** A call is starting on [s] (under the group's lock, before its steps can fire). */
    internal fun starting(s: Schedule) {
        val e = entries[s]
        if (e == null) { mainCalls++; return }
        if (e.hierarchical) hierarchicalCalls++ else offloadCalls++
        leaderTransfers += e.transfers
        if (e.phases.isNotEmpty()) engine!!.starting(e.phases)
    }

    // ## Building ##

    private fun phase(s: Schedule, kind: OffloadPhase.Kind, bytes: Int, es: Int, root: Int, key: ShapeKey,
                      input: DirectBuffer, inputOffset: Int, output: MutableDirectBuffer, phases: MutableList<OffloadPhase>) {
        val kernel = if (kind == OffloadPhase.Kind.ALLREDUCE || kind == OffloadPhase.Kind.REDUCE) group.kernelFor(key, key.count) else null
        val p = OffloadPhase(engine!!, kind, bytes, es, root, kernel, input, inputOffset, output, "offload ${kind.name.lowercase()} of $bytes B (rank ${group.rank})")
        p.work = s.local(p)
        s.round()
        phases += p
    }

    private fun flat(key: ShapeKey): Schedule {
        val es = key.datatype?.size ?: 1
        val bytes = key.count * es
        val s = Schedule(group, null, "${key.op.name.lowercase()} (offload, ${key.count} × ${key.datatype ?: "-"}, rank ${group.rank} of ${group.size})")
        val input = if (key.inPlace) s.recv else s.send
        val phases = ArrayList<OffloadPhase>(1)
        when (key.op) {
            CollectiveOp.BARRIER -> phase(s, OffloadPhase.Kind.BARRIER, 0, 1, 0, key, EMPTY, 0, EMPTY, phases)
            CollectiveOp.BROADCAST -> phase(s, OffloadPhase.Kind.BCAST, bytes, es, key.root, key, s.recv, 0, s.recv, phases)
            CollectiveOp.ALLREDUCE -> phase(s, OffloadPhase.Kind.ALLREDUCE, bytes, es, 0, key, input, 0, s.recv, phases)
            CollectiveOp.REDUCE -> phase(s, OffloadPhase.Kind.REDUCE, bytes, es, key.root, key, input, 0, s.recv, phases)
            CollectiveOp.ALLGATHER -> phase(s, OffloadPhase.Kind.ALLGATHER, bytes, es, 0, key, input, if (key.inPlace) group.rank * bytes else 0, s.recv, phases)
            else -> error("offload: ${key.op} is not implemented")
        }
        return seal(s, phases, false, 0)
    }

    private fun hierarchical(key: ShapeKey): Schedule {
        val es = key.datatype?.size ?: 1
        val count = key.count
        val bytes = count * es
        val g = leaderGroup ?: group
        val s = Schedule(g, group.kernelFor(key, count), "${key.op.name.lowercase()} (hierarchical over $hosts hosts, $count × ${key.datatype ?: "-"}, rank ${group.rank} of ${group.size})")
        val phases = ArrayList<OffloadPhase>(2)
        val a = if (leaderGroup != null) Algorithms(s, leaderIndex, hosts) else null
        var transfers = 0
        fun between(block: (Algorithms) -> Unit) {
            if (a == null) return
            val before = s.steps
            block(a)
            s.round()
            transfers = s.steps - before
        }
        when (key.op) {
            CollectiveOp.BARRIER -> {
                if (engine != null) phase(s, OffloadPhase.Kind.BARRIER, 0, 1, 0, key, EMPTY, 0, EMPTY, phases)
                between { it.dissemination() }
                if (engine != null) phase(s, OffloadPhase.Kind.BCAST, 0, 1, 0, key, EMPTY, 0, EMPTY, phases)
            }
            CollectiveOp.BROADCAST -> {
                val rootHost = hostOfRank[key.root]
                if (engine != null && myHost == rootHost) {
                    phase(s, OffloadPhase.Kind.BCAST, bytes, es, localRanks.indexOf(key.root), key, s.recv, 0, s.recv, phases)
                }
                between {
                    if (ScheduleCompiler.choose(leaderGroup!!, CollectiveOp.BROADCAST, bytes, true) == CollectiveAlgorithm.SCATTER_ALLGATHER) it.bcastScatterAllgather(s.recv, bytes, rootHost)
                    else it.bcastBinomial(s.recv, bytes, rootHost)
                }
                if (engine != null && myHost != rootHost) phase(s, OffloadPhase.Kind.BCAST, bytes, es, 0, key, s.recv, 0, s.recv, phases)
            }
            CollectiveOp.ALLREDUCE -> {
                val input = if (key.inPlace) s.recv else s.send
                if (engine != null) phase(s, OffloadPhase.Kind.REDUCE, bytes, es, 0, key, input, 0, s.recv, phases)
                else if (!key.inPlace) { s.copy(input, 0, s.recv, 0, bytes); s.round() }
                between {
                    when (ScheduleCompiler.choose(leaderGroup!!, CollectiveOp.ALLREDUCE, bytes, true)) {
                        CollectiveAlgorithm.RING -> it.allreduceRing(s.recv, s.recv, count, es)
                        CollectiveAlgorithm.RABENSEIFNER -> it.allreduceRabenseifner(s.recv, s.recv, count, es)
                        else -> it.allreduceRecursiveDoubling(s.recv, s.recv, count, es)
                    }
                }
                if (engine != null) phase(s, OffloadPhase.Kind.BCAST, bytes, es, 0, key, s.recv, 0, s.recv, phases)
            }
            else -> error("offload: no hierarchical ${key.op}")
        }
        // A failure between hosts must reach the host's other ranks, which would otherwise wait for
        // this rank's last phase for ever: the engine fails, and says so in the segment.
        if (engine != null && leaderGroup != null) s.onAbort = { err, why -> engine.abandon(err, why) }
        return seal(s, phases, true, transfers)
    }

    private fun seal(s: Schedule, phases: List<OffloadPhase>, hierarchical: Boolean, transfers: Int): Schedule {
        s.seal()
        entries[s] = Entry(phases.toTypedArray(), hierarchical, transfers)
        return s
    }

    override fun toString(): String =
        "OffloadBinding(${if (isHierarchical) "hierarchical over $hosts hosts" else "one host"}, ${localRanks.size} local ranks, $provider)"

    private companion object {
        val EMPTY = UnsafeBuffer(ByteArray(0))
    }
}
