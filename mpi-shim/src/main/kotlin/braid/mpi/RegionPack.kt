package braid.mpi

import braid.core.Endpoint
import braid.core.Errno
import braid.core.MemoryRegion
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * `MPI_Pack` and `MPI_Unpack` of memory of any interface (device memory included): the bytes [count] elements of a type
 * span in the region are copied to a host buffer through the endpoint's copy service (its overrides, else the built-in
 * copy), packed or unpacked there by the host code, and (unpack) copied back whole, so the gaps between a type's
 * segments keep the region's bytes. The host buffer is kept between calls (one per communicator's process, under its
 * lock).
 */
internal class RegionPack(private val ep: Endpoint) {
    private var host: ByteBuffer = ByteBuffer.allocateDirect(0)

    @Synchronized
    fun pack(
        call: String,
        type: Datatype,
        region: MemoryRegion,
        offset: Long,
        count: Int,
        out: ByteBuffer,
        at: Int,
    ): Int {
        val (first, n) = spanOf(call, type, region, offset, count)
        val h = hostOf(n)
        copied(call, "input", region, ep.copyFromRegion(region, offset + first, UnsafeBuffer(h, 0, n), 0, n))
        return type.pack(h, (-first).toInt(), count, out, at)
    }

    @Synchronized
    fun unpack(
        call: String,
        type: Datatype,
        packed: ByteBuffer,
        at: Int,
        region: MemoryRegion,
        offset: Long,
        count: Int,
    ): Int {
        val (first, n) = spanOf(call, type, region, offset, count)
        val h = hostOf(n)
        val view = UnsafeBuffer(h, 0, n)
        copied(call, "output", region, ep.copyFromRegion(region, offset + first, view, 0, n)) // keep the gaps
        val end = type.unpack(packed, at, h, (-first).toInt(), count)
        copied(call, "output", region, ep.copyToRegion(region, offset + first, view, 0, n))
        return end
    }

    companion object {
        /**
         * Where [count] elements of [type] at [offset] of [region] start relative to [offset], and how many bytes they
         * span; refused (`MPI_ERR_BUFFER`) outside the region.
         */
        fun spanOf(call: String, type: Datatype, region: MemoryRegion, offset: Long, count: Int): Pair<Long, Int> {
            if (count <= 0 || type.size == 0L) return 0L to 0
            val step = (count - 1) * type.extent
            val first = type.trueLb + minOf(0, step)
            val end = type.trueLb + type.trueExtent + maxOf(0, step)
            if (offset + first < 0 || offset + end > region.length || end - first > Int.MAX_VALUE) {
                throw MPIException.of(
                    ErrorClass.ERR_BUFFER,
                    call,
                    "$count × $type at byte offset $offset of memory region ${region.key} needs bytes " +
                        "[${offset + first}, ${offset + end}) but the region holds ${region.length}",
                )
            }
            return first to (end - first).toInt()
        }
    }

    private fun hostOf(n: Int): ByteBuffer {
        if (host.capacity() < n) host = ByteBuffer.allocateDirect(maxOf(n, 4096)).order(ByteOrder.nativeOrder())
        return host
    }

    private fun copied(call: String, what: String, region: MemoryRegion, rc: Int) {
        if (rc != 0) {
            throw MPIException.of(
                ErrorClass.ERR_OTHER,
                call,
                "the copy of the $what (memory region ${region.key}, ${region.iface}) failed with ${Errno.name(rc)}; " +
                    "set a copy function with setOp or install the interface's runtime",
            )
        }
    }
}
