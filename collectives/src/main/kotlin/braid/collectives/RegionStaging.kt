package braid.collectives

import braid.core.Endpoint
import braid.core.Errno
import braid.core.FabricException
import braid.core.MemoryRegion
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The one staging step of a group's collectives on memory of any interface (device memory included): the input is
 * copied into a host buffer (through the endpoint's copy service: its overrides, else the built-in copy), the host
 * collective is started on it, and when it ends — under whatever drives it, whichever way the caller waits — its output
 * is copied back and the host buffer returned ([RegionJob]). System memory takes the same path (a plain copy), so one
 * code path serves every interface, blocking and nonblocking.
 *
 * Host buffers are pooled by power-of-two size, allocated the first time a size is needed and reused from then on, one
 * per collective in flight, so several region collectives may run at once on a group.
 */
internal class RegionStaging(private val owner: CollectiveGroup) {
    val endpoint: Endpoint = owner.endpoint
    private val group = "${owner.contextId}"
    private val pools = Array(32) { ArrayList<UnsafeBuffer>() }
    private val jobs = ArrayList<RegionJob>()

    /**
     * Starts a collective on a host buffer of `max(inBytes, outAt + outBytes)` bytes: [input]'s [inBytes] from
     * [inOffset] (if not null) are copied to its start, then [body] starts the host collective there (under the group's
     * lock, which the group's start takes again: the job it hands to the request, [CollectiveGroup.stagedJob], is this
     * one), and at its end the [outBytes] at [outAt] go to [output] at [outOffset] (if not null). With [preload] the
     * output span is read into the host buffer first, so what the collective does not write (the gaps between a `v`
     * form's displacements, an in-place block) goes back as it was. A failed copy of the input throws [FabricException]
     * with its errno, naming [op]; a failed copy of the output fails the request with its errno.
     */
    inline fun start(
        op: String,
        input: MemoryRegion?,
        inOffset: Long,
        inBytes: Int,
        output: MemoryRegion?,
        outOffset: Long,
        outAt: Int,
        outBytes: Int,
        preload: Boolean = false,
        body: (UnsafeBuffer) -> CollectiveRequest,
    ): CollectiveRequest {
        val job = job(op, maxOf(inBytes, outAt + outBytes), output, outOffset, outAt, outBytes)
        val h = job.host!!
        synchronized(owner.lock) {
            owner.stagedJob = job // the group's run() takes it for the request it starts
            try {
                if (input != null) check(endpoint.copyFromRegion(input, inOffset, h, 0, inBytes), op, "input", input)
                if (preload && output != null)
                    check(endpoint.copyFromRegion(output, outOffset, h, outAt, outBytes), op, "result span", output)
                return body(h)
            } catch (e: Throwable) {
                if (owner.stagedJob === job) job.end(false) // not started: nobody else gives it back
                throw e
            } finally {
                owner.stagedJob = null
            }
        }
    }

    /** [count] elements of [datatype] as bytes, refused when a host buffer cannot hold [times] of them. */
    fun bytes(op: String, count: Int, datatype: Datatype, times: Int = 1): Int {
        val n = count.toLong() * datatype.size
        if (count < 0 || n * times > Int.MAX_VALUE / 2) {
            throw FabricException.invalid("group $group: $op of $count $datatype (× $times): size out of range")
        }
        return n.toInt()
    }

    fun check(rc: Int, op: String, what: String, region: MemoryRegion) {
        if (rc != 0) throw FabricException(-rc, failure(rc, op, what, region))
    }

    fun failure(rc: Int, op: String, what: String, region: MemoryRegion): String =
        "group $group: $op: the copy of the $what (memory region ${region.key}, ${region.iface}) failed " +
            "with ${Errno.name(rc)}; set a copy function with setOp or install the interface's runtime"

    private fun job(
        op: String,
        bytes: Int,
        output: MemoryRegion?,
        outOffset: Long,
        outAt: Int,
        outBytes: Int,
    ): RegionJob =
        synchronized(pools) {
            val j = if (jobs.isEmpty()) RegionJob(this) else jobs.removeAt(jobs.size - 1)
            val c = sizeClass(bytes)
            val pool = pools[c]
            j.host =
                if (pool.isEmpty()) UnsafeBuffer(ByteBuffer.allocateDirect(1 shl c)) else pool.removeAt(pool.size - 1)
            j.op = op
            j.output = output
            j.outOffset = outOffset
            j.outAt = outAt
            j.outBytes = outBytes
            j
        }

    /** Takes back [j] and its host buffer. */
    fun give(j: RegionJob) {
        synchronized(pools) {
            val h = j.host!!
            pools[Integer.numberOfTrailingZeros(h.capacity())].add(h)
            j.host = null
            j.output = null
            jobs.add(j)
        }
    }

    private companion object {
        fun sizeClass(bytes: Int): Int = if (bytes <= 4096) 12 else 32 - Integer.numberOfLeadingZeros(bytes - 1)
    }
}

/**
 * A region collective in flight: its host buffer and where its output goes. Its request runs [end] once, when it ends
 * ([CollectiveRequest.complete]), before any waiter sees the end.
 */
internal class RegionJob(private val staging: RegionStaging) {
    var host: UnsafeBuffer? = null
    var op: String = ""
    var output: MemoryRegion? = null
    var outOffset: Long = 0
    var outAt: Int = 0
    var outBytes: Int = 0

    /** Copies the output back if the collective [succeeded], and returns the host buffer; null, or the failed copy. */
    fun end(succeeded: Boolean): Failure? {
        val out = output
        val failure =
            if (succeeded && out != null) {
                val rc = staging.endpoint.copyToRegion(out, outOffset, host!!, outAt, outBytes)
                if (rc != 0) Failure(-rc, staging.failure(rc, op, "result", out)) else null
            } else null
        staging.give(this)
        return failure
    }

    /** A failed copy of the output: its errno and what failed. */
    class Failure(val errno: Int, val message: String)
}
