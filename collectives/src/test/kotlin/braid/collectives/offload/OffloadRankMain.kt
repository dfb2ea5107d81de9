package braid.collectives.offload

import braid.collectives.CollectiveGroup
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.JoinOptions
import braid.collectives.Matrix
import braid.collectives.RankEndpoint
import braid.collectives.RankMain
import braid.collectives.ReduceOp
import braid.collectives.Reference
import braid.core.Braid
import braid.it.childMain
import java.nio.file.Paths

/**
 * One rank of [OffloadMultiProcessIT] and [OffloadCrossHostIT]: `OffloadRankMain PROVIDER DIR
 * RANK SIZE MODE`. Publishes its address as DIR/rank-RANK.addr, joins the group of every rank
 * with [ShmOffload] paired (4 KiB slots, so large messages go through in pieces), then runs MODE:
 * - `matrix`: the quick [Matrix] and the allreduce cases; checks the offload carried calls;
 * - `victim` / `survivor`: offloaded allreduces in a loop until the test kills the victim; a
 *   survivor must see its collective fail with an error naming the dead rank (not hang);
 * - `hier`: allreduce, barrier and broadcast across hosts plus the quick matrix, checking that
 *   they ran as hierarchical schedules and who carried which part.
 * Prints the offload's counters and a line starting OK on success.
 */
object OffloadRankMain {
    val OFFLOAD: ShmOffload = ShmOffload.DEFAULT.withSlotBytes(4096).withMaxBytes(Int.MAX_VALUE).withTimeouts(60_000, 20)

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain { run(args) }

    private fun run(args: Array<String>) {
        val (provider, dirName, rankS, sizeS, mode) = args
        val dir = Paths.get(dirName)
        val rank = rankS.toInt(); val size = sizeS.toInt()
        val info = Braid.getInfo(RankMain.hints(provider)).first()
        val me = RankEndpoint.open(info, dir, rank, size) { "rank-$it" }
        val ep = me.ep
        val group = Collectives.join(ep, me.set, 60_000, JoinOptions.DEFAULT.withOffload(OFFLOAD))
        val o = checkNotNull(group.offload) { "rank $rank: the offload did not pair with the group" }
        when (mode) {
            "matrix" -> {
                val runs = Matrix(group, quick = true).runAll() + Matrix(group).allreduceCases()
                check(!o.isHierarchical && o.offloadCalls > 0 && o.segmentPhases == o.offloadCalls) { "rank $rank: the offload did not carry the calls: ${counters(o)}" }
                println("counters ${counters(o)}")
                println("OK offload rank $rank of $size: $runs collectives matched the reference")
            }
            "victim", "survivor" -> RankMain.allreduceUntilKilled(group, dir, mode)
            "hier" -> {
                hierarchical(group, o)
                val runs = Matrix(group, quick = true).runAll()
                println("counters ${counters(o)} leader=${o.isLeader} local=${o.localRanks().toList()}")
                println("OK hierarchical rank $rank of $size: $runs matrix collectives matched the reference")
            }
            else -> error("unknown mode $mode")
        }
        me.close()
    }

    private fun counters(o: OffloadBinding): String =
        "offloadCalls=${o.offloadCalls} hierarchicalCalls=${o.hierarchicalCalls} mainCalls=${o.mainCalls} segmentPhases=${o.segmentPhases} segmentBytes=${o.segmentBytes} leaderTransfers=${o.leaderTransfers}"

    /** Allreduce (small and pieced), barrier and broadcast from every root, checked; then who carried what. */
    private fun hierarchical(g: CollectiveGroup, o: OffloadBinding) {
        val p = g.size; val r = g.rank
        check(o.isHierarchical && o.hostCount > 1) { "rank $r: the group should span hosts: $o" }
        for (count in listOf(1, 100, 5000)) {
            val send = Reference.buffer(count * 8).apply { for (i in 0 until count) putLong(i * 8, (r + 1L) * (i + 3)) }
            val recv = Reference.buffer(count * 8)
            g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM).waitFor(60_000)
            val ranks = p.toLong() * (p + 1) / 2
            for (i in 0 until count) check(recv.getLong(i * 8) == ranks * (i + 3)) { "rank $r: allreduce × $count element $i is ${recv.getLong(i * 8)}, expected ${ranks * (i + 3)}" }
            val d = Reference.buffer(count * 8).apply { for (i in 0 until count) putDouble(i * 8, r + 0.5 * i) }
            g.startAllreduce(null, 0, d, 0, count, Datatype.DOUBLE, ReduceOp.MAX).waitFor(60_000)
            for (i in 0 until count) check(d.getDouble(i * 8) == p - 1 + 0.5 * i) { "rank $r: in-place MAX × $count element $i is ${d.getDouble(i * 8)}" }
        }
        repeat(20) { g.startBarrier().waitFor(60_000) }
        for (root in 0 until p) for (count in listOf(3, 3000)) {
            val b = Reference.buffer(count * 4).apply { if (r == root) for (i in 0 until count) putInt(i * 4, root * 1000 + i) }
            g.startBroadcast(b, 0, count, Datatype.INT32, root).waitFor(60_000)
            for (i in 0 until count) check(b.getInt(i * 4) == root * 1000 + i) { "rank $r: broadcast × $count from $root element $i is ${b.getInt(i * 4)}" }
        }
        val calls = 3 * 2 + 20 + p * 2
        check(o.hierarchicalCalls == calls.toLong()) { "rank $r: ${o.hierarchicalCalls} hierarchical calls, expected $calls" }
        if (o.localRanks().size > 1) check(o.segmentPhases > 0) { "rank $r: nothing went through the host's segment" }
        if (o.isLeader) check(o.leaderTransfers > 0) { "rank $r leads its host but posted no transfer between hosts" }
        else check(o.leaderTransfers == 0L) { "rank $r is not its host's leader yet posted ${o.leaderTransfers} transfers between hosts" }
    }
}
