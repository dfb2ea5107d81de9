package braid.collectives

import braid.core.Braid
import braid.core.ParamSource
import braid.core.Settings
import braid.core.SettingsException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** The collectives' parameters: declared once, registered with rail-core's registry, read through [Settings]. */
class CollectiveParamsTest :
    FunSpec({
        test(
            "BRAID_COLL_<OP> is a family of one parameter per operation, registered with Braid.parameters beside the crossovers"
        ) {
            CollectiveParams.ALGORITHM.keys shouldBe CollectiveOp.entries.toSet()
            CollectiveParams.algorithm(CollectiveOp.ALLREDUCE).env shouldBe "BRAID_COLL_ALLREDUCE"
            CollectiveParams.algorithm(CollectiveOp.ALLREDUCE).key shouldBe "coll.allreduce"
            Braid.parameters() shouldContainAll CollectiveParams.ALL
            Braid.parameter("coll.allreduce_rd_max") shouldBe CollectiveParams.ALLREDUCE_RD_MAX
        }

        test("the tuning reads its values through Settings: the environment map or the API, each with its source") {
            val env =
                Settings.ofEnvironment(
                    mapOf("BRAID_COLL_ALLREDUCE" to "recursive-doubling", "BRAID_COLL_BCAST_BINOMIAL_MAX" to "4096")
                )
            env.resolve(CollectiveParams.algorithm(CollectiveOp.ALLREDUCE)).source shouldBe ParamSource.ENVIRONMENT
            CollectiveTuning.fromSettings(env) shouldBe
                CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RECURSIVE_DOUBLING)
                    .withCrossovers(2048, 64, 4096, 4 shl 20)
            CollectiveTuning.fromSettings(
                    Settings.NONE.with(CollectiveParams.algorithm(CollectiveOp.BARRIER), "dissemination")
                )
                .forced(CollectiveOp.BARRIER) shouldBe CollectiveAlgorithm.DISSEMINATION
            CollectiveTuning.fromSettings(Settings.NONE) shouldBe CollectiveTuning.DEFAULT
        }

        test("a bad value is refused naming the variable, the value and the rule") {
            fun refusal(name: String, value: String) =
                shouldThrow<SettingsException> { CollectiveTuning.fromEnvironment(mapOf(name to value)) }
            val fastest = refusal("BRAID_COLL_ALLREDUCE", "fastest")
            fastest.message!!.let {
                it shouldContain "BRAID_COLL_ALLREDUCE='fastest'"
                it shouldContain "no such algorithm"
                it shouldContain "recursive_doubling"
            }
            refusal("BRAID_COLL_ALLREDUCE_RD_MAX", "-1").message!! shouldContain
                "BRAID_COLL_ALLREDUCE_RD_MAX='-1': coll.allreduce_rd_max is negative; set BRAID_COLL_ALLREDUCE_RD_MAX ≥ 0"
        }
    })
