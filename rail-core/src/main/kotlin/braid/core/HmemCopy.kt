package braid.core

import com.sun.jna.Native
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The one copy service between host memory and memory of any [HmemIface]. System memory gets a plain copy, inlined at
 * the call site (no allocation, no call through an interface). Any other interface goes through the override set for
 * the operation ([HmemOverrides]: the endpoint's, else its domain's), else the built-in copy for that interface (CUDA:
 * `cudaMemcpy` from `libcudart` through JNA direct mapping), else it fails with `-ENOSYS` and [explain] says why.
 *
 * A copy returns the bytes copied or a negated errno; it never throws (an override that throws counts as `-EIO`). The
 * host side handed to a copy function is always an off-heap address: a heap-backed host buffer goes through a scratch
 * buffer of the calling thread, kept between calls.
 */
internal object HmemCopy {
    /** Copies [size] bytes of [src] from [srcOffset] into [mr] at [offset]; [iov] is the caller's 2-long scratch. */
    @Suppress("NOTHING_TO_INLINE")
    inline fun toRegion(
        ops: HmemOverrides,
        mr: MemoryRegion,
        offset: Long,
        src: DirectBuffer,
        srcOffset: Int,
        size: Int,
        iov: LongArray,
    ): Long {
        if (mr.iface.isSystem) {
            mr.buffer.putBytes(offset.toInt(), src, srcOffset, size)
            return size.toLong()
        }
        iov[0] = mr.address
        iov[1] = mr.length.toLong()
        return toDevice(ops, mr.iface, mr.device, iov, 1, offset, src, srcOffset, size)
    }

    /** Copies [size] bytes of [mr] from [offset] into [dst] at [dstOffset]; [iov] is the caller's 2-long scratch. */
    @Suppress("NOTHING_TO_INLINE")
    inline fun fromRegion(
        ops: HmemOverrides,
        mr: MemoryRegion,
        offset: Long,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        size: Int,
        iov: LongArray,
    ): Long {
        if (mr.iface.isSystem) {
            dst.putBytes(dstOffset, mr.buffer, offset.toInt(), size)
            return size.toLong()
        }
        iov[0] = mr.address
        iov[1] = mr.length.toLong()
        return fromDevice(ops, mr.iface, mr.device, iov, 1, offset, dst, dstOffset, size)
    }

    /** Host [src] → device pieces [iov] from [iovOffset] (`copy_to_hmem_iov`). */
    fun toDevice(
        ops: HmemOverrides,
        iface: HmemIface,
        device: Long,
        iov: LongArray,
        iovCount: Int,
        iovOffset: Long,
        src: DirectBuffer,
        srcOffset: Int,
        size: Int,
    ): Long {
        val fn = ops.toHmem() ?: builtIn(iface, HmemOp.COPY_TO_HMEM_IOV) ?: return -Errno.ENOSYS.toLong()
        val host: Long
        if (offHeap(src)) {
            host = src.addressOffset() + srcOffset
        } else {
            val s = scratch(size)
            s.putBytes(0, src, srcOffset, size)
            host = s.addressOffset()
        }
        return call(fn, iface, device, iov, iovCount, iovOffset, host, size)
    }

    /** Device pieces [iov] from [iovOffset] → host [dst] (`copy_from_hmem_iov`). */
    fun fromDevice(
        ops: HmemOverrides,
        iface: HmemIface,
        device: Long,
        iov: LongArray,
        iovCount: Int,
        iovOffset: Long,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        size: Int,
    ): Long {
        val fn = ops.fromHmem() ?: builtIn(iface, HmemOp.COPY_FROM_HMEM_IOV) ?: return -Errno.ENOSYS.toLong()
        if (offHeap(dst))
            return call(fn, iface, device, iov, iovCount, iovOffset, dst.addressOffset() + dstOffset, size)
        val s = scratch(size)
        val n = call(fn, iface, device, iov, iovCount, iovOffset, s.addressOffset(), size)
        if (n > 0) dst.putBytes(dstOffset, s, 0, size)
        return n
    }

    /** Why a copy of [iface] memory for [op] failed with [rc] (a negated errno), for an error completion. */
    fun explain(iface: HmemIface, op: HmemOp, rc: Long): String =
        if (rc == -Errno.ENOSYS.toLong()) {
            val lib = if (iface === HmemIface.CUDA) "the CUDA runtime is missing (${CudaRuntime.missing}); " else ""
            "no copy function for $iface memory ($op): ${lib}set one with setOp(HmemOp.$op, fn) on the domain or endpoint"
        } else {
            "the $op copy of $iface memory failed with errno ${-rc} (${Errno.name(rc.toInt())})"
        }

    private fun call(
        fn: HmemCopyFunction,
        iface: HmemIface,
        device: Long,
        iov: LongArray,
        iovCount: Int,
        iovOffset: Long,
        host: Long,
        size: Int,
    ): Long {
        val n =
            try {
                fn.copy(iface, device, iov, iovCount, iovOffset, host, size.toLong())
            } catch (t: Throwable) {
                return -Errno.EIO.toLong()
            }
        return if (n < 0 || n == size.toLong()) n else -Errno.EIO.toLong() // a short copy is a failed one
    }

    private fun builtIn(iface: HmemIface, op: HmemOp): HmemCopyFunction? =
        if (iface === HmemIface.CUDA && CudaRuntime.available) {
            if (op == HmemOp.COPY_TO_HMEM_IOV) CudaRuntime.TO_DEVICE else CudaRuntime.FROM_DEVICE
        } else null

    private fun offHeap(b: DirectBuffer): Boolean = b.byteArray() == null && b.byteBuffer()?.isDirect != false

    private val scratches = ThreadLocal<UnsafeBuffer>()

    private fun scratch(size: Int): UnsafeBuffer {
        val s = scratches.get()
        if (s != null && s.capacity() >= size) return s
        return UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(maxOf(size, 4096))).also { scratches.set(it) }
    }

    /**
     * Walks [size] bytes of the pieces [iov] from [iovOffset], calling [piece] with each piece's device address, the
     * offset on the host side and the length; stops at the first negative result and returns it, else [size].
     */
    inline fun walk(
        iov: LongArray,
        iovCount: Int,
        iovOffset: Long,
        size: Long,
        piece: (Long, Long, Long) -> Int,
    ): Long {
        var skip = iovOffset
        var done = 0L
        var i = 0
        while (done < size && i < iovCount) {
            val base = iov[2 * i]
            val len = iov[2 * i + 1]
            i++
            if (skip >= len) {
                skip -= len
                continue
            }
            val n = minOf(len - skip, size - done)
            val rc = piece(base + skip, done, n)
            if (rc < 0) return rc.toLong()
            done += n
            skip = 0
        }
        return if (done == size) size else -Errno.EINVAL.toLong()
    }
}

/**
 * The CUDA runtime (`libcudart`), bound on first use through JNA direct mapping (an interface-mapped call costs about a
 * microsecond more; see anchors §5.5). [available] is false where no runtime is installed; [missing] says what was
 * tried.
 */
internal object CudaRuntime {
    private val names = listOf("cudart", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0")
    private const val HOST_TO_DEVICE = 1
    private const val DEVICE_TO_HOST = 2

    /** The library name that loaded, or null. */
    val library: String? by lazy {
        for (n in names) {
            try {
                Native.register(Api::class.java, n)
                return@lazy n
            } catch (e: Throwable) {
                // try the next name
            }
        }
        null
    }

    val available: Boolean
        get() = library != null

    val missing: String
        get() =
            "libcudart not found (tried ${names.joinToString()}); install the CUDA runtime or add its lib directory to LD_LIBRARY_PATH"

    val TO_DEVICE: HmemCopyFunction = HmemCopyFunction { _, _, iov, count, offset, host, size ->
        HmemCopy.walk(iov, count, offset, size) { dev, at, n ->
            cudaErr(Api.cudaMemcpy(dev, host + at, n, HOST_TO_DEVICE))
        }
    }

    val FROM_DEVICE: HmemCopyFunction = HmemCopyFunction { _, _, iov, count, offset, host, size ->
        HmemCopy.walk(iov, count, offset, size) { dev, at, n ->
            cudaErr(Api.cudaMemcpy(host + at, dev, n, DEVICE_TO_HOST))
        }
    }

    /** Pins [length] bytes at [address] for fast copies (`cudaHostRegister`); false if it could not. */
    fun pin(address: Long, length: Long): Boolean = available && Api.cudaHostRegister(address, length, 0) == 0

    /** `cudaMalloc`: a device address of [length] bytes (for tests and benchmarks). */
    fun malloc(length: Long): Long {
        val out = UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8))
        val rc = Api.cudaMalloc(out.addressOffset(), length)
        if (rc != 0) throw FabricException(Errno.ENOMEM, "cudaMalloc($length) failed with cudaError $rc")
        return out.getLong(0)
    }

    fun free(address: Long) {
        Api.cudaFree(address)
    }

    /** Devices the runtime sees (0 where none or no runtime). */
    fun deviceCount(): Int {
        if (!available) return 0
        val out = UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(4))
        return if (Api.cudaGetDeviceCount(out.addressOffset()) == 0) out.getInt(0) else 0
    }

    private fun cudaErr(rc: Int): Int = if (rc == 0) 0 else -Errno.EIO

    private object Api {
        @JvmStatic external fun cudaMemcpy(dst: Long, src: Long, count: Long, kind: Int): Int

        @JvmStatic external fun cudaHostRegister(ptr: Long, size: Long, flags: Int): Int

        @JvmStatic external fun cudaMalloc(devPtr: Long, size: Long): Int

        @JvmStatic external fun cudaFree(devPtr: Long): Int

        @JvmStatic external fun cudaGetDeviceCount(count: Long): Int
    }
}
