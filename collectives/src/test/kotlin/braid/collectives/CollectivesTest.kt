package braid.collectives

import braid.core.Errno
import braid.core.FabricException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking

/** Fast coverage in `mvn test`: several shm endpoints in one JVM, one thread per rank. */
class CollectivesTest :
    FunSpec({
        test("a join agrees on one context id and ranks members in the set's order") {
            collectiveFabric(3).use { f ->
                val groups = f.join()
                groups.map { it.rank } shouldBe listOf(0, 1, 2)
                groups.map { it.contextId }.distinct().size shouldBe 1
                val again = f.join()
                again.map { it.contextId }.distinct().size shouldBe 1
                (again[0].contextId > groups[0].contextId) shouldBe true
            }
        }

        test(
            "every form of waiting for a join and a collective ends through the domain's wait, and a blocking wait times out"
        ) {
            collectiveFabric(3).use { f ->
                val sets = f.nodes.map { it.set }
                // Each rank waits its own way for the join, then for a barrier: blocking, suspended, a future.
                val pool = Executors.newFixedThreadPool(3)
                val groups =
                    try {
                        f.nodes.indices
                            .map { i ->
                                pool.submit(
                                    Callable {
                                        when (i) {
                                            0 -> Collectives.join(f.nodes[i].ep, sets[i], 30_000)
                                            1 -> runBlocking { Collectives.joinSuspend(f.nodes[i].ep, sets[i]) }
                                            else -> Collectives.startJoin(f.nodes[i].ep, sets[i]).waitFor(30_000)
                                        }
                                    }
                                )
                            }
                            .map { it.get(60, TimeUnit.SECONDS) }
                    } finally {
                        pool.shutdownNow()
                    }
                onEveryRank(groups, seconds = 60) { g ->
                    when (g.rank) {
                        0 -> g.startBarrier().waitFor(30_000)
                        1 -> runBlocking { g.startBarrier().await() }
                        else -> g.startBarrier().toFuture().get(30, TimeUnit.SECONDS)
                    }
                }
                // A barrier only rank 0 has entered cannot end: its wait gives up at the deadline, and ends once the
                // others enter.
                val alone = groups[0].startBarrier()
                shouldThrow<FabricException> { alone.waitFor(50) }.code shouldBe Errno.ETIMEDOUT
                onEveryRank(groups, seconds = 60) { g ->
                    if (g.rank == 0) alone.waitFor(30_000) else g.startBarrier().waitFor(30_000)
                }
            }
        }

        for (p in listOf(1, 2, 3, 4, 5)) {
            test("every operation, datatype and reduction on $p in-process ranks matches the sequential reference") {
                collectiveFabric(p).use { f ->
                    val groups = f.join()
                    onEveryRank(groups) { Matrix(it, quick = true).runAll() }
                }
            }
        }

        for (p in listOf(3, 4, 6, 7)) {
            test(
                "allreduce, broadcast and allgather under every forced algorithm on $p in-process ranks match the reference"
            ) {
                collectiveFabric(p).use { f ->
                    for (tuning in Matrix.FORCED) {
                        val groups = f.join(JoinOptions.DEFAULT.withTuning(tuning))
                        onEveryRank(groups) { Matrix(it).allreduceCases() }
                    }
                }
            }
        }
    })
