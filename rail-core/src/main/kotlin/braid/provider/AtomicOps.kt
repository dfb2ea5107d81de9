package braid.provider

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * Executes an atomic operation on memory, element by element, the same for every rail: the target's rail calls it on
 * the registered region while it holds the target domain's lock, so operations arriving from any number of processes
 * through that domain are atomic with respect to each other. (They are not atomic with respect to plain loads and
 * stores the target process itself makes on the region, as with any NIC.)
 *
 * Elements are in native byte order. [result], when given, receives each element's old value.
 */
internal object AtomicOps {
    fun execute(
        target: MutableDirectBuffer,
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
                    val old = target.getLong(t)
                    val new = long(old, operand.getLong(o), compare?.getLong(c) ?: 0L, op, type.unsigned)
                    if (new != old) target.putLong(t, new)
                    result?.putLong(r, old)
                }
                AtomicDatatype.INT32,
                AtomicDatatype.UINT32 -> {
                    val old = target.getInt(t)
                    val new = int(old, operand.getInt(o), compare?.getInt(c) ?: 0, op, type.unsigned)
                    if (new != old) target.putInt(t, new)
                    result?.putInt(r, old)
                }
                AtomicDatatype.DOUBLE -> {
                    val old = target.getDouble(t)
                    val new = double(old, operand.getDouble(o), compare?.getDouble(c) ?: 0.0, op)
                    if (op != AtomicOp.ATOMIC_READ) target.putDouble(t, new)
                    result?.putDouble(r, old)
                }
                AtomicDatatype.FLOAT -> {
                    val old = target.getFloat(t)
                    val new =
                        double(
                                old.toDouble(),
                                operand.getFloat(o).toDouble(),
                                compare?.getFloat(c)?.toDouble() ?: 0.0,
                                op,
                            )
                            .toFloat()
                    if (op != AtomicOp.ATOMIC_READ) target.putFloat(t, new)
                    result?.putFloat(r, old)
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
