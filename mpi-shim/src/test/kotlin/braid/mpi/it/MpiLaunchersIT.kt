package braid.mpi.it

import braid.bootstrap.Launcher
import braid.bootstrap.enabledFor
import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * A Java MPI program ([braid.mpi.javaapi.MpiProgram]) started by the launchers people use — `mpiexec.mpich -n 4`
 * (PMI-1), `mpirun.openmpi -np 4` (PMIx) and `braid run -n 4` — calls `Mpi.init(args)` with nothing else to go on,
 * checks point-to-point traffic and every collective against a reference, and finalizes; and an `MPI_Abort(13)` from
 * one rank ends the job with exit code 13 under each. Uses `LaunchersIT`'s [Launcher] and [braid.bootstrap.job].
 */
class MpiLaunchersIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-mpi-launchers").toFile()
        afterSpec { dir.deleteRecursively() }

        val enabled = ::enabledFor
        fun job(launcher: Launcher, mode: List<String>, name: String): ChildProcess =
            braid.bootstrap.job(
                launcher,
                4,
                mode,
                File(dir, "$name-${launcher.name}.log"),
                "braid.mpi.javaapi.MpiProgram",
            )

        for (launcher in listOf(Launcher.HYDRA_FD, Launcher.OPEN_MPI, Launcher.BRAID_RUN)) {
            test(
                    "a Java MPI program under ${launcher.title} with 4 ranks inits from the launcher, passes every point-to-point and collective check, and finalizes"
                )
                .config(enabledOrReasonIf = enabled(launcher)) {
                    job(launcher, listOf("all"), "all").use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(300))
                        val out = job.output()
                        withClue(out) {
                            code shouldBe 0
                            for (r in 0 until 4) out shouldContain
                                "OK rank $r of 4 ${launcher.kind}: point-to-point and"
                            out shouldNotContain "FAILED"
                        }
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }

            test(
                    "the README's MPI quick start (ring, allreduce, strided datatype) under ${launcher.title} with 4 ranks"
                )
                .config(enabledOrReasonIf = enabled(launcher)) {
                    val log = File(dir, "quickstart-${launcher.name}.log")
                    braid.bootstrap.job(launcher, 4, emptyList(), log, "braid.mpi.javaapi.example.RingAllreduce").use {
                        job ->
                        val code = job.awaitExit(Duration.ofSeconds(300))
                        val out = job.output()
                        withClue(out) {
                            code shouldBe 0
                            for (r in 0 until 4) {
                                val prev = (r + 3) % 4
                                val strided = if (r == 0) "2 3" else "2 0" // the vector's gaps stay untouched
                                out shouldContain "rank $r of 4: got $prev from $prev, sum 10.0, strided $strided"
                            }
                        }
                    }
                }

            test(
                    "MPI_Abort(13) from one rank of a Java MPI program under ${launcher.title} ends the job with exit code 13"
                )
                .config(enabledOrReasonIf = enabled(launcher)) {
                    job(launcher, listOf("abort", "13"), "abort").use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(180))
                        val out = job.output()
                        withClue(out) {
                            code shouldBe 13
                            out shouldContain "rank 1: MPI_Abort(13)"
                            out shouldNotContain "FAILED"
                        }
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }
        }
    })
