package braid.collectives.offload

import braid.collectives.Algorithms
import braid.collectives.CollectiveAlgorithm
import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOp
import braid.collectives.Schedule
import braid.collectives.ScheduleCompiler
import braid.collectives.ShapeKey
import braid.collectives.UserReduction
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The hierarchical schedules of a group that spans hosts: each call is a shared-memory phase inside every host (through
 * that host's [OffloadEngine]), the main provider among one leader per host (the host's lowest rank), and a
 * shared-memory phase back inside the host.
 * - barrier: a segment barrier, a dissemination barrier among the leaders, a segment release;
 * - broadcast: a segment broadcast on the root's host, a broadcast among the leaders from the root's host, a segment
 *   broadcast on every other host;
 * - allreduce (commutative): a segment reduce to the leader, an allreduce among the leaders, a segment broadcast;
 * - reduce (commutative): a segment reduce to the leader, a binomial reduce among the leaders to the root's host's
 *   leader, and, when the root is not that leader, a segment pass from the leader to the root (the host's other ranks
 *   only keep their epochs in step);
 * - allgather: a segment gather to the leader, which puts its host's blocks in its host's place of a host-ordered
 *   buffer; a ring allgatherv among the leaders with per-host counts (hosts may hold different numbers of ranks); the
 *   leader puts the blocks in rank order (no copy when every host's ranks are consecutive); a segment broadcast of the
 *   whole result.
 *
 * Non-commutative reductions are not taken ([takes] is false): a tree over hosts would combine ranks out of order, so
 * they run flat between all ranks on the main provider's order-preserving algorithms. A host with one rank has no
 * segment: its rank is its leader and copies instead. The leaders' messages carry the group's context and the call's
 * sequence number, so they never meet another call's.
 */
internal class HierarchicalSchedules(
    private val group: CollectiveGroup,
    private val hostOfRank: IntArray,
    private val engine: OffloadEngine?,
) {
    private val p = group.size
    /** How many hosts. */
    val hosts: Int = hostOfRank.max() + 1
    private val leaders = IntArray(hosts) { h -> hostOfRank.indexOfFirst { it == h } }
    private val myHost = hostOfRank[group.rank]
    /** This rank's index among the leaders (its host's), or -1 if it leads no host. */
    private val leaderIndex: Int = if (leaders[myHost] == group.rank) myHost else -1
    private val leaderGroup: CollectiveGroup? =
        if (leaderIndex < 0) null
        else
            CollectiveGroup(
                group.endpoint,
                group.avSet,
                LongArray(hosts) { group.addressOf(leaders[it]) },
                leaderIndex,
                group.contextId,
                group.tuning,
                0,
            )

    private val hostSize = IntArray(hosts).also { for (h in hostOfRank) it[h]++ }
    /** Where each host's ranks start in host order (the hosts one after another, each host's ranks in rank order). */
    private val hostBase = IntArray(hosts).also { for (h in 1 until hosts) it[h] = it[h - 1] + hostSize[h - 1] }
    /** Each rank's index among its host's ranks. */
    private val localIndex =
        IntArray(p).also {
            val seen = IntArray(hosts)
            for (q in 0 until p) it[q] = seen[hostOfRank[q]]++
        }
    /** Whether host order is rank order (every host's ranks consecutive, hosts in order of their lowest rank). */
    private val hostOrdered = (0 until p).all { hostBase[hostOfRank[it]] + localIndex[it] == it }

    /** Whether a call of [key] runs hierarchically (else it runs flat on the main provider). */
    fun takes(key: ShapeKey): Boolean {
        val reduction = key.reduction
        val commutative = reduction !is UserReduction || reduction.isCommutative()
        return when (key.op) {
            CollectiveOp.BARRIER,
            CollectiveOp.BROADCAST,
            CollectiveOp.ALLGATHER -> true
            CollectiveOp.ALLREDUCE,
            CollectiveOp.REDUCE -> commutative
            else -> false
        }
    }

    /** The built schedule, its shared-memory phases (armed per call) and how many steps it posts between hosts. */
    class Built(val schedule: Schedule, val phases: Array<OffloadPhase>, val transfers: Int)

    /** Builds the schedule of [key], which [takes] accepted. */
    fun build(key: ShapeKey): Built {
        val es = key.datatype?.size ?: 1
        val count = key.count
        val bytes = count * es
        val s =
            Schedule(
                leaderGroup ?: group,
                group.kernelFor(key, count),
                "${key.op.name.lowercase()} (hierarchical over $hosts hosts, $count × ${key.datatype ?: "-"}, rank ${group.rank} of $p)",
            )
        val phases = ArrayList<OffloadPhase>(3)
        val a = if (leaderGroup != null) Algorithms(s, leaderIndex, hosts) else null
        var transfers = 0
        fun between(block: (Algorithms) -> Unit) {
            if (a == null) return
            val before = s.steps
            block(a)
            s.round()
            transfers = s.steps - before
        }
        fun phase(
            kind: OffloadPhase.Kind,
            n: Int,
            root: Int,
            input: org.agrona.DirectBuffer,
            inputOffset: Int,
            output: MutableDirectBuffer,
            outputOffset: Int = 0,
            target: Int = -1,
        ) =
            s.offloadPhase(
                engine!!,
                group,
                key,
                phases,
                kind,
                n,
                root,
                input,
                inputOffset,
                output,
                outputOffset,
                target,
            )
        val input = if (key.inPlace) s.recv else s.send
        when (key.op) {
            CollectiveOp.BARRIER -> {
                if (engine != null) phase(OffloadPhase.Kind.BARRIER, 0, 0, EMPTY, 0, EMPTY)
                between { it.dissemination() }
                if (engine != null) phase(OffloadPhase.Kind.BCAST, 0, 0, EMPTY, 0, EMPTY)
            }
            CollectiveOp.BROADCAST -> {
                val rootHost = hostOfRank[key.root]
                if (engine != null && myHost == rootHost)
                    phase(OffloadPhase.Kind.BCAST, bytes, localIndex[key.root], s.recv, 0, s.recv)
                between {
                    if (
                        ScheduleCompiler.choose(leaderGroup!!, CollectiveOp.BROADCAST, bytes, true) ==
                            CollectiveAlgorithm.SCATTER_ALLGATHER
                    )
                        it.bcastScatterAllgather(s.recv, bytes, rootHost)
                    else it.bcastBinomial(s.recv, bytes, rootHost)
                }
                if (engine != null && myHost != rootHost) phase(OffloadPhase.Kind.BCAST, bytes, 0, s.recv, 0, s.recv)
            }
            CollectiveOp.ALLREDUCE -> {
                if (engine != null) phase(OffloadPhase.Kind.REDUCE, bytes, 0, input, 0, s.recv)
                else if (!key.inPlace) {
                    s.copy(input, 0, s.recv, 0, bytes)
                    s.round()
                }
                between {
                    when (ScheduleCompiler.choose(leaderGroup!!, CollectiveOp.ALLREDUCE, bytes, true)) {
                        CollectiveAlgorithm.RING -> it.allreduceRing(s.recv, s.recv, count, es)
                        CollectiveAlgorithm.RABENSEIFNER -> it.allreduceRabenseifner(s.recv, s.recv, count, es)
                        else -> it.allreduceRecursiveDoubling(s.recv, s.recv, count, es)
                    }
                }
                if (engine != null) phase(OffloadPhase.Kind.BCAST, bytes, 0, s.recv, 0, s.recv)
            }
            CollectiveOp.REDUCE -> {
                val rootHost = hostOfRank[key.root]
                val rootLocal = localIndex[key.root]
                // The leader's accumulator: the result itself when the leader is the root.
                val acc: MutableDirectBuffer =
                    when {
                        leaderIndex < 0 -> EMPTY
                        group.rank == key.root -> s.recv
                        else -> s.scratch(bytes)
                    }
                if (engine != null) phase(OffloadPhase.Kind.REDUCE, bytes, 0, input, 0, acc)
                else if (leaderIndex >= 0) {
                    s.copy(input, 0, acc, 0, bytes)
                    s.round()
                }
                between { it.reduceBinomial(acc, count, es, rootHost, true, acc) }
                if (engine != null && myHost == rootHost && rootLocal != 0) {
                    phase(
                        OffloadPhase.Kind.PASS,
                        bytes,
                        0,
                        acc,
                        0,
                        if (group.rank == key.root) s.recv else EMPTY,
                        target = rootLocal,
                    )
                }
            }
            CollectiveOp.ALLGATHER -> {
                val inputOffset = if (key.inPlace) group.rank * bytes else 0
                // The leader gathers its host's blocks into the host's place of a host-ordered buffer.
                val stage: MutableDirectBuffer =
                    when {
                        leaderIndex < 0 -> EMPTY
                        hostOrdered -> s.recv
                        else -> s.scratch(p * bytes)
                    }
                if (engine != null)
                    phase(
                        OffloadPhase.Kind.GATHER,
                        bytes,
                        0,
                        input,
                        inputOffset,
                        stage,
                        if (leaderIndex < 0) 0 else hostBase[myHost] * bytes,
                    )
                else if (leaderIndex >= 0) {
                    s.copy(input, inputOffset, stage, hostBase[myHost] * bytes, bytes)
                    s.round()
                }
                between {
                    it.allgatherRing(
                        stage,
                        IntArray(hosts) { h -> hostSize[h] * count },
                        IntArray(hosts) { h -> hostBase[h] * count },
                        es,
                        21,
                    )
                }
                if (leaderIndex >= 0 && !hostOrdered) {
                    toRankOrder(s, stage, bytes)
                    s.round()
                }
                if (engine != null) phase(OffloadPhase.Kind.BCAST, p * bytes, 0, s.recv, 0, s.recv)
            }
            else -> error("offload: no hierarchical ${key.op}")
        }
        // A failure between hosts must reach the host's other ranks, which would otherwise wait for
        // this rank's last phase for ever: the engine fails, and says so in the segment.
        if (engine != null && leaderGroup != null) s.onAbort = { err, why -> engine.abandon(err, why) }
        s.seal()
        return Built(s, phases.toTypedArray(), transfers)
    }

    /** Copies the host-ordered [stage] into the result in rank order, one copy per run of ranks consecutive in both. */
    private fun toRankOrder(s: Schedule, stage: MutableDirectBuffer, bytes: Int) {
        var q = 0
        while (q < p) {
            val from = hostBase[hostOfRank[q]] + localIndex[q]
            var n = 1
            while (q + n < p && hostBase[hostOfRank[q + n]] + localIndex[q + n] == from + n) n++
            s.copy(stage, from * bytes, s.recv, q * bytes, n * bytes)
            q += n
        }
    }

    private companion object {
        val EMPTY = UnsafeBuffer(ByteArray(0))
    }
}
