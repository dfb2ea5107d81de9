package braid.bootstrap

import braid.it.NetnsHosts
import braid.it.NetnsUsable
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldNotContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldNotContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * A job over two hosts, as Hydra launches one across machines: `mpiexec.mpich -launcher ssh -launcher-exec SCRIPT
 * -hosts A,B`, where SCRIPT stands in for ssh by running Hydra's proxy with `ip netns exec` in the namespace host that
 * has the address Hydra named. The proxies connect back to `mpiexec` over the bridge; the ranks bootstrap through them
 * (PMI-1 over `PMI_FD`) and exchange tcp endpoint addresses and messages across the hosts. The same with a Java MPI
 * program: `Mpi.init(args)` sees two host identities and opens the link.
 */
@EnabledIf(NetnsUsable::class)
class HydraCrossHostIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-hydra-hosts").toFile()
        afterSpec { dir.deleteRecursively() }

        test(
                "4 ranks on two namespace hosts under mpiexec with a launch script exchange tcp addresses and messages across the hosts"
            )
            .config(enabledOrReasonIf = enabledFor(Launcher.HYDRA_FD)) {
                Launcher.HYDRA_FD.missing?.let { error("$it, and BRAID_REQUIRE_LAUNCHERS=1 requires it") }
                NetnsHosts(2).use { net ->
                    val script = sshScript(net, File(dir, "netns-ssh.sh"))
                    val launch = hydraAcross(net, script, listOf("-genv", "BRAID_TEST_PROVIDER", "tcp"))
                    job(launch, listOf("exchange"), File(dir, "cross-host.log")).use { job ->
                        val code = job.awaitExit(Duration.ofSeconds(180))
                        val out = job.output()
                        io.kotest.assertions.withClue(out) {
                            code shouldBe 0
                            out shouldNotContain "FAILED"
                            val hostsOfRanks =
                                (0 until 4).map { r ->
                                    Regex("OK rank $r of 4 pmi1 (net:\\[\\d+])").find(out)?.groupValues?.get(1)
                                        ?: error("rank $r did not finish")
                                }
                            hostsOfRanks.toSet().size shouldBe 2
                            hostsOfRanks shouldNotContain RankMain.netNamespace()
                        }
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }
            }

        test(
                "a Java MPI program on two namespace hosts under mpiexec picks the link (shm + tcp) from the ranks' host identities and passes every check"
            )
            .config(enabledOrReasonIf = enabledFor(Launcher.HYDRA_FD)) {
                Launcher.HYDRA_FD.missing?.let { error("$it, and BRAID_REQUIRE_LAUNCHERS=1 requires it") }
                NetnsHosts(2).use { net ->
                    val script = sshScript(net, File(dir, "netns-ssh-mpi.sh"))
                    val launch = hydraAcross(net, script, emptyList())
                    job(launch, listOf("all"), File(dir, "cross-host-mpi.log"), "braid.mpi.javaapi.MpiProgram").use {
                        job ->
                        val code = job.awaitExit(Duration.ofSeconds(300))
                        val out = job.output()
                        io.kotest.assertions.withClue(out) {
                            code shouldBe 0
                            out shouldNotContain "FAILED"
                            for (r in 0 until 4) Regex("OK rank $r of 4 pmi1: .* via Mpi\\(rank $r of 4, link\\)")
                                .find(out) ?: error("rank $r did not finish over the link")
                        }
                        job.leftovers(Duration.ofSeconds(10)) shouldBe emptyList()
                    }
                }
            }
    })

/** `mpiexec.mpich` running 4 ranks over [net]'s hosts through [script], with [options] and the hosts' tcp interface. */
internal fun hydraAcross(net: NetnsHosts, script: File, options: List<String>): (List<String>) -> List<String> =
    { rank ->
        listOf(
            "mpiexec.mpich",
            "-launcher",
            "ssh",
            "-launcher-exec",
            script.path,
            "-hosts",
            net.hosts.joinToString(",") { it.address },
            "-iface",
            net.rootIface,
        ) + options + listOf("-genv", "BRAID_TCP_IFACE", NetnsHosts.IFACE, "-n", "4") + rank
    }

/**
 * The script Hydra's ssh launcher runs in place of ssh: `SCRIPT [ssh options] HOST COMMAND…` runs COMMAND with `ip
 * netns exec` in the namespace host whose address is HOST, with that host's `BRAID_HOST_ID` (so its ranks count as
 * being on another machine).
 */
internal fun sshScript(net: NetnsHosts, file: File): File {
    file.writeText(
        buildString {
            append("#!/bin/sh\n# Hydra's ssh launcher calls: SCRIPT [ssh options] HOST COMMAND...\n")
            append("while [ \"\${1#-}\" != \"\$1\" ]; do shift; done\n")
            append("host=\"\$1\"; shift\ncase \"\$host\" in\n")
            net.hosts.forEach { append("  ${it.address}) ns=${it.namespace}; id=${it.hostId} ;;\n") }
            append("  *) echo \"netns-ssh: no host \$host\" >&2; exit 255 ;;\nesac\n")
            append("exec ip netns exec \"\$ns\" env BRAID_HOST_ID=\"\$id\" sh -c \"\$*\"\n")
        }
    )
    file.setExecutable(true)
    return file
}
