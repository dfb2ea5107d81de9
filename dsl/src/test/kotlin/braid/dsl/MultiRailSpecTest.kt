package braid.dsl

import braid.core.Braid
import braid.core.FiAddr
import braid.core.Hints
import braid.dsl.TopologyFiles.Format
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/** Links of several network rails in the DSL and in files: names, weights and policy reach the opened link. */
class MultiRailSpecTest :
    FunSpec({
        val haveEth0 = runCatching { Braid.getInfo(Hints(provider = "tcp", domainName = "eth0")) }.isSuccess

        fun twoRails(policy: RailPolicy = RailPolicy.PER_PEER) = topology {
            environment = emptyMap()
            link {
                name = "two"
                this.policy = policy
                rail("a") {
                    provider = "tcp"
                    domain = "lo"
                    weight = 2.0
                }
                rail("b") {
                    provider = "tcp"
                    domain = "eth0"
                }
            }
        }

        test("a link of two named, weighted rails opens with the spec's names and weights, and carries traffic").config(
            enabled = haveEth0
        ) {
            val spec = twoRails()
            val resolved = Topology.resolve(spec)
            resolved.info.rails.map { it.rail!!.name to it.rail!!.weight } shouldContainExactly
                listOf("a" to 2.0, "b" to 1.0)
            resolved.survey.rails.map { it.describe().substringBefore(": ") } shouldContainExactly
                listOf("a (tcp:lo), weight 2", "b (tcp:eth0), weight 1")
            Topology.open(spec).use { x ->
                Topology.open(spec).use { y ->
                    val addr = x.av.insert(y.address)
                    x.endpoint.tryTsend(UnsafeBuffer("hi".toByteArray()), 0, 2, addr, 3, null) shouldBe 0
                    y.endpoint.tryTrecv(UnsafeBuffer(ByteArray(4)), 0, 4, FiAddr.UNSPEC, 3, 0, null) shouldBe 0
                    val deadline = System.nanoTime() + 10_000_000_000L
                    y.domain.driveUntil(deadline, { x.domain.progress() + y.domain.progress() }) {
                        y.endpoint.stats().rails.sumOf { it.messagesReceived } == 1L
                    } shouldBe true
                    // The first peer goes to the heavier rail, on both sides of the link alike.
                    x.endpoint.stats().rail("a")!!.messagesSent shouldBe 1
                    y.endpoint.stats().rail("a")!!.messagesReceived shouldBe 1
                }
            }
        }

        test("several inter-node rails need a policy that spreads over them; the refusal says which") {
            val e = shouldThrow<SpecException> { twoRails(RailPolicy.LOCALITY) }
            e.problems.single().path shouldBe "links[0].rails"
            e.message!! shouldContain "choose policy PER_PEER"
        }

        test("a file names the policy and each rail's weight; bad ones are refused at their path") {
            val good =
                """
                links = [{
                  name = two, policy = PER_PEER
                  rails = [
                    { name = shm, provider = shm }
                    { name = a, provider = tcp, domain = eth0, weight = 2 }
                    { name = b, provider = tcp, domain = eth1 }
                  ]
                }]
                """
                    .trimIndent()
            val spec = TopologyFiles.parse(good, Format.HOCON, "rails.conf")
            spec.links[0].policy shouldBe RailPolicy.PER_PEER
            spec.links[0].rails.map { it.weight } shouldContainExactly listOf(1.0, 2.0, 1.0)

            val policy =
                shouldThrow<ConfigFileException> {
                        TopologyFiles.parse(good.replace("PER_PEER", "STRIPED"), Format.HOCON, "rails.conf")
                    }
                    .message!!
            policy shouldContain "rails.conf"
            policy shouldContain "STRIPED"
            policy shouldContain "PER_PEER"

            val same =
                shouldThrow<ConfigFileException> {
                    TopologyFiles.parse(good.replace("eth1", "eth0"), Format.HOCON, "rails.conf")
                }
            same.problems.single().path shouldBe "links[0].rails[2].domain"
            same.message!! shouldContain
                "link 'two' joins 2 network rails on the same interface ('a' and 'b' both open interface eth0)"
            same.message!! shouldContain "give each network rail its own interface"

            val weight =
                shouldThrow<ConfigFileException> {
                    TopologyFiles.parse(good.replace("weight = 2", "weight = -2"), Format.HOCON, "rails.conf")
                }
            weight.problems.single().path shouldBe "links[0].rails[1].weight"
            weight.message!! shouldContain "rail 'a' in link 'two': weight -2 must be > 0"
        }

        test(
            "a file may choose ROUND_ROBIN or STRIPE; a striping threshold below the eager size is refused at its path"
        ) {
            val striped =
                """
                links = [{
                  name = two, policy = STRIPE
                  settings { link.stripe_threshold = "1 MiB" }
                  rails = [
                    { name = a, provider = tcp, domain = eth0, weight = 2 }
                    { name = b, provider = tcp, domain = eth1 }
                  ]
                }]
                """
                    .trimIndent()
            TopologyFiles.parse(striped, Format.HOCON, "rails.conf").links[0].policy shouldBe RailPolicy.STRIPE
            TopologyFiles.parse(striped.replace("STRIPE", "ROUND_ROBIN"), Format.HOCON, "rails.conf")
                .links[0]
                .policy shouldBe RailPolicy.ROUND_ROBIN
            val low =
                shouldThrow<ConfigFileException> {
                    TopologyFiles.parse(striped.replace("\"1 MiB\"", "1000"), Format.HOCON, "rails.conf")
                }
            low.problems.single().path shouldBe "links[0].settings.link.stripe_threshold"
            low.message!! shouldContain "rails.conf"
            low.message!! shouldContain
                "striping threshold of 1000 bytes, below the eager size of its network rails (16384 bytes)"
            low.message!! shouldContain "set links[0].settings.link.stripe_threshold to at least 16384"
        }
    })
