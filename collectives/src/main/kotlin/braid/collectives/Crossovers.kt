package braid.collectives

import braid.collectives.CollectiveAlgorithm.BINOMIAL
import braid.collectives.CollectiveAlgorithm.RABENSEIFNER
import braid.collectives.CollectiveAlgorithm.RECURSIVE_DOUBLING
import braid.collectives.CollectiveAlgorithm.RING
import braid.collectives.CollectiveAlgorithm.SCATTER_ALLGATHER

/**
 * `CollBench crossovers N` (behind `bench/coll-crossovers.sh`): on N ranks, every algorithm of allreduce (SUM of
 * doubles), broadcast and allgather forced in turn at 8 B … 4 MiB (for allgather: the whole result), each size timed
 * three times after a warm-up of every algorithm, the algorithms taking turns at each size; prints per operation a
 * table of µs per call (the slowest rank's median call, best of the three), the winner per size, where the winner
 * changes, and the `CollectiveTuning` crossover it implies. The median, not the mean: a loaded machine (or two spinning
 * ranks sharing cores with anything) deschedules a rank for whole milliseconds now and then, which swamps a mean and
 * says nothing about the algorithm.
 */
internal class Crossovers(private val rk: CollBench.Rank) {
    private val sizes = intArrayOf(8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 2 shl 20, 4 shl 20)
    private val send = benchBuffer(4 shl 20)
    private val recv = benchBuffer(4 shl 20)
    private val mine = benchBuffer(8)
    private val worst = benchBuffer(8)
    private val p = rk.n

    private val groups = HashMap<Pair<CollectiveOp, CollectiveAlgorithm>, CollectiveGroup>()

    fun run() {
        val pow2 = p and (p - 1) == 0
        val cases =
            listOf(
                CollectiveOp.ALLREDUCE to listOf(RECURSIVE_DOUBLING, RING, RABENSEIFNER),
                CollectiveOp.BROADCAST to listOf(BINOMIAL, SCATTER_ALLGATHER),
                CollectiveOp.ALLGATHER to if (pow2) listOf(RECURSIVE_DOUBLING, RING) else listOf(RING),
            )
        // Every algorithm runs at a few sizes before anything is timed: the first table would
        // otherwise measure the JIT compiling the common path (whole milliseconds per call when
        // the compiler threads compete with spinning ranks for 2 cores).
        for ((op, algorithms) in cases) for (algorithm in algorithms) {
            val g = groups.getOrPut(op to algorithm) { rk.join(CollectiveTuning.DEFAULT.withAlgorithm(op, algorithm)) }
            for ((bytes, n) in listOf(8 to 5000, 8192 to 500, 1 shl 20 to 10)) repeat(n) { call(op, g, bytes) }
        }
        for ((op, algorithms) in cases) table(op, algorithms)
    }

    private fun call(op: CollectiveOp, g: CollectiveGroup, bytes: Int) {
        when (op) {
            CollectiveOp.ALLREDUCE ->
                g.startAllreduce(send, 0, recv, 0, maxOf(1, bytes / 8), Datatype.DOUBLE, ReduceOp.SUM).waitFor(-1)
            CollectiveOp.BROADCAST -> g.startBroadcast(recv, 0, maxOf(1, bytes / 8), Datatype.DOUBLE, 0).waitFor(-1)
            else -> g.startAllgather(send, 0, recv, 0, maxOf(1, bytes / 8 / p), Datatype.DOUBLE).waitFor(-1)
        }
    }

    private fun iterations(bytes: Int): Int = (4 shl 20 / maxOf(bytes, 1)).coerceIn(10, 2000)

    private fun table(op: CollectiveOp, algorithms: List<CollectiveAlgorithm>) {
        // Per size, the algorithms take turns, rep by rep: a change in load (other processes on
        // these 2 cores) then hits every algorithm alike instead of whichever was timed during it.
        // (Timing each algorithm through every size before the next made recursive doubling, timed
        // first, lose 8 B allreduces to Rabenseifner by 3× in one loaded run.)
        val us = Array(algorithms.size) { DoubleArray(sizes.size) { Double.MAX_VALUE } }
        val timers = algorithms.map { CollBench.Timer(groups.getValue(op to it), 2000) }
        for ((k, bytes) in sizes.withIndex()) {
            val iters = iterations(bytes)
            for (rep in 0..3) for ((a, algorithm) in algorithms.withIndex()) {
                val g = groups.getValue(op to algorithm)
                timers[a].time(iters) { call(op, g, bytes) }
                mine.putDouble(0, timers[a].p50)
                g.startReduce(mine, 0, worst, 0, 1, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
                if (rep > 0) us[a][k] = minOf(us[a][k], worst.getDouble(0)) // rep 0 warms the JIT up
            }
        }
        if (rk.rank != 0) return
        val names = algorithms.map { it.name.lowercase() }
        println(
            "== ${op.name.lowercase()}, $p ranks (µs per call: slowest rank's median, best of 3; idle ${rk.idle.kind}) =="
        )
        println("%9s ".format("bytes") + names.joinToString(" ") { "%18s".format(it) } + "  best")
        val winners = IntArray(sizes.size) { k -> algorithms.indices.minBy { us[it][k] } }
        for ((k, bytes) in sizes.withIndex()) {
            println(
                "%9d ".format(bytes) +
                    algorithms.indices.joinToString(" ") { "%18.2f".format(us[it][k]) } +
                    "  " +
                    names[winners[k]]
            )
        }
        val changes = (1 until sizes.size).filter { winners[it] != winners[it - 1] }
        val story = buildString {
            append(names[winners[0]])
            for (k in changes) append(" → ${names[winners[k]]} from ${sizes[k]} B")
        }
        println("winners: $story")
        // The tuning crossover: the first algorithm's last win before another takes over for good (or for the rest of
        // the table).
        val firstLoss = (sizes.indices).firstOrNull { k -> (k until sizes.size).all { winners[it] != 0 } }
        val setting =
            when (op) {
                CollectiveOp.ALLREDUCE -> "allreduceRdMax"
                CollectiveOp.BROADCAST -> "bcastBinomialMax"
                else -> "allgatherRdMax"
            }
        if (algorithms.size > 1) {
            val value =
                if (firstLoss == null) "≥ ${sizes.last()}"
                else if (firstLoss == 0) "0"
                else "${sizes[firstLoss - 1]} (a value in [${sizes[firstLoss - 1]}, ${sizes[firstLoss]}))"
            println("implies: $setting = $value at $p ranks")
        }
        if (op == CollectiveOp.ALLREDUCE) {
            val large = sizes.indices.filter { sizes[it] >= 131072 }
            val ringWins = large.count { us[1][it] < us[2][it] }
            println(
                "implies: past the crossover the ring beats Rabenseifner at ${ringWins} of ${large.size} sizes ≥ 128 KiB at $p ranks (allreduceRingMinRanks ${if (ringWins * 2 > large.size) "≤ $p" else "> $p"})"
            )
        }
        println()
    }
}
