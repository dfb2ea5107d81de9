package braid.samples

import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.time.Duration

/**
 * `braid info` and the native rail in their own processes: libfabric is loaded once per process, so a machine without
 * it is played by pointing `BRAID_OFI_LIBRARY` at a library that does not exist.
 */
class OfiInfoIT :
    FunSpec({
        fun braid(vararg args: String, env: Map<String, String> = emptyMap()): Pair<Int, String> {
            ChildProcess.jvm(BraidCommand::class.java.name, args.toList())
                .name("braid ${args.joinToString(" ")}")
                .withoutEnv { it.startsWith("BRAID_") || it.startsWith("FI_") }
                .env(env)
                .start()
                .use { p ->
                    val status = p.awaitExit(Duration.ofSeconds(60))
                    return status to p.output()
                }
        }

        test("without libfabric, braid info -p ofi says to install libfabric1 and the rest of Braid works") {
            val missing = mapOf("BRAID_OFI_LIBRARY" to "/nonexistent/libfabric.so.1")
            val (status, out) = braid("info", "-p", "ofi", env = missing)
            withClue(out) {
                status shouldNotBe 0
                out shouldContain "install libfabric1"
                out shouldNotContain "signal"
            }
            val (shmStatus, shmOut) = braid("info", "-p", "shm", env = missing)
            withClue(shmOut) {
                shmStatus shouldBe 0
                shmOut shouldContain "provider: shm"
            }
        }

        test("braid info -p ofi:shm -v prints libfabric's own fi_info -v text for the native entry, then Braid's") {
            val (status, out) = braid("info", "-p", "ofi:shm", "-v")
            withClue(out) {
                status shouldBe 0
                out shouldContain "fi_info:\n    caps: ["
                out shouldContain "prov_name: shm"
                out shouldContain "fi_domain_attr:"
            }
        }

        test("braid info -p ofi lists the native providers under their own names") {
            val (status, out) = braid("info", "-p", "ofi")
            withClue(out) {
                status shouldBe 0
                for (name in listOf("ofi:tcp;ofi_rxm", "ofi:shm", "ofi:udp;ofi_rxd", "ofi:sockets")) out shouldContain
                    "provider: $name\n"
            }
        }
    })
