package braid.collectives

import braid.core.Errno
import braid.core.FabricException
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.time.Duration

/**
 * The join agrees on the members' [CollectiveTuning]: members that would compile different schedules for one call (and
 * hang) are refused at the join, on every member, with both tunings named. In-process shm endpoints, each joining with
 * its own options.
 */
class JoinTuningTest :
    FunSpec({
        /** Every member's join, each with its own options; the groups, or the failures. */
        fun joinEach(f: braid.core.TestFabric, options: (Int) -> JoinOptions): List<Result<CollectiveGroup>> {
            val joins =
                f.nodes.indices.map { Collectives.startJoin(f.nodes[it].ep, f.nodes[it].set, null, null, options(it)) }
            val results = arrayOfNulls<Result<CollectiveGroup>>(joins.size)
            val deadline = Deadline.of("every member's join to end", Duration.ofSeconds(30))
            while (results.any { it == null }) {
                for (i in joins.indices) if (results[i] == null) {
                    results[i] =
                        runCatching { joins[i].test() }
                            .let { r -> if (r.isSuccess && r.getOrNull() == null) null else r.map { it!! } }
                }
                deadline.check { "${results.count { it != null }} of ${joins.size} joins ended" }
            }
            return results.map { it!! }
        }

        test(
            "a forced algorithm from BRAID_COLL_ALLREDUCE on one member only fails the join on every member with EINVAL naming both tunings"
        ) {
            collectiveFabric(3).use { f ->
                val ring = CollectiveTuning.fromEnvironment(mapOf("BRAID_COLL_ALLREDUCE" to "ring"))
                val results =
                    joinEach(f) { JoinOptions.DEFAULT.withTuning(if (it == 1) ring else CollectiveTuning.DEFAULT) }
                for ((rank, r) in results.withIndex()) {
                    val e =
                        r.exceptionOrNull() as? FabricException ?: error("rank $rank joined with differing tunings: $r")
                    e.code shouldBe Errno.EINVAL
                    e.message!! shouldContain "different collective tunings"
                    e.message!! shouldContain "allreduce=ring"
                    e.message!! shouldContain "forced {}"
                    e.message!! shouldContain "rank $rank has ${if (rank == 1) ring else CollectiveTuning.DEFAULT}"
                }
                // The failed join left every endpoint free to join again, with one tuning this time.
                val groups = joinEach(f) { JoinOptions.DEFAULT.withTuning(ring) }.map { it.getOrThrow() }
                onEveryRank(groups) { Matrix(it).allreduceCases() }
            }
        }

        test("crossovers that differ fail the join too, naming both values") {
            collectiveFabric(2).use { f ->
                val d = CollectiveTuning.DEFAULT
                val other = d.withCrossovers(4096, d.allreduceRingMinRanks, d.bcastBinomialMax, d.allgatherRdMax)
                val results = joinEach(f) { JoinOptions.DEFAULT.withTuning(if (it == 0) other else d) }
                for (r in results) {
                    val m = (r.exceptionOrNull() as FabricException).message!!
                    m shouldContain "allreduceRdMax=4096"
                    m shouldContain "allreduceRdMax=${d.allreduceRdMax}"
                }
            }
        }

        test("a tuning's fingerprint gives it back whole, and equal tunings join") {
            val tunings =
                Matrix.FORCED +
                    CollectiveTuning.DEFAULT +
                    CollectiveTuning.fromEnvironment(
                        mapOf(
                            "BRAID_COLL_BARRIER" to "dissemination",
                            "BRAID_COLL_ALLTOALLV" to "pairwise",
                            "BRAID_COLL_EXSCAN" to "recursive-doubling",
                            "BRAID_COLL_BCAST_BINOMIAL_MAX" to "2147483647",
                        )
                    )
            for (t in tunings) {
                val fp = LongArray(1 + CollectiveTuning.FINGERPRINT_LONGS)
                t.fingerprint(fp, 1)
                CollectiveTuning.fromFingerprint(fp, 1) shouldBe t
            }
            (tunings.toSet().size == tunings.size) shouldBe true
            collectiveFabric(3).use { f ->
                val groups = joinEach(f) { JoinOptions.DEFAULT.withTuning(Matrix.FORCED[1]) }.map { it.getOrThrow() }
                groups.map { it.tuning }.distinct() shouldBe listOf(Matrix.FORCED[1])
            }
        }
    })
