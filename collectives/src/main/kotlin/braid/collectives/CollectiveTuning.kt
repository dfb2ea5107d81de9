package braid.collectives

import braid.core.Settings

/**
 * How a group chooses its algorithms: the crossovers (bytes per call) and any algorithm forced per operation.
 * [fromSettings] reads the [CollectiveParams]: `BRAID_COLL_<OP>=<algorithm>` (for example `BRAID_COLL_ALLREDUCE=ring`,
 * what tuners expect) and `BRAID_COLL_<NAME>` for the crossovers (`BRAID_COLL_ALLREDUCE_RD_MAX=4096`).
 *
 * Where [DEFAULT] comes from: `bench/coll-crossovers.sh`, which forces every algorithm in turn at 8 B … 4 MiB on 2, 3
 * and 4 shm processes and prints the slowest rank's median call per algorithm and size, the algorithms taking turns at
 * each size so that a change in load hits them alike. Runs on a 2-core machine under heavy load from other builds (read
 * the numbers as rankings, not latencies; 3 and 4 ranks waited with YIELD):
 * - allreduce, small: recursive doubling had the lowest median from 8 B to 2 KiB on 2 ranks (2026-11-24, interleaved: 8
 *   B 1.56 µs against Rabenseifner's 1.93 and the ring's 2.10; 2 KiB 3.15 against 3.67), so [allreduceRdMax] is 2 KiB
 *   (MPICH's `MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE` is 2048 too). The per-call work says the same: on 2 ranks recursive
 *   doubling is 5 requests, 1 send and 1 receive per rank with the two messages crossing at once (one one-way latency
 *   per call); Rabenseifner is 6 and 4 requests, and its two messages go one after the other (rank 1 to 0, reduce, 0
 *   back to 1: two). An earlier run that timed each algorithm through every size before the next had Rabenseifner ahead
 *   at 8 B by 2.6×: recursive doubling was timed first, while the load was heaviest; the bench now interleaves
 *   (`CollBench build` prints the work).
 * - allreduce, 2 ranks, large: recursive doubling is one exchange of the whole vector against Rabenseifner's two
 *   exchanges of half of it — the same bytes each way, half the rounds (each a rendezvous pulled by the receiver). It
 *   won every size from 128 KiB to 2 MiB (512 KiB: 69 µs against 181; 2 MiB: 270 against 688) and lost 8–32 KiB by
 *   15–30 %, so two-rank groups use it from [allreducePairRdMin], 128 KiB, on.
 * - past [allreduceRdMax] (groups of 3 and more), the ring beat Rabenseifner at every size from 128 KiB on 3 ranks
 *   (Rabenseifner folds the odd rank in with two whole-vector transfers) but at one size in four on 2 and 4 ranks:
 *   nothing measured says where the ring wins on powers of two, so [allreduceRingMinRanks] stays 64 (not measured: 4
 *   ranks were the most this machine had).
 * - broadcast: binomial won every size up to 512 KiB on 2, 3 and 4 ranks; scatter + allgather first won at 2 MiB (3 and
 *   4 ranks), so [bcastBinomialMax] is 1 MiB (below 3 ranks the binomial tree is always used).
 * - allgather (recursive doubling only on powers of two): recursive doubling won every size from 128 KiB on 4 ranks,
 *   and at 2 ranks every size but 512 KiB; the ring won 32 B–32 KiB on 4 ranks by about 12 %. [allgatherRdMax] is 4
 *   MiB, the largest size measured.
 */
public class CollectiveTuning
private constructor(
    private val forced: Map<CollectiveOp, CollectiveAlgorithm>,
    /** Allreduce: recursive doubling up to this many bytes, Rabenseifner (or ring) past it. */
    @get:JvmName("allreduceRdMax") public val allreduceRdMax: Int,
    /** Allreduce past [allreduceRdMax]: the ring from this group size on, Rabenseifner below. */
    @get:JvmName("allreduceRingMinRanks") public val allreduceRingMinRanks: Int,
    /** Broadcast: binomial up to this many bytes, scatter + allgather past it. */
    @get:JvmName("bcastBinomialMax") public val bcastBinomialMax: Int,
    /** Allgather: recursive doubling (power-of-two groups) up to this many bytes in total, ring past it. */
    @get:JvmName("allgatherRdMax") public val allgatherRdMax: Int,
    /** Allreduce on two ranks: recursive doubling (one exchange of the whole vector) from this many bytes on, too. */
    @get:JvmName("allreducePairRdMin") public val allreducePairRdMin: Int,
) {
    /** The algorithm forced for [op], or [CollectiveAlgorithm.AUTO]. */
    public fun forced(op: CollectiveOp): CollectiveAlgorithm = forced[op] ?: CollectiveAlgorithm.AUTO

    /** A copy with [algorithm] forced for [op] (AUTO lifts it). */
    public fun withAlgorithm(op: CollectiveOp, algorithm: CollectiveAlgorithm): CollectiveTuning =
        CollectiveTuning(
            forced + (op to algorithm),
            allreduceRdMax,
            allreduceRingMinRanks,
            bcastBinomialMax,
            allgatherRdMax,
            allreducePairRdMin,
        )

    /** A copy with other crossovers. */
    public fun withCrossovers(
        allreduceRdMax: Int,
        allreduceRingMinRanks: Int,
        bcastBinomialMax: Int,
        allgatherRdMax: Int,
    ): CollectiveTuning =
        CollectiveTuning(
            forced,
            allreduceRdMax,
            allreduceRingMinRanks,
            bcastBinomialMax,
            allgatherRdMax,
            allreducePairRdMin,
        )

    /**
     * A copy where two-rank allreduces use recursive doubling from [bytes] on (`Int.MAX_VALUE`: only up to
     * [allreduceRdMax]).
     */
    public fun withPairCrossover(bytes: Int): CollectiveTuning =
        CollectiveTuning(forced, allreduceRdMax, allreduceRingMinRanks, bcastBinomialMax, allgatherRdMax, bytes)

    /**
     * This tuning in [FINGERPRINT_LONGS] longs, whole (two tunings are equal iff their fingerprints are, and
     * [fromFingerprint] gives it back): the forced algorithm of each operation in 4 bits (AUTO is 0), then four
     * crossovers two to a long, then [allreducePairRdMin]. The join carries it in its agreement record.
     */
    @JvmSynthetic
    internal fun fingerprint(into: LongArray, at: Int) {
        var f = 0L
        for (op in CollectiveOp.entries) f = f or (forced(op).ordinal.toLong() shl (4 * op.ordinal))
        into[at] = f
        into[at + 1] = (allreduceRdMax.toLong() shl 32) or (allreduceRingMinRanks.toLong() and 0xffff_ffffL)
        into[at + 2] = (bcastBinomialMax.toLong() shl 32) or (allgatherRdMax.toLong() and 0xffff_ffffL)
        into[at + 3] = allreducePairRdMin.toLong()
    }

    override fun equals(other: Any?): Boolean {
        if (other !is CollectiveTuning) return false
        return CollectiveOp.entries.all { forced(it) == other.forced(it) } &&
            allreduceRdMax == other.allreduceRdMax &&
            allreduceRingMinRanks == other.allreduceRingMinRanks &&
            bcastBinomialMax == other.bcastBinomialMax &&
            allgatherRdMax == other.allgatherRdMax &&
            allreducePairRdMin == other.allreducePairRdMin
    }

    override fun hashCode(): Int = LongArray(FINGERPRINT_LONGS).also { fingerprint(it, 0) }.contentHashCode()

    /** Names what is forced (AUTO left out) and the crossovers: what a join's mismatch error shows. */
    override fun toString(): String {
        val f =
            CollectiveOp.entries
                .filter { forced(it) != CollectiveAlgorithm.AUTO }
                .joinToString { "${it.name.lowercase()}=${forced(it).name.lowercase()}" }
        return "CollectiveTuning(forced {$f}, allreduceRdMax=$allreduceRdMax, allreduceRingMinRanks=$allreduceRingMinRanks, bcastBinomialMax=$bcastBinomialMax, allgatherRdMax=$allgatherRdMax, allreducePairRdMin=$allreducePairRdMin)"
    }

    public companion object {
        /** The default crossovers, set from `bench/coll-crossovers.sh` (see the class comment), nothing forced. */
        @JvmField
        public val DEFAULT: CollectiveTuning = CollectiveTuning(emptyMap(), 2048, 64, 1 shl 20, 4 shl 20, 128 shl 10)

        init {
            check(CollectiveOp.entries.size * 4 <= 64 && CollectiveAlgorithm.entries.size <= 16) {
                "a tuning's forced algorithms no longer fit its fingerprint's first long"
            }
        }

        /** How many longs a [fingerprint] takes. */
        internal const val FINGERPRINT_LONGS: Int = 4

        /** The tuning whose [fingerprint] is `fp[at until at + FINGERPRINT_LONGS]`. */
        @JvmSynthetic
        internal fun fromFingerprint(fp: LongArray, at: Int): CollectiveTuning {
            val forced = HashMap<CollectiveOp, CollectiveAlgorithm>()
            for (op in CollectiveOp.entries) {
                val a =
                    CollectiveAlgorithm.entries.getOrNull(((fp[at] ushr (4 * op.ordinal)) and 0xf).toInt())
                        ?: CollectiveAlgorithm.AUTO
                if (a != CollectiveAlgorithm.AUTO) forced[op] = a
            }
            return CollectiveTuning(
                forced,
                (fp[at + 1] ushr 32).toInt(),
                fp[at + 1].toInt(),
                (fp[at + 2] ushr 32).toInt(),
                fp[at + 2].toInt(),
                fp[at + 3].toInt(),
            )
        }

        /**
         * [DEFAULT] with what [settings] say: the [CollectiveParams] (`BRAID_COLL_<OP>` and the crossovers, from the
         * environment or set through the API). A bad value is a [braid.core.SettingsException] naming the variable, the
         * value and the rule.
         */
        @JvmStatic
        public fun fromSettings(settings: Settings): CollectiveTuning {
            settings.check(CollectiveParams.ALL)
            val forced = HashMap<CollectiveOp, CollectiveAlgorithm>()
            for ((op, param) in CollectiveParams.ALGORITHM) {
                val a = CollectiveParams.algorithmOf(settings[param]) ?: continue
                if (a != CollectiveAlgorithm.AUTO) forced[op] = a
            }
            return CollectiveTuning(
                forced,
                settings[CollectiveParams.ALLREDUCE_RD_MAX],
                settings[CollectiveParams.ALLREDUCE_RING_MIN_RANKS],
                settings[CollectiveParams.BCAST_BINOMIAL_MAX],
                settings[CollectiveParams.ALLGATHER_RD_MAX],
                settings[CollectiveParams.ALLREDUCE_PAIR_RD_MIN],
            )
        }

        /** [fromSettings] over this process's environment ([Settings.DEFAULT]). */
        @JvmStatic public fun fromEnvironment(): CollectiveTuning = fromSettings(Settings.DEFAULT)

        /** [fromSettings] over the variables [env] instead of this process's environment. */
        @JvmStatic
        public fun fromEnvironment(env: Map<String, String>): CollectiveTuning =
            fromSettings(Settings.ofEnvironment(env))
    }
}
