package braid.core

import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * How the data operations read a [ByteBuffer]: its position..limit, heap or direct, without changing its position or
 * limit. Atomics read and write their elements in the platform's native byte order ([ByteOrder.nativeOrder],
 * little-endian on x86 and ARM), the order the target's memory holds them in; a [ByteBuffer] in another order (a new
 * `ByteBuffer` is big-endian) is refused rather than silently giving wrong values: call
 * `buffer.order(ByteOrder.nativeOrder())` first. [MemoryRegion.byteBuffer] hands registered memory out in native order
 * already.
 */
internal object ByteBuffers {
    /**
     * Why [b] cannot serve as a buffer of an operation, or null: a heap buffer that is read-only cannot be wrapped, and
     * a buffer data is written into ([writable]) must not be read-only.
     */
    fun problem(b: ByteBuffer, writable: Boolean, role: String): String? =
        when {
            writable && b.isReadOnly -> "the $role ByteBuffer is read-only; data cannot be written into it"
            b.isReadOnly && !b.isDirect ->
                "the $role ByteBuffer is a read-only heap buffer, which cannot be read without a copy; pass a writable or a direct one"
            else -> null
        }

    /** Why [b] cannot hold atomic elements of [type] ([count] of them, or as many as it holds if 0), or null. */
    fun atomicProblem(b: ByteBuffer, type: AtomicDatatype, count: Int, writable: Boolean, role: String): String? {
        problem(b, writable, role)?.let {
            return it
        }
        if (b.order() != ByteOrder.nativeOrder()) {
            return "the $role ByteBuffer is ${b.order()}, but atomics use the native byte order (${ByteOrder.nativeOrder()}); " +
                "call buffer.order(ByteOrder.nativeOrder()) first"
        }
        val n = b.remaining()
        if (count == 0) {
            if (n == 0 || n % type.size != 0)
                return "the $role ByteBuffer holds $n bytes between position and limit, not a whole number (≥ 1) of $type elements of ${type.size} bytes"
        } else if (n < count.toLong() * type.size) {
            return "the $role ByteBuffer has $n bytes between position and limit, fewer than $count $type elements need (${count.toLong() * type.size})"
        }
        return null
    }

    /** Wraps [b]'s position..limit in [view]; [b] has passed [problem]. */
    fun wrap(view: UnsafeBuffer, b: ByteBuffer): UnsafeBuffer {
        view.wrap(b, b.position(), b.remaining())
        return view
    }

    /** A view of [b]'s position..limit for an object that keeps it (a deferred operation), after [check]. */
    fun viewOf(b: ByteBuffer, writable: Boolean, role: String, what: Any): UnsafeBuffer {
        check(b, writable, role, what)
        return UnsafeBuffer(b, b.position(), b.remaining())
    }

    /** [viewOf] for atomic elements of [type] ([count] of them, or all [b] holds if 0), after [checkAtomic]. */
    fun atomicViewOf(
        b: ByteBuffer,
        type: AtomicDatatype,
        count: Int,
        writable: Boolean,
        role: String,
        what: Any,
    ): UnsafeBuffer {
        checkAtomic(b, type, count, writable, role, what)
        return UnsafeBuffer(b, b.position(), b.remaining())
    }

    /**
     * Throws what [problem] found, as a [FabricException] with [Errno.EINVAL]; [what] (the endpoint, say) names the
     * operation, formatted only then.
     */
    fun check(b: ByteBuffer, writable: Boolean, role: String, what: Any) {
        problem(b, writable, role)?.let { throw FabricException.invalid("$what: $it") }
    }

    /** Throws what [atomicProblem] found, as a [FabricException] with [Errno.EINVAL]. */
    fun checkAtomic(b: ByteBuffer, type: AtomicDatatype, count: Int, writable: Boolean, role: String, what: Any) {
        atomicProblem(b, type, count, writable, role)?.let { throw FabricException.invalid("$what: $type: $it") }
    }
}
