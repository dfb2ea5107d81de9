package braid.core

import braid.provider.Provider
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/**
 * The peer objects of fi_peer(3) used directly: a tcp owner with an shm peer (and the other way round) sharing one CQ
 * and one receive context, the peer EQ, AV and AV set, peer transfers, and the refusals of a peer's own reads and
 * receive posting.
 */
class PeerInfrastructureTest :
    FunSpec({
        val tcpInfo = Braid.getInfo(Hints(provider = "tcp", domainName = "lo")).first()
        val shmInfo = Braid.getInfo(Hints(provider = "shm")).first()

        /** An owner endpoint of [ownerInfo] and a peer endpoint of [peerInfo] importing its CQ and receive context. */
        class Pair(ownerInfo: Info, peerInfo: Info) : AutoCloseable {
            val ownerFabric = Braid.fabric(ownerInfo)
            val peerFabric = Braid.fabric(peerInfo)
            val owner = ownerFabric.domain(ownerInfo)
            val peer = peerFabric.domain(peerInfo, owner)
            val cq = owner.completionQueue()
            val ownerEp =
                owner.endpoint().also {
                    it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(owner.addressVector())
                    it.enable()
                }
            val importedCq = peer.importCompletionQueue(cq)
            val peerAv = peer.addressVector()
            val peerEp =
                peer.endpoint().also {
                    it.bind(importedCq, OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(peerAv)
                    it.bind(ownerEp.srx)
                    it.enable()
                }
            // Plain senders, one per rail, each reaching the endpoint of its own provider.
            val toOwner =
                TestFabric.Node(Braid.fabric(ownerInfo).domain(ownerInfo), CqFormat.TAGGED).also { it.ep.enable() }
            val toPeer =
                TestFabric.Node(Braid.fabric(peerInfo).domain(peerInfo), CqFormat.TAGGED).also { it.ep.enable() }
            val ownerAddr = toOwner.av.insert(ownerEp.address)
            val peerAddr = toPeer.av.insert(peerEp.address)

            fun drain(n: Int): List<Completion> {
                val out = ArrayList<Completion>()
                val deadline = Deadline.of("$n completions")
                while (out.size < n) {
                    toOwner.domain.progress()
                    toPeer.domain.progress()
                    val c = Completion()
                    if (cq.read(c) == 1) out += c
                    deadline.check { "${out.size}: $out" }
                }
                return out
            }

            override fun close() {
                toOwner.ep.close()
                toPeer.ep.close()
                peerEp.close()
                ownerEp.close()
                peerFabric.close()
                ownerFabric.close()
                toOwner.domain.close()
                toPeer.domain.close()
            }
        }

        for ((ownerInfo, peerInfo) in listOf(tcpInfo to shmInfo, shmInfo to tcpInfo)) {
            test(
                "${ownerInfo.provider} owner, ${peerInfo.provider} peer: both rails complete the owner's receives through one CQ, each once"
            ) {
                Pair(ownerInfo, peerInfo).use { p ->
                    // One message arrives before any receive: it waits in the owner's unexpected queue, held by the
                    // peer rail.
                    p.toPeer.ep.tryTsend(buf("early"), 0, 5, p.peerAddr, 1, "s0") shouldBe 0
                    val deadline = Deadline.of("the early message to wait unexpected at the owner")
                    while (p.ownerEp.srx.unexpectedCount == 0) {
                        p.toPeer.domain.progress()
                        p.owner.progress()
                        deadline.check()
                    }
                    val rx = List(3) { UnsafeBuffer(ByteArray(16)) }
                    for (i in 0 until 3) p.ownerEp.tryTrecv(rx[i], 0, 16, FiAddr.UNSPEC, 1, 0, "r$i") shouldBe 0
                    p.toOwner.ep.tryTsend(buf("via owner"), 0, 9, p.ownerAddr, 1, "s1") shouldBe 0
                    p.toPeer.ep.tryTsend(buf("via peer"), 0, 8, p.peerAddr, 1, "s2") shouldBe 0
                    val done = p.drain(3)
                    done.map { it.context } shouldContainExactlyInAnyOrder listOf("r0", "r1", "r2")
                    done.first { it.context == "r0" }.len shouldBe 5 // the early one, matched by the first receive
                    rx.map {
                        it.text(done.first { c -> c.context == "r${rx.indexOf(it)}" }.len.toInt())
                    } shouldContainExactlyInAnyOrder listOf("early", "via owner", "via peer")
                }
            }

            test("${peerInfo.provider} as a peer refuses its own reads and receive posting with ENOSYS") {
                Pair(ownerInfo, peerInfo).use { p ->
                    p.peerEp.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 0, 0, "x") shouldBe -Errno.ENOSYS
                    p.peerEp.tryRecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, "x") shouldBe -Errno.ENOSYS
                    p.peerEp.cancel("x") shouldBe -Errno.ENOSYS
                    p.importedCq.read(Completion()) shouldBe -Errno.ENOSYS
                    p.importedCq.readFrom(Completion()) shouldBe -Errno.ENOSYS
                    p.importedCq.readErr(CompletionError()) shouldBe -Errno.ENOSYS
                    p.importedCq.sread(Completion(), 10) shouldBe -Errno.ENOSYS
                }
            }
        }

        test(
            "importing from a domain that is not the owner, or opening a provider that cannot be a peer, fails with EINVAL"
        ) {
            Pair(tcpInfo, shmInfo).use { p ->
                val stranger = Braid.fabric(shmInfo).domain(shmInfo)
                try {
                    shouldThrow<FabricException> { stranger.importCompletionQueue(p.cq) }
                        .let {
                            it.code shouldBe Errno.EINVAL
                            it.message!! shouldContain "owner"
                        }
                    val ep = stranger.endpoint()
                    shouldThrow<FabricException> { ep.bind(p.ownerEp.srx) }.message!! shouldContain "another domain"
                    ep.close()
                } finally {
                    stranger.close()
                }
                val solo =
                    object : Provider {
                        override val name = "solo"

                        override fun infos(): List<Info> = listOf(shmInfo.copy(provider = "solo"))

                        override fun openDomain(domain: Domain, info: Info) = error("never opened")
                    }
                Braid.register(solo)
                try {
                    val info = Braid.getInfo(Hints(provider = "solo")).first()
                    val e = shouldThrow<FabricException> { Braid.fabric(info).domain(info, p.owner) }
                    e.code shouldBe Errno.EINVAL
                    e.message!! shouldContain "provider 'solo' cannot be opened as a peer"
                } finally {
                    Braid.unregister("solo")
                }
            }
        }

        test("a peer EQ forwards events to its owner and refuses reads") {
            Braid.fabric(shmInfo).use { fabric ->
                val owner = fabric.eventQueue()
                val imported = fabric.importEventQueue(owner)
                imported.write(EventType.NOTIFY, "ctx", 7, "from the peer")
                imported.writeErr("bad", Errno.EIO, "peer failure")
                imported.read(Event()) shouldBe -Errno.ENOSYS
                imported.readErr(CompletionError()) shouldBe -Errno.ENOSYS
                val err = CompletionError()
                owner.read(Event()) shouldBe -Errno.EAVAIL
                owner.readErr(err) shouldBe 1
                err.err shouldBe Errno.EIO
                val ev = Event()
                owner.read(ev) shouldBe 1
                ev.data shouldBe 7
                ev.message shouldBe "from the peer"
            }
        }

        test("peer AV: query and epAddr; peer AV set: members with the too-small rule") {
            TestFabric(3).use { f ->
                val av = f.nodes[0].av
                av.query() shouldBe AvAttr(AvType.TABLE, 3)
                av.epAddr(f.nodes[2].ep) shouldBe f.addrs[0][2]
                val other = TestFabric(1)
                try {
                    av.epAddr(other.nodes[0].ep) shouldBe FiAddr.NOTAVAIL
                } finally {
                    other.close()
                }

                val set = av.avSet(f.addrs[0][2], f.addrs[0][0])
                set.members(LongArray(1)) shouldBe -Errno.ETOOSMALL
                val out = LongArray(3)
                set.members(out) shouldBe 2
                out.take(2) shouldBe listOf(f.addrs[0][2], f.addrs[0][0])
                set.union(av.avSet(f.addrs[0][1], f.addrs[0][2]))
                set.toLongArray().toList() shouldBe listOf(f.addrs[0][2], f.addrs[0][0], f.addrs[0][1])
                set.intersect(av.avSet(f.addrs[0][0], f.addrs[0][1]))
                set.toLongArray().toList() shouldBe listOf(f.addrs[0][0], f.addrs[0][1])
                set.diff(av.avSet(f.addrs[0][0]))
                set.count shouldBe 1
                shouldThrow<FabricException> { set.insert(99) }.code shouldBe Errno.ENOENT
                shouldThrow<FabricException> { set.remove(f.addrs[0][0]) }.code shouldBe Errno.ENOENT
            }
        }

        test(
            "peer transfer: a peer's traffic rides the owner endpoint in its own tag space, outcomes to its callbacks"
        ) {
            TestFabric(2).use { f ->
                val (a, b) = f.nodes
                class Ops : PeerTransferOps {
                    val done = ArrayList<Completion>()
                    val failed = ArrayList<CompletionError>()

                    override fun complete(entry: Completion, source: Long) {
                        done += entry
                    }

                    override fun compErr(error: CompletionError) {
                        failed += error
                    }
                }
                val opsA = Ops()
                val opsB = Ops()
                val ta = a.ep.peerTransfer(opsA)
                val tb = b.ep.peerTransfer(opsB)
                // The application's catch-all tagged receive, posted first, must not take peer traffic.
                val appRx = UnsafeBuffer(ByteArray(64))
                b.ep.tryTrecv(appRx, 0, 64, FiAddr.UNSPEC, 0, -1L, "app") shouldBe 0
                val peerRx = UnsafeBuffer(ByteArray(64))
                tb.tryRecv(peerRx, 0, 64, FiAddr.UNSPEC, 5, 0, "peer-rx") shouldBe 0
                ta.trySend(buf("control"), 0, 7, f.addrs[0][1], 5, "peer-tx") shouldBe 0
                driveUntil(
                    "the peer's receive and send to complete",
                    listOf(a, b),
                    seen = { "received ${opsB.done}, sent ${opsA.done}" },
                ) {
                    opsB.done.isNotEmpty() && opsA.done.isNotEmpty()
                }
                opsB.done.single().let {
                    it.context shouldBe "peer-rx"
                    it.tag shouldBe 5
                    it.len shouldBe 7
                }
                peerRx.text(7) shouldBe "control"
                opsA.done.single().context shouldBe "peer-tx"
                b.cq.read(Completion()) shouldBe
                    -Errno.EAGAIN // nothing of the peer's reached the CQ, the app receive still waits

                // A truncated peer receive is reported to the peer's compErr.
                tb.tryRecv(UnsafeBuffer(ByteArray(4)), 0, 4, FiAddr.UNSPEC, 6, 0, "small") shouldBe 0
                ta.trySend(buf("sixteen bytes!!!"), 0, 16, f.addrs[0][1], 6, null) shouldBe 0
                driveUntil("the truncated peer receive to fail", listOf(a, b)) { opsB.failed.isNotEmpty() }
                opsB.failed.single().let {
                    it.err shouldBe Errno.ETRUNC
                    it.context shouldBe "small"
                }

                // The application cannot reach into the peer's tag space; its own traffic still flows.
                a.ep.tryTsend(buf("x"), 0, 1, f.addrs[0][1], PeerTransfer.TAG_BIT or 5, null) shouldBe -Errno.EINVAL
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(4)), 0, 4, FiAddr.UNSPEC, PeerTransfer.TAG_BIT, 0, null) shouldBe
                    -Errno.EINVAL
                a.ep.tryTsend(buf("app message"), 0, 11, f.addrs[0][1], 9, "app-tx") shouldBe 0
                b.await(1, others = listOf(a)).single().let { (it as Completion).context shouldBe "app" }
                appRx.text(11) shouldBe "app message"
            }
        }
    })
