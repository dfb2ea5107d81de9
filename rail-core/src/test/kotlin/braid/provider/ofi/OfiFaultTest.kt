package braid.provider.ofi

import braid.core.Braid
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.FabricException
import braid.core.Hints
import braid.core.OpFlags
import braid.core.Rail
import braid.core.TestFabric
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/** Faults on the native rail end in clear errors that name the native provider and libfabric's text, never a crash. */
class OfiFaultTest :
    FunSpec({
        test("a native provider that is not there is refused by name") {
            shouldThrow<FabricException> { Braid.getInfo(Hints(provider = "ofi:nosuch")) }.message shouldContain
                "no native provider 'nosuch'"
        }

        test("an address of another native provider is refused naming both") {
            TestFabric(rail = Rail.ofi("ofi:shm")).use { shm ->
                TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { tcp ->
                    val e = shouldThrow<FabricException> { tcp.nodes[0].av.insert(shm.nodes[0].ep.address) }
                    e.message shouldContain "ofi:tcp;ofi_rxm"
                    e.message shouldContain "native provider 'shm'"
                }
            }
        }

        test("a well-formed blob whose native address libfabric refuses fails the send and says why on the EQ") {
            TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { f ->
                val bogus = OfiAddresses.wrap("tcp;ofi_rxm", 2, byteArrayOf(1, 2, 3))
                val addr = f.nodes[0].av.insert(bogus)
                f.nodes[0].ep.trySend(UnsafeBuffer(ByteArray(8)), 0, 8, addr, null) shouldBe -Errno.EINVAL
                val err = CompletionError()
                f.eqs[0].readErr(err) shouldBe 1
                err.message shouldContain "ofi:tcp;ofi_rxm: fi_av_insert refused the peer address"
            }
        }

        test(
            "a message larger than the receiver's native buffers is a native CQ error, reported with libfabric's text"
        ) {
            val big = Braid.getInfo(Hints(provider = "ofi:tcp:lo").with(OfiParams.RECV_SIZE, 64 shl 10)).first()
            val small = big.with(OfiParams.RECV_SIZE, 1024)
            Braid.fabric(big).use { fabric ->
                val nodes =
                    listOf(big, small).map { info ->
                        val d = fabric.domain(info)
                        val cq = d.completionQueue(CqFormat.TAGGED)
                        val av = d.addressVector()
                        val eq = fabric.eventQueue()
                        val ep = d.endpoint()
                        ep.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        ep.bind(av)
                        ep.bind(eq)
                        ep.enable()
                        listOf(d, cq, av, eq, ep)
                    }
                val (da, cqa, ava, _, epa) = nodes[0]
                val (db, _, _, eqb, epb) = nodes[1]
                val dest = (ava as braid.core.AddressVector).insert((epb as braid.core.Endpoint).address)
                val payload = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
                (epa as braid.core.Endpoint).trySend(payload, 0, 4096, dest, "big") shouldBe 0
                val err = CompletionError()
                val deadline = Deadline.of("the receiver's native truncation error", Duration.ofSeconds(20))
                while ((eqb as braid.core.EventQueue).readErr(err) != 1) {
                    deadline.check()
                    (da as braid.core.Domain).progress()
                    (db as braid.core.Domain).progress()
                    (cqa as braid.core.CompletionQueue).read(braid.core.Completion())
                }
                err.message shouldContain "ofi:tcp;ofi_rxm: a message of"
                err.message shouldContain "1024-byte native receive"
                err.message shouldContain "prov_errno"
                err.message shouldContain "BRAID_OFI_RECV_SIZE"
            }
        }
    })
