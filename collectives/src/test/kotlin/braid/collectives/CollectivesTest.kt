package braid.collectives

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/** Fast coverage in `mvn test`: several shm endpoints in one JVM, one thread per rank. */
class CollectivesTest : FunSpec({
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

    for (p in listOf(1, 2, 3, 4, 5)) {
        test("every operation, datatype and reduction on $p in-process ranks matches the sequential reference") {
            collectiveFabric(p).use { f ->
                val groups = f.join()
                onEveryRank(groups) { Matrix(it, quick = true).runAll() }
            }
        }
    }

    for (p in listOf(3, 4, 6, 7)) {
        test("allreduce, broadcast and allgather under every forced algorithm on $p in-process ranks match the reference") {
            collectiveFabric(p).use { f ->
                for (tuning in Matrix.FORCED) {
                    val groups = f.join(JoinOptions.DEFAULT.withTuning(tuning))
                    onEveryRank(groups) { Matrix(it).allreduceCases() }
                }
            }
        }
    }
})
