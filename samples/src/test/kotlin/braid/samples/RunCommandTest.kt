package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith

/**
 * `braid run` through the `braid` command with real processes (`sh`): the command's own options pass through, output
 * comes back rank-prefixed, the job's exit status is the command's, and bad command lines are usage errors. The Braid
 * bootstrap under it is exercised by mpi-shim's LaunchersIT (the same launcher, JobLauncher).
 */
class RunCommandTest :
    FunSpec({
        test("every rank's output comes back on its stream prefixed with its rank, with the PMI variables set") {
            val r = braid("run", "-n", "3", "sh", "-c", "echo out \$PMI_ID of \$PMI_SIZE; echo err \$PMI_RANK >&2")
            r.status shouldBe 0
            r.out.lines().filter { it.isNotEmpty() } shouldContainExactlyInAnyOrder
                listOf("[0] out 0 of 3", "[1] out 1 of 3", "[2] out 2 of 3")
            r.err.lines().filter { it.isNotEmpty() } shouldContainExactlyInAnyOrder
                listOf("[0] err 0", "[1] err 1", "[2] err 2")
        }

        test("a rank exiting with a non-zero code ends the job with that code and kills the ranks still running") {
            val r =
                braid("run", "-n", "3", "--", "sh", "-c", "if [ \$PMI_ID = 2 ]; then exit 5; else exec sleep 60; fi")
            r.status shouldBe 5
            r.err shouldContain "braid run: rank 2"
            r.err shouldContain "exited with code 5; ending the job"
        }

        test(
            "options after the command belong to the command; -n is required; -n 0 and a missing command are usage errors"
        ) {
            braid("run", "-n2", "sh", "-c", "exit 0", "-n", "9").status shouldBe 0
            listOf(
                    arrayOf("run", "sh") to "give the number of ranks with -n N",
                    arrayOf("run", "-n", "0", "sh") to "out of range",
                    arrayOf("run", "-n", "2") to "no command to run",
                    arrayOf("run", "-x", "sh") to "unknown option '-x'",
                )
                .forEach { (args, message) ->
                    val r = braid(*args)
                    r.status shouldBe 2
                    r.err shouldContain message
                    r.err shouldContain "Usage: braid run"
                }
        }

        test("a command that cannot be started fails with status 1 naming it") {
            val r = braid("run", "-n", "1", "/nonexistent/braid-no-such-program")
            r.status shouldBe 1
            r.err shouldContain "cannot start rank 0 (/nonexistent/braid-no-such-program): not an executable file"
            withClue("the prefix is printed once: ${r.err}") {
                r.err.lines().first() shouldStartWith "braid run: cannot start rank 0"
            }
        }
    })
