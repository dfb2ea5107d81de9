package braid.collectives

import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * Real processes, one JVM per rank, each running a whole matrix of collectives (so a group size costs one set of JVM
 * starts, not one per case), over shm, tcp on loopback and the link.
 */
class CollectivesMultiProcessIT :
    FunSpec({
        fun start(
            provider: String,
            dir: File,
            rank: Int,
            size: Int,
            mode: String,
            env: Map<String, String> = emptyMap(),
        ) =
            ChildProcess.jvm(RankMain::class.java.name, provider, dir.path, "$rank", "$size", mode)
                .name("rank $rank ($provider, $size ranks)")
                .jvmArgs("-Xmx192m", "-XX:TieredStopAtLevel=1")
                .env(mapOf("BRAID_TCP_IFACE" to "lo", "BRAID_JOB_KEY" to "coll-it-${dir.name}") + env)
                .output(File(dir, "$rank.log"))
                .start()

        fun runRanks(
            provider: String,
            size: Int,
            mode: String,
            seconds: Long,
            env: (Int) -> Map<String, String> = { emptyMap() },
        ): List<String> {
            val dir = Files.createTempDirectory("coll-$provider-$size-").toFile()
            val procs = (0 until size).map { start(provider, dir, it, size, mode, env(it)) }
            try {
                val deadline =
                    Deadline.of("$size $provider ranks running '$mode' to finish", Duration.ofSeconds(seconds))
                return procs.map { it.awaitOk(deadline) }
            } finally {
                procs.forEach { it.close() }
                dir.deleteRecursively()
            }
        }

        test(
            "BRAID_COLL_ALLREDUCE=ring set on one process only fails the join on every process with an error naming both tunings, no hang"
        ) {
            val logs =
                runRanks("shm", 3, "tuning-mismatch", 180) {
                    if (it == 2) mapOf("BRAID_COLL_ALLREDUCE" to "ring") else emptyMap()
                }
            for (out in logs) out shouldContain "JOIN-REFUSED"
        }

        for (size in 1..9) {
            test("every operation × datatype × reduction on $size shm processes matches the sequential reference") {
                runRanks("shm", size, if (size in listOf(3, 4, 5, 7, 9)) "matrix" else "quick", 600)
            }
        }
        for (provider in listOf("tcp", "link")) for (size in listOf(2, 3, 4, 5, 8, 9)) {
            test("every operation on $size $provider processes matches the sequential reference") {
                runRanks(provider, size, "quick", 600)
            }
        }

        for (provider in listOf("shm", "tcp")) {
            test("a process killed mid-allreduce fails the others' collectives with an error over $provider, no hang") {
                val dir = Files.createTempDirectory("coll-kill-$provider-").toFile()
                val procs = (0 until 3).map { start(provider, dir, it, 3, if (it == 1) "victim" else "survivor") }
                try {
                    val inFlight = Deadline.of("all three ranks to have an allreduce in flight", Duration.ofSeconds(60))
                    procs.forEach { it.awaitOutput(RankMain.IN_FLIGHT, inFlight) }
                    procs[1].kill()
                    for (r in listOf(0, 2)) {
                        val status = procs[r].awaitExit(Duration.ofSeconds(60))
                        val out = procs[r].output()
                        out shouldContain "FAILED-AS-EXPECTED"
                        check(status == 0) { "survivor $r exited $status:\n$out" }
                    }
                } finally {
                    procs.forEach { it.close() }
                    dir.deleteRecursively()
                }
            }
        }
    })
