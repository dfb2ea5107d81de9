package braid.collectives

import braid.core.FabricException

/**
 * How a group chooses its algorithms: the crossovers (bytes per call) and any algorithm forced
 * per operation. [fromEnvironment] reads `BRAID_COLL_<OP>=<algorithm>` (for example
 * `BRAID_COLL_ALLREDUCE=ring`, what tuners expect) and `BRAID_COLL_<NAME>` for the crossovers
 * (`BRAID_COLL_ALLREDUCE_RD_MAX=4096`). The defaults are first guesses, not yet measured: the
 * crossovers are to be set from `bench/coll-vs-mpich.sh` runs (forcing each algorithm in turn).
 */
public class CollectiveTuning private constructor(
    private val forced: Map<CollectiveOp, CollectiveAlgorithm>,
    /** Allreduce: recursive doubling up to this many bytes, Rabenseifner (or ring) past it. */
    @get:JvmName("allreduceRdMax") public val allreduceRdMax: Int,
    /** Allreduce past [allreduceRdMax]: the ring from this group size on, Rabenseifner below. */
    @get:JvmName("allreduceRingMinRanks") public val allreduceRingMinRanks: Int,
    /** Broadcast: binomial up to this many bytes, scatter + allgather past it. */
    @get:JvmName("bcastBinomialMax") public val bcastBinomialMax: Int,
    /** Allgather: recursive doubling (power-of-two groups) up to this many bytes in total, ring past it. */
    @get:JvmName("allgatherRdMax") public val allgatherRdMax: Int,
) {
    /** The algorithm forced for [op], or [CollectiveAlgorithm.AUTO]. */
    public fun forced(op: CollectiveOp): CollectiveAlgorithm = forced[op] ?: CollectiveAlgorithm.AUTO

    /** A copy with [algorithm] forced for [op] (AUTO lifts it). */
    public fun withAlgorithm(op: CollectiveOp, algorithm: CollectiveAlgorithm): CollectiveTuning =
        CollectiveTuning(forced + (op to algorithm), allreduceRdMax, allreduceRingMinRanks, bcastBinomialMax, allgatherRdMax)

    /** A copy with other crossovers. */
    public fun withCrossovers(allreduceRdMax: Int, allreduceRingMinRanks: Int, bcastBinomialMax: Int, allgatherRdMax: Int): CollectiveTuning =
        CollectiveTuning(forced, allreduceRdMax, allreduceRingMinRanks, bcastBinomialMax, allgatherRdMax)

    override fun toString(): String =
        "CollectiveTuning(forced=$forced, allreduceRdMax=$allreduceRdMax, allreduceRingMinRanks=$allreduceRingMinRanks, bcastBinomialMax=$bcastBinomialMax, allgatherRdMax=$allgatherRdMax)"

    public companion object {
        /** The default crossovers (first guesses, not yet measured), nothing forced. */
        @JvmField
        public val DEFAULT: CollectiveTuning = CollectiveTuning(emptyMap(), 16384, 64, 16384, 65536)

        /** [DEFAULT] with what `BRAID_COLL_*` variables in [env] say; a bad value is refused naming the variable. */
        @JvmStatic
        @JvmOverloads
        public fun fromEnvironment(env: Map<String, String> = System.getenv()): CollectiveTuning {
            val forced = HashMap<CollectiveOp, CollectiveAlgorithm>()
            for (op in CollectiveOp.entries) {
                val name = "BRAID_COLL_${op.name}"
                val v = env[name] ?: continue
                forced[op] = CollectiveAlgorithm.entries.firstOrNull { it.name.equals(v.replace('-', '_'), ignoreCase = true) }
                    ?: throw FabricException.invalid("$name=$v: no such algorithm; use one of ${CollectiveAlgorithm.entries.joinToString { it.name.lowercase() }}")
            }
            fun int(name: String, default: Int): Int {
                val v = env["BRAID_COLL_$name"] ?: return default
                return v.toIntOrNull()?.takeIf { it >= 0 } ?: throw FabricException.invalid("BRAID_COLL_$name=$v: not a byte count ≥ 0")
            }
            val d = DEFAULT
            return CollectiveTuning(
                forced,
                int("ALLREDUCE_RD_MAX", d.allreduceRdMax), int("ALLREDUCE_RING_MIN_RANKS", d.allreduceRingMinRanks),
                int("BCAST_BINOMIAL_MAX", d.bcastBinomialMax), int("ALLGATHER_RD_MAX", d.allgatherRdMax),
            )
        }
    }
}
