package braid.mpi.it

import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.File
import java.time.Duration
import kotlin.io.path.createTempDirectory

/**
 * Starts [n] child JVMs running [MpiRankMain] with [scenario] over a fresh [braid.bootstrap.FileBootstrap] directory.
 */
private class Job(n: Int, scenario: String) : AutoCloseable {
    val dir: File = createTempDirectory("braid-mpi-it").toFile()
    val logs = List(n) { File(dir, "rank$it.log") }
    val procs: List<ChildProcess> =
        List(n) { r ->
            ChildProcess.jvm(MpiRankMain::class.java.name, dir.path, "$r", "$n", scenario)
                .name("rank $r")
                .output(logs[r])
                .start()
        }

    /** Each rank's exit code, failing with every log if one is still running after [seconds]. */
    fun exitCodes(seconds: Long): List<Int> {
        val deadline = Deadline.of("the ${procs.size} ranks to exit", Duration.ofSeconds(seconds))
        return procs.map { p ->
            try {
                p.awaitExit(deadline)
            } catch (e: AssertionError) {
                throw AssertionError("${e.message}\n${output()}", e)
            }
        }
    }

    fun output(): String =
        logs.mapIndexed { r, f -> "--- rank $r ---\n" + (if (f.exists()) f.readText() else "") }.joinToString("\n")

    override fun close() {
        procs.forEach { it.close() }
        dir.deleteRecursively()
    }
}

class MpiMultiProcessIT :
    FunSpec({
        test(
            "four processes: rings of eager and rendezvous messages with any-source receives, split traffic beside the parent's, ssend after probe"
        ) {
            Job(4, "semantics").use { job ->
                val codes = job.exitCodes(120)
                check(codes.all { it == 0 }) { "exit codes $codes\n${job.output()}" }
                job.logs.forEach { check("OK" in it.readText()) { job.output() } }
            }
        }

        test(
            "a rank that dies fails the receives (host and device memory) and sends naming it with MPIX_ERR_PROC_FAILED; the others go on, nothing hangs"
        ) {
            Job(3, "peer-death").use { job ->
                val codes = job.exitCodes(60)
                check(codes == listOf(0, 0, 9)) { "exit codes $codes\n${job.output()}" }
                check("failed as expected" in job.logs[0].readText() && "OK" in job.logs[1].readText()) { job.output() }
                check(job.logs[0].readText().split("failed as expected").size - 1 == 3) { job.output() }
            }
        }

        test(
            "five processes as intercommunicator groups of 2 and 3: every collective across the groups, rooted ones both ways, matches a reference"
        ) {
            Job(5, "intercomm").use { job ->
                val codes = job.exitCodes(180)
                check(codes.all { it == 0 }) { "exit codes $codes\n${job.output()}" }
                job.logs.forEach { check("OK" in it.readText()) { job.output() } }
            }
        }

        test("abort from one rank ends every rank of the job with its exit code") {
            Job(3, "abort").use { job -> job.exitCodes(60) shouldBe listOf(7, 7, 7) }
        }
    })
