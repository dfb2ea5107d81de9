package braid.it

import braid.core.CudaRuntime
import braid.core.Errno
import braid.core.HmemCopyFunction
import braid.core.HmemIface
import braid.core.HmemOp
import braid.core.MrAccess
import braid.testsupport.Deadline
import java.nio.ByteBuffer
import java.nio.file.Paths
import java.time.Duration
import java.util.concurrent.atomic.AtomicLong
import org.agrona.concurrent.UnsafeBuffer

/**
 * The sender of [CudaHmemIT]. Usage: `CudaSendMain DIR PROVIDER MODE ROUNDS SIZE…`: sends, from GPU memory, ROUNDS
 * times each SIZE (tag = message number), each message [CudaHmem.pattern] of its number, one at a time. MODE `builtin`
 * leaves the copies to Braid's CUDA runtime binding; `override` sets counting copy functions on the domain and prints
 * `COPIED n` (the bytes they moved). Then waits for the receiver's mark and prints OK.
 */
object CudaSendMain {
    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val node = PeerMain.Node(args[1], Paths.get(args[0]), "tx")
        val mode = args[2]
        val rounds = args[3].toInt()
        val sizes = args.drop(4).map { it.toInt() }
        val copied = CudaHmem.override(node.domain, mode)
        val dest = node.peer("rx")
        val max = sizes.max()
        val gpu = CudaRuntime.malloc(max.toLong())
        val mr = node.domain.registerMemory(HmemIface.CUDA, 0, gpu, max, MrAccess.SEND)
        val host = UnsafeBuffer(ByteBuffer.allocateDirect(max))
        val deadline = Deadline.of("every GPU send to complete", Duration.ofSeconds(300))
        var seq = 0
        for (round in 0 until rounds) for (size in sizes) {
            CudaHmem.fill(host, seq, size)
            CudaHmem.toGpu(gpu, host, size)
            val rc = node.ep.tryTsend(mr, 0, size, dest, seq.toLong(), "m$seq")
            check(rc == 0) { "tsend of message $seq returned ${Errno.name(rc)}" }
            while (node.poll() == null) deadline.check { "message $seq ($size bytes) not sent" }
            seq++
        }
        println("COPIED ${copied.get()}")
        System.out.flush()
        node.awaitMark("rx", deadline)
        mr.close()
        CudaRuntime.free(gpu)
        node.close()
        println("OK sent $seq messages")
    }
}

/** What both sides of [CudaHmemIT] share. */
object CudaHmem {
    fun pattern(seq: Int, i: Int): Byte = (i * 131 + seq * 7 + 1).toByte()

    fun fill(b: UnsafeBuffer, seq: Int, size: Int) {
        for (i in 0 until size) b.putByte(i, pattern(seq, i))
    }

    /** The first wrong index of message [seq] in [b], or -1. */
    fun check(b: UnsafeBuffer, seq: Int, size: Int): Int {
        for (i in 0 until size) if (b.getByte(i) != pattern(seq, i)) return i
        return -1
    }

    private val iov = LongArray(2)

    fun toGpu(gpu: Long, host: UnsafeBuffer, size: Int) {
        iov[0] = gpu
        iov[1] = size.toLong()
        val rc = CudaRuntime.TO_DEVICE.copy(HmemIface.CUDA, 0, iov, 1, 0, host.addressOffset(), size.toLong())
        check(rc == size.toLong()) { "cudaMemcpy to the GPU returned $rc" }
    }

    fun fromGpu(gpu: Long, host: UnsafeBuffer, size: Int) {
        iov[0] = gpu
        iov[1] = size.toLong()
        val rc = CudaRuntime.FROM_DEVICE.copy(HmemIface.CUDA, 0, iov, 1, 0, host.addressOffset(), size.toLong())
        check(rc == size.toLong()) { "cudaMemcpy from the GPU returned $rc" }
    }

    /** In `override` mode, sets counting copy functions (over the CUDA runtime) on [domain]; the bytes they moved. */
    fun override(domain: braid.core.Domain, mode: String): AtomicLong {
        val bytes = AtomicLong()
        if (mode == "override") {
            val to = HmemCopyFunction { i, d, v, n, o, h, s ->
                CudaRuntime.TO_DEVICE.copy(i, d, v, n, o, h, s).also { if (it > 0) bytes.addAndGet(it) }
            }
            val from = HmemCopyFunction { i, d, v, n, o, h, s ->
                CudaRuntime.FROM_DEVICE.copy(i, d, v, n, o, h, s).also { if (it > 0) bytes.addAndGet(it) }
            }
            check(domain.setOp(HmemOp.COPY_TO_HMEM_IOV, to) == 0 && domain.setOp(HmemOp.COPY_FROM_HMEM_IOV, from) == 0)
        }
        return bytes
    }
}
