package braid.mpi.it

import braid.bootstrap.Launcher
import braid.bootstrap.enabledFor
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * One-sided communication across processes: [WindowRankMain] under `braid run` (every check of
 * [braid.mpi.testing.WindowChecks] with 2 and 4 ranks, the concurrent updates with 8), and a rank killed during epochs
 * (through a file bootstrap, so the launcher does not end the job when it dies).
 */
class WindowMultiProcessIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-win-it").toFile()
        afterSpec { dir.deleteRecursively() }

        for ((ranks, scenario) in listOf(2 to "all", 4 to "all", 8 to "contention")) {
            test("braid run -n $ranks: the one-sided checks '$scenario' pass on every rank, each a process").config(
                enabledOrReasonIf = enabledFor(Launcher.BRAID_RUN)
            ) {
                val log = File(dir, "win-$ranks-$scenario.log")
                braid.bootstrap
                    .job(Launcher.BRAID_RUN, ranks, listOf(scenario), log, WindowRankMain::class.java.name)
                    .use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(300))
                        val out = job.output()
                        withClue(out) {
                            code shouldBe 0
                            for (r in 0 until ranks) out shouldContain "OK rank $r of $ranks: one-sided $scenario"
                            out shouldNotContain "FAILED"
                        }
                    }
            }
        }

        test("braid run -n 4: docs/one-sided.md's Java example counts every ticket once and fills every ghost cell")
            .config(enabledOrReasonIf = enabledFor(Launcher.BRAID_RUN)) {
                val log = File(dir, "one-sided-example.log")
                braid.bootstrap
                    .job(Launcher.BRAID_RUN, 4, emptyList(), log, "braid.mpi.javaapi.example.OneSided")
                    .use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(300))
                        val out = job.output()
                        withClue(out) {
                            code shouldBe 0
                            out shouldContain "counter 12"
                            val tickets =
                                Regex("tickets((?: \\d+)+),").findAll(out).flatMap { m ->
                                    m.groupValues[1].trim().split(' ').map { it.toInt() }
                                }
                            tickets.sorted().toList() shouldBe (0 until 12).toList()
                            for (r in 0 until 4) {
                                val left = (r + 3) % 4
                                val right = (r + 1) % 4
                                val line =
                                    Regex(
                                        "rank $r of 4: tickets[ \\d]+, ghosts ${left * 10 + 4}\\.0 ${right * 10 + 1}\\.0"
                                    )
                                check(line.containsMatchIn(out)) { "rank $r's line should match $line" }
                            }
                        }
                    }
            }

        test("a rank killed during epochs: the others' lock and flush fail naming it, they go on, nothing hangs") {
            runDeath(dir, "death", "peer-death")
        }

        test(
            "a rank killed holding an exclusive lock: the others' waits for it fail naming it and the window, nothing hangs"
        ) {
            runDeath(dir, "holder-death", "holder-death")
        }

        test(
            "a rank killed holding a shared lock: the others' waits for the exclusive lock fail naming it and the window"
        ) {
            runDeath(dir, "shared-holder-death", "shared-holder-death")
        }

        test(
            "a rank killed holding an accumulate lock word: the others' accumulates on it fail naming it, nothing hangs"
        ) {
            runDeath(dir, "accumulate-holder-death", "accumulate-holder-death")
        }
    })

/** Ranks 0..2 of [scenario] through a file bootstrap; rank 2 dies (exit 9), 0 and 1 see its failures and exit 0. */
private fun runDeath(dir: File, name: String, scenario: String) {
    val jobDir = File(dir, name).apply { mkdirs() }
    val logs = List(3) { File(jobDir, "rank$it.log") }
    val procs =
        List(3) { r ->
            ChildProcess.jvm(WindowRankMain::class.java.name, "file", jobDir.path, "$r", "3", scenario)
                .name("rank $r")
                .output(logs[r])
                .start()
        }
    try {
        val deadline = Deadline.of("the 3 ranks to exit", Duration.ofSeconds(120))
        val codes = procs.map { it.awaitExit(deadline) }
        val out = logs.mapIndexed { r, f -> "--- rank $r ---\n" + f.readText() }.joinToString("\n")
        withClue(out) {
            codes shouldBe listOf(0, 0, 9)
            logs[0].readText() shouldContain "failed as expected"
            logs[1].readText() shouldContain "failed as expected"
        }
    } finally {
        procs.forEach { it.close() }
    }
}
