package braid.collectives.offload

import braid.it.ChildJvm
import braid.it.NetnsHosts
import braid.it.NetnsUsable
import braid.testsupport.Deadline
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration

/**
 * The hierarchical test: 2 hosts × 3 processes in network namespaces ([NetnsHosts]: each host
 * its own network stack and `BRAID_HOST_ID`; /dev/shm is shared, as on one machine), tcp as the
 * main provider. Ranks alternate hosts (0, 2, 4 on one; 1, 3, 5 on the other), so each host's
 * ranks are not contiguous. Every rank checks its results and its counters: the segment of its
 * host carried the intra-host part, and only the two leaders posted transfers between hosts.
 * Needs root and iproute2 (skipped, saying so, without; `BRAID_REQUIRE_NETNS=1` makes it fail).
 */
@EnabledIf(NetnsUsable::class)
class OffloadCrossHostIT : FunSpec({
    test("allreduce, barrier and broadcast on 2 hosts × 3 processes run hierarchically: the offload inside each host, tcp between the leaders") {
        val dir = Files.createTempDirectory("offload-hier-")
        NetnsHosts(2).use { net ->
            val size = 6
            val ranks = (0 until size).map { r ->
                net.start(net.hosts[r % 2], OffloadRankMain::class.java.name, listOf("tcp", dir.toString(), "$r", "$size", "hier"),
                    dir.resolve("$r.log").toFile(), mapOf("BRAID_JOB_KEY" to "offload-hier-${dir.fileName}"), listOf("-Xmx192m", "-XX:TieredStopAtLevel=1"))
            }
            try {
                ranks.forEachIndexed { r, c -> c.awaitOk(600).also { println("rank $r: " + it.lines().first { l -> l.startsWith("counters") }) } }
            } finally {
                ranks.forEach(ChildJvm::close)
            }
        }
        dir.toFile().deleteRecursively()
    }

    test("killing one host's leader mid-allreduce fails every other rank's hierarchical collective with an error, on both hosts, no hang") {
        val dir = Files.createTempDirectory("offload-hier-kill-")
        NetnsHosts(2).use { net ->
            val size = 6
            val ranks = (0 until size).map { r ->
                net.start(net.hosts[r % 2], OffloadRankMain::class.java.name, listOf("tcp", dir.toString(), "$r", "$size", if (r == 1) "victim" else "survivor"),
                    dir.resolve("$r.log").toFile(), mapOf("BRAID_JOB_KEY" to "offload-hier-${dir.fileName}"), listOf("-Xmx192m", "-XX:TieredStopAtLevel=1"))
            }
            try {
                val started = Deadline.of("every rank to start its allreduces", Duration.ofSeconds(120))
                while ((0 until size).any { !Files.exists(dir.resolve("$it.running")) }) {
                    started.check { ranks.map { it.output() } }
                    Thread.sleep(20)
                }
                Thread.sleep(300)
                ranks[1].process.destroyForcibly()
                for (r in listOf(0, 2, 3, 4, 5)) ranks[r].awaitOk(90) shouldContain "FAILED-AS-EXPECTED"
            } finally {
                ranks.forEach(ChildJvm::close)
            }
        }
        dir.toFile().deleteRecursively()
    }
})
