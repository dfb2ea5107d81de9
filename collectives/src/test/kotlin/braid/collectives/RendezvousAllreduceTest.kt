package braid.collectives

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The stale-data suspicion of the last session: with in-process shm endpoints and rendezvous messages (1 KiB eager, 64
 * KiB rings), about one allreduce in a hundred of 5003 INT64 on 3 ranks once ended with one block reduced from stale
 * data. Every call here uses fresh buffers with values that differ per call, so a block taken from an earlier call's
 * data or another rank's buffer shows; 400 calls per algorithm would miss a 1-in-100 fault with probability 0.99^400 ≈
 * 1.8 % each, 0.03 % over both.
 */
class RendezvousAllreduceTest :
    FunSpec({
        for (tuning in Matrix.FORCED.take(2)) {
            val algorithm = tuning.forced(CollectiveOp.ALLREDUCE)
            test(
                "400 allreduces of 5003 INT64 on 3 in-process ranks by rendezvous ($algorithm) each reduce this call's data"
            ) {
                collectiveFabric(3).use { f ->
                    val groups = f.join(JoinOptions.DEFAULT.withTuning(tuning))
                    val bad =
                        onEveryRank(groups, seconds = 120) { g ->
                                val count = 5003
                                val problems = ArrayList<String>()
                                for (call in 0 until 400) {
                                    val send = Reference.buffer(count * 8)
                                    val recv = Reference.buffer(count * 8)
                                    // Rank r contributes (r + 1) × 2^(8·(i mod 3)) + call × 1000: the sum says which
                                    // call and which ranks it came from.
                                    for (i in 0 until count) send.putLong(
                                        i * 8,
                                        ((g.rank + 1).toLong() shl (i % 3 * 8)) + call * 1000L,
                                    )
                                    g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM)
                                        .waitFor(30_000)
                                    var first = -1
                                    var last = -1
                                    var n = 0
                                    for (i in 0 until count) {
                                        if (recv.getLong(i * 8) != (6L shl (i % 3 * 8)) + 3 * call * 1000L) {
                                            if (first < 0) first = i
                                            last = i
                                            n++
                                        }
                                    }
                                    if (n > 0 && problems.size < 5)
                                        problems +=
                                            "rank ${g.rank} call $call: $n elements wrong from $first to $last (element $first is ${recv.getLong(first * 8)})"
                                }
                                problems
                            }
                            .flatten()
                    withClue(bad.joinToString("\n")) { bad.size shouldBe 0 }
                }
            }
        }
    })
