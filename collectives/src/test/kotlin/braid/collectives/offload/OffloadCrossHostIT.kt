package braid.collectives.offload

import braid.collectives.RankMain
import braid.it.NetnsHosts
import braid.it.NetnsUsable
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration

/**
 * The hierarchical tests: 2 hosts in network namespaces ([NetnsHosts]: each host its own network stack and
 * `BRAID_HOST_ID`; /dev/shm is shared, as on one machine), tcp as the main provider. 3 processes on each with ranks
 * alternating hosts (0, 2, 4 on one; 1, 3, 5 on the other), so each host's ranks are not contiguous; and uneven hosts
 * of 2 and 3. Every rank checks its results ([OffloadRankMain]'s `hier`) and its counters: the segment of its host
 * carried exactly the intra-host phases, and only the two leaders' endpoints sent or received messages. Needs root and
 * iproute2 (skipped, saying so, without; `BRAID_REQUIRE_NETNS=1` makes it fail).
 */
@EnabledIf(NetnsUsable::class)
class OffloadCrossHostIT :
    FunSpec({
        /** Runs `hier` on [size] ranks, rank r on host [hostOf] (r); every rank checks its results and counters. */
        fun hier(size: Int, hostOf: (Int) -> Int) {
            val dir = Files.createTempDirectory("offload-hier-")
            NetnsHosts(2).use { net ->
                val ranks =
                    (0 until size).map { r ->
                        net.start(
                            net.hosts[hostOf(r)],
                            OffloadRankMain::class.java.name,
                            listOf("tcp", dir.toString(), "$r", "$size", "hier"),
                            dir.resolve("$r.log").toFile(),
                            mapOf("BRAID_JOB_KEY" to "offload-hier-${dir.fileName}"),
                            listOf("-Xmx192m", "-XX:TieredStopAtLevel=1"),
                        )
                    }
                try {
                    ranks.forEachIndexed { r, c ->
                        c.awaitOk(Duration.ofSeconds(600)).also {
                            println("rank $r: " + it.lines().first { l -> l.startsWith("counters") })
                        }
                    }
                } finally {
                    ranks.forEach(ChildProcess::close)
                }
            }
            dir.toFile().deleteRecursively()
        }

        test(
            "allreduce, barrier, broadcast, reduce and allgather on 2 hosts × 3 processes (ranks alternating hosts) run hierarchically: the offload inside each host, tcp between the leaders"
        ) {
            hier(6) { it % 2 }
        }

        test(
            "uneven hosts of 2 and 3 processes: reduce to every root (leaders and not) and allgather with per-host counts match the reference, the segments carried the intra-host part"
        ) {
            hier(5) { if (it < 2) 0 else 1 }
        }

        test(
            "killing one host's leader mid-allreduce fails every other rank's hierarchical collective with an error, on both hosts, no hang"
        ) {
            val dir = Files.createTempDirectory("offload-hier-kill-")
            NetnsHosts(2).use { net ->
                val size = 6
                val ranks =
                    (0 until size).map { r ->
                        net.start(
                            net.hosts[r % 2],
                            OffloadRankMain::class.java.name,
                            listOf("tcp", dir.toString(), "$r", "$size", if (r == 1) "victim" else "survivor"),
                            dir.resolve("$r.log").toFile(),
                            mapOf("BRAID_JOB_KEY" to "offload-hier-${dir.fileName}"),
                            listOf("-Xmx192m", "-XX:TieredStopAtLevel=1"),
                        )
                    }
                try {
                    val inFlight = Deadline.of("every rank to have an allreduce in flight", Duration.ofSeconds(120))
                    ranks.forEach { it.awaitOutput(RankMain.IN_FLIGHT, inFlight) }
                    ranks[1].kill()
                    for (r in listOf(0, 2, 3, 4, 5)) ranks[r].awaitOk(Duration.ofSeconds(90)) shouldContain
                        "FAILED-AS-EXPECTED"
                } finally {
                    ranks.forEach(ChildProcess::close)
                }
            }
            dir.toFile().deleteRecursively()
        }
    })
