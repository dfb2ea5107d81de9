package braid.collectives

import braid.collectives.CollectiveAlgorithm.RABENSEIFNER
import braid.collectives.CollectiveAlgorithm.RECURSIVE_DOUBLING
import braid.collectives.CollectiveAlgorithm.RING
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * Which allreduce algorithm a call gets by default ([CollectiveTuning.DEFAULT], whose KDoc gives the measurements), and
 * the work per call that explains the small-message choice. Groups are simulated on one real endpoint (made-up member
 * addresses; nothing is sent).
 */
class AlgorithmChoiceTest :
    FunSpec({
        fun <T> onGroup(
            p: Int,
            rank: Int = 0,
            tuning: CollectiveTuning = CollectiveTuning.DEFAULT,
            body: (CollectiveGroup) -> T,
        ): T =
            collectiveFabric(1).use { f ->
                body(CollectiveGroup(f.nodes[0].ep, f.nodes[0].set, LongArray(p) { it.toLong() }, rank, 1, tuning, 0))
            }

        test(
            "allreduce takes recursive doubling up to 2 KiB, and on two ranks again from 128 KiB; Rabenseifner or the ring between"
        ) {
            onGroup(2) { g ->
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 8, true) shouldBe RECURSIVE_DOUBLING
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 2048, true) shouldBe RECURSIVE_DOUBLING
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 8192, true) shouldBe RABENSEIFNER
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 128 shl 10, true) shouldBe RECURSIVE_DOUBLING
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 1 shl 20, true) shouldBe RECURSIVE_DOUBLING
            }
            onGroup(4) { g ->
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 8, true) shouldBe RECURSIVE_DOUBLING
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 1 shl 20, true) shouldBe RABENSEIFNER
            }
            onGroup(2, tuning = CollectiveTuning.DEFAULT.withPairCrossover(Int.MAX_VALUE)) { g ->
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 1 shl 20, true) shouldBe RABENSEIFNER
            }
            onGroup(2, tuning = CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, RING)) { g ->
                ScheduleCompiler.choose(g, CollectiveOp.ALLREDUCE, 8, true) shouldBe RING
            }
            CollectiveTuning.fromEnvironment(mapOf("BRAID_COLL_ALLREDUCE_PAIR_RD_MIN" to "4096"))
                .allreducePairRdMin shouldBe 4096
        }

        test(
            "a 2-rank 8 B allreduce by recursive doubling is one send and one receive per rank in one round; Rabenseifner's two messages follow each other"
        ) {
            for (r in 0..1) onGroup(2, r) { g ->
                val s =
                    g.compile(
                        ShapeKey()
                            .set(CollectiveOp.ALLREDUCE, RECURSIVE_DOUBLING, Datatype.DOUBLE, ReduceOp.SUM, 1, 0, false)
                    )
                (s.sends to s.recvs) shouldBe (1 to 1)
                s.requests shouldBe 5 // receive, send, gate, reduce, end
                s.rounds shouldBe 2 // the exchange, the reduction
            }
            val rab =
                (0..1).map { r ->
                    onGroup(2, r) { g ->
                        g.compile(
                            ShapeKey()
                                .set(CollectiveOp.ALLREDUCE, RABENSEIFNER, Datatype.DOUBLE, ReduceOp.SUM, 1, 0, false)
                        )
                    }
                }
            // Rank 0 receives, reduces, then sends back: its send waits for the receive (a round later).
            rab[0].rounds shouldBe 3
            rab.map { it.sends to it.recvs } shouldBe listOf(1 to 1, 1 to 1)
        }
    })
