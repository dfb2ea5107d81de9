package braid.core

import braid.provider.DomainProvider
import braid.provider.Provider
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import java.nio.ByteBuffer

class ObjectModelTest :
    FunSpec({
        test("getInfo returns shm with the capabilities asked for and refuses ones it lacks, naming them") {
            val info = Braid.getInfo(Hints(caps = Caps.TAGGED)).first()
            info.provider shouldBe "shm"
            (info.caps and Caps.TAGGED) shouldBe Caps.TAGGED
            (info.caps and Caps.MSG) shouldBe 0L // a primary capability not asked for is not granted
            (info.caps and Caps.LOCAL_COMM) shouldBe Caps.LOCAL_COMM
            val e = shouldThrow<FabricException> { Braid.getInfo(Hints(caps = Caps.MULTICAST, provider = "shm")) }
            e.code shouldBe Errno.ENODATA
            e.message shouldContain "lacks capabilities FI_MULTICAST"
            shouldThrow<FabricException> { Braid.getInfo(Hints(provider = "nope")) }.message shouldContain
                "no provider named 'nope'"
        }

        test(
            "a provider that needs a mode bit the caller did not set is skipped; with the bit set it is listed after shm"
        ) {
            val needy =
                object : Provider {
                    override val name = "needs-context"

                    override fun infos() =
                        listOf(
                            Braid.getInfo(Hints(provider = "shm")).first().copy(provider = name, mode = Mode.CONTEXT)
                        )

                    override fun openDomain(domain: Domain, info: Info): DomainProvider =
                        error("not opened in this test")
                }
            Braid.register(needy)
            try {
                Braid.getInfo().map { it.provider }.distinct() shouldBe Braid.providerNames() - "needs-context"
                Braid.getInfo(Hints(mode = Mode.CONTEXT)).map { it.provider }.distinct() shouldBe Braid.providerNames()
                Braid.getInfo(Hints(mode = Mode.CONTEXT)).first().mode shouldBe 0L // shm needs none of them
                shouldThrow<FabricException> { Braid.getInfo(Hints(provider = "needs-context")) }.message shouldContain
                    "requires mode bits FI_CONTEXT"
            } finally {
                Braid.unregister(needy.name)
            }
        }

        test("enabling an endpoint that lacks a CQ or an AV fails and says which is missing") {
            val info = Braid.getInfo(Hints(provider = "shm")).first()
            Braid.fabric(info).use { fabric ->
                val domain = fabric.domain(info)
                val ep = domain.endpoint()
                shouldThrow<FabricException> { ep.enable() }
                    .let {
                        it.code shouldBe Errno.ENOCQ
                        it.message shouldContain "not bound to a completion queue"
                    }
                ep.bind(domain.completionQueue(), OpFlags.TRANSMIT)
                shouldThrow<FabricException> { ep.enable() }.message shouldContain "no completion queue bound for RECV"
                ep.bind(domain.completionQueue(), OpFlags.RECV)
                shouldThrow<FabricException> { ep.enable() }
                    .let {
                        it.code shouldBe Errno.ENOAV
                        it.message shouldContain "address vector"
                    }
                ep.bind(domain.addressVector())
                ep.enable()
                shouldThrow<FabricException> { ep.bind(domain.addressVector()) }.code shouldBe Errno.EOPBADSTATE
                ep.close()
            }
        }

        test("data operations before enable return EOPBADSTATE instead of throwing") {
            val info = Braid.getInfo(Hints(provider = "shm")).first()
            Braid.fabric(info).use { fabric ->
                val ep = fabric.domain(info).endpoint()
                ep.tryTsend(buf("x"), 0, 1, 0, 0, null) shouldBe -Errno.EOPBADSTATE
                ep.close()
            }
        }

        test("TABLE addresses are sequential, MAP addresses refuse reuse after remove, and lookups round-trip") {
            TestFabric(3).use { f ->
                val n = f.nodes[0]
                val table = n.domain.addressVector(AvType.TABLE)
                table.insert(f.nodes[1].ep.address) shouldBe 0
                table.insert(f.nodes[2].ep.address) shouldBe 1
                table.lookup(1).toList() shouldBe f.nodes[2].ep.address.toList()
                table.straddr(0) shouldStartWith "fi_shm://"
                table.remove(0)
                shouldThrow<FabricException> { table.lookup(0) }.code shouldBe Errno.ENOENT
                table.insert(f.nodes[1].ep.address) shouldBe 2

                val map = n.domain.addressVector(AvType.MAP)
                val first = map.insert(f.nodes[1].ep.address)
                map.remove(first)
                val second = map.insert(f.nodes[2].ep.address)
                second shouldNotBe first
                shouldThrow<FabricException> { map.lookup(first) }.code shouldBe Errno.ENOENT
                map.count shouldBe 1
            }
        }

        test("a malformed address blob is refused with what is wrong in it") {
            TestFabric(1).use { f ->
                val av = f.nodes[0].av
                shouldThrow<FabricException> { av.insert(ByteArray(3)) }.message shouldContain "too short"
                val good = f.nodes[0].ep.address
                shouldThrow<FabricException> { av.insert(good.copyOf().also { it[0] = 0 }) }.message shouldContain
                    "magic"
                shouldThrow<FabricException> { av.insert(good.copyOf(good.size - 2)) }.message shouldContain
                    "runs past the end"
                av.insert(good + byteArrayOf(1, 2, 3)) shouldBe
                    0 // a newer version's trailing fields are skipped: the same address, already fi_addr 0
            }
        }

        test("memory registration needs direct memory and unique keys") {
            TestFabric(1).use { f ->
                val d = f.nodes[0].domain
                shouldThrow<FabricException> { d.registerMemory(ByteBuffer.allocate(64), MrAccess.REMOTE_READ) }
                    .message shouldContain "allocateDirect"
                val mr =
                    d.registerMemory(ByteBuffer.allocateDirect(4096), MrAccess.REMOTE_READ or MrAccess.REMOTE_WRITE, 77)
                mr.key shouldBe 77
                mr.address shouldNotBe 0L
                mr.permits(4000, 96, MrAccess.REMOTE_WRITE) shouldBe true
                mr.permits(4000, 97, MrAccess.REMOTE_WRITE) shouldBe false
                shouldThrow<FabricException> { d.registerMemory(ByteBuffer.allocateDirect(64), 0, 77) }.code shouldBe
                    Errno.ENOKEY
                mr.close()
                d.registerMemory(ByteBuffer.allocateDirect(64), 0, 77).key shouldBe 77
            }
        }

        test("counters count completions and a wait returns once the threshold is reached") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rxCounter = b.domain.counter()
                // A fresh endpoint, bound to the counter before enable.
                val ep =
                    b.domain.endpoint().also {
                        it.bind(b.cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        it.bind(b.av)
                        it.bind(rxCounter, OpFlags.RECV)
                        it.enable()
                    }
                val dest = a.av.insert(ep.address)
                repeat(3) {
                    ep.tryTrecv(
                        org.agrona.concurrent.UnsafeBuffer(ByteArray(8)),
                        0,
                        8,
                        FiAddr.UNSPEC,
                        0,
                        -1,
                        null,
                    ) shouldBe 0
                }
                repeat(3) { a.ep.tryTinject(buf("c"), 0, 1, dest, it.toLong()) shouldBe 0 }
                repeat(10) { a.domain.progress() }
                rxCounter.wait(3, 10_000) shouldBe 0
                rxCounter.value shouldBe 3
                rxCounter.wait(4, 50) shouldBe -Errno.ETIMEDOUT
                ep.close()
            }
        }

        test("a blocking read waits for a completion, and times out with EAGAIN when none comes") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = Completion()
                b.cq.sread(c, 20) shouldBe -Errno.EAGAIN
                val rx = java.nio.ByteBuffer.allocate(16)
                b.ep.tryTrecv(rx, FiAddr.UNSPEC, 5, 0, "heap-bytebuffer") shouldBe 0
                val sender = Thread {
                    Thread.sleep(50)
                    val msg = java.nio.ByteBuffer.allocateDirect(16).put("direct".toByteArray()).flip()
                    check(a.ep.tryTsend(msg, f.addrs[0][1], 5, null) == 0)
                    repeat(1000) { a.domain.progress() }
                }
                sender.start()
                b.cq.sread(c, 10_000) shouldBe 1
                sender.join()
                c.context shouldBe "heap-bytebuffer"
                c.len shouldBe 6
                String(rx.array(), 0, 6) shouldBe "direct"
            }
        }

        test("shm files are private to their owner (mode 0600) and removed on close") {
            TestFabric(1).use { f ->
                val name = braid.provider.shm.ShmAddressDescriptor.parse(f.nodes[0].ep.address).name
                val file = braid.provider.shm.ShmDirectory.endpointFile(name)
                java.nio.file.attribute.PosixFilePermissions.toString(
                    java.nio.file.Files.getPosixFilePermissions(file)
                ) shouldBe "rw-------"
                f.nodes[0].ep.close()
                java.nio.file.Files.exists(file) shouldBe false
            }
        }

        test("getInfo's verbose description reads like fi_info -v") {
            val text = Braid.getInfo(Hints(provider = "shm")).first().describe()
            text shouldContain "prov_name: shm"
            text shouldContain "type: FI_EP_RDM"
            listOf("caps:", "mode:", "max_msg_size:", "inject_size:").forEach { text shouldContain it }
            Braid.providerNames() shouldContain "shm"
        }
    })
