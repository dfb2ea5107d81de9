package braid.collectives

import braid.core.Errno
import braid.core.FabricException
import braid.core.LocalReduction
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The local reduction kernels a schedule's REDUCE steps run ([LocalReduction]): one loop per (type family, width, op),
 * the op chosen outside the loop. Built-in ops are commutative, so the operand order is ignored for them.
 *
 * Doubles, floats and 4- and 8-byte integers under the arithmetic and bitwise ops run as bulk loops over raw memory
 * (heap arrays and direct memory alike, through `Unsafe` with the buffer's base object and address): no per-element
 * bounds check or virtual call, the ranges checked once per call. The narrow types, the logical ops and MINLOC/MAXLOC
 * go through the buffers' accessors.
 */
internal class BuiltinReduction(val datatype: Datatype, val op: ReduceOp) : Kernel {
    init {
        require(datatype.supports(op)) { "$op is not defined on $datatype" }
    }

    /** Whether [combine] runs the raw bulk loop (else the accessor loops). */
    private val bulk: Boolean =
        when (datatype.family) {
            Datatype.Family.FLOATING -> true
            Datatype.Family.SIGNED,
            Datatype.Family.UNSIGNED ->
                (datatype.size == 8 || datatype.size == 4) &&
                    op != ReduceOp.LAND &&
                    op != ReduceOp.LOR &&
                    op != ReduceOp.LXOR
            else -> false
        }

    override fun elementSize(): Int = datatype.size

    override fun reduce(
        src: DirectBuffer,
        srcOffset: Int,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        count: Int,
        srcFirst: Boolean,
    ): Int = reduce3(src, srcOffset, dst, dstOffset, dst, dstOffset, count)

    override fun reduce3(
        a: DirectBuffer,
        aOffset: Int,
        b: DirectBuffer,
        bOffset: Int,
        out: MutableDirectBuffer,
        outOffset: Int,
        count: Int,
    ): Int {
        val bytes = count.toLong() * datatype.size
        if (count < 0 || outside(a, aOffset, bytes) || outside(b, bOffset, bytes) || outside(out, outOffset, bytes))
            return -Errno.EINVAL
        if (count == 0) return 0
        if (bulk) {
            val ao = a.byteArray()
            val aa = a.addressOffset() + aOffset
            val bo = b.byteArray()
            val ba = b.addressOffset() + bOffset
            val oo = out.byteArray()
            val oa = out.addressOffset() + outOffset
            when {
                datatype == Datatype.DOUBLE -> doubles(ao, aa, bo, ba, oo, oa, bytes)
                datatype == Datatype.FLOAT -> floats(ao, aa, bo, ba, oo, oa, bytes)
                datatype.size == 8 -> longs(ao, aa, bo, ba, oo, oa, bytes, datatype.family == Datatype.Family.UNSIGNED)
                else -> ints(ao, aa, bo, ba, oo, oa, bytes, datatype.family == Datatype.Family.UNSIGNED)
            }
            return 0
        }
        // Commutative: combine into whichever operand [out] is, copying the other in first if neither.
        val (x, xOffset) =
            if (out === a && outOffset == aOffset) b to bOffset
            else {
                if (out !== b || outOffset != bOffset) out.putBytes(outOffset, b, bOffset, bytes.toInt())
                a to aOffset
            }
        if (datatype.family == Datatype.Family.PAIR) pairs(x, xOffset, out, outOffset, count)
        else narrow(x, xOffset, out, outOffset, count)
        return 0
    }

    private fun outside(buf: DirectBuffer, offset: Int, bytes: Long): Boolean =
        offset < 0 || offset + bytes > buf.capacity()

    private fun doubles(ao: Any?, aa: Long, bo: Any?, ba: Long, oo: Any?, oa: Long, bytes: Long) {
        var i = 0L
        when (op) {
            ReduceOp.SUM ->
                while (i < bytes) {
                    U.putDouble(oo, oa + i, U.getDouble(ao, aa + i) + U.getDouble(bo, ba + i))
                    i += 8
                }
            ReduceOp.PROD ->
                while (i < bytes) {
                    U.putDouble(oo, oa + i, U.getDouble(ao, aa + i) * U.getDouble(bo, ba + i))
                    i += 8
                }
            ReduceOp.MIN ->
                while (i < bytes) {
                    U.putDouble(oo, oa + i, minOf(U.getDouble(ao, aa + i), U.getDouble(bo, ba + i)))
                    i += 8
                }
            ReduceOp.MAX ->
                while (i < bytes) {
                    U.putDouble(oo, oa + i, maxOf(U.getDouble(ao, aa + i), U.getDouble(bo, ba + i)))
                    i += 8
                }
            else -> error(op)
        }
    }

    private fun floats(ao: Any?, aa: Long, bo: Any?, ba: Long, oo: Any?, oa: Long, bytes: Long) {
        var i = 0L
        when (op) {
            ReduceOp.SUM ->
                while (i < bytes) {
                    U.putFloat(oo, oa + i, U.getFloat(ao, aa + i) + U.getFloat(bo, ba + i))
                    i += 4
                }
            ReduceOp.PROD ->
                while (i < bytes) {
                    U.putFloat(oo, oa + i, U.getFloat(ao, aa + i) * U.getFloat(bo, ba + i))
                    i += 4
                }
            ReduceOp.MIN ->
                while (i < bytes) {
                    U.putFloat(oo, oa + i, minOf(U.getFloat(ao, aa + i), U.getFloat(bo, ba + i)))
                    i += 4
                }
            ReduceOp.MAX ->
                while (i < bytes) {
                    U.putFloat(oo, oa + i, maxOf(U.getFloat(ao, aa + i), U.getFloat(bo, ba + i)))
                    i += 4
                }
            else -> error(op)
        }
    }

    private fun longs(ao: Any?, aa: Long, bo: Any?, ba: Long, oo: Any?, oa: Long, bytes: Long, unsigned: Boolean) {
        var i = 0L
        when (op) {
            ReduceOp.SUM ->
                while (i < bytes) {
                    U.putLong(oo, oa + i, U.getLong(ao, aa + i) + U.getLong(bo, ba + i))
                    i += 8
                }
            ReduceOp.PROD ->
                while (i < bytes) {
                    U.putLong(oo, oa + i, U.getLong(ao, aa + i) * U.getLong(bo, ba + i))
                    i += 8
                }
            ReduceOp.BAND ->
                while (i < bytes) {
                    U.putLong(oo, oa + i, U.getLong(ao, aa + i) and U.getLong(bo, ba + i))
                    i += 8
                }
            ReduceOp.BOR ->
                while (i < bytes) {
                    U.putLong(oo, oa + i, U.getLong(ao, aa + i) or U.getLong(bo, ba + i))
                    i += 8
                }
            ReduceOp.BXOR ->
                while (i < bytes) {
                    U.putLong(oo, oa + i, U.getLong(ao, aa + i) xor U.getLong(bo, ba + i))
                    i += 8
                }
            // Unsigned order is signed order with the sign bit flipped.
            ReduceOp.MIN,
            ReduceOp.MAX -> {
                val flip = if (unsigned) Long.MIN_VALUE else 0L
                val min = op == ReduceOp.MIN
                while (i < bytes) {
                    val x = U.getLong(ao, aa + i)
                    val y = U.getLong(bo, ba + i)
                    U.putLong(oo, oa + i, if (((x xor flip) <= (y xor flip)) == min) x else y)
                    i += 8
                }
            }
            else -> error(op)
        }
    }

    private fun ints(ao: Any?, aa: Long, bo: Any?, ba: Long, oo: Any?, oa: Long, bytes: Long, unsigned: Boolean) {
        var i = 0L
        when (op) {
            ReduceOp.SUM ->
                while (i < bytes) {
                    U.putInt(oo, oa + i, U.getInt(ao, aa + i) + U.getInt(bo, ba + i))
                    i += 4
                }
            ReduceOp.PROD ->
                while (i < bytes) {
                    U.putInt(oo, oa + i, U.getInt(ao, aa + i) * U.getInt(bo, ba + i))
                    i += 4
                }
            ReduceOp.BAND ->
                while (i < bytes) {
                    U.putInt(oo, oa + i, U.getInt(ao, aa + i) and U.getInt(bo, ba + i))
                    i += 4
                }
            ReduceOp.BOR ->
                while (i < bytes) {
                    U.putInt(oo, oa + i, U.getInt(ao, aa + i) or U.getInt(bo, ba + i))
                    i += 4
                }
            ReduceOp.BXOR ->
                while (i < bytes) {
                    U.putInt(oo, oa + i, U.getInt(ao, aa + i) xor U.getInt(bo, ba + i))
                    i += 4
                }
            ReduceOp.MIN,
            ReduceOp.MAX -> {
                val flip = if (unsigned) Int.MIN_VALUE else 0
                val min = op == ReduceOp.MIN
                while (i < bytes) {
                    val x = U.getInt(ao, aa + i)
                    val y = U.getInt(bo, ba + i)
                    U.putInt(oo, oa + i, if (((x xor flip) <= (y xor flip)) == min) x else y)
                    i += 4
                }
            }
            else -> error(op)
        }
    }

    /**
     * Integers and BOOL/BYTE under the ops the bulk loops leave (logical ops, narrow types), widened to long, combined,
     * narrowed back.
     */
    private fun narrow(s: DirectBuffer, so: Int, d: MutableDirectBuffer, dof: Int, n: Int) {
        val unsigned = datatype.family == Datatype.Family.UNSIGNED
        when (datatype.size) {
            8 ->
                for (i in 0 until n) {
                    val k = i shl 3
                    d.putLong(dof + k, combine(d.getLong(dof + k), s.getLong(so + k), unsigned))
                }
            4 ->
                for (i in 0 until n) {
                    val k = i shl 2
                    val a = if (unsigned) d.getInt(dof + k).toLong() and 0xffff_ffffL else d.getInt(dof + k).toLong()
                    val b = if (unsigned) s.getInt(so + k).toLong() and 0xffff_ffffL else s.getInt(so + k).toLong()
                    d.putInt(dof + k, combine(a, b, false).toInt())
                }
            2 ->
                for (i in 0 until n) {
                    val k = i shl 1
                    val a = if (unsigned) d.getShort(dof + k).toLong() and 0xffffL else d.getShort(dof + k).toLong()
                    val b = if (unsigned) s.getShort(so + k).toLong() and 0xffffL else s.getShort(so + k).toLong()
                    d.putShort(dof + k, combine(a, b, false).toInt().toShort())
                }
            else ->
                for (i in 0 until n) {
                    val a = if (unsigned) d.getByte(dof + i).toLong() and 0xffL else d.getByte(dof + i).toLong()
                    val b = if (unsigned) s.getByte(so + i).toLong() and 0xffL else s.getByte(so + i).toLong()
                    d.putByte(dof + i, combine(a, b, false).toInt().toByte())
                }
        }
    }

    private fun combine(a: Long, b: Long, unsigned: Boolean): Long =
        when (op) {
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
            val c =
                when (datatype) {
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

    private companion object {
        val U: sun.misc.Unsafe = org.agrona.UnsafeAccess.UNSAFE
    }
}

/**
 * A schedule's reduction kernel: [LocalReduction] for REDUCE steps, and the three-operand form that lets a schedule
 * combine the caller's input with a received block straight into the result, with no copy of the input first.
 */
internal interface Kernel : LocalReduction {
    /**
     * `out[i] = a[i] ∘ b[i]` over [count] elements (byte offsets), `a` holding the lower ranks' contribution; [out] may
     * be [a] or [b] at the same offset. Returns 0, or -EINVAL if a range is outside its buffer. Runs under the domain
     * lock, allocating nothing.
     */
    fun reduce3(
        a: DirectBuffer,
        aOffset: Int,
        b: DirectBuffer,
        bOffset: Int,
        out: MutableDirectBuffer,
        outOffset: Int,
        count: Int,
    ): Int
}

/**
 * A [UserReduction] as a schedule's kernel: `dst = src ∘ dst` is the user's own form; for `dst = dst ∘ src` the source
 * is copied to [scratch] (sized at build time, so nothing is allocated per call), combined there as `scratch = dst ∘
 * scratch`, and copied back.
 */
internal class UserKernel(val user: UserReduction, val datatype: Datatype, maxCount: Int) : Kernel {
    private val scratch = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, maxCount * datatype.size)))

    override fun elementSize(): Int = datatype.size

    override fun reduce(
        src: DirectBuffer,
        srcOffset: Int,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        count: Int,
        srcFirst: Boolean,
    ): Int {
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

    override fun reduce3(
        a: DirectBuffer,
        aOffset: Int,
        b: DirectBuffer,
        bOffset: Int,
        out: MutableDirectBuffer,
        outOffset: Int,
        count: Int,
    ): Int {
        val bytes = count * datatype.size
        if (out === a && outOffset == aOffset) return reduce(b, bOffset, out, outOffset, count, false)
        if (out !== b || outOffset != bOffset) out.putBytes(outOffset, b, bOffset, bytes)
        user.reduce(a, aOffset, out, outOffset, count, datatype)
        return 0
    }

    override fun toString(): String = "user reduction $user on $datatype"
}

/** The kernels of the built-in pairs, made once. */
internal object Kernels {
    private val table: Array<Array<BuiltinReduction?>> =
        Array(Datatype.entries.size) { t ->
            Array(ReduceOp.entries.size) { o ->
                val type = Datatype.entries[t]
                val op = ReduceOp.entries[o]
                if (type.supports(op)) BuiltinReduction(type, op) else null
            }
        }

    fun builtin(type: Datatype, op: ReduceOp): BuiltinReduction =
        table[type.ordinal][op.ordinal]
            ?: throw FabricException.invalid(
                "$op is not defined on $type; MPI defines it on ${Datatype.entries.filter { it.supports(op) }.joinToString()}"
            )
}
