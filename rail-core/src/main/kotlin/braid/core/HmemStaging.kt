package braid.core

import braid.provider.StagedView
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A data operation on device memory in flight: the host bounce buffer its bytes cross the rail in, the device region
 * they come from or go to, and the application's context, handed back at completion. What the rail sees as the
 * operation's context, so the completion finds its way back here ([HmemStaging.release]).
 *
 * A large send is staged chunk by chunk ([HmemStaging.stageSend]): its [bounce] is one chunk, and [view] shows the
 * message's whole length with only the window being streamed in place (a [StagedView]); the message engine stages the
 * next window once the rail has taken the last.
 */
internal class HmemStage(private val staging: HmemStaging) {
    var region: MemoryRegion? = null
    var offset: Long = 0
    var length: Int = 0
    var context: Any? = null
    /** The bounce buffer's first [length] bytes (or, chunked, the window in place): what the rail sends or receives. */
    val view: View = View()
    var bounce: UnsafeBuffer? = null
    /** The copy functions' iov scratch. */
    val iov = LongArray(2)
    /** Bytes of a chunked send staged so far (its window ends here); [length] once staged whole. */
    var stagedTo = 0L
    /** Where in the bounce buffer the bytes to copy to [region] at completion start (an atomic's result), or -1. */
    var drainAt = -1
    /** A copy of a window after the first failed: the send completes with this errno and [why]. */
    var err = 0
    var why = ""

    /** Where a chunked send's window starts in the message (its chunk shows bytes from here), or -1: not windowed. */
    var windowStart = -1L

    inner class View : StagedView() {
        override val staged: Long
            get() = stagedTo

        // A window shows its chunk's ByteBuffer, adjusted back by where the window starts, so a rail that writes a
        // socket straight from direct memory (tcp) finds message offset i of the window at chunk offset i - start.
        override fun byteBuffer(): ByteBuffer? = if (windowStart < 0) super.byteBuffer() else bounce!!.byteBuffer()

        override fun wrapAdjustment(): Int =
            if (windowStart < 0) super.wrapAdjustment() else bounce!!.wrapAdjustment() - windowStart.toInt()

        override fun stageNext(): Long = staging.nextWindow(this@HmemStage)

        override fun stageAll(): Long = staging.stageWhole(this@HmemStage)
    }

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
 * rate, anchors §5.5), and reused from then on: a steady stream of device operations allocates nothing. A send larger
 * than [chunk] ([CoreParams.HMEM_CHUNK]) takes one chunk-size buffer, whatever its length, and is staged a window at a
 * time while it streams. Used under the domain's lock.
 */
internal class HmemStaging(private val ops: HmemOverrides, private val chunk: Int) {
    private val stages = ArrayList<HmemStage>()
    private val pools = Array(32) { ArrayList<UnsafeBuffer>() }

    /** A stage for [length] bytes of [region] at [offset], with a whole bounce buffer, for [context]. */
    fun stage(region: MemoryRegion, offset: Long, length: Int, context: Any?): HmemStage {
        val s = take(region, offset, length, context, length)
        s.view.wrap(s.bounce!!, 0, length)
        s.stagedTo = length.toLong()
        return s
    }

    /**
     * A stage for sending [length] bytes of [region] at [offset]: whole up to [chunk] bytes, else with one chunk,
     * nothing staged yet. [fillFirst] stages the first window (or the whole).
     */
    fun stageSend(region: MemoryRegion, offset: Long, length: Int, context: Any?): HmemStage {
        if (length <= chunk) return stage(region, offset, length, context)
        val s = take(region, offset, length, context, chunk)
        s.view.wrap(s.bounce!!.addressOffset(), length)
        return s
    }

    /** Stages [s]'s first bytes to send: all of a whole stage, the first window of a chunked one. */
    fun fillFirst(s: HmemStage): Long = if (s.stagedTo >= s.length) fill(s) else nextWindow(s)

    /** Copies the device bytes into the bounce buffer (before a send or a write): bytes copied or a negated errno. */
    fun fill(s: HmemStage): Long = HmemCopy.fromRegion(ops, s.region!!, s.offset, s.view, 0, s.length, s.iov)

    /** Copies the bounce buffer's first [n] bytes to the device (after a receive or a read). */
    fun drain(s: HmemStage, n: Int): Long = HmemCopy.toRegion(ops, s.region!!, s.offset, s.view, 0, n, s.iov)

    /** What an RMA or atomic of [s] with [flags] copies to the device at completion: a read's bytes, a result's. */
    fun drainRma(s: HmemStage, flags: Long): Long =
        when {
            s.drainAt >= 0 -> HmemCopy.toRegion(ops, s.region!!, s.offset, s.view, s.drainAt, s.length / 3, s.iov)
            flags and OpFlags.ATOMIC != 0L -> 0L
            flags and OpFlags.READ != 0L -> drain(s, s.length)
            else -> 0L
        }

    /**
     * Stages the window after [s]'s [HmemStage.stagedTo] into its chunk, the view moved so that the message's bytes
     * there show the chunk. A failed copy still moves the window and is kept in [HmemStage.err].
     */
    fun nextWindow(s: HmemStage): Long {
        val b = s.bounce!!
        val start = s.stagedTo
        val n = minOf(chunk.toLong(), s.length - start).toInt()
        s.windowStart = start
        s.view.wrap(b.addressOffset() - start, s.length)
        s.stagedTo = start + n
        val rc = HmemCopy.fromRegion(ops, s.region!!, s.offset + start, b, 0, n, s.iov)
        if (rc < 0) return failed(s, rc)
        return s.stagedTo
    }

    /** Stages all of [s] into a whole bounce buffer in place of its chunk (a rail that cannot stream it in windows). */
    fun stageWhole(s: HmemStage): Long {
        if (s.stagedTo >= s.length) return s.length.toLong()
        val chunkBuffer = s.bounce!!
        val whole = buffer(s.length, s.region!!.iface)
        s.bounce = whole
        s.windowStart = -1
        s.view.wrap(whole, 0, s.length)
        s.stagedTo = s.length.toLong()
        give(chunkBuffer)
        val rc = fill(s)
        return if (rc < 0) failed(s, rc) else s.length.toLong()
    }

    private fun failed(s: HmemStage, rc: Long): Long {
        if (s.err == 0) {
            s.err = (-rc).toInt()
            s.why = explain(s, HmemOp.COPY_FROM_HMEM_IOV, rc)
        }
        return rc
    }

    /** Why a copy of [s] failed with [rc]. */
    fun explain(s: HmemStage, op: HmemOp, rc: Long): String =
        "memory region ${s.region?.key}: " + HmemCopy.explain(s.region!!.iface, op, rc)

    /** Returns [s] and its bounce buffer to the pools; the application's context. */
    fun release(s: HmemStage): Any? {
        val context = s.context
        give(s.bounce!!)
        s.bounce = null
        s.region = null
        s.context = null
        s.err = 0
        s.why = ""
        s.stagedTo = 0
        s.windowStart = -1
        s.drainAt = -1
        s.view.wrap(0L, 0)
        stages.add(s)
        return context
    }

    private fun take(region: MemoryRegion, offset: Long, length: Int, context: Any?, bytes: Int): HmemStage {
        val s = if (stages.isEmpty()) HmemStage(this) else stages.removeAt(stages.size - 1)
        s.region = region
        s.offset = offset
        s.length = length
        s.context = context
        s.bounce = buffer(bytes, region.iface)
        return s
    }

    private fun buffer(bytes: Int, iface: HmemIface): UnsafeBuffer {
        val pool = pools[sizeClass(bytes)]
        return if (pool.isEmpty()) allocate(sizeClass(bytes), iface) else pool.removeAt(pool.size - 1)
    }

    private fun give(b: UnsafeBuffer) {
        pools[Integer.numberOfTrailingZeros(b.capacity())].add(b)
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
