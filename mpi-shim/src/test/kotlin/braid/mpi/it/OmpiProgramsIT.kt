package braid.mpi.it

import braid.bootstrap.Launcher
import braid.bootstrap.enabledFor
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * Programs written for Open MPI's Java bindings (package `mpi`, [braid.mpi.ompi.Checks], Open MPI's Hello and Ring) run
 * unmodified under `braid run`, `mpiexec.mpich` (Hydra, PMI-1) and `mpirun.openmpi` (PMIx) with 2 to 8 ranks: every
 * rank reports its checks passed; a fatal error and `Comm.abort` end the whole job with a non-zero code.
 */
class OmpiProgramsIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-ompi-programs").toFile()
        afterSpec { dir.deleteRecursively() }

        fun run(launcher: Launcher, ranks: Int, main: String, args: List<String>, name: String): Pair<Int, String> =
            braid.bootstrap.job(launcher, ranks, args, File(dir, "$name-${launcher.name}.log"), main).use { job ->
                val code = job.awaitExit(Duration.ofSeconds(300))
                val out = job.output()
                withClue(out) { job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList() }
                code to out
            }

        val checks = "braid.mpi.ompi.Checks"
        // mode, ranks: every size from 2 to 8 is used somewhere, odd ones included.
        val modes =
            listOf(
                "init-first" to 2,
                "p2p" to 3,
                "coll" to 5,
                "comm" to 6,
                "topo" to 8,
                "struct" to 4,
                "ports" to 4,
                "errors" to 2,
                "file" to 3,
                "win" to 3,
                "spawn" to 2,
            )
        val everywhere = setOf("p2p", "coll", "struct")

        for (launcher in listOf(Launcher.BRAID_RUN, Launcher.HYDRA_FD, Launcher.OPEN_MPI)) {
            val enabled = enabledFor(launcher)
            for ((mode, ranks) in modes) {
                if (launcher == Launcher.OPEN_MPI && mode !in everywhere) continue
                test("Checks $mode under ${launcher.title} with $ranks ranks: every rank's checks pass").config(
                    enabledOrReasonIf = enabled
                ) {
                    val args = if (mode == "file") listOf(mode, dir.path) else listOf(mode)
                    val (code, out) = run(launcher, ranks, checks, args, mode)
                    withClue(out) {
                        code shouldBe 0
                        for (r in 0 until ranks) out shouldContain "OK $mode rank $r of $ranks"
                        if (mode == "spawn") for (c in 0 until 3) out shouldContain "OK spawn-child rank $c of 3"
                    }
                }
            }

            test("Open MPI's Hello and Ring examples under ${launcher.title} with 8 and 4 ranks").config(
                enabledOrReasonIf = enabled
            ) {
                val (hello, helloOut) = run(launcher, 8, "braid.mpi.ompi.Hello", emptyList(), "hello")
                withClue(helloOut) {
                    hello shouldBe 0
                    for (r in 0 until 8) helloOut shouldContain "Hello world from rank $r of 8"
                }
                val (ring, ringOut) = run(launcher, 4, "braid.mpi.ompi.Ring", emptyList(), "ring")
                withClue(ringOut) {
                    ring shouldBe 0
                    ringOut shouldContain "Process 0 decremented value: 0"
                    for (r in 0 until 4) ringOut shouldContain "Process $r exiting"
                }
            }

            test("docs/mpi.md's example under ${launcher.title} with 3 ranks").config(enabledOrReasonIf = enabled) {
                val (code, out) = run(launcher, 3, "braid.mpi.ompi.example.Ring", emptyList(), "docs-ring")
                withClue(out) {
                    code shouldBe 0
                    for (r in 0 until 3) out shouldContain
                        "rank $r of 3: got ${(r + 2) % 3} and ${10 * ((r + 2) % 3)}, sum 3"
                }
            }

            if (launcher != Launcher.OPEN_MPI)
                test("two jobs under ${launcher.title} (2 and 3 ranks) join through a port: messages and an allreduce")
                    .config(enabledOrReasonIf = enabled) {
                        val file = File(dir, "port-${launcher.name}")
                        fun start(mode: String, ranks: Int) =
                            braid.bootstrap.job(
                                launcher,
                                ranks,
                                listOf(mode, file.path),
                                File(dir, "$mode-${launcher.name}.log"),
                                checks,
                            )
                        start("port-server", 2).use { server ->
                            start("port-client", 3).use { client ->
                                val c = client.awaitExit(Duration.ofSeconds(300))
                                val s = server.awaitExit(Duration.ofSeconds(300))
                                withClue(server.output() + client.output()) {
                                    s shouldBe 0
                                    c shouldBe 0
                                    for (r in 0 until 2) server.output() shouldContain "OK port-server rank $r of 2"
                                    for (r in 0 until 3) client.output() shouldContain "OK port-client rank $r of 3"
                                }
                            }
                        }
                    }

            test("the README's one-sided example under ${launcher.title} with 3 ranks").config(
                enabledOrReasonIf = enabled
            ) {
                val (code, out) = run(launcher, 3, "braid.mpi.ompi.example.Counter", emptyList(), "readme-counter")
                withClue(out) {
                    code shouldBe 0
                    out shouldContain "counter 3"
                    for (r in 0 until 3) out shouldContain
                        Regex("rank $r of 3: ticket [0-2], ghosts ${(r + 2) % 3 * 10 + 4}.0 ${(r + 1) % 3 * 10 + 1}.0")
                    val tickets = Regex("ticket ([0-9]+)").findAll(out).map { it.groupValues[1].toInt() }.toSet()
                    tickets shouldBe setOf(0, 1, 2)
                }
            }

            test("a program that loads the mpi classes and returns without Init exits under ${launcher.title}").config(
                enabledOrReasonIf = enabled
            ) {
                val (code, out) = run(launcher, 2, checks, listOf("no-init"), "no-init")
                withClue(out) {
                    code shouldBe 0
                    out shouldContain "OK no-init 3.1"
                }
            }

            test("Comm.abort(7) from one rank under ${launcher.title} ends every rank with exit code 7").config(
                enabledOrReasonIf = enabled
            ) {
                val (code, out) = run(launcher, 4, checks, listOf("abort", "7"), "abort")
                withClue(out) {
                    code shouldBe 7
                    out shouldContain "MPI_Abort on MPI_COMM_WORLD with code 7"
                }
            }

            test("a bad rank under the default ERRORS_ARE_FATAL under ${launcher.title} ends the job non-zero").config(
                enabledOrReasonIf = enabled
            ) {
                val (code, out) = run(launcher, 3, checks, listOf("fatal"), "fatal")
                withClue(out) {
                    code shouldNotBe 0
                    out shouldContain "MPI_ERR_RANK"
                }
            }
        }
    })
