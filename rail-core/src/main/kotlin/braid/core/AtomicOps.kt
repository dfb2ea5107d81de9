package braid.core

import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.AtomicBuffer

/**
 * Executes an atomic operation on memory, element by element, the same for every rail and for processes that map the
 * memory themselves: each element is read, combined and written back by one compare-and-swap of the CPU (retried if the
 * element changed in between), never by a plain read and store. So operations applied here are atomic per element with
 * respect to each other whoever applies them: a target's rail applying operations that arrive from any number of
 * processes (under the target domain's lock), and processes on the same host applying theirs directly on a shared
 * mapping of the same memory (`braid.mpi`'s windows). They are not atomic with respect to plain stores the target
 * process makes on the memory, as with any NIC.
 *
 * Elements are in native byte order and should be naturally aligned (an element that straddles a cache line is still
 * updated atomically on x86, but slowly). [result], when given, receives each element's old value.
 */
public object AtomicOps {
    /**
     * Applies [op] to [count] elements of [type] at byte [at] of [target]: `new = old op operand` (the operand at
     * [operandAt] of [operand]; for [AtomicOp.CSWAP], only where `old == compare`), each element's old value to
     * [result] at [resultAt] when given. Kotlin-only (Agrona buffers): the rails and `braid.mpi`'s windows call it.
     */
    @JvmSynthetic
    public fun execute(
        target: AtomicBuffer,
        at: Int,
        operand: DirectBuffer,
        operandAt: Int,
        compare: DirectBuffer?,
        compareAt: Int,
        result: MutableDirectBuffer?,
        resultAt: Int,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
    ) {
        val size = type.size
        for (i in 0 until count) {
            val t = at + i * size
            val o = operandAt + i * size
            val c = compareAt + i * size
            val r = resultAt + i * size
            when (type) {
                AtomicDatatype.INT64,
                AtomicDatatype.UINT64 -> {
                    val x = operand.getLong(o)
                    val cmp = compare?.getLong(c) ?: 0L
                    var old: Long
                    do {
                        old = target.getLongVolatile(t)
                        val new = long(old, x, cmp, op, type.unsigned)
                    } while (new != old && !target.compareAndSetLong(t, old, new))
                    result?.putLong(r, old)
                }
                AtomicDatatype.INT32,
                AtomicDatatype.UINT32 -> {
                    val x = operand.getInt(o)
                    val cmp = compare?.getInt(c) ?: 0
                    var old: Int
                    do {
                        old = target.getIntVolatile(t)
                        val new = int(old, x, cmp, op, type.unsigned)
                    } while (new != old && !target.compareAndSetInt(t, old, new))
                    result?.putInt(r, old)
                }
                AtomicDatatype.DOUBLE -> {
                    val x = operand.getDouble(o)
                    val cmp = compare?.getDouble(c) ?: 0.0
                    var oldBits: Long
                    do {
                        oldBits = target.getLongVolatile(t)
                        val newBits = java.lang.Double.doubleToRawLongBits(double(Double.fromBits(oldBits), x, cmp, op))
                    } while (
                        op != AtomicOp.ATOMIC_READ &&
                            newBits != oldBits &&
                            !target.compareAndSetLong(t, oldBits, newBits)
                    )
                    result?.putLong(r, oldBits)
                }
                AtomicDatatype.FLOAT -> {
                    val x = operand.getFloat(o).toDouble()
                    val cmp = compare?.getFloat(c)?.toDouble() ?: 0.0
                    var oldBits: Int
                    do {
                        oldBits = target.getIntVolatile(t)
                        val new = double(Float.fromBits(oldBits).toDouble(), x, cmp, op).toFloat()
                        val newBits = java.lang.Float.floatToRawIntBits(new)
                    } while (
                        op != AtomicOp.ATOMIC_READ &&
                            newBits != oldBits &&
                            !target.compareAndSetInt(t, oldBits, newBits)
                    )
                    result?.putInt(r, oldBits)
                }
            }
        }
    }

    private fun long(old: Long, x: Long, cmp: Long, op: AtomicOp, unsigned: Boolean): Long =
        when (op) {
            AtomicOp.MIN ->
                if ((if (unsigned) java.lang.Long.compareUnsigned(x, old) else x.compareTo(old)) < 0) x else old
            AtomicOp.MAX ->
                if ((if (unsigned) java.lang.Long.compareUnsigned(x, old) else x.compareTo(old)) > 0) x else old
            AtomicOp.SUM -> old + x
            AtomicOp.PROD -> old * x
            AtomicOp.LOR -> if (old != 0L || x != 0L) 1L else 0L
            AtomicOp.LAND -> if (old != 0L && x != 0L) 1L else 0L
            AtomicOp.LXOR -> if ((old != 0L) != (x != 0L)) 1L else 0L
            AtomicOp.BOR -> old or x
            AtomicOp.BAND -> old and x
            AtomicOp.BXOR -> old xor x
            AtomicOp.ATOMIC_READ -> old
            AtomicOp.ATOMIC_WRITE -> x
            AtomicOp.CSWAP -> if (old == cmp) x else old
        }

    private fun int(old: Int, x: Int, cmp: Int, op: AtomicOp, unsigned: Boolean): Int =
        when (op) {
            AtomicOp.MIN -> if ((if (unsigned) Integer.compareUnsigned(x, old) else x.compareTo(old)) < 0) x else old
            AtomicOp.MAX -> if ((if (unsigned) Integer.compareUnsigned(x, old) else x.compareTo(old)) > 0) x else old
            AtomicOp.SUM -> old + x
            AtomicOp.PROD -> old * x
            AtomicOp.LOR -> if (old != 0 || x != 0) 1 else 0
            AtomicOp.LAND -> if (old != 0 && x != 0) 1 else 0
            AtomicOp.LXOR -> if ((old != 0) != (x != 0)) 1 else 0
            AtomicOp.BOR -> old or x
            AtomicOp.BAND -> old and x
            AtomicOp.BXOR -> old xor x
            AtomicOp.ATOMIC_READ -> old
            AtomicOp.ATOMIC_WRITE -> x
            AtomicOp.CSWAP -> if (old == cmp) x else old
        }

    /** Floating point: the value comparisons of C (`==`, `<`), as libfabric's software atomics use. */
    private fun double(old: Double, x: Double, cmp: Double, op: AtomicOp): Double =
        when (op) {
            AtomicOp.MIN -> if (x < old) x else old
            AtomicOp.MAX -> if (x > old) x else old
            AtomicOp.SUM -> old + x
            AtomicOp.PROD -> old * x
            AtomicOp.ATOMIC_READ -> old
            AtomicOp.ATOMIC_WRITE -> x
            AtomicOp.CSWAP -> if (old == cmp) x else old
            else ->
                throw IllegalArgumentException(
                    "$op does not apply to floating-point elements"
                ) // refused before it travels
        }
}
