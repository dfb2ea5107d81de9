package braid.dsl

import braid.provider.link.LinkShape
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The DSL applies rail-core's link-shape rules ([LinkShape]) and places their problems at the spec's paths, in
 * rail-core's words.
 */
class SpecLinkShapeTest :
    FunSpec({
        test("a spec breaking link-shape rules gets rail-core's problems at links[i] plus the rule's path") {
            val e =
                shouldThrow<SpecException> {
                    topology {
                        environment = emptyMap()
                        link {
                            name = "ok"
                            shm()
                            rail("tcp")
                        }
                        link {
                            name = "x"
                            shm { domain = "lo" }
                            rail("shm2") { provider = "shm" }
                            rail("a") { provider = "tcp" }
                            rail("b") { provider = "tcp" }
                        }
                    }
                }
            val rails =
                listOf(
                    LinkShape.Rail("shm", "shm", listOf("lo")),
                    LinkShape.Rail("shm2", "shm"),
                    LinkShape.Rail("a", "tcp"),
                    LinkShape.Rail("b", "tcp"),
                )
            val expected = LinkShape.problems(rails).map { "links[1].${it.path}" to it.message("x", rails) }
            e.problems.map { it.path to it.message } shouldBe expected
        }

        test("a rail whose provider this build's link does not know is left to the host the topology opens on") {
            topology {
                    environment = emptyMap()
                    link {
                        name = "x"
                        shm()
                        rail("fast") {
                            provider = "verbs"
                            optional = true
                        }
                    }
                }
                .links
                .single()
                .rails
                .map { it.provider } shouldBe listOf("shm", "verbs")
        }
    })
