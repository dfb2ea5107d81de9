package braid.collectives

import braid.core.ModuleParams
import braid.core.Param
import braid.core.ParamRule
import braid.core.ParamViolation

/**
 * The collectives' parameters ([CollectiveTuning.fromSettings] reads them; `braid info -e` lists them): the algorithm
 * forced per operation, and the crossovers between algorithms.
 *
 * [ALGORITHM] is a family, `BRAID_COLL_<OP>`: one parameter per [CollectiveOp], built from the enumeration, so that a
 * new operation gets its variable, its key (`coll.allreduce`) and its line in `braid info -e` without a line here.
 * Registered with [braid.core.Braid.parameters] as a [ModuleParams] service.
 */
public class CollectiveParams : ModuleParams {
    override fun parameters(): List<Param<*>> = ALL

    public companion object {
        private val ALGORITHM_NAMES = CollectiveAlgorithm.entries.joinToString { it.name.lowercase() }

        /** The algorithm [text] names (`ring`, `recursive-doubling`, any case), or null. */
        @JvmSynthetic
        internal fun algorithmOf(text: String): CollectiveAlgorithm? =
            CollectiveAlgorithm.entries.firstOrNull { it.name.equals(text.trim().replace('-', '_'), ignoreCase = true) }

        private val IS_ALGORITHM =
            ParamRule<String> { v ->
                if (algorithmOf(v) != null) null
                else ParamViolation("is no such algorithm", "set {name} to one of $ALGORITHM_NAMES")
            }

        private val NOT_NEGATIVE =
            ParamRule<Int> { v -> if (v < 0) ParamViolation("is negative", "set {name} ≥ 0") else null }

        /** `BRAID_COLL_<OP>`: the algorithm forced for each operation (`auto`: chosen by size). */
        @JvmField
        public val ALGORITHM: Map<CollectiveOp, Param<String>> =
            CollectiveOp.entries.associateWith { op ->
                Param.string(
                    "coll",
                    op.name.lowercase(),
                    "BRAID_COLL_${op.name}",
                    "auto",
                    "the algorithm every ${op.name.lowercase()} uses (auto: chosen by size; one of $ALGORITHM_NAMES)",
                    IS_ALGORITHM,
                )
            }

        /** The parameter forcing [op]'s algorithm (one member of the [ALGORITHM] family). */
        @JvmStatic public fun algorithm(op: CollectiveOp): Param<String> = ALGORITHM.getValue(op)

        private val D = CollectiveTuning.DEFAULT

        /** [CollectiveTuning.allreduceRdMax]. */
        @JvmField
        public val ALLREDUCE_RD_MAX: Param<Int> =
            Param.int(
                "coll",
                "allreduce_rd_max",
                "BRAID_COLL_ALLREDUCE_RD_MAX",
                D.allreduceRdMax,
                "bytes",
                "allreduce: recursive doubling up to this many bytes, Rabenseifner or the ring past it",
                NOT_NEGATIVE,
            )

        /** [CollectiveTuning.allreduceRingMinRanks]. */
        @JvmField
        public val ALLREDUCE_RING_MIN_RANKS: Param<Int> =
            Param.int(
                "coll",
                "allreduce_ring_min_ranks",
                "BRAID_COLL_ALLREDUCE_RING_MIN_RANKS",
                D.allreduceRingMinRanks,
                "ranks",
                "allreduce past allreduce_rd_max: the ring from this group size on, Rabenseifner below",
                NOT_NEGATIVE,
            )

        /** [CollectiveTuning.bcastBinomialMax]. */
        @JvmField
        public val BCAST_BINOMIAL_MAX: Param<Int> =
            Param.int(
                "coll",
                "bcast_binomial_max",
                "BRAID_COLL_BCAST_BINOMIAL_MAX",
                D.bcastBinomialMax,
                "bytes",
                "broadcast: a binomial tree up to this many bytes, scatter + allgather past it",
                NOT_NEGATIVE,
            )

        /** [CollectiveTuning.allgatherRdMax]. */
        @JvmField
        public val ALLGATHER_RD_MAX: Param<Int> =
            Param.int(
                "coll",
                "allgather_rd_max",
                "BRAID_COLL_ALLGATHER_RD_MAX",
                D.allgatherRdMax,
                "bytes",
                "allgather: recursive doubling (power-of-two groups) up to this many bytes in total, the ring past it",
                NOT_NEGATIVE,
            )

        /** [CollectiveTuning.allreducePairRdMin]. */
        @JvmField
        public val ALLREDUCE_PAIR_RD_MIN: Param<Int> =
            Param.int(
                "coll",
                "allreduce_pair_rd_min",
                "BRAID_COLL_ALLREDUCE_PAIR_RD_MIN",
                D.allreducePairRdMin,
                "bytes",
                "allreduce on two ranks: recursive doubling from this many bytes on, too",
                NOT_NEGATIVE,
            )

        /** Every collectives parameter: the [ALGORITHM] family, then the crossovers. */
        @JvmField
        public val ALL: List<Param<*>> =
            ALGORITHM.values.toList() +
                listOf(
                    ALLREDUCE_RD_MAX,
                    ALLREDUCE_RING_MIN_RANKS,
                    BCAST_BINOMIAL_MAX,
                    ALLGATHER_RD_MAX,
                    ALLREDUCE_PAIR_RD_MIN,
                )
    }
}
