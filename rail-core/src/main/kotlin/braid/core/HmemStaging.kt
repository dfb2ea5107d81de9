package braid.core

import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A data operation on device memory in flight: the host bounce buffer its bytes cross the rail in, the device region
 * they come from or go to, and the application's context, handed back at completion. What the rail sees as the
 * operation's context, so the completion finds its way back here ([HmemStaging.release]).
 */
internal class HmemStage {
    var region: MemoryRegion? = null
    var offset: Long = 0
    var length: Int = 0
    var context: Any? = null
    /** The bounce buffer's first [length] bytes: what the rail sends from or receives into. */
    val view = UnsafeBuffer(0L, 0)
    var bounce: UnsafeBuffer? = null
    /** The copy functions' iov scratch. */
    val iov = LongArray(2)

    companion object {
        /** Whether a posted receive's [posted] context is [context], or a stage carrying it (cancel finds either). */
        fun carries(posted: Any?, context: Any): Boolean =
            posted === context || (posted is HmemStage && posted.context === context)
    }
}

/**
 * One endpoint's staging of device memory through host bounce buffers: a device buffer crosses a rail only as the bytes
 * of a bounce buffer, so no rail ever reads, writes, publishes or hands to the kernel a device address.
 *
 * Bounce buffers are pooled by power-of-two size (4 KiB up), allocated off-heap the first time a size is needed, pinned
 * for the CUDA runtime when it is loaded (`cudaHostRegister`: copies from pinned memory run at 5–8 times the pageable
 * rate, anchors §5.5), and reused from then on: a steady stream of device operations allocates nothing. Used under the
 * domain's lock.
 */
internal class HmemStaging(private val ops: HmemOverrides) {
    private val stages = ArrayList<HmemStage>()
    private val pools = Array(32) { ArrayList<UnsafeBuffer>() }

    /** A stage for [length] bytes of [region] at [offset], with its bounce buffer, for [context]. */
    fun stage(region: MemoryRegion, offset: Long, length: Int, context: Any?): HmemStage {
        val s = if (stages.isEmpty()) HmemStage() else stages.removeAt(stages.size - 1)
        val pool = pools[sizeClass(length)]
        val b = if (pool.isEmpty()) allocate(sizeClass(length), region.iface) else pool.removeAt(pool.size - 1)
        s.region = region
        s.offset = offset
        s.length = length
        s.context = context
        s.bounce = b
        s.view.wrap(b, 0, length)
        return s
    }

    /** Copies the device bytes into the bounce buffer (before a send or a write): bytes copied or a negated errno. */
    fun fill(s: HmemStage): Long = HmemCopy.fromRegion(ops, s.region!!, s.offset, s.view, 0, s.length, s.iov)

    /** Copies the bounce buffer's first [n] bytes to the device (after a receive or a read). */
    fun drain(s: HmemStage, n: Int): Long = HmemCopy.toRegion(ops, s.region!!, s.offset, s.view, 0, n, s.iov)

    /** Why a copy of [s] failed with [rc]. */
    fun explain(s: HmemStage, op: HmemOp, rc: Long): String =
        "memory region ${s.region?.key}: " + HmemCopy.explain(s.region!!.iface, op, rc)

    /** Returns [s] and its bounce buffer to the pools; the application's context. */
    fun release(s: HmemStage): Any? {
        val context = s.context
        val b = s.bounce!!
        pools[Integer.numberOfTrailingZeros(b.capacity())].add(b)
        s.bounce = null
        s.region = null
        s.context = null
        s.view.wrap(0L, 0)
        stages.add(s)
        return context
    }

    private fun allocate(sizeClass: Int, iface: HmemIface): UnsafeBuffer {
        val b = UnsafeBuffer(ByteBuffer.allocateDirect(1 shl sizeClass))
        if (iface === HmemIface.CUDA) CudaRuntime.pin(b.addressOffset(), b.capacity().toLong())
        return b
    }

    private companion object {
        const val MIN_CLASS = 12

        fun sizeClass(length: Int): Int =
            if (length <= 1 shl MIN_CLASS) MIN_CLASS else 32 - Integer.numberOfLeadingZeros(length - 1)
    }
}
