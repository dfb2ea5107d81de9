package braid.dsl

import braid.core.IdleKind
import braid.core.ProgressModel
import braid.dsl.TopologyFiles.Format
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.nio.file.Files

/** JSON and HOCON files: round trips, and errors that name the file, the line, the path and a fix. */
class TopologyFilesTest :
    FunSpec({
        fun spec(block: TopologyScope.() -> Unit) = topology {
            environment = emptyMap()
            block()
        }

        val shapes =
            mapOf(
                "the default" to spec {},
                "one link string" to spec { link("shm+tcp:lo") },
                "several links" to spec { links("shm+tcp:lo|tcp|shm") },
                "everything set" to
                    spec {
                        link {
                            name = "fast"
                            shm {
                                eagerSize = 8192
                                ringCapacity = 1 shl 20
                            }
                            rail("nic") {
                                provider = "tcp"
                                domain = "lo"
                                weight = 2.5
                                optional = true
                                injectSize = 512
                                eagerSize = 4096
                            }
                            unexpectedLimit = 4096
                            policy = RailPolicy.LOCALITY
                        }
                        link("tcp:lo")
                        progress {
                            model = ProgressModel.AUTO
                            idle {
                                kind = IdleKind.BACKOFF
                                maxSpins = 10
                                maxYields = 20
                                minParkNanos = 2000
                                maxParkNanos = 300_000
                            }
                        }
                        jobKey { env = "MY_JOB_KEY" }
                    },
                "a key from a file" to spec { jobKey { file = "/run/braid/key" } },
                "a literal key" to spec { jobKey { value = "k3y with spaces and \"quotes\"" } },
            )

        for ((shape, s) in shapes) {
            test("round trip of $shape: DSL → spec → JSON → spec and → HOCON → spec are equal") {
                for (format in Format.values()) {
                    val text = TopologyFiles.encode(s, format)
                    withClue("$format:\n$text") { TopologyFiles.parse(text, format) shouldBe s }
                }
            }
        }

        test("files are read and written by their extension") {
            val dir = Files.createTempDirectory("braid-files")
            val s = shapes.getValue("everything set")
            for (name in listOf("t.json", "t.conf", "t.hocon")) {
                val path = dir.resolve(name)
                TopologyFiles.write(s, path)
                TopologyFiles.read(path) shouldBe s
            }
            Files.readString(dir.resolve("t.json")) shouldContain "\"name\": \"fast\""
            shouldThrow<ConfigFileException> { TopologyFiles.read(dir.resolve("t.yaml")) }.message!! shouldContain
                "*.json"
            shouldThrow<ConfigFileException> { TopologyFiles.read(dir.resolve("missing.json")) }.message!! shouldContain
                "cannot read the file"
        }

        test("a link that is just its link string is written as that string") {
            val text =
                TopologyFiles.encode(
                    spec {
                        links("shm+tcp:lo|tcp")
                        link {
                            name = "mine"
                            shm()
                        }
                    },
                    Format.JSON,
                )
            text shouldContain "\"shm+tcp:lo\","
            text shouldContain "\"name\": \"mine\""
            TopologyFiles.encode(spec { link("shm+tcp:lo") }, Format.HOCON) shouldContain "\"shm+tcp:lo\""
        }

        test("files may write byte counts as sizes and enum constants in any case") {
            val s =
                TopologyFiles.parse(
                    """
                    links = [ { name = x, rails = [ { name = tcp, provider = tcp, limits { injectSize = "1 KiB", eagerSize = 16k, ringCapacity = "4MiB" } } ] } ]
                    progress { model = auto, idle { kind = spin } }
                    """
                        .trimIndent(),
                    Format.HOCON,
                )
            s.links[0].rails[0].limits shouldBe LimitsSpec(1024, 16384, 4 shl 20)
            s.progress.model shouldBe ProgressModel.AUTO
            s.progress.idle.kind shouldBe IdleKind.SPIN
            TopologyFiles.parse(
                    """{"links": [{"name": "x", "rails": [{"name": "shm", "provider": "shm", "limits": {"ringCapacity": "1m"}}]}]}""",
                    Format.JSON,
                )
                .links[0]
                .rails[0]
                .limits
                .ringCapacity shouldBe (1 shl 20)
        }

        test("HOCON substitutions may read the environment") {
            val s =
                TopologyFiles.parse(
                    "jobKey { env = BRAID_TEST_UNSET_VARIABLE, env = \${?BRAID_TEST_UNSET_VARIABLE_2} }\n",
                    Format.HOCON,
                )
            s.jobKey shouldBe JobKeySpec(env = "BRAID_TEST_UNSET_VARIABLE")
        }

        fun refused(
            text: String,
            format: Format = Format.HOCON,
            origin: String = "topology.conf",
        ): ConfigFileException = shouldThrow<ConfigFileException> { TopologyFiles.parse(text, format, origin) }

        test("an unknown key is an error with its line, path and a did-you-mean; interface is taken for domain") {
            val e =
                refused(
                    """
                    links = [
                      "shm+tcp",
                      { name = x
                        rails = [ { name = a, provider = tcp, wieght = 2 },
                                  { name = b, provider = shm, interface = eth0 } ] }
                    ]
                    progres { model = AUTO }
                    """
                        .trimIndent()
                )
            e.file shouldBe "topology.conf"
            e.problems.map { Triple(it.line, it.path, it.hint) } shouldBe
                listOf(
                    Triple(
                        4,
                        "links[1].rails[0].wieght",
                        "did you mean 'weight'? (keys here: name, provider, domain, weight, optional, limits)",
                    ),
                    Triple(
                        5,
                        "links[1].rails[1].interface",
                        "did you mean 'domain'? (keys here: name, provider, domain, weight, optional, limits)",
                    ),
                    Triple(7, "progres", "did you mean 'progress'? (keys here: links, progress, jobKey, offloads)"),
                )
            e.message!! shouldContain
                "topology.conf:4: links[1].rails[0].wieght: unknown key 'wieght'; did you mean 'weight'?"
        }

        test(
            "a value of the wrong type, a missing key, a null and an out-of-range number are errors with line and path"
        ) {
            val e =
                refused(
                    """
                    {
                      "links": [
                        {"name": "x", "rails": [{"name": "a", "provider": "tcp", "weight": "heavy"}]},
                        {"name": "y", "rails": [{"provider": "tcp"}]},
                        {"name": "z", "rails": [{"name": "a", "provider": null}], "limits": {"injectSize": 99999999999}}
                      ],
                      "progress": {"model": 1}
                    }
                    """
                        .trimIndent(),
                    Format.JSON,
                    "t.json",
                )
            e.problems.map { "${it.line} ${it.path}: ${it.message}" } shouldBe
                listOf(
                    "3 links[0].rails[0].weight: 'weight': expected a number, found the string \"heavy\"",
                    "4 links[1].rails[0].name: missing key 'name'",
                    "5 links[2].limits.injectSize: 'injectSize': 99999999999 is out of range",
                    "5 links[2].rails[0].provider: 'provider' is null",
                    "7 progress.model: 'model': expected one of UNSPEC, MANUAL, AUTO, found number 1",
                )
        }

        test("a broken rule in a file is reported with the line of the value that breaks it") {
            val e =
                refused(
                    """
                    links = [
                      { name = "shm+tcp"
                        rails = [ { name = shm, provider = shm },
                                  { name = tcp1, provider = tcp, weight = -1 } ] }
                    ]
                    """
                        .trimIndent()
                )
            val p = e.problems.single()
            p.line shouldBe 4
            p.path shouldBe "links[0].rails[1].weight"
            e.message!! shouldContain
                "topology.conf:4: links[0].rails[1].weight: rail 'tcp1' in link 'shm+tcp': weight -1 must be > 0; set a positive relative weight"
        }

        test("a malformed link string in a file is reported at its line") {
            val e = refused("links = [\n  \"shm+tcp\",\n  \"shm+\"\n]\n")
            e.problems.single().let {
                it.line shouldBe 3
                it.path shouldBe "links[1]"
                it.message shouldContain "empty rail"
            }
        }

        test("syntax errors name the line; empty files, non-objects and deep nesting are refused") {
            refused("{\n  \"links\": [\"shm+tcp\",]\n}", Format.JSON, "t.json").problems.single().line shouldBe 2
            refused("links = [ \"shm\"\nprogress {", Format.HOCON).problems.single().line shouldBe 2
            refused("  \n").message!! shouldContain "the file is empty"
            refused("[1, 2]", Format.JSON).problems.single().message.isNotEmpty() shouldBe true
            refused("{\"links\": " + "[".repeat(100) + "]".repeat(100) + "}", Format.JSON).message!! shouldContain
                "nesting deeper than 32"
            refused("links = 5").problems.single().message shouldContain "expected a list"
        }

        test("a literal job key is never in an error message") {
            val e = refused("jobKey { value = hunter2, env = X }")
            e.message!! shouldNotContain "hunter2"
        }
    })
