package braid.mpi

import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * A collective's buffer as the collectives module sees it: blocks of `counts[i]` elements of [type] at element
 * displacements `displs[i]` (in extents) of [user], moved as bytes. When the type is contiguous and starts at byte 0
 * the module works on the caller's memory ([view] wraps it, byte counts and displacements are the elements' own);
 * otherwise the blocks are packed one after another into a native-order staging buffer, [pack]ed before and [unpack]ed
 * after.
 */
internal class CollBlocks(
    private val user: ByteBuffer,
    private val type: Datatype,
    private val counts: IntArray,
    private val displs: IntArray,
) {
    private val direct: Boolean = isDirect(type)
    private val esize = type.size.toInt()

    /** Byte counts of the blocks in [view]. */
    val byteCounts: IntArray = IntArray(counts.size) { counts[it] * esize }

    /** Byte displacements of the blocks in [view]. */
    val byteDispls: IntArray =
        if (direct) IntArray(counts.size) { (displs[it] * type.extent).toInt() } else prefix(byteCounts)

    /** The bytes the collectives module reads or writes. */
    val view: UnsafeBuffer

    private val staging: ByteBuffer?

    init {
        if (direct) {
            staging = null
            view = UnsafeBuffer(user, 0, user.capacity())
        } else {
            val total = byteCounts.sum()
            staging = ByteBuffer.allocateDirect(maxOf(total, 1)).order(ByteOrder.nativeOrder())
            view = UnsafeBuffer(staging, 0, maxOf(total, 1))
        }
    }

    /** The bytes of block [i] in [view]: `[byteDispls[i], byteDispls[i] + byteCounts[i])`. */
    fun end(i: Int): Int = byteDispls[i] + byteCounts[i]

    /** The extent of [view] the blocks use. */
    val span: Int
        get() = (counts.indices).maxOfOrNull { end(it) } ?: 0

    /** Copies block [i] (every block when -1) from the caller's layout into the staging copy. */
    fun pack(i: Int = -1): CollBlocks {
        val s = staging ?: return this
        for (b in counts.indices) if (i < 0 || b == i)
            type.packInto(user, (displs[b] * type.extent).toInt(), counts[b], s, byteDispls[b])
        return this
    }

    /**
     * Spreads the first [n] elements of block 0 from the staging copy over the caller's layout (an in-place
     * reduce-scatter's result).
     */
    fun unpackFirst(n: Int) {
        val s = staging ?: return
        type.unpackFrom(s, byteDispls[0], user, (displs[0] * type.extent).toInt(), n)
    }

    /** Spreads block [i] (every block when -1) from the staging copy over the caller's layout. */
    fun unpack(i: Int = -1) {
        val s = staging ?: return
        for (b in counts.indices) if (i < 0 || b == i)
            type.unpackFrom(s, byteDispls[b], user, (displs[b] * type.extent).toInt(), counts[b])
    }

    companion object {
        /**
         * Whether [type]'s elements are their own bytes from byte 0 (a contiguous layout starting there): the module
         * may use the caller's memory.
         */
        fun isDirect(type: Datatype): Boolean = type.isContiguous && (type.size == 0L || type.trueLb == 0L)

        /**
         * Aims the reused [view] at the whole of [buf] (a direct layout's bytes, in place) and returns it; allocates
         * nothing.
         */
        fun wrap(view: UnsafeBuffer, buf: ByteBuffer): UnsafeBuffer {
            view.wrap(buf, 0, buf.capacity())
            return view
        }

        /** One block of [count] elements at the start of [buf]. */
        fun single(buf: ByteBuffer, type: Datatype, count: Int): CollBlocks =
            CollBlocks(buf, type, intArrayOf(count), intArrayOf(0))

        /** [n] blocks of [count] elements, one after another. */
        fun regular(buf: ByteBuffer, type: Datatype, count: Int, n: Int): CollBlocks =
            CollBlocks(buf, type, IntArray(n) { count }, IntArray(n) { it * count })

        fun prefix(counts: IntArray): IntArray {
            val out = IntArray(counts.size)
            for (i in 1 until counts.size) out[i] = out[i - 1] + counts[i - 1]
            return out
        }
    }
}
