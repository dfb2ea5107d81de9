package braid.collectives

import braid.core.Errno
import braid.core.FabricException
import braid.core.TestDevice
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * Allreduce of device memory (a [TestDevice] no rail can address): the inputs are copied to the host, reduced, and the
 * results copied back, every byte through the copy overrides; a failed copy throws with its errno.
 */
class HmemAllreduceTest :
    FunSpec({
        test("an allreduce of device memory on 3 in-process ranks reduces every element, through the overrides") {
            val device = TestDevice(1 shl 20, "collectives-device")
            collectiveFabric(3).use { f ->
                val groups = f.join()
                val copies = f.nodes.map { n -> device.copies().also { it.setOn(n.domain) shouldBe listOf(0, 0) } }
                val count = 5003 // rendezvous-sized between ranks
                val bytes = count * 8
                val sends = f.nodes.map { device.alloc(bytes) }
                val recvs = f.nodes.map { device.alloc(bytes) }
                for ((r, a) in sends.withIndex()) for (i in 0 until count) device.putLong(a + i * 8L, (r + 1L) * i)
                val sendMrs =
                    f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, sends[r], bytes, 0) }
                val recvMrs =
                    f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, recvs[r], bytes, 0) }
                onEveryRank(groups, seconds = 60) { g ->
                    g.allreduce(sendMrs[g.rank], 0, recvMrs[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM)
                }
                for (r in 0 until 3) {
                    for (i in 0 until count) device.getLong(recvs[r] + i * 8L) shouldBe 6L * i
                    copies[r].fromBytes.get() shouldBe bytes.toLong()
                    copies[r].toBytes.get() shouldBe bytes.toLong()
                }
                // A failing copy throws with its errno, before anything is sent.
                copies[0].failNext.set(Errno.ENODEV)
                shouldThrow<FabricException> {
                        groups[0].allreduce(sendMrs[0], 0, recvMrs[0], 0, count, Datatype.INT64, ReduceOp.SUM)
                    }
                    .code shouldBe Errno.ENODEV
            }
        }
    })
