package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.core.test.Enabled
import io.kotest.core.test.TestCase
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * Java programs under a real Slurm: a one-node cluster of this test's own ([OneNodeSlurm]: `munged`, `slurmctld`,
 * `slurmd` from Debian's packages) runs `braid.samples.HelloJob` and the README's MPI quick start (`RingAllreduce`,
 * `braid.mpi`) with `srun --mpi=pmi2 -n 4` (PMI-2) and `srun --mpi=pmix -n 2` (PMIx), and is stopped again, also when a
 * test fails. Where Slurm is missing (or this is not root) the tests are skipped with the reason printed, as the other
 * launcher tests are, unless `BRAID_REQUIRE_LAUNCHERS=1` (set by `.ci/run`, whose `.ci/install-launchers` installs it):
 * then it is a failure saying what to install.
 */
class SlurmIT :
    FunSpec({
        val cluster = lazy {
            runCatching {
                OneNodeSlurm.missing()?.let { throw AssertionError("no one-node Slurm here: $it") }
                OneNodeSlurm.start()
            }
        }
        fun slurm(): OneNodeSlurm = cluster.value.getOrThrow()
        val enabled: (TestCase) -> Enabled = {
            val missing = OneNodeSlurm.missing()
            if (missing == null || System.getenv("BRAID_REQUIRE_LAUNCHERS") == "1") Enabled.enabled
            else
                Enabled.disabled(
                        "skipped: no one-node Slurm here: $missing; set BRAID_REQUIRE_LAUNCHERS=1 to make this a failure"
                    )
                    .also { println(it.reason) }
        }
        afterSpec { if (cluster.isInitialized()) cluster.value.getOrNull()?.close() }

        val dir = Files.createTempDirectory("braid-slurm-it").toFile()
        afterSpec { dir.deleteRecursively() }

        /** The README's RingAllreduce, compiled with bin/mpijavac as the README does, into a directory. */
        val ringClasses by lazy {
            val classes = File(dir, "classes")
            val (code, log) = mpijavac("-d", classes.path, readmeRingAllreduce(File(dir, "src")).path)
            withClue("bin/mpijavac RingAllreduce.java: $log") { code shouldBe 0 }
            classes.path
        }

        /** [main] under `srun` [srunArgs]; its exit code and output, the cluster's logs attached to a failure. */
        fun job(name: String, srunArgs: List<String>, main: String, classPath: String? = null): Pair<Int, String> {
            val s = slurm()
            s.srun(srunArgs, main, emptyList(), File(dir, "$name.log"), classPath).use { job ->
                val code = job.awaitExit(Duration.ofSeconds(240))
                withClue("the job's leftovers") { job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList() }
                return code to job.output()
            }
        }

        for ((mpi, ranks) in listOf("pmi2" to 4, "pmix" to 2)) {
            val srun = listOf("--mpi=$mpi", "-n", "$ranks", "--overcommit")

            test("braid.samples.HelloJob under srun --mpi=$mpi -n $ranks passes a message around the ring").config(
                enabledOrReasonIf = enabled
            ) {
                val (code, out) = job("hello-$mpi", srun, HelloJob::class.java.name)
                withClue("${out}\n${slurm().logs()}") {
                    code shouldBe 0
                    for (r in 0 until ranks) out shouldContain
                        "rank $r of $ranks ($mpi): got 'hello from ${(r + ranks - 1) % ranks}'"
                }
            }

            test("the README's RingAllreduce (braid.mpi) under srun --mpi=$mpi -n $ranks: ring, allreduce, vector")
                .config(enabledOrReasonIf = enabled) {
                    val (code, out) = job("ring-$mpi", srun, "RingAllreduce", ringClasses)
                    val sum = (1..ranks).sum().toDouble()
                    withClue("${out}\n${slurm().logs()}") {
                        code shouldBe 0
                        for (r in 0 until ranks) {
                            val prev = (r + ranks - 1) % ranks
                            val strided = if (r == 0) "2 3" else "2 0" // the vector's gaps stay untouched
                            out shouldContain "rank $r of $ranks: got $prev from $prev, sum $sum, strided $strided"
                        }
                    }
                }
        }

        test("ranks that fail under srun make the job's exit status non-zero").config(enabledOrReasonIf = enabled) {
            val (code, out) = job("missing-class", listOf("--mpi=pmi2", "-n", "2", "--overcommit"), "braid.NoSuchMain")
            withClue(out) {
                (code != 0) shouldBe true
                out shouldContain "braid.NoSuchMain"
            }
        }
    })
