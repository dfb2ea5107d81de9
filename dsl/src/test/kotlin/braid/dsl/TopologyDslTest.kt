package braid.dsl

import braid.core.IdleKind
import braid.core.ProgressModel
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.nio.file.Path

/** The DSL's shapes, and the precedence of its layers: file, then environment, then the DSL. */
class TopologyDslTest :
    FunSpec({
        fun spec(env: Map<String, String> = emptyMap(), block: TopologyScope.() -> Unit) = topology {
            environment = env
            block()
        }

        fun tempFile(name: String, text: String): Path =
            Files.createTempDirectory("braid-dsl").resolve(name).also { Files.writeString(it, text) }

        test("nothing said is the link provider's default, shm+tcp") {
            val s = spec {}
            s.links.map { it.name } shouldBe listOf("shm+tcp")
            s.links[0].rails.map { it.name to it.provider } shouldBe listOf("shm" to "shm", "tcp" to "tcp")
            s.progress shouldBe ProgressSpec()
            s.jobKey shouldBe null
        }

        test("link strings: several links, domains after ':', repeated providers get an index") {
            val s = spec { links("shm+tcp:lo | tcp:eth0") }
            s.links.map { it.name } shouldBe listOf("shm+tcp:lo", "tcp:eth0")
            s.links[0].rails.map { it.linkPart } shouldBe listOf("shm", "tcp:lo")
            s.links[1].policy shouldBe RailPolicy.LOCALITY
            // two inter-node rails break the locality rule, so build that link only to look at its names:
            LinkStrings.parseOne("tcp:eth0+tcp:eth1").rails.map { it.name } shouldBe listOf("tcp0", "tcp1")
        }

        test("a structured link with an optional rail and per-rail and per-link limits") {
            val link =
                spec {
                        link {
                            name = "fast"
                            shm { eagerSize = 8192 }
                            rail("nic") {
                                provider = "tcp"
                                domain = "lo"
                                weight = 3.0
                                injectSize = 1024
                                optional = true
                            }
                            unexpectedLimit = 4096
                            ringCapacity = 1 shl 20
                        }
                    }
                    .links
                    .single()
            link.name shouldBe "fast"
            link.linkString shouldBe "shm+tcp:lo"
            link.limits shouldBe LimitsSpec(ringCapacity = 1 shl 20, unexpectedLimit = 4096)
            link.rail("shm")!!.limits shouldBe LimitsSpec(eagerSize = 8192)
            link.rail("nic")!! shouldBe RailSpec("nic", "tcp", "lo", 3.0, true, LimitsSpec(injectSize = 1024))
            link.rail("nic")!!.limits.orElse(link.limits) shouldBe LimitsSpec(1024, null, 1 shl 20, 4096)
        }

        test("an unnamed structured link is named by its link string; rail() refines a rail of the link string") {
            val s = spec {
                link {
                    shm()
                    rail("tcp") { domain = "lo" }
                }
                link("shm+tcp:eth0") { rail("tcp") { injectSize = 512 } }
            }
            s.links.map { it.name } shouldBe listOf("shm+tcp:lo", "shm+tcp:eth0")
            s.links[1].rail("tcp") shouldBe RailSpec("tcp", "tcp", "eth0", limits = LimitsSpec(injectSize = 512))
        }

        test("progress and idle, and the three sources of a job key") {
            val s = spec {
                progress {
                    model = ProgressModel.AUTO
                    idle {
                        kind = IdleKind.BACKOFF
                        maxParkNanos = 50_000
                    }
                }
                jobKey { file = "/run/key" }
            }
            s.progress shouldBe
                ProgressSpec(ProgressModel.AUTO, IdleSpec(kind = IdleKind.BACKOFF, maxParkNanos = 50_000))
            s.progress.idle.toPolicy().maxParkNanos shouldBe 50_000
            s.jobKey shouldBe JobKeySpec(file = "/run/key")
            spec { jobKey { env = "K" } }.jobKey shouldBe JobKeySpec(env = "K")
            val literal = spec { jobKey { value = "hunter2" } }
            literal.jobKey!!.value shouldBe "hunter2"
            literal.toString() shouldContain "JobKeySpec(value=<set>)"
            (literal.toString().contains("hunter2")) shouldBe false
            spec { progress { idle(IdleKind.SPIN) } }.progress.idle.kind shouldBe IdleKind.SPIN
        }

        test("a malformed link string is refused where it is written") {
            shouldThrow<SpecException> { spec { link("shm++tcp") } }
                .problems
                .single()
                .let {
                    it.path shouldBe "link(\"shm++tcp\")"
                    it.message shouldContain "empty rail"
                }
            shouldThrow<SpecException> { spec { links("shm||tcp") } }.problems.single().message shouldContain
                "empty link"
            shouldThrow<SpecException> { spec { link("tcp:") } }.problems.single().message shouldBe
                "link 'tcp:': rail 'tcp:' has an empty domain name"
            shouldThrow<SpecException> { spec { link("tcp:a:b") } }.problems.single().message shouldContain
                "malformed domain"
        }

        // ## Precedence ##

        val file =
            """
            links = [ { name = "shm+tcp", rails = [ { name = shm, provider = shm }, { name = tcp, provider = tcp, domain = lo, limits { eagerSize = 8192, injectSize = 1024 } } ] } ]
            progress { model = AUTO }
            jobKey { value = "from-the-file" }
            """
                .trimIndent()

        test("precedence: the file is the base, the environment overrides it, the DSL overrides both") {
            val path = tempFile("t.conf", file)
            val env =
                mapOf("BRAID_SHM_EAGER_SIZE" to "32768", "BRAID_TCP_EAGER_SIZE" to "16384", "BRAID_JOB_KEY" to "x")
            val s =
                spec(env) {
                    file(path)
                    link("shm+tcp") { rail("tcp") { eagerSize = 2048 } }
                }
            val link = s.links.single()
            link.rail("tcp")!!.limits shouldBe
                LimitsSpec(injectSize = 1024, eagerSize = 2048) // DSL over env over file; the file's inject kept
            link.rail("tcp")!!.domain shouldBe "lo" // the file's, nobody else said
            link.rail("shm")!!.limits.eagerSize shouldBe 32768 // env over the file (which left it to the default)
            s.jobKey shouldBe JobKeySpec(env = "BRAID_JOB_KEY") // env over the file
            s.progress.model shouldBe ProgressModel.AUTO // the file's, nobody else said
            // Without the DSL edit, the environment wins over the file:
            spec(env) { file(path) }.links.single().rail("tcp")!!.limits.eagerSize shouldBe 16384
            // Without the environment, the file stands:
            spec { file(path) }.links.single().rail("tcp")!!.limits.eagerSize shouldBe 8192
            spec { file(path) }.jobKey shouldBe JobKeySpec(value = "from-the-file")
        }

        test(
            "precedence: BRAID_LINKS replaces the file's links, a link of the same name keeps its settings; the DSL's links() replaces both"
        ) {
            val path = tempFile("t.conf", file)
            val env = mapOf("BRAID_LINKS" to "tcp|shm+tcp")
            val s = spec(env) { file(path) }
            s.links.map { it.name } shouldBe listOf("tcp", "shm+tcp")
            s.links[1].rail("tcp")!!.limits.eagerSize shouldBe 8192
            s.links[0].rail("tcp")!!.limits shouldBe LimitsSpec()
            spec(env) {
                    file(path)
                    links("shm")
                }
                .links
                .map { it.name } shouldBe listOf("shm")
            // Without a file, BRAID_LINKS replaces the default, and a DSL link() is added to the environment's:
            spec(env) { link("shm+tcp:lo") }.links.map { it.name } shouldContainExactly
                listOf("tcp", "shm+tcp", "shm+tcp:lo")
        }

        test("precedence: environment limits apply under what the DSL sets, also on links only the DSL names") {
            val env = mapOf("BRAID_TCP_BUFFER_SIZE" to "65536", "BRAID_TCP_EAGER_SIZE" to "4096")
            val s = spec(env) { link("shm+tcp:lo") { rail("tcp") { eagerSize = 1024 } } }
            s.links.single().rail("tcp")!!.limits shouldBe LimitsSpec(eagerSize = 1024, ringCapacity = 65536)
            spec(env) {}.links.single().rail("tcp")!!.limits shouldBe LimitsSpec(eagerSize = 4096, ringCapacity = 65536)
        }

        test(
            "precedence: BRAID_LINK_DISABLE_SHM drops shm from the file's and the default links, not from a link the DSL names"
        ) {
            val env = mapOf("BRAID_LINK_DISABLE_SHM" to "1")
            spec(env) {}.links.single().linkString shouldBe "tcp"
            spec(env) { file(tempFile("t.conf", file)) }.links.single().linkString shouldBe "tcp:lo"
            spec(env) { link("shm+tcp") }.links.single().linkString shouldBe "shm+tcp"
        }

        test("a malformed environment value is refused, naming the variable") {
            shouldThrow<SpecException> { spec(mapOf("BRAID_SHM_RING_SIZE" to "lots")) {} }
                .problems
                .single()
                .let {
                    it.path shouldBe "BRAID_SHM_RING_SIZE"
                    it.message shouldContain "'lots' is not an integer"
                }
            shouldThrow<SpecException> { spec(mapOf("BRAID_LINKS" to "shm+")) {} }.problems.single().path shouldBe
                "BRAID_LINKS"
            // A value that parses but breaks a rule is refused by the rules, at the rail:
            shouldThrow<SpecException> { spec(mapOf("BRAID_SHM_RING_SIZE" to "1000")) {} }
                .problems
                .single()
                .path shouldBe "links[0].rails[0].limits.ringCapacity"
        }
    })
