package braid.samples

import braid.core.IdleKind
import braid.core.ProgressModel
import braid.dsl.LimitsSpec
import braid.dsl.TopologyFiles
import braid.dsl.topology
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths

/**
 * The example topology files in samples/config: each parses, survives a round trip, and means what its comments say.
 */
class SampleConfigsTest :
    FunSpec({
        val dir: Path = Paths.get("config")
        fun read(name: String) = TopologyFiles.read(dir.resolve(name))

        test("every example file parses and round-trips through JSON and HOCON") {
            val files = Files.list(dir).use { s -> s.map { it.fileName.toString() }.sorted().toList() }
            files shouldContainAll
                listOf("local.conf", "cluster.json", "optional-rail.conf", "fallback.conf", "tcp-only.json")
            for (name in files) {
                val spec = read(name)
                for (format in TopologyFiles.Format.values()) {
                    withClue("$name as $format") {
                        TopologyFiles.parse(TopologyFiles.encode(spec, format), format) shouldBe spec
                    }
                }
            }
        }

        test("local.conf is the same spec as its DSL form") {
            read("local.conf") shouldBe
                topology {
                    environment = emptyMap()
                    link {
                        name = "local"
                        shm {
                            eagerSize = 16 shl 10
                            ringCapacity = 4 shl 20
                        }
                        rail("net") {
                            provider = "tcp"
                            domain = "lo"
                            injectSize = 2048
                        }
                        unexpectedLimit = 65536
                    }
                    progress {
                        model = ProgressModel.MANUAL
                        idle { kind = IdleKind.BACKOFF }
                    }
                }
        }

        test("the other examples: alternatives in order, an optional rail, a tcp-only link, automatic progress") {
            read("cluster.json").let {
                it.links.map { l -> l.name } shouldBe listOf("shm+tcp:eth0", "shm+tcp")
                it.progress.model shouldBe ProgressModel.AUTO
                it.jobKey!!.env shouldBe "BRAID_JOB_KEY"
            }
            read("optional-rail.conf").links.single().rail("cxi0")!!.optional shouldBe true
            read("fallback.conf").links.map { it.linkString } shouldBe listOf("shm+cxi:cxi0", "shm+tcp:lo")
            read("tcp-only.json").links.single().let {
                it.rails.single().limits shouldBe LimitsSpec(eagerSize = 8192, ringCapacity = 256 shl 10)
                it.limits.unexpectedLimit shouldBe 1024
            }
        }

        test(
            "the README's HOCON block is samples/config/local.conf, and no sample parks for less than the default 1 ms"
        ) {
            val readme = Files.readString(Paths.get("../README.md"))
            val local = Files.readString(dir.resolve("local.conf"))
            withClue("README.md must show samples/config/local.conf verbatim in a ```hocon block") {
                readme.contains("```hocon\n$local```") shouldBe true
            }
            Files.list(dir)
                .use { s -> s.toList() }
                .forEach { f ->
                    withClue(f.fileName) {
                        (read(f.fileName.toString()).progress.idle.maxParkNanos >= 1_000_000) shouldBe true
                    }
                }
        }
    })
