package braid.provider.ofi

import braid.core.Braid
import braid.core.Completion
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.core.text
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import org.agrona.concurrent.UnsafeBuffer

class OfiSmokeTest :
    FunSpec({
        test("getInfo for ofi lists the native providers present with their native names") {
            val all = Braid.getInfo(Hints(provider = "ofi"))
            all.map { it.provider }.distinct() shouldBe listOf("ofi")
            val names = all.map { it.settings[OfiParams.PROVIDER] }.distinct()
            names shouldContainAll listOf("tcp;ofi_rxm", "shm", "udp;ofi_rxd", "sockets")
        }

        for ((name, domain) in listOf("ofi:tcp" to "lo", "ofi:shm" to null, "ofi:sockets" to "lo", "ofi:udp" to "lo")) {
            test("$name: a tagged and an untagged message cross between two endpoints") {
                TestFabric(rail = Rail.ofi(name, domain)).use { f ->
                    val (a, b) = f.nodes
                    val rx = UnsafeBuffer(ByteArray(16))
                    b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 7, 0, "r") shouldBe 0
                    a.ep.tryTsend(buf("hello"), 0, 5, f.addrs[0][1], 7, "s") shouldBe 0
                    val got = b.await(1, others = listOf(a)).single() as Completion
                    got.context shouldBe "r"
                    got.len shouldBe 5
                    got.source shouldBe f.addrs[1][0]
                    rx.text(5) shouldBe "hello"
                    (a.await(1).single() as Completion).context shouldBe "s"
                }
            }
        }

        for ((name, domain) in listOf("ofi:tcp" to "lo", "ofi:shm" to null, "ofi:sockets" to "lo")) {
            test("$name: a send asked for delivery-complete goes as fi_tsendmsg with FI_DELIVERY_COMPLETE and lands") {
                TestFabric(rail = Rail.ofi(name, domain)).use { f ->
                    val (a, b) = f.nodes
                    val rx = UnsafeBuffer(ByteArray(16))
                    b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 3, 0, "r") shouldBe 0
                    a.ep.trySendmsg(
                        buf("landed"),
                        0,
                        6,
                        f.addrs[0][1],
                        3,
                        99,
                        braid.core.OpFlags.TAGGED or
                            braid.core.OpFlags.REMOTE_CQ_DATA or
                            braid.core.OpFlags.DELIVERY_COMPLETE,
                        "s",
                    ) shouldBe 0
                    (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "s"
                    val got = b.await(1, others = listOf(a)).single() as Completion
                    got.data shouldBe 99L
                    rx.text(6) shouldBe "landed"
                }
            }
        }

        test("in a link shm+ofi:tcp:lo, a peer without shm is reached over the native rail, and its stats say so") {
            TestFabric(rail = Rail.link("shm+ofi:tcp:lo", "ofi:tcp:lo")).use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                b.ep.tryRecv(rx, 0, 16, FiAddr.UNSPEC, "r") shouldBe 0
                a.ep.trySend(buf("native"), 0, 6, f.addrs[0][1], "s") shouldBe 0
                (b.await(1, others = listOf(a)).single() as Completion).source shouldBe f.addrs[1][0]
                rx.text(6) shouldBe "native"
                a.await(1)
                val rails = a.ep.stats().rails.filter { it.messagesSent > 0 }.map { it.rail }
                rails shouldBe listOf("ofi:tcp;ofi_rxm")
            }
        }
    })

/**
 * Native inject ([OfiParams.INJECT]): a send of at most the native inject size goes as `fi_inject` and its kin, each
 * form delivers its bytes, tag and CQ data and completes once, from the rail; a delivery-complete send or a larger one
 * still goes natively, and with the setting off nothing is injected.
 */
class OfiInjectTest :
    FunSpec({
        for ((name, domain) in listOf("ofi:tcp" to "lo", "ofi:shm" to null)) for (inject in listOf(true, false)) test(
            "$name, ofi.inject=$inject: untagged, tagged, with and without CQ data, delivered and completed once"
        ) {
            val settings = TestFabric.SETTINGS.with(OfiParams.INJECT, inject)
            TestFabric(rail = Rail.ofi(name, domain), settings = settings).use { f ->
                val (a, b) = f.nodes
                val dest = f.addrs[0][1]
                val rails = (a.ep.transport as OfiTransport)
                val forms =
                    listOf(
                        0L,
                        braid.core.OpFlags.REMOTE_CQ_DATA,
                        braid.core.OpFlags.TAGGED,
                        braid.core.OpFlags.TAGGED or braid.core.OpFlags.REMOTE_CQ_DATA,
                        braid.core.OpFlags.TAGGED or braid.core.OpFlags.DELIVERY_COMPLETE,
                    )
                for ((i, flags) in forms.withIndex()) {
                    val rx = UnsafeBuffer(ByteArray(64))
                    val tagged = flags and braid.core.OpFlags.TAGGED != 0L
                    if (tagged) b.ep.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, 9, 0, "r$i") shouldBe 0
                    else b.ep.tryRecv(rx, 0, 64, FiAddr.UNSPEC, "r$i") shouldBe 0
                    a.ep.trySendmsg(buf("form $i"), 0, 6, dest, 9, 100L + i, flags, "s$i") shouldBe 0
                    val sent = a.await(1, others = listOf(b)).single() as Completion
                    sent.context shouldBe "s$i"
                    val got = b.await(1, others = listOf(a)).single() as Completion
                    got.context shouldBe "r$i"
                    rx.text(6) shouldBe "form $i"
                    if (flags and braid.core.OpFlags.REMOTE_CQ_DATA != 0L) got.data shouldBe 100L + i
                }
                // Nothing more completes: each send completed once.
                a.ep.domain.progress()
                b.ep.domain.progress()
                a.cq.read(Completion()) shouldBe -braid.core.Errno.EAGAIN
                rails.injectedSends shouldBe (if (inject) 4L else 0L)
            }
        }
    })
