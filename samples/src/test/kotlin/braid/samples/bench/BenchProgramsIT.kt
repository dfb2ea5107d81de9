package braid.samples.bench

import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * The benchmark programs in `braid.jar` beside `braid bench` (the measurements OSU has none of) run for one tiny size
 * and a few iterations, each in a child JVM started as `java -cp braid.jar CLASS ARGS` starts it, with none of the
 * caller's `BRAID_*` variables. The output is checked for its rows; no timing is asserted.
 */
class BenchProgramsIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-bench-programs-it").toFile()
        afterSpec { dir.deleteRecursively() }

        fun start(log: String, main: String, vararg args: String): ChildProcess =
            ChildProcess.jvm(main, *args)
                .name(log)
                .withoutEnv { it.startsWith("BRAID_") }
                .output(File(dir, "$log.out"))
                .errorOutput(File(dir, "$log.err"))
                .start()

        /**
         * Runs [main] with [args] to its end; its stdout, after checking that it exited 0 and printed each of [rows].
         */
        fun runs(main: String, vararg args: String, rows: List<String>) {
            val log = main.substringAfterLast('.') + args.joinToString("") { it.filter(Char::isLetterOrDigit) }
            val child = start(log, main, *args)
            val status = child.awaitExit(Duration.ofSeconds(180))
            withClue("stdout:\n${child.output()}\nstderr:\n${child.errorOutput()}") {
                status shouldBe 0
                for (row in rows) child.output() shouldContain row
            }
        }

        /** Two ranks of a `CLASS DIR RANK ARGS…` program on a file bootstrap in a fresh directory; rank 0's stdout. */
        fun twoRanks(main: String, vararg args: String, rows: List<String>) {
            val boot = Files.createTempDirectory(dir.toPath(), "boot").toString()
            val name = main.substringAfterLast('.')
            val one = start("$name-1", main, boot, "1", *args)
            try {
                runs(main, boot, "0", *args, rows = rows)
                withClue("rank 1:\n${one.tail()}") { one.awaitExit(Duration.ofSeconds(60)) shouldBe 0 }
            } finally {
                one.close()
            }
        }

        test("HmemBench: host and device ping-pong, then a 1 MiB device-to-device stream") {
            runs("braid.bench.HmemBench", "50", "1", rows = listOf("pingpong       64 B:", "stream 1 MiB device"))
        }

        test("MpiWindowCpu: CPU ns and heap bytes per message of a window") {
            runs("braid.mpi.bench.MpiWindowCpu", "64", "20", rows = listOf("cpu 64 "))
        }

        for (kind in listOf("braid", "mpi", "mpi-array", "mpi-nonblocking")) {
            test("FacadeOverhead $kind: CPU ns per send and receive to itself") {
                runs("braid.mpi.ompi.bench.FacadeOverhead", kind, "64", "500", rows = listOf("overhead $kind 64 "))
            }
        }

        test("MpiOverhead: raw rail-core and braid.mpi round trips") {
            runs(
                "braid.mpi.bench.MpiOverhead",
                "64",
                "500",
                rows = listOf("overhead raw 64 ", "overhead mpi-blocking 64 "),
            )
        }

        test("MpiPingPong: bw at one size, the provider from the settings registry") {
            twoRanks("braid.mpi.bench.MpiPingPong", "bw", "64", rows = listOf("bw 64 "))
        }

        test("MpiRmaBench: every one-sided row, iterations divided by 1000") {
            twoRanks("braid.mpi.bench.MpiRmaBench", "1000", rows = listOf("put 8 ", "get 8 ", "putbw ", "fop 8 "))
        }

        test("CollBench run 2 with one pass and no warm-up time") {
            runs(
                "braid.collectives.CollBench",
                "run",
                "2",
                "1",
                "0",
                rows = listOf("allreduce 8 p2p ", "barrier 0 offload "),
            )
        }
    })
