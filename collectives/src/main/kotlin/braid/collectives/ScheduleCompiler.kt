package braid.collectives

import braid.collectives.CollectiveAlgorithm.BINOMIAL
import braid.collectives.CollectiveAlgorithm.DISSEMINATION
import braid.collectives.CollectiveAlgorithm.LINEAR
import braid.collectives.CollectiveAlgorithm.PAIRWISE
import braid.collectives.CollectiveAlgorithm.RABENSEIFNER
import braid.collectives.CollectiveAlgorithm.RECURSIVE_DOUBLING
import braid.collectives.CollectiveAlgorithm.RING
import braid.collectives.CollectiveAlgorithm.SCATTER_ALLGATHER

/** Chooses an algorithm for a call and compiles a shape to a [Schedule]. */
internal object ScheduleCompiler {

    fun choose(g: CollectiveGroup, op: CollectiveOp, bytes: Int, commutative: Boolean): CollectiveAlgorithm {
        val p = g.size
        val t = g.tuning
        val pow2 = p and (p - 1) == 0
        val forced = t.forced(op)
        val auto =
            when (op) {
                CollectiveOp.BARRIER -> DISSEMINATION
                CollectiveOp.BROADCAST -> if (bytes <= t.bcastBinomialMax || p < 3) BINOMIAL else SCATTER_ALLGATHER
                CollectiveOp.REDUCE -> BINOMIAL
                CollectiveOp.ALLREDUCE ->
                    when {
                        !commutative || bytes <= t.allreduceRdMax -> RECURSIVE_DOUBLING
                        p == 2 && bytes >= t.allreducePairRdMin -> RECURSIVE_DOUBLING
                        p >= t.allreduceRingMinRanks -> RING
                        else -> RABENSEIFNER
                    }
                CollectiveOp.ALLGATHER -> if (pow2 && bytes <= t.allgatherRdMax) RECURSIVE_DOUBLING else RING
                CollectiveOp.ALLGATHERV -> RING
                CollectiveOp.REDUCE_SCATTER_BLOCK -> if (commutative) RING else BINOMIAL
                CollectiveOp.SCAN,
                CollectiveOp.EXSCAN -> RECURSIVE_DOUBLING
                CollectiveOp.GATHER,
                CollectiveOp.GATHERV,
                CollectiveOp.SCATTER,
                CollectiveOp.SCATTERV -> LINEAR
                CollectiveOp.ALLTOALL,
                CollectiveOp.ALLTOALLV -> PAIRWISE
            }
        val fits =
            when (forced) {
                CollectiveAlgorithm.AUTO -> false
                DISSEMINATION -> op == CollectiveOp.BARRIER
                BINOMIAL -> op == CollectiveOp.BROADCAST || op == CollectiveOp.REDUCE
                SCATTER_ALLGATHER -> op == CollectiveOp.BROADCAST
                RECURSIVE_DOUBLING -> op == CollectiveOp.ALLREDUCE || (op == CollectiveOp.ALLGATHER && pow2)
                RING ->
                    (op == CollectiveOp.ALLREDUCE && commutative) ||
                        op == CollectiveOp.ALLGATHER ||
                        (op == CollectiveOp.REDUCE_SCATTER_BLOCK && commutative)
                RABENSEIFNER -> op == CollectiveOp.ALLREDUCE && commutative
                LINEAR,
                PAIRWISE -> false
            }
        return if (fits) forced else auto
    }

    fun compile(g: CollectiveGroup, key: ShapeKey): Schedule {
        val p = g.size
        val r = g.rank
        val es = key.datatype?.size ?: 1
        val count = key.count
        val bytes = count * es
        val maxCount = if (key.op == CollectiveOp.REDUCE_SCATTER_BLOCK) count * p else count
        val commutative =
            when (val red = key.reduction) {
                is UserReduction -> red.isCommutative()
                else -> true
            }
        val s =
            Schedule(
                g,
                g.kernelFor(key, maxCount),
                "${key.op.name.lowercase()} (${key.algorithm.name.lowercase()}, $count × ${key.datatype ?: "-"}, rank $r of $p)",
            )
        val a = Algorithms(s, r, p)
        val input = if (key.inPlace) s.recv else s.send
        when (key.op) {
            CollectiveOp.BARRIER -> a.dissemination()
            CollectiveOp.BROADCAST ->
                if (key.algorithm == SCATTER_ALLGATHER) a.bcastScatterAllgather(s.recv, bytes, key.root)
                else a.bcastBinomial(s.recv, bytes, key.root)
            CollectiveOp.REDUCE -> {
                val acc = if (r == key.root && (commutative || key.root == 0)) s.recv else s.scratch(bytes)
                s.copy(input, 0, acc, 0, bytes)
                s.round()
                a.reduceBinomial(acc, count, es, key.root, commutative, s.recv)
            }
            // No copy of the input first: the first steps send from it and reduce it with what arrives straight into
            // the result.
            CollectiveOp.ALLREDUCE ->
                when (key.algorithm) {
                    RING -> a.allreduceRing(input, s.recv, count, es)
                    RABENSEIFNER -> a.allreduceRabenseifner(input, s.recv, count, es)
                    else -> a.allreduceRecursiveDoubling(input, s.recv, count, es)
                }
            CollectiveOp.REDUCE_SCATTER_BLOCK -> {
                val acc = s.scratch(bytes * p)
                s.copy(input, 0, acc, 0, bytes * p)
                s.round()
                val counts = IntArray(p) { count }
                val displs = IntArray(p) { it * count }
                if (key.algorithm == RING) {
                    if (p > 1) a.reduceScatterRing(acc, counts, displs, es, s.scratch(bytes), 18)
                    s.copy(acc, r * bytes, s.recv, 0, bytes)
                    s.round()
                } else {
                    a.reduceBinomial(acc, count * p, es, 0, false, acc)
                    a.scatterLinear(acc, counts, displs, s.recv, bytes, es, 0)
                }
            }
            CollectiveOp.SCAN -> {
                val partial = s.scratch(bytes)
                s.copy(input, 0, partial, 0, bytes)
                s.copy(input, 0, s.recv, 0, bytes)
                s.round()
                a.prefix(partial, s.recv, count, es, commutative, exclusive = false)
            }
            CollectiveOp.EXSCAN -> {
                val partial = s.scratch(bytes)
                s.copy(input, 0, partial, 0, bytes)
                s.round()
                a.prefix(partial, s.recv, count, es, commutative, exclusive = true)
            }
            CollectiveOp.ALLGATHER -> {
                if (!key.inPlace) {
                    s.copy(s.send, 0, s.recv, r * bytes, bytes)
                    s.round()
                }
                if (key.algorithm == RECURSIVE_DOUBLING) a.allgatherRecursiveDoubling(s.recv, bytes)
                else a.allgatherRing(s.recv, IntArray(p) { count }, IntArray(p) { it * count }, es, 19)
            }
            CollectiveOp.ALLGATHERV -> {
                val counts = key.a!!
                val displs = key.b!!
                if (!key.inPlace) {
                    s.copy(s.send, 0, s.recv, displs[r] * es, counts[r] * es)
                    s.round()
                }
                a.allgatherRing(s.recv, counts, displs, es, 20)
            }
            CollectiveOp.GATHER,
            CollectiveOp.GATHERV -> a.gatherLinear(input, bytes, s.recv, key.a, key.b, es, key.root)
            CollectiveOp.SCATTER,
            CollectiveOp.SCATTERV ->
                a.scatterLinear(s.send, key.a, key.b, if (key.inPlace) s.send else s.recv, bytes, es, key.root)
            CollectiveOp.ALLTOALL -> {
                val counts = IntArray(p) { count }
                val displs = IntArray(p) { it * count }
                a.alltoallPairwise(s.send, counts, displs, s.recv, counts, displs, es)
            }
            CollectiveOp.ALLTOALLV -> a.alltoallPairwise(s.send, key.a!!, key.b!!, s.recv, key.c!!, key.d!!, es)
        }
        return s.seal()
    }
}
