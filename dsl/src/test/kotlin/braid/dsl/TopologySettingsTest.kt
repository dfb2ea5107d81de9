package braid.dsl

import braid.core.ParamSource
import braid.dsl.TopologyFiles.Format
import braid.provider.shm.ShmParams
import braid.provider.tcp.TcpParams
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files

/**
 * Provider parameters in a topology's link (`settings { tcp.timeout_ms = 300 }`): rail-core declares them and their
 * rules, the topology places their problems at its paths and lines, and the link it opens uses them.
 */
class TopologySettingsTest :
    FunSpec({
        fun spec(env: Map<String, String> = emptyMap(), block: TopologyScope.() -> Unit) = topology {
            environment = env
            block()
        }
        fun refused(text: String): ConfigFileException =
            shouldThrow<ConfigFileException> { TopologyFiles.parse(text, Format.HOCON, "t.conf") }

        test("a file's settings are read as provider parameters, in HOCON and JSON alike") {
            val s =
                TopologyFiles.parse(
                    "links = [ { name = l, rails = [ { name = shm, provider = shm }, { name = tcp, provider = tcp, domain = lo } ], settings { tcp.timeout_ms = 300, shm.ring_size = 64k } } ]\n",
                    Format.HOCON,
                )
            s.links.single().settings shouldBe
                mapOf("tcp" to mapOf("timeout_ms" to "300"), "shm" to mapOf("ring_size" to "64k"))
            TopologyFiles.parse(TopologyFiles.encode(s, Format.JSON), Format.JSON) shouldBe s
            TopologyFiles.parse(TopologyFiles.encode(s, Format.HOCON), Format.HOCON) shouldBe s
        }

        test(
            "a misspelt parameter and a value its rule refuses are problems at the file's path and line, with rail-core's fix"
        ) {
            refused(
                    "links = [ { name = x, rails = [ { name = shm, provider = shm } ]\n  settings {\n  tcp.timeout_msx = 300\n} } ]\n"
                )
                .problems
                .single()
                .let {
                    it.path shouldBe "links[0].settings.tcp.timeout_msx"
                    it.line shouldBe 3
                    it.message shouldBe "no parameter 'tcp.timeout_msx'"
                    it.hint!! shouldContain "did you mean 'tcp.timeout_ms'?"
                }
            refused(
                    "links = [ { name = x, rails = [ { name = shm, provider = shm } ]\n  settings {\n  tcp.timeout_ms = 5\n  shm.ring_size = 3000\n} } ]\n"
                )
                .problems
                .let { p ->
                    p.map { it.path } shouldBe
                        listOf("links[0].settings.tcp.timeout_ms", "links[0].settings.shm.ring_size")
                    p.map { it.line } shouldBe listOf(3, 4)
                    p[0].message shouldBe "setting tcp.timeout_ms '5' is below 10 ms"
                    p[0].hint shouldBe "set tcp.timeout_ms ≥ 10"
                    p[1].message shouldBe "setting shm.ring_size '3000' is not a power of two ≥ 1 KiB"
                }
        }

        test("config errors in one round: a misspelt provider with an unknown key, and with a rule problem") {
            refused("links = [ { name = x, rails = [ { name = a, provider = tpc, wieght = 1 } ] } ]\n").problems.map {
                it.path
            } shouldBe listOf("links[0].rails[0].wieght", "links[0].rails[0].provider")
            val e =
                refused(
                    "links = [\n  { name = x, rails = [ { name = a, provider = tpc, weight = -1 } ], settings { tcp.window = 1k } }\n]\n"
                )
            e.problems.map { it.path }.toSet() shouldBe
                setOf("links[0].rails[0].weight", "links[0].rails[0].provider", "links[0].settings.tcp.window")
            e.problems
                .first { it.path.endsWith("provider") }
                .let {
                    it.line shouldBe 2
                    it.hint!! shouldContain "did you mean 'tcp'?"
                }
            e.message!! shouldContain "t.conf:2: links[0].rails[0].provider: rail 'a': no provider 'tpc'"
            // A provider libfabric has but this build does not only makes its link unopenable here.
            TopologyFiles.parse("links = [\"shm+cxi:cxi0\", \"shm+tcp:lo\"]\n", Format.HOCON).links.size shouldBe 2
        }

        test(
            "precedence: the environment overrides a file's setting, the DSL overrides both; the opened link uses the result"
        ) {
            val path =
                Files.createTempDirectory("braid-dsl").resolve("t.conf").also {
                    Files.writeString(
                        it,
                        "links = [ { name = l, rails = [ { name = shm, provider = shm }, { name = tcp, provider = tcp, domain = lo } ], settings { tcp.timeout_ms = 300 } } ]\n",
                    )
                }
            spec { file(path) }.links.single().settings["tcp"]!!["timeout_ms"] shouldBe "300"
            spec(mapOf("BRAID_TCP_TIMEOUT_MS" to "700")) { file(path) }.links.single().settings["tcp"]!![
                "timeout_ms"] shouldBe "700"
            val s =
                spec(mapOf("BRAID_TCP_TIMEOUT_MS" to "700")) {
                    file(path)
                    setting(TcpParams.TIMEOUT_MS, 900L)
                    setting(ShmParams.LIVENESS_MS, 20L)
                }
            s.links.single().settings shouldBe
                mapOf("tcp" to mapOf("timeout_ms" to "900"), "shm" to mapOf("liveness_ms" to "20"))
            val info = Topology.resolve(s).info
            info.rails
                .first { it.provider == "tcp" }
                .settings
                .resolve(TcpParams.TIMEOUT_MS)
                .let {
                    it.value shouldBe 900L
                    it.source shouldBe ParamSource.FILE
                }
            info.rails.first { it.provider == "shm" }.settings[ShmParams.LIVENESS_MS] shouldBe 20L
            shouldThrow<SpecException> { spec { link("shm") { setting(TcpParams.WINDOW, 1024) } } }
                .problems
                .single()
                .path shouldBe "links[0].settings.tcp.window"
        }
    })
