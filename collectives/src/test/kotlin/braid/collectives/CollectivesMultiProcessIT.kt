package braid.collectives

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * Real processes, one JVM per rank, each running a whole matrix of collectives (so a group
 * size costs one set of JVM starts, not one per case), over shm, tcp on loopback and the link.
 */
class CollectivesMultiProcessIT : FunSpec({
    fun start(provider: String, dir: File, rank: Int, size: Int, mode: String, env: Map<String, String> = emptyMap()): Process =
        ProcessBuilder(
            ProcessHandle.current().info().command().orElse("java"), "-XX:+UseSerialGC", "-Xmx192m", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), RankMain::class.java.name, provider, dir.path, "$rank", "$size", mode,
        ).redirectErrorStream(true).redirectOutput(File(dir, "$rank.log")).also {
            it.environment()["BRAID_TCP_IFACE"] = "lo"
            it.environment()["BRAID_JOB_KEY"] = "coll-it-${dir.name}"
            it.environment().putAll(env)
        }.start()

    fun runRanks(provider: String, size: Int, mode: String, seconds: Long, env: (Int) -> Map<String, String> = { emptyMap() }): List<String> {
        val dir = Files.createTempDirectory("coll-$provider-$size-").toFile()
        val procs = (0 until size).map { start(provider, dir, it, size, mode, env(it)) }
        val logs = ArrayList<String>()
        try {
            for ((rank, p) in procs.withIndex()) {
                val log = File(dir, "$rank.log")
                if (!p.waitFor(seconds, TimeUnit.SECONDS)) error("rank $rank ($provider, $size ranks) did not finish within $seconds s:\n${log.readText()}")
                val out = log.readText()
                check(p.exitValue() == 0 && out.contains("OK")) { "rank $rank ($provider, $size ranks) exited ${p.exitValue()}:\n$out" }
                logs += out
            }
        } finally {
            procs.forEach { if (it.isAlive) it.destroyForcibly() }
            dir.deleteRecursively()
        }
        return logs
    }

    test("BRAID_COLL_ALLREDUCE=ring set on one process only fails the join on every process with an error naming both tunings, no hang") {
        val logs = runRanks("shm", 3, "tuning-mismatch", 180) { if (it == 2) mapOf("BRAID_COLL_ALLREDUCE" to "ring") else emptyMap() }
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
                val deadline = Deadline.of("all three ranks to start their allreduces", Duration.ofSeconds(60))
                while ((0 until 3).any { !File(dir, "$it.running").exists() }) {
                    deadline.check { "rank logs: ${(0 until 3).map { File(dir, "$it.log").readText() }}" }
                    Thread.sleep(20)
                }
                Thread.sleep(300)
                procs[1].destroyForcibly()
                for (r in listOf(0, 2)) {
                    check(procs[r].waitFor(60, TimeUnit.SECONDS)) { "survivor $r still running 60 s after the kill:\n${File(dir, "$r.log").readText()}" }
                    val out = File(dir, "$r.log").readText()
                    out shouldContain "FAILED-AS-EXPECTED"
                    check(procs[r].exitValue() == 0) { "survivor $r exited ${procs[r].exitValue()}:\n$out" }
                }
            } finally {
                procs.forEach { if (it.isAlive) it.destroyForcibly() }
                dir.deleteRecursively()
            }
        }
    }
})
