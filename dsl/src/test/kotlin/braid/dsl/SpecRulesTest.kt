package braid.dsl

import braid.core.ProgressModel
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** Every rule of a topology: each broken one is named with its path, the link or rail, the value and a fix. */
class SpecRulesTest :
    FunSpec({
        fun spec(block: TopologyScope.() -> Unit) = topology {
            environment = emptyMap()
            block()
        }

        fun problemOf(block: TopologyScope.() -> Unit): SpecProblem =
            shouldThrow<SpecException> { spec(block) }.problems.single()

        data class Rule(
            val name: String,
            val path: String,
            val message: String,
            val hint: String,
            val block: TopologyScope.() -> Unit,
        )

        val rules =
            listOf(
                Rule("no link", "links", "no link is given", "name at least one link") {
                    links("shm")
                    edit { it.links!!.clear() }
                },
                Rule("two links of one name", "links[1].name", "link 'a' is named twice", "its own name") {
                    link {
                        name = "a"
                        shm()
                    }
                    link {
                        name = "b"
                        shm()
                    }
                    edit { it.links!![1].name = "a" }
                },
                Rule("a bad link name", "links[0].name", "link name 'a b'", "rename") {
                    link {
                        name = "a b"
                        shm()
                    }
                },
                Rule("a link without rails", "links[0].rails", "link 'x' has no rail", "at least one") {
                    link { name = "x" }
                },
                Rule(
                    "two rails of one name",
                    "links[0].rails[1].name",
                    "link 'x' names two rails 'r'",
                    "its own name",
                ) {
                    link {
                        name = "x"
                        rail("r") { provider = "shm" }
                    }
                    edit { it.links!![0].rails += RailScope("r").also { r -> r.provider = "tcp" } }
                },
                Rule("two shm rails", "links[0].rails[1]", "link 'x' has 2 shm rails ('shm', 'shm2')", "keep one") {
                    link {
                        name = "x"
                        shm()
                        rail("shm2") { provider = "shm" }
                    }
                },
                Rule(
                    "two inter-node rails under LOCALITY",
                    "links[0].rails",
                    "link 'x' has 2 inter-node rails ('tcp0', 'tcp1') but policy LOCALITY",
                    "shm+tcp:eth0|shm+tcp:eth1",
                ) {
                    link {
                        name = "x"
                        shm()
                        rail("tcp0") {
                            provider = "tcp"
                            domain = "eth0"
                        }
                        rail("tcp1") {
                            provider = "tcp"
                            domain = "eth1"
                        }
                    }
                },
                Rule("a bad rail name", "links[0].rails[0].name", "rail 'a|b' in link 'x': name", "rename") {
                    link {
                        name = "x"
                        rail("a|b") { provider = "tcp" }
                    }
                },
                Rule(
                    "a bad provider name",
                    "links[0].rails[0].provider",
                    "rail 'r' in link 'x': provider 'TCP'",
                    "lower-case",
                ) {
                    link {
                        name = "x"
                        rail("r") { provider = "TCP" }
                    }
                },
                Rule(
                    "a link as a rail",
                    "links[0].rails[0].provider",
                    "provider 'link' cannot be a rail",
                    "name the link's rails",
                ) {
                    link {
                        name = "x"
                        rail("link")
                    }
                },
                Rule(
                    "a bad domain",
                    "links[0].rails[0].domain",
                    "rail 'tcp' in link 'x': domain 'eth 0'",
                    "interface",
                ) {
                    link {
                        name = "x"
                        rail("tcp") { domain = "eth 0" }
                    }
                },
                Rule(
                    "a domain for shm",
                    "links[0].rails[0].domain",
                    "shm has one domain, 'shm', not 'lo'",
                    "leave domain out",
                ) {
                    link {
                        name = "x"
                        shm { domain = "lo" }
                    }
                },
                Rule(
                    "a negative weight",
                    "links[0].rails[1].weight",
                    "rail 'tcp1' in link 'shm+tcp': weight -1 must be > 0",
                    "positive relative weight",
                ) {
                    link {
                        name = "shm+tcp"
                        shm()
                        rail("tcp1") {
                            provider = "tcp"
                            weight = -1.0
                        }
                    }
                },
                Rule(
                    "a weight that is not a number",
                    "links[0].rails[0].weight",
                    "weight NaN must be > 0",
                    "positive",
                ) {
                    link {
                        name = "x"
                        rail("tcp") { weight = Double.NaN }
                    }
                },
                Rule(
                    "a negative inject size",
                    "links[0].rails[0].limits.injectSize",
                    "rail 'tcp' in link 'x': injectSize -1 must be ≥ 0",
                    "injectSize ≥ 0",
                ) {
                    link {
                        name = "x"
                        rail("tcp") { injectSize = -1 }
                    }
                },
                Rule(
                    "a negative eager size",
                    "links[0].limits.eagerSize",
                    "link 'x': eagerSize -5 must be ≥ 0",
                    "eagerSize ≥ 0",
                ) {
                    link {
                        name = "x"
                        eagerSize = -5
                        rail("tcp")
                    }
                },
                Rule(
                    "a zero ring",
                    "links[0].rails[0].limits.ringCapacity",
                    "ringCapacity 0 must be > 0",
                    "ring capacity",
                ) {
                    link {
                        name = "x"
                        rail("tcp") { ringCapacity = 0 }
                    }
                },
                Rule(
                    "a zero unexpected bound",
                    "links[0].limits.unexpectedLimit",
                    "link 'x': unexpectedLimit 0 must be > 0",
                    "e.g. 1024",
                ) {
                    link {
                        name = "x"
                        unexpectedLimit = 0
                        shm()
                    }
                },
                Rule(
                    "an unexpected bound on a rail",
                    "links[0].rails[0].limits.unexpectedLimit",
                    "rail 'shm' in link 'x': unexpectedLimit 10 bounds the link's one shared unexpected queue",
                    "limits of link 'x'",
                ) {
                    link {
                        name = "x"
                        shm { unexpectedLimit = 10 }
                    }
                },
                Rule(
                    "inject above eager on the rail",
                    "links[0].rails[0].limits.injectSize",
                    "rail 'tcp' in link 'x': injectSize 8 KiB exceeds eagerSize 4 KiB",
                    "injectSize ≤ 4 KiB",
                ) {
                    link {
                        name = "x"
                        rail("tcp") {
                            injectSize = 8192
                            eagerSize = 4096
                        }
                    }
                },
                Rule(
                    "inject above eager through the link's defaults",
                    "links[0].limits.injectSize",
                    "rail 'tcp' in link 'x': injectSize 2 KiB exceeds eagerSize 1 KiB",
                    "injectSize ≤ 1 KiB",
                ) {
                    link {
                        name = "x"
                        injectSize = 2048
                        rail("tcp") { eagerSize = 1024 }
                    }
                },
                Rule(
                    "an shm ring that is not a power of two",
                    "links[0].rails[0].limits.ringCapacity",
                    "rail 'shm' in link 'x': ringCapacity 3000 is not a power of two ≥ 1 KiB",
                    "2 KiB",
                ) {
                    link {
                        name = "x"
                        shm { ringCapacity = 3000 }
                    }
                },
                Rule(
                    "a tcp buffer below the minimum",
                    "links[0].limits.ringCapacity",
                    "rail 'tcp' in link 'x': ringCapacity 1 KiB is below tcp's smallest connection buffer 4 KiB",
                    "ringCapacity ≥ 4 KiB",
                ) {
                    link {
                        name = "x"
                        ringCapacity = 1024
                        rail("tcp")
                    }
                },
                Rule("progress UNSPEC", "progress.model", "progress model UNSPEC", "MANUAL or AUTO") {
                    progress { model = ProgressModel.UNSPEC }
                },
                Rule("negative spins", "progress.idle.maxSpins", "idle maxSpins -1", "maxSpins ≥ 0") {
                    progress { idle { maxSpins = -1 } }
                },
                Rule("negative yields", "progress.idle.maxYields", "idle maxYields -2", "maxYields ≥ 0") {
                    progress { idle { maxYields = -2 } }
                },
                Rule(
                    "a park below 1 µs",
                    "progress.idle.maxParkNanos",
                    "idle maxParkNanos 10 is below 1 µs",
                    "≥ 1000",
                ) {
                    progress {
                        idle {
                            maxParkNanos = 10
                            minParkNanos = 5
                        }
                    }
                },
                Rule(
                    "a first park above the longest",
                    "progress.idle.minParkNanos",
                    "minParkNanos 5000 is outside 1..maxParkNanos (2000)",
                    "1 ≤ minParkNanos ≤ maxParkNanos",
                ) {
                    progress {
                        idle {
                            maxParkNanos = 2000
                            minParkNanos = 5000
                        }
                    }
                },
                Rule("a job key from nowhere", "jobKey", "jobKey sets none of value, env and file", "exactly one") {
                    jobKey {}
                },
                Rule("a job key from two places", "jobKey", "jobKey sets value and env", "exactly one") {
                    jobKey {
                        value = "k"
                        env = "K"
                    }
                },
                Rule("an empty job key", "jobKey.value", "jobKey value is empty", "leave jobKey out") {
                    jobKey { value = "" }
                },
                Rule("a bad variable name", "jobKey.env", "jobKey env 'MY-KEY'", "letters, digits and _") {
                    jobKey { env = "MY-KEY" }
                },
                Rule("a blank key file", "jobKey.file", "jobKey file is blank", "name the file") {
                    jobKey { file = " " }
                },
            )

        for (rule in rules) {
            test("rule: ${rule.name} is refused at ${rule.path}") {
                val p = problemOf(rule.block)
                withClue(p.toString()) {
                    p.path shouldBe rule.path
                    p.message shouldContain rule.message
                    p.hint!! shouldContain rule.hint
                }
            }
        }

        test("build() reports every broken rule at once, each line with its path") {
            val e =
                shouldThrow<SpecException> {
                    spec {
                        link {
                            name = "shm+tcp"
                            shm { ringCapacity = 1000 }
                            rail("tcp1") {
                                provider = "tcp"
                                weight = 0.0
                            }
                        }
                        jobKey { env = "1X" }
                    }
                }
            e.problems shouldHaveSize 3
            e.problems.map { it.path } shouldBe
                listOf("links[0].rails[0].limits.ringCapacity", "links[0].rails[1].weight", "jobKey.env")
            e.message!! shouldContain "3 problems"
            e.message!! shouldContain "links[0].rails[1].weight: rail 'tcp1' in link 'shm+tcp': weight 0 must be > 0"
        }

        test("a spec is checked however it is made: a copy that breaks a rule is refused") {
            val good = spec { link("shm+tcp") }
            shouldThrow<SpecException> { good.copy(links = emptyList()) }.problems.single().path shouldBe "links"
        }
    })
