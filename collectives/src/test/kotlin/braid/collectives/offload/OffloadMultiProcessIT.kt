package braid.collectives.offload

import braid.collectives.RankMain
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * The offload provider between real processes on this host, one JVM per rank, paired with shm or tcp as the main
 * provider: results against the sequential reference, the counters, and a killed local rank.
 */
class OffloadMultiProcessIT :
    FunSpec({
        fun start(provider: String, dir: File, rank: Int, size: Int, mode: String): ChildProcess =
            ChildProcess.jvm(OffloadRankMain::class.java.name, provider, dir.path, "$rank", "$size", mode)
                .name("rank $rank")
                .env(mapOf("BRAID_TCP_IFACE" to "lo", "BRAID_JOB_KEY" to "offload-it-${dir.name}"))
                .output(File(dir, "$rank.log"))
                .jvmArgs("-Xmx192m", "-XX:TieredStopAtLevel=1")
                .start()

        for ((provider, size) in listOf("shm" to 2, "shm" to 3, "shm" to 4, "tcp" to 3)) {
            test(
                "every operation the offload claims on $size processes of one host (main provider $provider) matches the sequential reference, carried by the segment"
            ) {
                val dir = Files.createTempDirectory("offload-$provider-$size-").toFile()
                val ranks = (0 until size).map { start(provider, dir, it, size, "matrix") }
                try {
                    ranks.forEachIndexed { r, c ->
                        c.awaitOk(Duration.ofSeconds(600)).also {
                            println("rank $r: " + it.lines().first { l -> l.startsWith("counters") })
                        }
                    }
                } finally {
                    ranks.forEach { it.close() }
                    dir.deleteRecursively()
                }
            }
        }

        /** Runs [mode] on ranks made into hosts by `BRAID_HOST_ID` (rank r on host [hostOf] [r]), tcp on loopback. */
        fun onHosts(hostOf: IntArray, mode: String) {
            val dir = Files.createTempDirectory("offload-hosts-").toFile()
            val ranks =
                hostOf.indices.map { r ->
                    ChildProcess.jvm(OffloadRankMain::class.java.name, "tcp", dir.path, "$r", "${hostOf.size}", mode)
                        .name("rank $r")
                        .env(mapOf("BRAID_TCP_IFACE" to "lo", "BRAID_JOB_KEY" to "offload-hier-${dir.name}"))
                        .env("BRAID_HOST_ID", "test-host-${hostOf[r]}-${dir.name}")
                        .output(File(dir, "$r.log"))
                        .jvmArgs("-Xmx192m", "-XX:TieredStopAtLevel=1")
                        .start()
                }
            try {
                ranks.forEachIndexed { r, c ->
                    c.awaitOk(Duration.ofSeconds(600)).also {
                        println("rank $r: " + it.lines().first { l -> l.startsWith("counters") || l.startsWith("OK") })
                    }
                }
            } finally {
                ranks.forEach { it.close() }
                dir.deleteRecursively()
            }
        }

        test(
            "a host of one process beside a host of three (BRAID_HOST_ID, tcp on loopback): every hierarchical operation matches the reference; the lone rank leads its host with no segment"
        ) {
            onHosts(intArrayOf(1, 1, 0, 1), "hier") // rank 2 alone; ranks 0, 1 and 3 share a host and its segment
        }

        test(
            "a host of 2 processes under minMembers 3 beside a host of 1 leaves the group to the main provider, and every operation still matches the reference"
        ) {
            onHosts(intArrayOf(0, 0, 1), "too-small")
        }

        for (provider in listOf("shm", "tcp")) {
            test(
                "a local process killed mid-allreduce fails the others' offloaded collectives with an error naming it, no hang (main provider $provider)"
            ) {
                val dir = Files.createTempDirectory("offload-kill-$provider-").toFile()
                val ranks = (0 until 3).map { start(provider, dir, it, 3, if (it == 1) "victim" else "survivor") }
                try {
                    val inFlight = Deadline.of("every rank to have an allreduce in flight", Duration.ofSeconds(90))
                    ranks.forEach { it.awaitOutput(RankMain.IN_FLIGHT, inFlight) }
                    ranks[1].kill()
                    for (r in listOf(0, 2)) {
                        val out = ranks[r].awaitOk(Duration.ofSeconds(60))
                        out shouldContain "FAILED-AS-EXPECTED"
                        out shouldContain "group rank 1"
                    }
                } finally {
                    ranks.forEach { it.close() }
                    dir.deleteRecursively()
                }
            }
        }
    })
