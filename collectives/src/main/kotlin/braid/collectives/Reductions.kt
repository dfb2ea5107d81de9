package braid.collectives

import braid.core.FabricException
import braid.core.LocalReduction
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer

/**
 * The local reduction kernels a schedule's REDUCE steps run ([LocalReduction]): one loop per
 * (type family, width, op), the op chosen outside the loop. Built-in ops are commutative, so
 * the operand order is ignored for them.
 */
internal class BuiltinReduction(val datatype: Datatype, val op: ReduceOp) : LocalReduction {
    init {
        require(datatype.supports(op)) { "$op is not defined on $datatype" }
    }

    override fun elementSize(): Int = datatype.size

    override fun reduce(src: DirectBuffer, srcOffset: Int, dst: MutableDirectBuffer, dstOffset: Int, count: Int, srcFirst: Boolean): Int {
        when (datatype.family) {
            Datatype.Family.FLOATING -> if (datatype == Datatype.DOUBLE) doubles(src, srcOffset, dst, dstOffset, count) else floats(src, srcOffset, dst, dstOffset, count)
            Datatype.Family.PAIR -> pairs(src, srcOffset, dst, dstOffset, count)
            else -> when (datatype.size) {
                8 -> longs(src, srcOffset, dst, dstOffset, count)
                else -> narrow(src, srcOffset, dst, dstOffset, count)
            }
        }
        return 0
    }

    private fun doubles(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        when (op) {
            ReduceOp.SUM -> for (i in 0 until n) { val k = i shl 3; d.putDouble(dof + k, d.getDouble(dof + k) + s.getDouble(so + k)) }
            ReduceOp.PROD -> for (i in 0 until n) { val k = i shl 3; d.putDouble(dof + k, d.getDouble(dof + k) * s.getDouble(so + k)) }
            ReduceOp.MIN -> for (i in 0 until n) { val k = i shl 3; d.putDouble(dof + k, minOf(d.getDouble(dof + k), s.getDouble(so + k))) }
            ReduceOp.MAX -> for (i in 0 until n) { val k = i shl 3; d.putDouble(dof + k, maxOf(d.getDouble(dof + k), s.getDouble(so + k))) }
            else -> error(op)
        }
    }

    private fun floats(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        when (op) {
            ReduceOp.SUM -> for (i in 0 until n) { val k = i shl 2; d.putFloat(dof + k, d.getFloat(dof + k) + s.getFloat(so + k)) }
            ReduceOp.PROD -> for (i in 0 until n) { val k = i shl 2; d.putFloat(dof + k, d.getFloat(dof + k) * s.getFloat(so + k)) }
            ReduceOp.MIN -> for (i in 0 until n) { val k = i shl 2; d.putFloat(dof + k, minOf(d.getFloat(dof + k), s.getFloat(so + k))) }
            ReduceOp.MAX -> for (i in 0 until n) { val k = i shl 2; d.putFloat(dof + k, maxOf(d.getFloat(dof + k), s.getFloat(so + k))) }
            else -> error(op)
        }
    }

    private fun longs(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        val unsigned = datatype.family == Datatype.Family.UNSIGNED
        for (i in 0 until n) {
            val k = i shl 3
            val a = d.getLong(dof + k)
            val b = s.getLong(so + k)
            d.putLong(dof + k, combine(a, b, unsigned))
        }
    }

    /** 1-, 2- and 4-byte integers and BOOL/BYTE, widened to long, combined, narrowed back. */
    private fun narrow(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        val unsigned = datatype.family == Datatype.Family.UNSIGNED
        when (datatype.size) {
            4 -> for (i in 0 until n) {
                val k = i shl 2
                val a = if (unsigned) d.getInt(dof + k).toLong() and 0xffff_ffffL else d.getInt(dof + k).toLong()
                val b = if (unsigned) s.getInt(so + k).toLong() and 0xffff_ffffL else s.getInt(so + k).toLong()
                d.putInt(dof + k, combine(a, b, false).toInt())
            }
            2 -> for (i in 0 until n) {
                val k = i shl 1
                val a = if (unsigned) d.getShort(dof + k).toLong() and 0xffffL else d.getShort(dof + k).toLong()
                val b = if (unsigned) s.getShort(so + k).toLong() and 0xffffL else s.getShort(so + k).toLong()
                d.putShort(dof + k, combine(a, b, false).toInt().toShort())
            }
            else -> for (i in 0 until n) {
                val a = if (unsigned) d.getByte(dof + i).toLong() and 0xffL else d.getByte(dof + i).toLong()
                val b = if (unsigned) s.getByte(so + i).toLong() and 0xffL else s.getByte(so + i).toLong()
                d.putByte(dof + i, combine(a, b, false).toInt().toByte())
            }
        }
    }

    private fun combine(a: Long, b: Long, unsigned: Boolean): Long = when (op) {
        ReduceOp.SUM -> a + b
        ReduceOp.PROD -> a * b
        ReduceOp.MIN -> if (unsigned) (if (java.lang.Long.compareUnsigned(a, b) <= 0) a else b) else minOf(a, b)
        ReduceOp.MAX -> if (unsigned) (if (java.lang.Long.compareUnsigned(a, b) >= 0) a else b) else maxOf(a, b)
        ReduceOp.LAND -> if (a != 0L && b != 0L) 1 else 0
        ReduceOp.LOR -> if (a != 0L || b != 0L) 1 else 0
        ReduceOp.LXOR -> if ((a != 0L) != (b != 0L)) 1 else 0
        ReduceOp.BAND -> a and b
        ReduceOp.BOR -> a or b
        ReduceOp.BXOR -> a xor b
        else -> error(op)
    }

    /** MINLOC/MAXLOC: the smaller (larger) value wins; on a tie the smaller index (MPI's rule). */
    private fun pairs(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        val size = datatype.size
        val idxAt = size - 4
        val min = op == ReduceOp.MINLOC
        for (i in 0 until n) {
            val da = dof + i * size
            val sa = so + i * size
            val c = when (datatype) {
                Datatype.SHORT_INT -> d.getShort(da).compareTo(s.getShort(sa))
                Datatype.INT_INT -> d.getInt(da).compareTo(s.getInt(sa))
                Datatype.LONG_INT -> d.getLong(da).compareTo(s.getLong(sa))
                Datatype.FLOAT_INT -> d.getFloat(da).compareTo(s.getFloat(sa))
                else -> d.getDouble(da).compareTo(s.getDouble(sa))
            }
            val takeSrc = if (c == 0) s.getInt(sa + idxAt) < d.getInt(da + idxAt) else (c > 0) == min
            if (takeSrc) d.putBytes(da, s, sa, size)
        }
    }

    override fun toString(): String = "$op on $datatype"
}

/**
 * A [UserReduction] as a schedule's kernel: `dst = src ∘ dst` is the user's own form; for
 * `dst = dst ∘ src` the source is copied to [scratch] (sized at build time, so nothing is
 * allocated per call), combined there as `scratch = dst ∘ scratch`, and copied back.
 */
internal class UserKernel(val user: UserReduction, val datatype: Datatype, maxCount: Int) : LocalReduction {
    private val scratch = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, maxCount * datatype.size)))

    override fun elementSize(): Int = datatype.size

    override fun reduce(src: DirectBuffer, srcOffset: Int, dst: MutableDirectBuffer, dstOffset: Int, count: Int, srcFirst: Boolean): Int {
        if (srcFirst) {
            user.reduce(src, srcOffset, dst, dstOffset, count, datatype)
        } else {
            val bytes = count * datatype.size
            scratch.putBytes(0, src, srcOffset, bytes)
            user.reduce(dst, dstOffset, scratch, 0, count, datatype)
            dst.putBytes(dstOffset, scratch, 0, bytes)
        }
        return 0
    }

    override fun toString(): String = "user reduction $user on $datatype"
}

/** The kernels of the built-in pairs, made once. */
internal object Kernels {
    private val table: Array<Array<BuiltinReduction?>> = Array(Datatype.entries.size) { t ->
        Array(ReduceOp.entries.size) { o ->
            val type = Datatype.entries[t]
            val op = ReduceOp.entries[o]
            if (type.supports(op)) BuiltinReduction(type, op) else null
        }
    }

    fun builtin(type: Datatype, op: ReduceOp): BuiltinReduction = table[type.ordinal][op.ordinal]
        ?: throw FabricException.invalid("$op is not defined on $type; MPI defines it on ${Datatype.entries.filter { it.supports(op) }.joinToString()}")
}
