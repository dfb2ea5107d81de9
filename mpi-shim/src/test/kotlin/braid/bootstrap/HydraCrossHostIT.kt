package braid.bootstrap

import braid.it.NetnsHosts
import braid.it.NetnsUsable
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.core.test.Enabled
import io.kotest.matchers.collections.shouldNotContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files

/**
 * A job over two hosts, as Hydra launches one across machines: `mpiexec.mpich -launcher ssh
 * -launcher-exec SCRIPT -hosts A,B`, where SCRIPT stands in for ssh by running Hydra's proxy with
 * `ip netns exec` in the namespace host that has the address Hydra named. The proxies connect
 * back to `mpiexec` over the bridge; the ranks bootstrap through them (PMI-1 over `PMI_FD`) and
 * exchange tcp endpoint addresses and messages across the hosts.
 */
@EnabledIf(NetnsUsable::class)
class HydraCrossHostIT : FunSpec({
    val dir = Files.createTempDirectory("braid-hydra-hosts").toFile()
    afterSpec { dir.deleteRecursively() }

    test("4 ranks on two namespace hosts under mpiexec with a launch script exchange tcp addresses and messages across the hosts")
        .config(enabledOrReasonIf = {
            val missing = Launcher.HYDRA_FD.missing
            if (missing == null || Launcher.required) Enabled.enabled else Enabled.disabled("skipped: $missing").also { println(it.reason) }
        }) {
            Launcher.HYDRA_FD.missing?.let { error("$it, and BRAID_REQUIRE_LAUNCHERS=1 requires it") }
            NetnsHosts(2).use { net ->
                val script = File(dir, "netns-ssh.sh")
                script.writeText(
                    buildString {
                        append("#!/bin/sh\n# Hydra's ssh launcher calls: SCRIPT [ssh options] HOST COMMAND...\n")
                        append("while [ \"\${1#-}\" != \"\$1\" ]; do shift; done\n")
                        append("host=\"\$1\"; shift\ncase \"\$host\" in\n")
                        net.hosts.forEach { append("  ${it.address}) ns=${it.namespace} ;;\n") }
                        append("  *) echo \"netns-ssh: no host \$host\" >&2; exit 255 ;;\nesac\n")
                        append("exec ip netns exec \"\$ns\" sh -c \"\$*\"\n")
                    },
                )
                script.setExecutable(true)
                val launch = { rank: List<String> ->
                    listOf(
                        "mpiexec.mpich", "-launcher", "ssh", "-launcher-exec", script.path,
                        "-hosts", net.hosts.joinToString(",") { it.address }, "-iface", net.rootIface,
                        "-genv", "BRAID_TEST_PROVIDER", "tcp", "-genv", "BRAID_TCP_IFACE", NetnsHosts.IFACE, "-n", "4",
                    ) + rank
                }
                Job(launch, listOf("exchange"), File(dir, "cross-host.log")).use { job ->
                    val code = job.await(180)
                    val out = job.output()
                    io.kotest.assertions.withClue(out) {
                        code shouldBe 0
                        out shouldNotContain "FAILED"
                        val hostsOfRanks = (0 until 4).map { r ->
                            Regex("OK rank $r of 4 pmi1 (net:\\[\\d+])").find(out)?.groupValues?.get(1) ?: error("rank $r did not finish")
                        }
                        hostsOfRanks.toSet().size shouldBe 2
                        hostsOfRanks shouldNotContain RankMain.netNamespace()
                    }
                    job.leftovers() shouldBe emptyList()
                }
            }
        }
})
