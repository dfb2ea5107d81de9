package braid.core

import java.nio.ByteBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Tagged receives gathered to be posted together by [Endpoint.tryTrecv] under one acquisition of the domain's lock,
 * instead of one per receive: what a window of receives costs the rail once, not 64 times (a layer above that posts a
 * window, as braid.mpi does with the receives it holds until its next progress call).
 *
 * Reusable and allocation-free once it has grown to the largest batch: [add] each receive, post the batch, then [clear]
 * it. The batch keeps references to the buffers and contexts until [clear]; the endpoint keeps what it needs of them
 * when it posts.
 */
public class TrecvBatch @JvmOverloads constructor(capacity: Int = 64) {
    private var buffers = arrayOfNulls<MutableDirectBuffer>(maxOf(1, capacity))
    private var offsets = IntArray(buffers.size)
    private var lengths = IntArray(buffers.size)
    private var srcs = LongArray(buffers.size)
    private var tags = LongArray(buffers.size)
    private var ignores = LongArray(buffers.size)
    private var contexts = arrayOfNulls<Any>(buffers.size)
    /** Views over the ByteBuffers added, one per slot, made when a slot first takes one and reused. */
    private var views = arrayOfNulls<UnsafeBuffer>(buffers.size)

    /** Receives added since the last [clear]. */
    public var size: Int = 0
        private set

    /**
     * How many receives, from the first, the last [Endpoint.tryTrecv] of this batch posted: all of them when it
     * returned 0, else those before the one it refused.
     */
    public var posted: Int = 0
        @JvmSynthetic internal set

    /** Adds a tagged receive, as [Endpoint.tryTrecv] takes one (no flags: PEEK and CLAIM are posted alone). */
    public fun add(
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        context: Any?,
    ): TrecvBatch {
        if (size == buffers.size) grow()
        val i = size++
        buffers[i] = buffer
        offsets[i] = offset
        lengths[i] = length
        srcs[i] = src
        tags[i] = tag
        ignores[i] = ignore
        contexts[i] = context
        return this
    }

    /**
     * Adds a tagged receive into [buffer]'s position..limit (as its [Endpoint.tryTrecv] form does; a read-only buffer
     * is refused with `-EINVAL` when the batch is posted).
     */
    public fun add(buffer: ByteBuffer, src: Long, tag: Long, ignore: Long, context: Any?): TrecvBatch {
        if (size == buffers.size) grow()
        val view = views[size] ?: UnsafeBuffer(0L, 0).also { views[size] = it }
        if (buffer.isReadOnly) return add(view.also { it.wrap(0L, 0) }, 0, -1, src, tag, ignore, context)
        view.wrap(buffer, buffer.position(), buffer.remaining())
        return add(view, 0, view.capacity(), src, tag, ignore, context)
    }

    /** Empties the batch and lets go of its buffers and contexts. */
    public fun clear() {
        for (i in 0 until size) views[i]?.wrap(0L, 0)
        java.util.Arrays.fill(buffers, 0, size, null)
        java.util.Arrays.fill(contexts, 0, size, null)
        size = 0
    }

    @JvmSynthetic internal fun buffer(i: Int): MutableDirectBuffer = buffers[i]!!

    @JvmSynthetic internal fun offset(i: Int): Int = offsets[i]

    @JvmSynthetic internal fun length(i: Int): Int = lengths[i]

    @JvmSynthetic internal fun src(i: Int): Long = srcs[i]

    @JvmSynthetic internal fun tag(i: Int): Long = tags[i]

    @JvmSynthetic internal fun ignore(i: Int): Long = ignores[i]

    @JvmSynthetic internal fun context(i: Int): Any? = contexts[i]

    private fun grow() {
        val n = buffers.size * 2
        buffers = buffers.copyOf(n)
        offsets = offsets.copyOf(n)
        lengths = lengths.copyOf(n)
        srcs = srcs.copyOf(n)
        tags = tags.copyOf(n)
        ignores = ignores.copyOf(n)
        contexts = contexts.copyOf(n)
        views = views.copyOf(n)
    }
}
