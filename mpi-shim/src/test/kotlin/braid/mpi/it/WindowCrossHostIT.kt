package braid.mpi.it

import braid.bootstrap.Launcher
import braid.bootstrap.enabledFor
import braid.bootstrap.hydraAcross
import braid.bootstrap.job
import braid.bootstrap.sshScript
import braid.it.NetnsHosts
import braid.it.NetnsUsable
import io.kotest.assertions.withClue
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * One-sided communication across two network-namespace hosts: 4 ranks of [WindowRankMain] under `mpiexec` with the
 * namespace launch script of [braid.bootstrap.HydraCrossHostIT], so `Mpi.init` opens the link (shm inside a host, tcp
 * between) and every window check but the shared window runs over it; the shared window is refused.
 */
@EnabledIf(NetnsUsable::class)
class WindowCrossHostIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-win-hosts").toFile()
        afterSpec { dir.deleteRecursively() }

        test("4 ranks on two namespace hosts pass every one-sided check over the link; a shared window is refused")
            .config(enabledOrReasonIf = enabledFor(Launcher.HYDRA_FD)) {
                Launcher.HYDRA_FD.missing?.let { error("$it, and BRAID_REQUIRE_LAUNCHERS=1 requires it") }
                NetnsHosts(2).use { net ->
                    val script = sshScript(net, File(dir, "netns-ssh-win.sh"))
                    job(
                            hydraAcross(net, script, emptyList()),
                            listOf("cross-host"),
                            File(dir, "win.log"),
                            WindowRankMain::class.java.name,
                        )
                        .use { job ->
                            val code = job.awaitExit(Duration.ofSeconds(300))
                            val out = job.output()
                            withClue(out) {
                                code shouldBe 0
                                out shouldNotContain "FAILED"
                                for (r in 0 until 4) out shouldContain "OK rank $r of 4: one-sided cross-host"
                            }
                            job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                        }
                }
            }
    })
