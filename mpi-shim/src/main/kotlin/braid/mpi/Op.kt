package braid.mpi

import java.nio.ByteBuffer

/**
 * A reduction operation (`MPI_Op`) in the shape a collectives library calls: [reduce] combines
 * `count` elements of a datatype, `inout[i] = in[i] op inout[i]` (MPI's argument order, which
 * matters for a non-commutative op), reading and writing through the buffers' own byte order.
 * [isCommutative] tells the library whether it may reorder operands.
 *
 * Built-in ops apply to a datatype whose elements are all of one [BasicType] (built-in types and
 * types derived from one of them); a user op ([create]) to any datatype.
 */
public class Op private constructor(
    private val name: String,
    private val builtin: Kind?,
    private val user: UserFunction?,
    /** Whether operands may be combined in any order. */
    public val isCommutative: Boolean,
) {
    /** A user-defined reduction (`MPI_User_function`): combine `count` elements of `type` into [inout]. */
    public fun interface UserFunction {
        /** `inout[i] = in[i] op inout[i]` for `i < count`, both buffers starting at their position 0. */
        public fun call(input: ByteBuffer, inout: ByteBuffer, count: Int, type: Datatype)
    }

    private enum class Kind { MAX, MIN, SUM, PROD, LAND, BAND, LOR, BOR, LXOR, BXOR, MAXLOC, MINLOC, REPLACE, NO_OP }

    @Volatile private var freed = false

    /** Whether this is a predefined op. */
    public val isPredefined: Boolean get() = builtin != null

    override fun toString(): String = name

    /** `MPI_Op_free`; a predefined op cannot be freed. */
    public fun free() {
        if (builtin != null) throw MPIException.of(ErrorClass.ERR_OP, "MPI_Op_free", "$name is predefined and cannot be freed")
        freed = true
    }

    /**
     * Throws `MPI_ERR_OP` unless this op applies to [type]: a built-in op needs one element
     * kind it is defined on (no bitwise op on floats, MAXLOC only on pair types).
     */
    public fun checkApplies(type: Datatype, call: String) {
        if (freed) throw MPIException.of(ErrorClass.ERR_OP, call, "op $name has been freed")
        val k = builtin ?: return
        val b = type.basic ?: throw MPIException.of(ErrorClass.ERR_OP, call, "$name needs a datatype of one element kind; $type mixes kinds (use a user-defined op)")
        val ok = when (k) {
            Kind.REPLACE, Kind.NO_OP -> true
            Kind.MAXLOC, Kind.MINLOC -> b.pairValue != null
            Kind.MAX, Kind.MIN, Kind.SUM, Kind.PROD -> b.pairValue == null && b != BasicType.OPAQUE && b != BasicType.BOOL
            Kind.LAND, Kind.LOR, Kind.LXOR -> b.integer || b == BasicType.BOOL
            Kind.BAND, Kind.BOR, Kind.BXOR -> b.integer
        }
        if (!ok) throw MPIException.of(ErrorClass.ERR_OP, call, "$name is not defined on $type (elements of kind $b)")
    }

    /**
     * `inout = in op inout` for [count] elements of [type] at byte offsets [inOffset] of
     * [input] and [inoutOffset] of [inout] (`MPI_Reduce_local`). Non-contiguous types are
     * combined element by element through their layout.
     */
    public fun reduce(input: ByteBuffer, inOffset: Int, inout: ByteBuffer, inoutOffset: Int, count: Int, type: Datatype) {
        checkApplies(type, "MPI_Reduce_local")
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, "MPI_Reduce_local", "count is $count; it must be ≥ 0")
        type.checkFits("MPI_Reduce_local", "input", input.capacity(), inOffset, count)
        type.checkFits("MPI_Reduce_local", "inout", inout.capacity(), inoutOffset, count)
        if (type.isContiguous) {
            val start = type.trueLb.toInt()
            val n = (count * type.size).toInt()
            apply(slice(input, inOffset + start, n), slice(inout, inoutOffset + start, n), count, type)
        } else {
            // Pack both, combine the packed elements, spread the result back.
            val bytes = (count * type.size).toInt()
            val a = ByteBuffer.allocate(bytes).order(input.order())
            val b = ByteBuffer.allocate(bytes).order(inout.order())
            type.packInto(input, inOffset, count, a, 0)
            type.packInto(inout, inoutOffset, count, b, 0)
            val basic = type.basic
            if (builtin != null && basic != null) combine(builtin, basic, a, b, bytes / basic.size)
            else user!!.call(a, b, count, type)
            type.unpackFrom(b, 0, inout, inoutOffset, count)
        }
    }

    private fun apply(a: ByteBuffer, b: ByteBuffer, count: Int, type: Datatype) {
        if (builtin != null) combine(builtin, type.basic!!, a, b, (count * type.size / type.basic.size).toInt())
        else user!!.call(a, b, count, type)
    }

    private fun slice(buf: ByteBuffer, at: Int, n: Int): ByteBuffer = buf.slice(at, n).order(buf.order())

    // ## Built-in arithmetic ##

    private fun combine(k: Kind, t: BasicType, a: ByteBuffer, b: ByteBuffer, n: Int) {
        if (k == Kind.NO_OP) return
        if (k == Kind.REPLACE) { b.put(0, a, 0, n * t.size); return }
        val pv = t.pairValue
        if (pv != null) {
            for (i in 0 until n) {
                val at = i * t.size
                val c = compare(pv, a, b, at)
                val ia = a.getInt(at + pv.size); val ib = b.getInt(at + pv.size)
                val takeA = if (k == Kind.MAXLOC) c > 0 || (c == 0 && ia < ib) else c < 0 || (c == 0 && ia < ib)
                if (takeA) b.put(at, a, at, t.size)
            }
            return
        }
        if (t.floating) {
            for (i in 0 until n) {
                val at = i * t.size
                val x = if (t == BasicType.FLOAT32) a.getFloat(at).toDouble() else a.getDouble(at)
                val y = if (t == BasicType.FLOAT32) b.getFloat(at).toDouble() else b.getDouble(at)
                val r = when (k) {
                    Kind.MAX -> maxOf(x, y); Kind.MIN -> minOf(x, y); Kind.SUM -> x + y; Kind.PROD -> x * y
                    else -> error("unreachable: $k on $t")
                }
                if (t == BasicType.FLOAT32) b.putFloat(at, r.toFloat()) else b.putDouble(at, r)
            }
            return
        }
        for (i in 0 until n) {
            val at = i * t.size
            val x = read(t, a, at); val y = read(t, b, at)
            val r = when (k) {
                Kind.MAX -> if (cmp(t, x, y) >= 0) x else y
                Kind.MIN -> if (cmp(t, x, y) <= 0) x else y
                Kind.SUM -> x + y
                Kind.PROD -> x * y
                Kind.LAND -> if (x != 0L && y != 0L) 1 else 0
                Kind.LOR -> if (x != 0L || y != 0L) 1 else 0
                Kind.LXOR -> if ((x != 0L) != (y != 0L)) 1 else 0
                Kind.BAND -> x and y
                Kind.BOR -> x or y
                Kind.BXOR -> x xor y
                else -> error("unreachable: $k on $t")
            }
            write(t, b, at, r)
        }
    }

    private fun compare(t: BasicType, a: ByteBuffer, b: ByteBuffer, at: Int): Int = when (t) {
        BasicType.FLOAT32 -> a.getFloat(at).compareTo(b.getFloat(at))
        BasicType.FLOAT64 -> a.getDouble(at).compareTo(b.getDouble(at))
        else -> cmp(t, read(t, a, at), read(t, b, at))
    }

    private fun cmp(t: BasicType, x: Long, y: Long): Int = if (t == BasicType.UINT64) java.lang.Long.compareUnsigned(x, y) else x.compareTo(y)

    /** Reads an integer kind, zero-extending unsigned ones (so a signed compare orders them, except UINT64). */
    private fun read(t: BasicType, buf: ByteBuffer, at: Int): Long = when (t.size) {
        1 -> buf.get(at).toLong().let { if (t.unsigned || t == BasicType.BOOL) it and 0xFF else it }
        2 -> buf.getShort(at).toLong().let { if (t.unsigned) it and 0xFFFF else it }
        4 -> buf.getInt(at).toLong().let { if (t.unsigned) it and 0xFFFF_FFFFL else it }
        else -> buf.getLong(at)
    }

    private fun write(t: BasicType, buf: ByteBuffer, at: Int, v: Long) {
        when (t.size) {
            1 -> buf.put(at, v.toByte())
            2 -> buf.putShort(at, v.toInt().toShort())
            4 -> buf.putInt(at, v.toInt())
            else -> buf.putLong(at, v)
        }
    }

    public companion object {
        @JvmField public val MAX: Op = Op("MPI_MAX", Kind.MAX, null, true)
        @JvmField public val MIN: Op = Op("MPI_MIN", Kind.MIN, null, true)
        @JvmField public val SUM: Op = Op("MPI_SUM", Kind.SUM, null, true)
        @JvmField public val PROD: Op = Op("MPI_PROD", Kind.PROD, null, true)
        @JvmField public val LAND: Op = Op("MPI_LAND", Kind.LAND, null, true)
        @JvmField public val BAND: Op = Op("MPI_BAND", Kind.BAND, null, true)
        @JvmField public val LOR: Op = Op("MPI_LOR", Kind.LOR, null, true)
        @JvmField public val BOR: Op = Op("MPI_BOR", Kind.BOR, null, true)
        @JvmField public val LXOR: Op = Op("MPI_LXOR", Kind.LXOR, null, true)
        @JvmField public val BXOR: Op = Op("MPI_BXOR", Kind.BXOR, null, true)
        @JvmField public val MAXLOC: Op = Op("MPI_MAXLOC", Kind.MAXLOC, null, true)
        @JvmField public val MINLOC: Op = Op("MPI_MINLOC", Kind.MINLOC, null, true)
        /** `MPI_REPLACE` (one-sided accumulate): the result is the input. Not commutative. */
        @JvmField public val REPLACE: Op = Op("MPI_REPLACE", Kind.REPLACE, null, false)
        @JvmField public val NO_OP: Op = Op("MPI_NO_OP", Kind.NO_OP, null, false)

        /** `MPI_Op_create`: a user-defined op; [commute] says whether it is commutative. */
        @JvmStatic
        public fun create(function: UserFunction, commute: Boolean): Op = Op("user op", null, function, commute)
    }
}
