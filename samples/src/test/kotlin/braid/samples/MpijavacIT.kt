package braid.samples

import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldEndWith
import java.io.File
import java.nio.file.Files
import java.time.Duration

/**
 * `bin/mpijavac`, as Open MPI's `mpijavac` is used: it compiles a Java MPI program against braid.jar, and the classes
 * run under `bin/braid run -n 2` with the same jar on the class path.
 */
class MpijavacIT :
    FunSpec({
        val dir = Files.createTempDirectory("braid-mpijavac").toFile()
        afterSpec { dir.deleteRecursively() }

        /**
         * Compiles [source] with bin/mpijavac and runs its class [main] under `bin/braid run -n 2`; returns the output.
         */
        fun compileAndRun(source: File, main: String, classes: File): String {
            val (javac, log) = mpijavac("-d", classes.path, source.path)
            withClue(log) { javac shouldBe 0 }
            File(classes, "$main.class").isFile shouldBe true
            return ChildProcess.command(
                    File(SOURCE_ROOT, "bin/braid").path,
                    "run",
                    "-n",
                    "2",
                    ChildProcess.java(),
                    "-Xmx128m",
                    "-cp",
                    "${BRAID_JAR.path}${File.pathSeparator}${classes.path}",
                    main,
                )
                .name("braid run -n 2 $main")
                .withoutEnv { it.startsWith("BRAID_") || it.startsWith("PMI") }
                .start()
                .use { job ->
                    val code = job.awaitExit(Duration.ofSeconds(180))
                    val out = job.output()
                    withClue(out) { code shouldBe 0 }
                    out
                }
        }

        test("bin/mpijavac compiles the README's RingAllreduce, which runs under bin/braid run -n 2") {
            val out = compileAndRun(readmeRingAllreduce(File(dir, "src")), "RingAllreduce", File(dir, "classes"))
            withClue(out) {
                out shouldContain "rank 0 of 2: got 1 from 1, sum 3.0, strided 2 3"
                out shouldContain "rank 1 of 2: got 0 from 0, sum 3.0, strided 2 0"
            }
        }

        test("bin/mpijavac compiles a program written for Open MPI's Java bindings, unchanged, and it runs") {
            val out = compileAndRun(readmeOmpiRing(File(dir, "ompi-src")), "Ring", File(dir, "ompi-classes"))
            withClue(out) {
                out shouldContain "rank 0 of 2: got 1 and 10, sum 1"
                out shouldContain "rank 1 of 2: got 0 and 0, sum 1"
            }
        }

        test("bin/mpijavac keeps a class path given with -cp and adds braid.jar after it; --showme runs nothing") {
            val (code, out) = mpijavac("--showme", "-cp", "/opt/lib/a.jar", "-d", "out", "Hello.java")
            code shouldBe 0
            out.trim() shouldEndWith "javac -cp /opt/lib/a.jar:${BRAID_JAR.path} -d out Hello.java"
        }

        test("bin/mpijavac --help lists its options; a compile error is javac's exit status") {
            val (code, help) = mpijavac("--help")
            code shouldBe 0
            for (option in listOf("--showme", "--verbose", "-h, --help", "-cp")) help shouldContain option
            val bad = File(dir, "Bad.java").apply { writeText("class Bad { int x = ; }\n") }
            val (status, log) = mpijavac("-d", File(dir, "bad").path, bad.path)
            withClue(log) { (status != 0) shouldBe true }
            log shouldContain "Bad.java"
        }
    })
