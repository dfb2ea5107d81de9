package braid.provider.link

import braid.core.Braid
import braid.core.Completion
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Info
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.core.lateSenderContract
import braid.core.matchingContract
import braid.core.pingPongAllocatesNothing
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/** The link provider in one process: its Info entries, link strings, address blobs, routing and shared matching. */
class LinkTest :
    FunSpec({
        // Every rule of the shared receive context holds through a link (same host: the shm rail), late senders
        // included.
        matchingContract { count, eager -> TestFabric(count, Rail.LINK, eagerSize = eager) }
        lateSenderContract { Rail.LINK.info() }

        test("getInfo offers one link entry per tcp interface, carrying each rail's Info") {
            val tcpDomains = Braid.getInfo(Hints(provider = "tcp")).map { it.domainName }
            val infos = Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, "shm+tcp"))
            infos.map { it.domainName } shouldBe tcpDomains.map { "shm+tcp:$it" }
            for (info in infos) {
                info.provider shouldBe "link"
                info.fabricName shouldBe "shm+tcp"
                info.rails.map { it.provider } shouldBe listOf("shm", "tcp")
                info.domainName shouldBe "shm+tcp:${info.rails[1].domainName}"
            }
            Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, "tcp:lo|shm+tcp:lo")).map {
                it.domainName
            } shouldBe listOf("tcp:lo", "shm+tcp:lo")
            Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, "shm")).single().rails.map {
                it.provider
            } shouldBe listOf("shm")
            Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, "shm+tcp:lo"))
                .single()
                .describe() shouldContain "link_rail:"
            Braid.getInfo(
                    Hints(provider = "link").with(LinkParams.LINKS, "shm+tcp:lo").with(LinkParams.DISABLE_SHM, true)
                )
                .single()
                .rails
                .map { it.provider } shouldBe listOf("tcp")
            Braid.getInfo(
                    Hints(provider = "link").with(LinkParams.LINKS, "shm+tcp:lo").with(LinkParams.DISABLE_SHM, false)
                )
                .single()
                .rails
                .map { it.provider } shouldBe listOf("shm", "tcp")
            shouldThrow<FabricException> {
                    Braid.getInfo(
                        Hints(provider = "link").with(LinkParams.LINKS, "shm").with(LinkParams.DISABLE_SHM, true)
                    )
                }
                .message!! shouldContain "no rail left"
        }

        test("malformed link strings are refused naming the link and what is wrong") {
            fun refused(links: String): String =
                shouldThrow<FabricException> { Braid.getInfo(Hints(provider = "link").with(LinkParams.LINKS, links)) }
                    .message!!
            refused("shm++tcp") shouldContain "an empty rail between '+'"
            refused("shm+verbs") shouldContain
                "Hints.links='shm+verbs': link 'shm+verbs': unknown rail provider 'verbs' (known: shm, tcp)"
            refused("shm+tcp+tcp") shouldContain "joins 2 network rails"
            refused("shm+shm") shouldContain "shm appears twice"
            refused("shm+tcp:") shouldContain "empty domain name"
            refused("shm+tcp|") shouldContain "an empty link between '|'"
            refused("shm:eth0") shouldContain "the shm rail has one domain"
            refused("shm+tcp:nosuch0") shouldContain "tcp has no domain 'nosuch0'"
            refused("shm+tcp:nosuch0") shouldContain "Hints.links='shm+tcp:nosuch0'"
        }

        test("a link address carries every rail's address and the host; malformed ones are refused naming the part") {
            TestFabric(rail = Rail.LINK).use { f ->
                val a = f.nodes[0]
                val raw = a.ep.address
                val parsed = f.nodes[1].av.straddr(raw)
                parsed shouldStartWith "fi_link://"
                parsed shouldContain "fi_shm://"
                parsed shouldContain "fi_tcp://"

                fun refused(blob: ByteArray): String =
                    shouldThrow<FabricException> { f.nodes[1].av.insert(blob) }.message!!
                refused(raw.copyOf(10)) shouldContain "too short"
                refused(raw.copyOf(raw.size - 3)) shouldContain "runs past the end"
                refused(raw.copyOf().also { it[LinkAddressDescriptor.COUNT_OFFSET] = 0 }) shouldContain "part count 0"
                refused(
                    raw.copyOf().also { it[AddressHeader.KIND_OFFSET] = AddressHeader.KIND_TCP.toByte() }
                ) shouldContain "it is an tcp address"
                // Corrupt the shm part's own magic: the error names the part and the rail's reason.
                refused(
                    raw.copyOf().also {
                        it[LinkAddressDescriptor.PARTS_OFFSET + LinkAddressDescriptor.PART_HEADER_LENGTH] = 0
                    }
                ) shouldContain "part 0 at offset 20: shm address"
                val dup =
                    LinkAddressDescriptor.encode(
                        1,
                        listOf(
                            AddressHeader.KIND_SHM to f.nodes[0].ep.shmPart(),
                            AddressHeader.KIND_SHM to f.nodes[0].ep.shmPart(),
                        ),
                    )
                refused(dup) shouldContain "kind 1 appears twice"
            }
        }

        test("a newer node's blob still parses: unknown rail parts and trailing fields are skipped") {
            TestFabric(rail = Rail.LINK).use { f ->
                val (a, b) = f.nodes
                val mine = LinkAddressDescriptor.parse(a.ep.address) { _, blob -> Parsed(blob) }
                val parts =
                    listOf(
                        AddressHeader.KIND_SHM to a.ep.shmPart(),
                        42 to byteArrayOf(1, 2, 3, 4, 5), // a rail this build has never heard of
                        AddressHeader.KIND_TCP to a.ep.tcpPart(),
                    )
                val newer =
                    LinkAddressDescriptor.encode(mine.hostId, parts).also { it[AddressHeader.VERSION_OFFSET] = 2 } +
                        byteArrayOf(9, 9, 9, 9)
                val addr = b.av.insert(newer)
                b.ep.tryTsend(buf("from a newer blob"), 0, 17, addr, 5, null) shouldBe 0
                val rx = UnsafeBuffer(ByteArray(32))
                a.ep.tryTrecv(rx, 0, 32, FiAddr.UNSPEC, 5, 0, "r") shouldBe 0
                a.await(1, others = listOf(b)).single().let { (it as Completion).len shouldBe 17 }
                b.await(1, others = listOf(a))
            }
        }

        test("same-host peers go over shm, a peer without shm over tcp; both complete into the one CQ") {
            TestFabric(rail = Rail.link("shm+tcp:lo", "shm+tcp:lo", "tcp:lo")).use { f ->
                val (a, b, c) = f.nodes
                val n = 200
                val rx = List(2 * n) { UnsafeBuffer(ByteArray(64)) }
                for (i in 0 until 2 * n) a.ep.tryTrecv(rx[i], 0, 64, FiAddr.UNSPEC, 7, 0, i) shouldBe 0
                for (i in 0 until n) {
                    b.ep.tryTsend(buf("b$i"), 0, "b$i".length, f.addrs[1][0], 7, null) shouldBe 0
                    c.ep.tryTsend(buf("c$i"), 0, "c$i".length, f.addrs[2][0], 7, null) shouldBe 0
                }
                val done = a.await(2 * n, others = listOf(b, c)).map { it as Completion }
                done.map { it.context }.toSet() shouldHaveSize 2 * n // each any-source receive matched once
                done.count { it.source == f.addrs[0][1] } shouldBe n
                done.count { it.source == f.addrs[0][2] } shouldBe n
                b.await(n, others = listOf(a, c))
                c.await(n, others = listOf(a, b))

                val sa = a.ep.stats()
                sa.rail("shm")!!.messagesReceived shouldBe n.toLong()
                sa.rail("tcp")!!.messagesReceived shouldBe n.toLong()
                b.ep.stats().rail("shm")!!.messagesSent shouldBe n.toLong()
                b.ep.stats().rail("tcp")!!.messagesSent shouldBe 0L
                c.ep.stats().rails.map { it.rail } shouldBe listOf("tcp")
                c.ep.stats().rail("tcp")!!.messagesSent shouldBe n.toLong()
                sa.queues.postedMax shouldBe 2 * n
                sa.render() shouldContain "posted receives:     max ${2 * n}"
            }
        }

        test("a warm ping-pong through the link allocates nothing per message, over shm and over tcp") {
            TestFabric(rail = Rail.link("shm+tcp:lo", "shm+tcp:lo")).use { f ->
                pingPongAllocatesNothing(f, listOf(64, 64 * 1024)) { 10_000 }
            }
            TestFabric(rail = Rail.link("tcp:lo", "tcp:lo")).use { f ->
                pingPongAllocatesNothing(f, listOf(64)) { 10_000 }
            }
        }

        test("a link domain refuses a rail that cannot be a peer, and an Info without rails") {
            val info = Rail.LINK.info()
            Braid.fabric(info).use { fabric ->
                shouldThrow<FabricException> { fabric.domain(info.copy(rails = emptyList())) }.message!! shouldContain
                    "names no rails"
                val notPeer =
                    object : braid.provider.Provider {
                        override val name = "solo"

                        override fun infos(): List<Info> = listOf(info.rails[0].copy(provider = "solo"))

                        override fun openDomain(domain: braid.core.Domain, info: Info) = error("not opened")
                    }
                Braid.register(notPeer)
                try {
                    val e =
                        shouldThrow<FabricException> {
                            fabric.domain(info.copy(rails = listOf(info.rails[0].copy(provider = "solo"))))
                        }
                    e.code shouldBe Errno.EINVAL
                    e.message!! shouldContain "provider 'solo' cannot be opened as a peer"
                } finally {
                    Braid.unregister("solo")
                }
            }
        }
    })

private class Parsed(override val raw: ByteArray) : PeerAddress {
    override val key: String
        get() = raw.contentToString()

    override fun render(): String = key
}

/** The blob of [kind]'s part inside this link endpoint's address. */
private fun braid.core.Endpoint.part(kind: Int): ByteArray {
    val raw = address
    val b = UnsafeBuffer(raw)
    var at = LinkAddressDescriptor.PARTS_OFFSET
    repeat(raw[LinkAddressDescriptor.COUNT_OFFSET].toInt()) {
        val k = raw[at].toInt()
        val len = b.getShort(at + LinkAddressDescriptor.PART_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt()
        if (k == kind) return raw.copyOfRange(at + 4, at + 4 + len)
        at += 4 + len
    }
    error("no part of kind $kind")
}

private fun braid.core.Endpoint.shmPart() = part(AddressHeader.KIND_SHM)

private fun braid.core.Endpoint.tcpPart() = part(AddressHeader.KIND_TCP)
