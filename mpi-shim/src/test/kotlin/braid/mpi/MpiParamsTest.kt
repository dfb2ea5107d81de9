package braid.mpi

import braid.bootstrap.Bootstrap
import braid.bootstrap.BootstrapException
import braid.bootstrap.BootstrapParams
import braid.core.Braid
import braid.core.ParamSource
import braid.core.Settings
import braid.core.SettingsException
import braid.mpi.testing.MemoryJob
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** `braid.mpi`'s and the bootstrap's parameters: registered with rail-core's registry, read only through [Settings]. */
class MpiParamsTest :
    FunSpec({
        test("the MPI and bootstrap parameters are registered with Braid.parameters") {
            Braid.parameters() shouldContainAll MpiParams.ALL + BootstrapParams.ALL
            Braid.parameters().map { it.env } shouldContainAll
                listOf(
                    "BRAID_MPI_PROVIDER",
                    "BRAID_MPI_LINK",
                    "BRAID_MPI_SPIN_POLLS",
                    "BRAID_MPI_YIELD_POLLS",
                    "BRAID_MPI_NAME_DIR",
                    "BRAID_MPI_PARENT_PORT",
                    "BRAID_BOOTSTRAP",
                    "BRAID_PMI_VERSION",
                    "BRAID_ADDRESS_DIR",
                    "BRAID_PMIX_LIBRARY",
                    "BRAID_RUN",
                )
        }

        test("MpiOptions reads the provider and the link through its settings: the environment map, then the API") {
            val env =
                MpiOptions()
                    .settings(
                        Settings.ofEnvironment(mapOf("BRAID_MPI_PROVIDER" to "tcp", "BRAID_MPI_LINK" to "shm+tcp:lo"))
                    )
            env.provider shouldBe "tcp"
            env.links shouldBe "shm+tcp:lo"
            env.settings.resolve(MpiParams.PROVIDER).source shouldBe ParamSource.ENVIRONMENT
            env.provider("shm").links(null).let {
                it.provider shouldBe "shm"
                it.links shouldBe null
                it.settings.resolve(MpiParams.PROVIDER).source shouldBe ParamSource.API
            }
            MpiOptions().settings(Settings.NONE).provider shouldBe MpiOptions.AUTO
        }

        test(
            "a bad BRAID_MPI_SPIN_POLLS is refused naming the variable, the value and the rule (it used to be ignored)"
        ) {
            val job = MemoryJob(1)
            val bad =
                MpiOptions().settings(Settings.ofEnvironment(mapOf("BRAID_MPI_SPIN_POLLS" to "lots"))).provider("shm")
            shouldThrow<SettingsException> { Mpi.init(job.rank(0), options = bad) }.message!! shouldContain
                "environment BRAID_MPI_SPIN_POLLS='lots': mpi.spin_polls is not an integer"
            val nic = MpiOptions().settings(Settings.ofEnvironment(mapOf("BRAID_MPI_PROVIDER" to "nic")))
            shouldThrow<SettingsException> { nic.provider }
                .message!!
                .let {
                    it shouldContain "BRAID_MPI_PROVIDER='nic'"
                    it shouldContain "set BRAID_MPI_PROVIDER to auto or one of shm, tcp, link"
                }
        }

        test(
            "the bootstrap reads BRAID_BOOTSTRAP and BRAID_PMI_VERSION through Settings; a bad value names the variable, the rule"
        ) {
            Bootstrap.detect(Settings.NONE).use { it.kind shouldBe "singleton" }
            Bootstrap.detect(Settings.NONE.with(BootstrapParams.KIND, "singleton")).use { it.kind shouldBe "singleton" }
            shouldThrow<BootstrapException> { Bootstrap.detect(mapOf("BRAID_BOOTSTRAP" to "slurm")) }
                .message!! shouldContain
                "environment BRAID_BOOTSTRAP='slurm': bootstrap.kind is not one of pmi1, pmi2, pmix, singleton"
            val pmi3 = mapOf("PMI_PORT" to "localhost:1", "BRAID_PMI_VERSION" to "3")
            shouldThrow<BootstrapException> { Bootstrap.detect(pmi3) }.message!! shouldContain "BRAID_PMI_VERSION='3'"
        }
    })
