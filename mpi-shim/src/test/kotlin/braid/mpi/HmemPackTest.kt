package braid.mpi

import braid.core.Errno
import braid.core.MrAccess
import braid.core.TestDevice
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * `MPI_Pack`/`MPI_Unpack` of device memory (a [TestDevice] nothing but its copy functions can reach): the span is
 * staged through the endpoint's copy service, every byte through the overrides, the gaps of a strided type kept.
 */
class HmemPackTest :
    FunSpec({
        test("a matrix column in device memory packs like the host one and unpacks into it, through the overrides") {
            val device = TestDevice(1 shl 16, "mpi-pack-device")
            runRanks(1) { mpi ->
                val w = mpi.world
                val copies = device.copies()
                copies.setOn(mpi.ep.domain) shouldBe listOf(0, 0)
                val rows = 4
                val cols = 5
                val bytes = rows * cols * 4
                val host = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
                for (r in 0 until rows) for (c in 0 until cols) host.putInt((r * cols + c) * 4, r * 100 + c)
                val at = device.alloc(bytes)
                device.put(at, ByteArray(bytes) { host.get(it) })
                val mr = mpi.ep.domain.registerMemory(device.iface, 0, at, bytes, MrAccess.SEND or MrAccess.RECV)
                val column = Datatype.vector(rows, 1, cols, Datatype.INT).commit()
                // Pack column 2 (byte offset 8) from device memory: the same bytes as from the host matrix.
                val fromHost = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder())
                val fromDevice = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder())
                w.pack(host, 8, 1, column, fromHost, 0) shouldBe 16
                w.pack(mr, 8, 1, column, fromDevice, 0) shouldBe 16
                List(4) { fromDevice.getInt(it * 4) } shouldBe listOf(2, 102, 202, 302)
                fromDevice shouldBe fromHost
                val span = ((rows - 1) * cols + 1) * 4L
                copies.fromBytes.get() shouldBe span
                // Unpack new values into column 0: the other columns (the gaps) keep their bytes.
                val packed = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder())
                for (i in 0 until 4) packed.putInt(i * 4, -1 - i)
                copies.reset()
                w.unpack(packed, 0, mr, 0, 1, column) shouldBe 16
                copies.toBytes.get() shouldBe span
                val back = device.get(at, bytes)
                val ints = ByteBuffer.wrap(back).order(ByteOrder.nativeOrder())
                for (r in 0 until rows) {
                    for (c in 0 until cols) {
                        ints.getInt((r * cols + c) * 4) shouldBe if (c == 0) -1 - r else r * 100 + c
                    }
                }
                // Outside the region, and a failed copy: MPI errors naming them.
                shouldThrow<MPIException> { w.pack(mr, 20, 1, column, fromDevice, 0) }.errorClass shouldBe
                    ErrorClass.ERR_BUFFER
                copies.failNext.set(Errno.ENODEV)
                shouldThrow<MPIException> { w.pack(mr, 0, 1, column, fromDevice, 0) }.errorClass shouldBe
                    ErrorClass.ERR_OTHER
                mr.close()
            }
        }
    })
