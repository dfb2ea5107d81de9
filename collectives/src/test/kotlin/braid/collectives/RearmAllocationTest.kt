package braid.collectives

import braid.testsupport.Deadline
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.time.Duration

/**
 * A cached schedule re-armed 10,000 times allocates nothing per call (the JVM's per-thread allocation counter, as
 * rail-core's HotPathAllocationTest counts it), and several collectives in flight on one group and on overlapping
 * groups complete with the right results.
 */
class RearmAllocationTest :
    FunSpec({
        val reqs = arrayOfNulls<CollectiveRequest>(16)
        val done = BooleanArray(16)
        val deadline = Deadline.of("every started collective to complete", Duration.ofSeconds(30))

        /**
         * Starts one collective per rank (all from this thread) and drives every rank until all are done; allocates
         * nothing itself.
         */
        fun runAll(starts: List<() -> CollectiveRequest>) {
            for (i in starts.indices) {
                reqs[i] = starts[i]()
                done[i] = false
            }
            var left = starts.size
            deadline.restart()
            while (left > 0) {
                for (i in starts.indices) if (!done[i] && reqs[i]!!.test()) {
                    done[i] = true
                    left--
                }
                deadline.check() // no "last seen" here: a lambda would allocate in the measured rounds
            }
        }

        test("an allreduce and a barrier re-armed 10,000 times allocate nothing per call once warm") {
            collectiveFabric(3).use { f ->
                val groups = f.join()
                val send = groups.map { g -> Reference.buffer(64).also { it.putLong(0, g.rank + 1L) } }
                val recv = groups.map { Reference.buffer(64) }
                val allreduce =
                    groups.indices.map { i ->
                        { groups[i].startAllreduce(send[i], 0, recv[i], 0, 8, Datatype.INT64, ReduceOp.SUM) }
                    }
                val barrier = groups.indices.map { i -> { groups[i].startBarrier() } }
                fun rounds(n: Int) =
                    repeat(n) {
                        runAll(allreduce)
                        runAll(barrier)
                    }
                rounds(2_000)
                val n = 10_000
                val allocated = SteadyAllocation.least(3, 2L * n - 1) { rounds(n) }
                recv.forEach { it.getLong(0) shouldBe 6L }
                groups.forEach { it.schedulesBuilt shouldBe 2 }
                withClue("$allocated bytes allocated over $n allreduces and $n barriers on 3 ranks") {
                    (allocated / (2L * n)) shouldBeLessThan 1L
                }
            }
        }

        test("several collectives in flight on one group and on overlapping groups keep their messages apart") {
            collectiveFabric(4).use { f ->
                val all = f.join()
                val low = f.join(members = listOf(0, 1, 2))
                val high = f.join(members = listOf(1, 2, 3))
                val bufs = List(4) { List(6) { Reference.buffer(8 * 100) } }
                val outs = List(4) { List(6) { Reference.buffer(8 * 100) } }
                for (r in 0 until 4) for (k in 0 until 6) for (i in 0 until 100) bufs[r][k].putLong(
                    i * 8,
                    (r + 1L) * (k + 1) + i,
                )
                val reqs = ArrayList<Pair<Int, CollectiveRequest>>()
                // Every rank starts, in the same order: 3 allreduces on all, one on each overlapping group, and a
                // broadcast on all.
                for (r in 0 until 4) {
                    for (k in 0 until 3) reqs +=
                        r to all[r].startAllreduce(bufs[r][k], 0, outs[r][k], 0, 100, Datatype.INT64, ReduceOp.SUM)
                    if (r < 3)
                        reqs +=
                            r to low[r].startAllreduce(bufs[r][3], 0, outs[r][3], 0, 100, Datatype.INT64, ReduceOp.SUM)
                    if (r > 0)
                        reqs +=
                            r to
                                high[r - 1].startAllreduce(
                                    bufs[r][4],
                                    0,
                                    outs[r][4],
                                    0,
                                    100,
                                    Datatype.INT64,
                                    ReduceOp.MAX,
                                )
                    reqs += r to all[r].startBroadcast(bufs[r][5], 0, 100, Datatype.INT64, 2)
                }
                val deadline = Deadline.of("every rank's collectives to complete")
                while (!reqs.all { it.second.isDone }) {
                    f.nodes.forEach { it.domain.progress() }
                    deadline.check { reqs }
                }
                reqs.forEach { it.second.test() shouldBe true }
                for (r in 0 until 4) for (i in 0 until 100) {
                    for (k in 0 until 3) outs[r][k].getLong(i * 8) shouldBe (1L + 2 + 3 + 4) * (k + 1) + 4L * i
                    if (r < 3) outs[r][3].getLong(i * 8) shouldBe (1L + 2 + 3) * 4 + 3L * i
                    if (r > 0) outs[r][4].getLong(i * 8) shouldBe 4L * 5 + i
                    bufs[r][5].getLong(i * 8) shouldBe 3L * 6 + i
                }
            }
        }

        test("a cancelled collective fails with ECANCELED and the group goes on working") {
            collectiveFabric(2).use { f ->
                val g = f.join()
                val buf = Reference.buffer(64)
                val req = g[0].startBroadcast(buf, 0, 8, Datatype.INT64, 1) // rank 1 never takes part
                req.cancel() shouldBe true
                val e = runCatching { req.test() }.exceptionOrNull() as braid.core.FabricException
                e.code shouldBe braid.core.Errno.ECANCELED
                val flushed = g[0].startBarrier()
                f.nodes[0].domain.deferredWork.flushAll()
                val e2 = runCatching { flushed.waitFor(5_000) }.exceptionOrNull() as braid.core.FabricException
                e2.code shouldBe braid.core.Errno.ECANCELED
            }
        }
    })
