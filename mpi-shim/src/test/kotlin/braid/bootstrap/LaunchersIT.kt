package braid.bootstrap

import braid.testsupport.ChildProcess
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * Jobs of four JVMs under every real launcher: Hydra's `mpiexec` in both PMI-1 modes and with PMI-2, Open MPI's
 * `mpirun` (PMIx), and `braid run`. Each rank publishes its shm endpoint's address blob and a ~10 KiB value, fences,
 * reads everyone's, and exchanges a tagged message with every other rank ([RankMain]); an abort's exit code reaches the
 * launcher's exit status; a rank killed mid-job ends the job without a hang and leaves no rank behind.
 */
class LaunchersIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-launchers").toFile()
        afterSpec { dir.deleteRecursively() }

        val enabled = ::enabledFor
        fun job(launcher: Launcher, mode: List<String>, name: String): ChildProcess =
            braid.bootstrap.job(launcher, 4, mode, File(dir, "$name-${launcher.name}.log"))

        for (launcher in Launcher.entries) {
            test(
                    "4 ranks under ${launcher.title} exchange endpoint address blobs and 10 KiB values and message every other rank"
                )
                .config(enabledOrReasonIf = enabled(launcher)) {
                    job(launcher, listOf("exchange"), "exchange").use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(180))
                        val out = job.output()
                        withClue(out) { code shouldBe 0 }
                        for (r in 0 until 4) out shouldContain "OK rank $r of 4 ${launcher.kind}"
                        out shouldNotContain "FAILED"
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }

            test("a rank aborting with code 7 under ${launcher.title} ends the job with exit code 7").config(
                enabledOrReasonIf = enabled(launcher)
            ) {
                job(launcher, listOf("abort", "7"), "abort").use { job ->
                    val code = job.awaitExit(Duration.ofSeconds(180))
                    val out = job.output()
                    withClue(out) { code shouldBe 7 }
                    out shouldContain "rank 1: abort (7)"
                    out shouldNotContain "FAILED"
                    job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                }
            }

            test(
                    "a rank killed mid-job under ${launcher.title} ends the whole job with a failure and leaves no rank running"
                )
                .config(enabledOrReasonIf = enabled(launcher)) {
                    job(launcher, listOf("die"), "die").use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(180))
                        val out = job.output()
                        withClue(out) { code shouldNotBe 0 }
                        out shouldNotContain "FAILED"
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }
        }

        test("a process no launcher started is a singleton world of one that exchanges with itself") {
            val log = File(dir, "singleton.log")
            ChildProcess.jvm(RANK_MAIN, "singleton")
                .jvmArgs(LAUNCHER_JVM_ARGS)
                .withoutEnv { it.startsWith("PMI") || it == "BRAID_RUN" }
                .output(log)
                .start()
                .use { p ->
                    val code =
                        p.awaitExit(Duration.ofSeconds(120)) // fails, with the output's tail, if it is still running
                    withClue(log.readText()) { code shouldBe 0 }
                    log.readText() shouldContain "OK rank 0 of 1 singleton"
                }
        }
    })

private inline fun <T> withClue(clue: String, block: () -> T): T = io.kotest.assertions.withClue(clue, block)
