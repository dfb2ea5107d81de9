package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith

/**
 * `braid run` through the `braid` command with real processes (`sh`): the command's own options pass through, output
 * comes back as the ranks print it (rank-prefixed with `-l`), the job's exit status is the command's, the options of
 * `mpirun` that scripts rely on work, and bad command lines are usage errors. The Braid bootstrap under it is exercised
 * by mpi-shim's LaunchersIT (the same launcher, JobLauncher).
 */
class RunCommandTest :
    FunSpec({
        test("every rank's output comes back on its stream prefixed with its rank, with the PMI variables set") {
            val r =
                braid("run", "-l", "-n", "3", "sh", "-c", "echo out \$PMI_ID of \$PMI_SIZE; echo err \$PMI_RANK >&2")
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

        test("without -l the output passes through untagged and unchanged, a last line without a newline included") {
            val r =
                braid(
                    "run",
                    "-np",
                    "3",
                    "sh",
                    "-c",
                    "printf 'out %s of %s\\n' \$PMI_ID \$PMI_SIZE; printf 'no-newline' >&2",
                )
            r.status shouldBe 0
            r.out.lines().filter { it.isNotEmpty() } shouldContainExactlyInAnyOrder
                listOf("out 0 of 3", "out 1 of 3", "out 2 of 3")
            r.err shouldBe "no-newline".repeat(3)
        }

        test("--tag-output is -l; lines of several ranks never interleave mid-line") {
            val line = "x".repeat(5000)
            val r =
                braid("run", "--tag-output", "-n", "4", "sh", "-c", "for i in 1 2 3 4 5; do echo \${PMI_ID}$line; done")
            r.status shouldBe 0
            val lines = r.out.lines().filter { it.isNotEmpty() }
            lines.size shouldBe 20
            for (l in lines) {
                val rank = l.substringAfter('[').substringBefore(']')
                l shouldBe "[$rank] $rank$line"
            }
        }

        test("-np works as under mpirun; --oversubscribe and --allow-run-as-root are accepted") {
            val r = braid("run", "--allow-run-as-root", "--oversubscribe", "-np", "2", "sh", "-c", "echo \$PMI_SIZE")
            r.status shouldBe 0
            r.out shouldBe "2\n2\n"
        }

        test("the first failing rank's exit code is the job's, untagged output still passing through") {
            val r = braid("run", "-np", "2", "sh", "-c", "echo ran \$PMI_ID; if [ \$PMI_ID = 1 ]; then exit 42; fi")
            r.status shouldBe 42
            r.err shouldContain "braid run: rank 1"
            r.out.lines() shouldContain "ran 1"
        }

        test("--help lists every option run accepts") {
            val r = braid("run", "--help")
            r.status shouldBe 0
            for (option in
                listOf(
                    "-n, --np <ranks>",
                    "-np",
                    "-l, --tag-output",
                    "--oversubscribe",
                    "--allow-run-as-root",
                    "-h, --help",
                )) r.out shouldContain option
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
