package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File
import java.util.concurrent.TimeUnit

/**
 * Every script under `bench/` answers `--help` and `-h` with its usage (its leading comment, printed by
 * `bench/usage.sh`) and exits 0 at once, instead of building or starting the benchmark.
 */
class BenchScriptsTest :
    FunSpec({
        val bench = File("../bench")
        val scripts = bench.listFiles { f -> f.name.endsWith(".sh") && f.name != "usage.sh" }!!.sortedBy { it.name }

        test("bench/ holds the scripts") {
            withClue("scripts in ${bench.absolutePath}") { (scripts.size >= 10) shouldBe true }
        }

        for (flag in listOf("--help", "-h")) {
            test("every bench script prints its usage for $flag and exits 0 without starting anything") {
                for (script in scripts) {
                    val p = ProcessBuilder("bash", script.path, flag).redirectErrorStream(true).start()
                    val finished = p.waitFor(20, TimeUnit.SECONDS)
                    if (!finished) p.destroyForcibly()
                    val out = p.inputStream.bufferedReader().readText()
                    withClue("bench/${script.name} $flag: $out") {
                        finished shouldBe true
                        p.exitValue() shouldBe 0
                        out shouldContain "Usage: bench/${script.name}"
                    }
                }
            }
        }
    })
