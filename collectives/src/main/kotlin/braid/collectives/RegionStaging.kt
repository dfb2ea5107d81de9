package braid.collectives

import braid.core.Endpoint
import braid.core.Errno
import braid.core.FabricException
import braid.core.MemoryRegion
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The one staging step of a group's collectives on memory of any interface (device memory included): the inputs are
 * copied into a host buffer the group keeps (through the endpoint's copy service: its overrides, else the built-in
 * copy), the host algorithm runs on it, and the outputs are copied back. System memory takes the same path (a plain
 * copy), so one code path serves every interface. Not thread-safe: one region collective at a time per group.
 */
internal class RegionStaging(val endpoint: Endpoint, private val group: String) {
    private var host: UnsafeBuffer? = null

    /**
     * Runs [body] on a host buffer of [inBytes] + [outBytes] bytes: [input]'s bytes from [inOffset] (if not null) are
     * copied to its start first; after [body], the [outBytes] at [outAt] are copied to [output] at [outOffset] (if not
     * null). A failed copy throws [FabricException] with the copy's errno, naming [op].
     */
    inline fun run(
        op: String,
        input: MemoryRegion?,
        inOffset: Long,
        inBytes: Int,
        output: MemoryRegion?,
        outOffset: Long,
        outAt: Int,
        outBytes: Int,
        body: (UnsafeBuffer) -> Unit,
    ) {
        val h = buffer(maxOf(inBytes, outAt + outBytes))
        if (input != null) check(endpoint.copyFromRegion(input, inOffset, h, 0, inBytes), op, "input", input)
        body(h)
        if (output != null) check(endpoint.copyToRegion(output, outOffset, h, outAt, outBytes), op, "result", output)
    }

    /** [count] elements of [datatype] as bytes, refused when a host buffer cannot hold [times] of them. */
    fun bytes(op: String, count: Int, datatype: Datatype, times: Int = 1): Int {
        val n = count.toLong() * datatype.size
        if (count < 0 || n * times > Int.MAX_VALUE / 2) {
            throw FabricException.invalid("group $group: $op of $count $datatype (× $times): size out of range")
        }
        return n.toInt()
    }

    fun buffer(size: Int): UnsafeBuffer {
        val b = host
        if (b != null && b.capacity() >= size) return b
        return UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 4096))).also { host = it }
    }

    fun check(rc: Int, op: String, what: String, region: MemoryRegion) {
        if (rc != 0) {
            throw FabricException(
                -rc,
                "group $group: $op: the copy of the $what (memory region ${region.key}, ${region.iface}) failed " +
                    "with ${Errno.name(rc)}; set a copy function with setOp or install the interface's runtime",
            )
        }
    }
}
