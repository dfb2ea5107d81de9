package braid.collectives.offload

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOp
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.JoinOptions
import braid.collectives.Matrix
import braid.collectives.OffloadBinding
import braid.collectives.RankEndpoint
import braid.collectives.RankMain
import braid.collectives.ReduceOp
import braid.collectives.Reference
import braid.core.Braid
import braid.core.Errno
import braid.core.FabricException
import braid.it.childMain
import java.nio.file.Paths

/**
 * One rank of [OffloadMultiProcessIT] and [OffloadCrossHostIT]: `OffloadRankMain PROVIDER DIR RANK SIZE MODE`.
 * Publishes its address as DIR/rank-RANK.addr, joins the group of every rank with [ShmOffload] paired (4 KiB slots, so
 * large messages go through in pieces), then runs MODE:
 * - `matrix`: the quick [Matrix] and the allreduce cases; checks the offload carried calls;
 * - `too-small`: a group whose hosts are too small for the offload (see the IT) runs flat and right;
 * - `victim` / `survivor`: offloaded allreduces in a loop until the test kills the victim; a survivor must see its
 *   collective fail with an error naming the dead rank (not hang);
 * - `hier`: allreduce, barrier, broadcast, reduce and allgather across hosts plus the quick matrix, checking that they
 *   ran as hierarchical schedules and who carried which part; then closes the group and checks that a later collective
 *   is refused. Prints the offload's counters and a line starting OK on success.
 */
object OffloadRankMain {
    val OFFLOAD: ShmOffload =
        ShmOffload.DEFAULT.withSlotBytes(4096).withMaxBytes(Int.MAX_VALUE).withTimeouts(60_000, 20)

    @JvmStatic fun main(args: Array<String>): Unit = childMain { run(args) }

    private fun run(args: Array<String>) {
        val (provider, dirName, rankS, sizeS, mode) = args
        val dir = Paths.get(dirName)
        val rank = rankS.toInt()
        val size = sizeS.toInt()
        val info = Braid.getInfo(RankMain.hints(provider)).first()
        val me = RankEndpoint.open(info, dir, rank, size) { "rank-$it" }
        val ep = me.ep
        if (mode == "too-small") {
            // A host of 2 ranks under minMembers 3 beside a host of 1: no segment for the pair, so the group runs flat.
            val flat = Collectives.join(ep, me.set, 60_000, JoinOptions.DEFAULT.withOffload(OFFLOAD.withMinMembers(3)))
            check(flat.offload == null) {
                "rank $rank: a host of 2 ranks under minMembers 3 was paired: ${flat.offload}"
            }
            val runs = Matrix(flat, quick = true).runAll()
            flat.close()
            println(
                "OK too-small rank $rank of $size: left to the main provider, $runs collectives matched the reference"
            )
            me.close()
            return
        }
        val group = Collectives.join(ep, me.set, 60_000, JoinOptions.DEFAULT.withOffload(OFFLOAD))
        val o = checkNotNull(group.offload) { "rank $rank: the offload did not pair with the group" }
        when (mode) {
            "matrix" -> {
                val runs = Matrix(group, quick = true).runAll() + Matrix(group).allreduceCases()
                check(!o.isHierarchical && o.offloadCalls > 0 && o.segmentPhases == o.offloadCalls) {
                    "rank $rank: the offload did not carry the calls: ${counters(o)}"
                }
                println("counters ${counters(o)}")
                closeAndRefuse(group, o)
                println("OK offload rank $rank of $size: $runs collectives matched the reference")
            }
            "victim",
            "survivor" -> RankMain.allreduceUntilKilled(group, mode)
            "hier" -> {
                hierarchical(group, o)
                val runs = Matrix(group, quick = true).runAll()
                println("counters ${counters(o)} leader=${o.isLeader} local=${o.localRanks().toList()}")
                closeAndRefuse(group, o)
                println("OK hierarchical rank $rank of $size: $runs matrix collectives matched the reference")
            }
            else -> error("unknown mode $mode")
        }
        me.close()
    }

    /**
     * Closes the group (nothing is in flight) and checks that a later collective is refused, naming the closed group.
     */
    private fun closeAndRefuse(g: CollectiveGroup, o: OffloadBinding) {
        check(g.tryClose() == 0 && g.isClosed) { "rank ${g.rank}: the idle group did not close" }
        val e = runCatching { g.startBarrier() }.exceptionOrNull()
        check(e is FabricException && e.code == Errno.EOPBADSTATE && e.message!!.contains("closed")) {
            "rank ${g.rank}: a barrier after close gave $e"
        }
        check(o.failure == null) { "rank ${g.rank}: closing failed the segment: ${o.failure}" }
    }

    private fun counters(o: OffloadBinding): String =
        "offloadCalls=${o.offloadCalls} hierarchicalCalls=${o.hierarchicalCalls} mainCalls=${o.mainCalls} segmentPhases=${o.segmentPhases} segmentBytes=${o.segmentBytes} leaderTransfers=${o.leaderTransfers}"

    /**
     * Every hierarchical operation, checked against the sequential reference: allreduce (small and pieced, in place),
     * barrier, broadcast, reduce and allgather from/to every root (so roots on leaders and on non-leaders, on every
     * host). Then who carried what: this rank's segment carried exactly the shared-memory phases the schedules call
     * for, and the main provider's endpoint carried messages only if this rank leads its host (its real message counts,
     * not the schedules' own).
     */
    private fun hierarchical(g: CollectiveGroup, o: OffloadBinding) {
        val p = g.size
        val r = g.rank
        check(o.isHierarchical && o.hostCount > 1) { "rank $r: the group should span hosts: $o" }
        val local = o.localRanks()
        val segment = local.size > 1
        var phases = 0L // the shared-memory phases the calls below need on this host
        var calls = 0L
        fun sent(): Long = g.endpoint.stats().rails.sumOf { it.messagesSent }
        fun received(): Long = g.endpoint.stats().rails.sumOf { it.messagesReceived }
        val sentBefore = sent()
        val receivedBefore = received()
        val phasesBefore = o.segmentPhases

        for (count in listOf(1, 100, 5000)) {
            val send = Reference.buffer(count * 8).apply { for (i in 0 until count) putLong(i * 8, (r + 1L) * (i + 3)) }
            val recv = Reference.buffer(count * 8)
            g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM).waitFor(60_000)
            val ranks = p.toLong() * (p + 1) / 2
            for (i in 0 until count) check(recv.getLong(i * 8) == ranks * (i + 3)) {
                "rank $r: allreduce × $count element $i is ${recv.getLong(i * 8)}, expected ${ranks * (i + 3)}"
            }
            val d = Reference.buffer(count * 8).apply { for (i in 0 until count) putDouble(i * 8, r + 0.5 * i) }
            g.startAllreduce(null, 0, d, 0, count, Datatype.DOUBLE, ReduceOp.MAX).waitFor(60_000)
            for (i in 0 until count) check(d.getDouble(i * 8) == p - 1 + 0.5 * i) {
                "rank $r: in-place MAX × $count element $i is ${d.getDouble(i * 8)}"
            }
            calls += 2
            phases += 2 * 2
        }
        repeat(20) { g.startBarrier().waitFor(60_000) }
        calls += 20
        phases += 20 * 2
        for (root in 0 until p) for (count in listOf(3, 3000)) {
            val b =
                Reference.buffer(count * 4).apply {
                    if (r == root) for (i in 0 until count) putInt(i * 4, root * 1000 + i)
                }
            g.startBroadcast(b, 0, count, Datatype.INT32, root).waitFor(60_000)
            for (i in 0 until count) check(b.getInt(i * 4) == root * 1000 + i) {
                "rank $r: broadcast × $count from $root element $i is ${b.getInt(i * 4)}"
            }
            calls++
            phases++
        }
        for (root in 0 until p) for (count in listOf(2, 5000)) {
            // Reduce: a sum of longs (rank order does not matter), and at the root in place; then a minimum of floats.
            val send =
                Reference.buffer(count * 8).apply { for (i in 0 until count) putLong(i * 8, (r + 1L) * (i + 1) + root) }
            val recv = Reference.buffer(count * 8)
            if (r == root) for (i in 0 until count) recv.putLong(i * 8, (r + 1L) * (i + 1) + root)
            g.startReduce(
                    if (r == root) null else send,
                    0,
                    if (r == root) recv else null,
                    0,
                    count,
                    Datatype.INT64,
                    ReduceOp.SUM,
                    root,
                )
                .waitFor(60_000)
            if (r == root)
                for (i in 0 until count) {
                    val want = p.toLong() * (p + 1) / 2 * (i + 1) + p.toLong() * root
                    check(recv.getLong(i * 8) == want) {
                        "rank $r: reduce × $count to $root element $i is ${recv.getLong(i * 8)}, expected $want"
                    }
                }
            val f =
                Reference.buffer(count * 4).apply {
                    for (i in 0 until count) putFloat(i * 4, ((r * 7 + i) % p).toFloat() - root)
                }
            val fr = Reference.buffer(count * 4)
            g.startReduce(f, 0, if (r == root) fr else null, 0, count, Datatype.FLOAT, ReduceOp.MIN, root)
                .waitFor(60_000)
            if (r == root)
                for (i in 0 until count) check(
                    fr.getFloat(i * 4) == (0 until p).minOf { ((it * 7 + i) % p).toFloat() } - root
                ) {
                    "rank $r: MIN reduce × $count to $root element $i is ${fr.getFloat(i * 4)}"
                }
            // On the root's host, a root that does not lead it gets the result in one more phase.
            val extra = if (root in local && root != local[0]) 1 else 0
            calls += 2
            phases += 2 * (1 + extra)
        }
        for (count in listOf(1, 700)) {
            val mine = Reference.buffer(count * 8).apply { for (i in 0 until count) putLong(i * 8, r * 100_000L + i) }
            val out = Reference.buffer(count * 8 * p)
            g.startAllgather(mine, 0, out, 0, count, Datatype.INT64).waitFor(60_000)
            for (k in 0 until p) for (i in 0 until count) check(out.getLong((k * count + i) * 8) == k * 100_000L + i) {
                "rank $r: allgather × $count block $k element $i is ${out.getLong((k * count + i) * 8)}"
            }
            out.setMemory(0, count * 8 * p, 0)
            for (i in 0 until count) out.putLong((r * count + i) * 8, r * 100_000L + i)
            g.startAllgather(null, 0, out, 0, count, Datatype.INT64).waitFor(60_000)
            for (k in 0 until p) for (i in 0 until count) check(out.getLong((k * count + i) * 8) == k * 100_000L + i) {
                "rank $r: in-place allgather × $count block $k element $i is ${out.getLong((k * count + i) * 8)}"
            }
            calls += 2
            phases += 2 * 2
        }

        check(o.hierarchicalCalls == calls) { "rank $r: ${o.hierarchicalCalls} hierarchical calls, expected $calls" }
        val carried = o.segmentPhases - phasesBefore
        if (segment)
            check(carried == phases) { "rank $r: its host's segment carried $carried phases, the calls need $phases" }
        else check(carried == 0L) { "rank $r is alone on its host, yet $carried phases went through a segment" }
        val sentHere = sent() - sentBefore
        val receivedHere = received() - receivedBefore
        if (o.isLeader) {
            check(o.leaderTransfers > 0 && sentHere > 0) {
                "rank $r leads its host but posted ${o.leaderTransfers} transfers and sent $sentHere messages between hosts"
            }
        } else {
            check(o.leaderTransfers == 0L && sentHere == 0L && receivedHere == 0L) {
                "rank $r is not its host's leader yet posted ${o.leaderTransfers} transfers and its endpoint sent $sentHere and received $receivedHere messages"
            }
        }
        // Rank order matters to a non-commutative reduction: the pairing leaves it to the main provider's
        // order-preserving algorithms.
        check(o.queryCollective(CollectiveOp.REDUCE, Datatype.INT64, Reference.MatMul, 4) == -Errno.ENOSYS) {
            "rank $r: the pairing claims a non-commutative reduce across hosts"
        }
        check(
            o.queryCollective(CollectiveOp.REDUCE, Datatype.INT32, Reference.MaxAbs, 4) == 0 &&
                o.queryCollective(CollectiveOp.ALLGATHER, Datatype.INT64, null) == 0
        ) {
            "rank $r: the pairing declines a hierarchical operation"
        }
        check(o.queryCollective(CollectiveOp.SCAN, Datatype.INT64, ReduceOp.SUM) == -Errno.ENOSYS)
        println("carried phases=$carried sent=$sentHere received=$receivedHere")
    }
}
