package braid.collectives

import java.nio.ByteBuffer
import kotlin.math.abs
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The tests' sequential reference: every rank's input is a function of (rank, element, salt), so each rank computes
 * what every other one contributed and folds them in rank order, one element at a time, independently of the kernels
 * under test.
 */
object Reference {
    fun buffer(bytes: Int): UnsafeBuffer = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(bytes, 1)))

    private fun mix(rank: Int, i: Int, salt: Int): Int {
        var h = rank * 0x9E3779B1.toInt() xor (i * 0x85EBCA6B.toInt()) xor (salt * 0xC2B2AE35.toInt())
        h = h xor (h ushr 15)
        h *= 0x2C1B3C6D
        h = h xor (h ushr 12)
        return h
    }

    /** Writes rank [rank]'s element [i] of type [t] at [off]; PROD gets values near 1, MIN/MAXLOC few values (ties). */
    fun put(b: MutableDirectBuffer, off: Int, t: Datatype, rank: Int, i: Int, salt: Int, op: ReduceOp?) {
        val h = mix(rank, i, salt)
        val small = (h and 0x7fff) % 101 - 50
        when (t) {
            Datatype.BYTE,
            Datatype.INT8,
            Datatype.UINT8 -> b.putByte(off, (if (op == ReduceOp.PROD) (h and 3) + 1 else h).toByte())
            Datatype.BOOL -> b.putByte(off, (h and 3 % 3).let { if (h and 4 == 0) 0 else it + 1 }.toByte())
            Datatype.INT16,
            Datatype.UINT16 -> b.putShort(off, (if (op == ReduceOp.PROD) (h and 3) + 1 else h).toShort())
            Datatype.INT32,
            Datatype.UINT32 ->
                b.putInt(off, if (op == ReduceOp.PROD) (h and 7) + 1 else if (op == ReduceOp.SUM) small else h)
            Datatype.INT64,
            Datatype.UINT64 ->
                b.putLong(off, if (op == ReduceOp.PROD) ((h and 7) + 1).toLong() else h.toLong() * 0x1_0000_0001L)
            Datatype.FLOAT -> b.putFloat(off, if (op == ReduceOp.PROD) 1f + small / 1000f else small / 37f)
            Datatype.DOUBLE -> b.putDouble(off, if (op == ReduceOp.PROD) 1.0 + small / 1000.0 else small / 37.0)
            Datatype.SHORT_INT -> {
                b.putShort(off, (small % 4).toShort())
                b.putInt(off + 2, rank)
            }
            Datatype.INT_INT -> {
                b.putInt(off, small % 4)
                b.putInt(off + 4, rank)
            }
            Datatype.LONG_INT -> {
                b.putLong(off, (small % 4).toLong())
                b.putInt(off + 8, rank)
            }
            Datatype.FLOAT_INT -> {
                b.putFloat(off, (small % 4) / 2f)
                b.putInt(off + 4, rank)
            }
            Datatype.DOUBLE_INT -> {
                b.putDouble(off, (small % 4) / 2.0)
                b.putInt(off + 8, rank)
            }
        }
    }

    fun fill(b: MutableDirectBuffer, off: Int, t: Datatype, rank: Int, count: Int, salt: Int, op: ReduceOp?) {
        for (i in 0 until count) put(b, off + i * t.size, t, rank, i, salt, op)
    }

    /** `acc = acc ∘ x` for one element (acc holds lower ranks). */
    fun combine(t: Datatype, op: ReduceOp, acc: MutableDirectBuffer, a: Int, x: DirectBuffer, xo: Int) {
        when (t.family) {
            Datatype.Family.FLOATING -> {
                val u = if (t == Datatype.FLOAT) acc.getFloat(a).toDouble() else acc.getDouble(a)
                val v = if (t == Datatype.FLOAT) x.getFloat(xo).toDouble() else x.getDouble(xo)
                val r =
                    when (op) {
                        ReduceOp.SUM -> u + v
                        ReduceOp.PROD -> u * v
                        ReduceOp.MIN -> minOf(u, v)
                        ReduceOp.MAX -> maxOf(u, v)
                        else -> error(op)
                    }
                if (t == Datatype.FLOAT) acc.putFloat(a, r.toFloat()) else acc.putDouble(a, r)
            }
            Datatype.Family.PAIR -> {
                val vs = t.size - 4
                val u = value(t, acc, a)
                val v = value(t, x, xo)
                val ui = acc.getInt(a + vs)
                val vi = x.getInt(xo + vs)
                val takeX = if (u == v) vi < ui else if (op == ReduceOp.MINLOC) v < u else v > u
                if (takeX) acc.putBytes(a, x, xo, t.size)
            }
            else -> {
                val unsigned = t.family == Datatype.Family.UNSIGNED
                val u = integer(t, acc, a, unsigned)
                val v = integer(t, x, xo, unsigned)
                val r =
                    when (op) {
                        ReduceOp.SUM -> u + v
                        ReduceOp.PROD -> u * v
                        ReduceOp.MIN ->
                            if (unsigned && t.size == 8) (if (java.lang.Long.compareUnsigned(u, v) < 0) u else v)
                            else minOf(u, v)
                        ReduceOp.MAX ->
                            if (unsigned && t.size == 8) (if (java.lang.Long.compareUnsigned(u, v) > 0) u else v)
                            else maxOf(u, v)
                        ReduceOp.LAND -> if (u != 0L && v != 0L) 1L else 0L
                        ReduceOp.LOR -> if (u != 0L || v != 0L) 1L else 0L
                        ReduceOp.LXOR -> if ((u != 0L) xor (v != 0L)) 1L else 0L
                        ReduceOp.BAND -> u and v
                        ReduceOp.BOR -> u or v
                        ReduceOp.BXOR -> u xor v
                        else -> error(op)
                    }
                when (t.size) {
                    1 -> acc.putByte(a, r.toByte())
                    2 -> acc.putShort(a, r.toShort())
                    4 -> acc.putInt(a, r.toInt())
                    else -> acc.putLong(a, r)
                }
            }
        }
    }

    private fun value(t: Datatype, b: DirectBuffer, o: Int): Double =
        when (t) {
            Datatype.SHORT_INT -> b.getShort(o).toDouble()
            Datatype.INT_INT -> b.getInt(o).toDouble()
            Datatype.LONG_INT -> b.getLong(o).toDouble()
            Datatype.FLOAT_INT -> b.getFloat(o).toDouble()
            else -> b.getDouble(o)
        }

    private fun integer(t: Datatype, b: DirectBuffer, o: Int, unsigned: Boolean): Long =
        when (t.size) {
            1 -> if (unsigned) b.getByte(o).toLong() and 0xff else b.getByte(o).toLong()
            2 -> if (unsigned) b.getShort(o).toLong() and 0xffff else b.getShort(o).toLong()
            4 -> if (unsigned) b.getInt(o).toLong() and 0xffff_ffffL else b.getInt(o).toLong()
            else -> b.getLong(o)
        }

    /**
     * Whether element [i] of [got] equals [exp]'s, within the rounding a different reduction order allows for floating
     * sums and products.
     */
    fun same(t: Datatype, got: DirectBuffer, go: Int, exp: DirectBuffer, eo: Int, ranks: Int): Boolean =
        when (t) {
            Datatype.FLOAT -> abs(got.getFloat(go) - exp.getFloat(eo)) <= 2e-6f * ranks * (4f + abs(exp.getFloat(eo)))
            Datatype.DOUBLE ->
                abs(got.getDouble(go) - exp.getDouble(eo)) <= 1e-14 * ranks * (4.0 + abs(exp.getDouble(eo)))
            else -> (0 until t.size).all { got.getByte(go + it) == exp.getByte(eo + it) }
        }

    /** 2×2 matrix product over INT64, `inout = input × inout`: associative, not commutative. */
    object MatMul : UserReduction {
        override fun reduce(
            input: DirectBuffer,
            inputOffset: Int,
            inout: MutableDirectBuffer,
            inoutOffset: Int,
            count: Int,
            datatype: Datatype,
        ) {
            require(datatype == Datatype.INT64 && count % 4 == 0) { "MatMul takes INT64 × 4k" }
            var k = 0
            while (k < count) {
                val i = inputOffset + k * 8
                val o = inoutOffset + k * 8
                val a = input.getLong(i)
                val b = input.getLong(i + 8)
                val c = input.getLong(i + 16)
                val d = input.getLong(i + 24)
                val e = inout.getLong(o)
                val f = inout.getLong(o + 8)
                val g = inout.getLong(o + 16)
                val h = inout.getLong(o + 24)
                inout.putLong(o, a * e + b * g)
                inout.putLong(o + 8, a * f + b * h)
                inout.putLong(o + 16, c * e + d * g)
                inout.putLong(o + 24, c * f + d * h)
                k += 4
            }
        }

        override fun isCommutative(): Boolean = false

        override fun toString(): String = "MatMul"
    }

    /** `inout = max(|input|, |inout|)` on INT32: a commutative user reduction. */
    object MaxAbs : UserReduction {
        override fun reduce(
            input: DirectBuffer,
            inputOffset: Int,
            inout: MutableDirectBuffer,
            inoutOffset: Int,
            count: Int,
            datatype: Datatype,
        ) {
            for (k in 0 until count) {
                val o = inoutOffset + k * 4
                inout.putInt(o, maxOf(abs(input.getInt(inputOffset + k * 4)), abs(inout.getInt(o))))
            }
        }

        override fun isCommutative(): Boolean = true

        override fun toString(): String = "MaxAbs"
    }

    /**
     * `acc = acc ∘ x` with a user reduction (lower ranks in acc): computed as x' = acc ∘ x by the user's inout form.
     */
    fun combineUser(u: UserReduction, t: Datatype, acc: MutableDirectBuffer, x: DirectBuffer, count: Int) {
        val tmp = buffer(count * t.size)
        tmp.putBytes(0, x, 0, count * t.size)
        u.reduce(acc, 0, tmp, 0, count, t)
        acc.putBytes(0, tmp, 0, count * t.size)
    }
}
