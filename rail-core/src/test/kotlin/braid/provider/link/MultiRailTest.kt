package braid.provider.link

import braid.core.Braid
import braid.core.Completion
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Info
import braid.core.Rail
import braid.core.RailAttr
import braid.core.Settings
import braid.core.TestFabric
import braid.core.buf
import braid.core.driveUntil
import braid.core.sendAsync
import braid.provider.AddressHeader
import braid.provider.link.LinkShapeProblem.Kind
import braid.provider.tcp.TcpTransport
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/**
 * Links of several network rails on this host's two interfaces (lo and eth0, without shm so that same-process peers
 * take the network): each rail its own identity, peers spread by weight, and failover to a surviving rail.
 */
class MultiRailTest :
    FunSpec({
        val twoRails = "tcp:lo+tcp:eth0"
        val haveEth0 =
            runCatching { Braid.getInfo(Hints(provider = "tcp", domainName = "eth0", settings = TestFabric.SETTINGS)) }
                .isSuccess

        fun link(text: String, settings: Settings = TestFabric.SETTINGS): Info =
            Braid.getInfo(Hints(provider = "link", settings = settings.with(LinkParams.LINKS, text))).first()

        test("a link string joins several network rails, each named by provider and interface").config(
            enabled = haveEth0
        ) {
            val info = link("shm+$twoRails")
            info.rails.map { it.rail!!.name } shouldContainExactly listOf("shm", "tcp:lo", "tcp:eth0")
            info.rails.map { it.rail!!.weight } shouldContainExactly listOf(1.0, 1.0, 1.0)
            info.domainName shouldBe "shm+tcp+tcp:lo+eth0"
            info.describe() shouldContain "rail_attr:\n            name: tcp:eth0"
            // A provider that appears once keeps its own name, as a one-network-rail link always did.
            link("shm+tcp:lo").rails.map { it.rail!!.name } shouldContainExactly listOf("shm", "tcp")
        }

        test("bad shapes are refused naming the rule, the value and the fix") {
            fun refused(text: String, settings: Settings = TestFabric.SETTINGS) =
                shouldThrow<FabricException> { link(text, settings) }.message!!
            refused("shm+tcp:lo+tcp:lo") shouldContain
                "joins 2 network rails on the same interface ('tcp:lo' and 'tcp:lo' both open interface lo); give each network rail its own interface"
            refused(twoRails, TestFabric.SETTINGS.with(LinkParams.POLICY, "LOCALITY")) shouldContain
                "has 2 inter-node rails ('tcp:lo', 'tcp:eth0') but policy LOCALITY"
            val policy =
                shouldThrow<FabricException> {
                    link(twoRails, Settings.ofEnvironment(mapOf("BRAID_LINK_POLICY" to "striped")))
                }
            policy.message!! shouldContain "BRAID_LINK_POLICY"
            policy.message!! shouldContain "striped"
            policy.message!! shouldContain "PER_PEER"
            val rails =
                listOf(LinkShape.Rail("a", "tcp", listOf("eth0"), 0.0), LinkShape.Rail("b", "tcp", listOf("eth1")))
            LinkShape.problems(rails, LinkShape.PER_PEER).single().let {
                it.kind shouldBe Kind.WEIGHT
                it.path shouldBe "rails[0].weight"
                it.message("x", rails) shouldBe "rail 'a' in link 'x': weight 0 must be > 0"
            }
            LinkShape.problems(listOf(LinkShape.Rail("tcp", "tcp")), "striped").single().let {
                it.kind shouldBe Kind.UNKNOWN_POLICY
                it.toString() shouldBe
                    "policy: has an unknown policy 'striped'; use one of LOCALITY, PER_PEER, ROUND_ROBIN, STRIPE"
            }
        }

        test("every rail is its own identity: address part, route and statistics").config(enabled = haveEth0) {
            TestFabric(rail = Rail.link(twoRails, twoRails, twoRails)).use { f ->
                val (a, b, c) = f.nodes
                val parsed = LinkAddressDescriptor.parse(a.ep.address) { name, _, blob -> Named(name, blob) }
                parsed.railNames shouldContainExactly listOf("tcp:lo", "tcp:eth0")
                a.ep.tryTsend(buf("to b"), 0, 4, f.addrs[0][1], 1, "b") shouldBe 0
                a.ep.tryTsend(buf("to c"), 0, 4, f.addrs[0][2], 1, "c") shouldBe 0
                val link = a.ep.transport as LinkTransport
                listOf(link.routeName(f.addrs[0][1]), link.routeName(f.addrs[0][2])) shouldContainExactly
                    listOf("tcp:lo", "tcp:eth0")
                for ((i, n) in listOf(b, c).withIndex()) {
                    n.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "r") shouldBe 0
                    n.await(1, others = f.nodes - n).single().let { (it as Completion).len shouldBe 4 }
                    n.ep.stats().rail(if (i == 0) "tcp:lo" else "tcp:eth0")!!.messagesReceived shouldBe 1
                }
                a.await(2, others = listOf(b, c))
                val stats = a.ep.stats()
                stats.rail("tcp:lo")!!.messagesSent shouldBe 1
                stats.rail("tcp:eth0")!!.messagesSent shouldBe 1
            }
        }

        test("a warm ping-pong over a two-rail link allocates nothing per message").config(enabled = haveEth0) {
            TestFabric(rail = Rail.link(twoRails, twoRails)).use { f ->
                braid.core.pingPongAllocatesNothing(f, listOf(64)) { 10_000 }
            }
        }

        test("PER_PEER spreads peers over the rails in proportion to their weights").config(enabled = haveEth0) {
            val peers = 6
            val weighted =
                link(twoRails).let { i ->
                    i.copy(
                        rails =
                            i.rails.map { r ->
                                r.copy(rail = RailAttr(r.rail!!.name, if (r.domainName == "lo") 2.0 else 1.0))
                            }
                    )
                }
            val plain = link(twoRails)
            val fabric = Braid.fabric(weighted)
            try {
                val nodes =
                    (listOf(weighted) + List(peers) { plain }).map {
                        TestFabric.Node(fabric.domain(it), braid.core.CqFormat.TAGGED)
                    }
                nodes.forEach { it.ep.enable() }
                val a = nodes[0]
                val addrs = nodes.drop(1).map { a.av.insert(it.ep.address) }
                for (addr in addrs) a.ep.tryTsend(buf("x"), 0, 1, addr, 1, null) shouldBe 0
                a.await(peers, others = nodes.drop(1))
                val stats = a.ep.stats()
                stats.rail("tcp:lo")!!.messagesSent shouldBe 4
                stats.rail("tcp:eth0")!!.messagesSent shouldBe 2
                nodes.forEach { it.ep.close() }
            } finally {
                fabric.close()
            }
        }

        test(
                "a peer whose rail is reset moves to the surviving rail, directed receives survive; with none left the send is refused"
            )
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val link = a.ep.transport as LinkTransport
                    val rx = UnsafeBuffer(ByteArray(16))
                    fun roundTrip(text: String) {
                        a.ep.tryTsend(buf(text), 0, text.length, toB, 7, text) shouldBe 0
                        b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 7, 0, "r") shouldBe 0
                        b.await(1, others = listOf(a)).single().let {
                            (it as Completion).len shouldBe text.length.toLong()
                        }
                        a.await(1, others = listOf(b))
                    }
                    roundTrip("first")
                    val first = link.routeName(toB)!!
                    // A receive directed at b survives the loss of one rail to b: another still reaches it.
                    val directed = UnsafeBuffer(ByteArray(16))
                    a.ep.tryTrecv(directed, 0, 16, f.addrs[0][1], 8, 0, "directed") shouldBe 0
                    // That rail's connection is reset under both ends.
                    val mine = link.rail(first) as TcpTransport
                    mine.peerFor(toB)!!.conn!!.channel.close()
                    val theirs = (b.ep.transport as LinkTransport).rail(first) as TcpTransport
                    driveUntil("both ends see the connection on rail $first gone", listOf(a, b)) {
                        mine.peerFor(toB)?.dead == true && theirs.peerFor(f.addrs[1][0])?.dead == true
                    }
                    a.cq.readFrom(a.entry) shouldBe -braid.core.Errno.EAGAIN
                    // b's first send to a finds its rail gone there and takes the other; the directed receive gets it.
                    b.ep.tryTsend(buf("reply"), 0, 5, f.addrs[1][0], 8, null) shouldBe 0
                    a.await(1, others = listOf(b)).single().let {
                        (it as Completion).context shouldBe "directed"
                        it.len shouldBe 5
                    }
                    b.await(1, others = listOf(a))
                    roundTrip("second")
                    val second = link.routeName(toB)!!
                    (second == first) shouldBe false
                    a.ep.stats().rail(second)!!.messagesSent shouldBe 1
                    a.ep.stats().rail(first)!!.failovers shouldBe 1
                    b.ep.stats().rail(first)!!.failovers shouldBe 1
                    a.ep.stats().render() shouldContain "failovers"
                    a.ep.tryTrecv(directed, 0, 16, f.addrs[0][1], 9, 0, "last") shouldBe 0
                    // b closes both its rails: the reset one may have reconnected meanwhile (the retry tick re-admits
                    // it), so closing only the other would leave "none left" to a race.
                    val bLink = b.ep.transport as LinkTransport
                    bLink.rail(second)!!.close()
                    bLink.rail(first)!!.close()
                    val other = link.rail(second) as TcpTransport
                    driveUntil("a sees b gone on rails $second and $first", listOf(a, b)) {
                        other.peerFor(toB)?.dead == true && mine.peerFor(toB)?.dead == true
                    }
                    (a.ep.tryTsend(buf("third"), 0, 5, toB, 7, null) < 0) shouldBe true
                    // The refusal names the peer and every rail tried.
                    val refusal =
                        shouldThrow<java.util.concurrent.ExecutionException> {
                                a.ep.sendAsync(buf("third"), 0, 5, toB).get()
                            }
                            .cause!!
                            .message!!
                    refusal shouldContain "the peer at $toB is down"
                    refusal shouldContain "tried: 'tcp:lo' (peer gone), 'tcp:eth0' (peer gone)"
                    // No rail reaches b now: the receive directed at it fails, naming it.
                    a.await(1).single().let {
                        (it as braid.core.CompletionError).err shouldBe braid.core.Errno.EHOSTDOWN
                        it.context shouldBe "last"
                    }
                }
            }

        test("a version-1 blob from an older peer is refused naming both versions where its rails are ambiguous")
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, "shm+tcp:lo")).use { f ->
                    val (a, b) = f.nodes
                    val names =
                        LinkAddressDescriptor.parse(b.ep.address) { name, kind, blob -> Named(name, blob, kind) }
                    // What an older Braid wrote: the same parts, version 1, no names.
                    val current = LinkAddressDescriptor.encode(names.hostId, names.parts())
                    val v1 =
                        current.copyOf(
                            current.size - names.parts().sumOf { 1 + AddressHeader.nameOf(it.first)!!.length }
                        )
                    v1[AddressHeader.VERSION_OFFSET] = 1
                    val message = shouldThrow<FabricException> { a.av.insert(v1) }.message!!
                    message shouldContain "version 1"
                    message shouldContain "link address version 2"
                    message shouldContain "'tcp:lo', 'tcp:eth0'"
                }
            }
    })

/** A part as parsed, by name (and kind). */
private class Named(val name: String, override val raw: ByteArray, val kind: Int = 0) : braid.provider.PeerAddress {
    override val key: String
        get() = name + raw.contentToString()

    override fun render(): String = key
}

private fun LinkAddress.parts(): List<Pair<Int, ByteArray>> =
    List(indexKeyCount) { i -> (part(railNames[i]) as Named).let { it.kind to it.raw } }
