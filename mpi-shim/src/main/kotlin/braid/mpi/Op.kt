package braid.mpi

import braid.collectives.ReduceOp
import braid.collectives.UserReduction
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A reduction operation (`MPI_Op`) in the shape a collectives library calls: [reduce] combines `count` elements of a
 * datatype, `inout[i] = in[i] op inout[i]` (MPI's argument order, which matters for a non-commutative op), reading and
 * writing through the buffers' own byte order. [isCommutative] tells the library whether it may reorder operands.
 *
 * Built-in ops apply to a datatype whose elements are all of one [BasicType] (built-in types and types derived from one
 * of them); a user op ([create]) to any datatype.
 */
public class Op
private constructor(
    private val name: String,
    private val builtin: Kind?,
    private val user: UserFunction?,
    /** Whether operands may be combined in any order. */
    public val isCommutative: Boolean,
) {
    /** A user-defined reduction (`MPI_User_function`): combine `count` elements of `type` into [inout]. */
    public fun interface UserFunction {
        /**
         * `inout[i] = in[i] op inout[i]` for `i < count`, both buffers starting at their position 0, in native byte
         * order. The elements are packed: a type with gaps (vector, resized …) is handed over without them, `count ×
         * type.size` bytes.
         */
        public fun call(input: ByteBuffer, inout: ByteBuffer, count: Int, type: Datatype)
    }

    private enum class Kind {
        MAX,
        MIN,
        SUM,
        PROD,
        LAND,
        BAND,
        LOR,
        BOR,
        LXOR,
        BXOR,
        MAXLOC,
        MINLOC,
        REPLACE,
        NO_OP,
    }

    @Volatile private var freed = false

    /** Whether this is a predefined op. */
    public val isPredefined: Boolean
        get() = builtin != null

    override fun toString(): String = name

    /** `MPI_Op_free`; a predefined op cannot be freed. */
    public fun free() {
        if (builtin != null)
            throw MPIException.of(ErrorClass.ERR_OP, "MPI_Op_free", "$name is predefined and cannot be freed")
        freed = true
    }

    /** The collectives module's op this built-in is (null for REPLACE, NO_OP and user ops). */
    @get:JvmSynthetic
    internal val reduceOp: ReduceOp? =
        when (builtin) {
            null,
            Kind.REPLACE,
            Kind.NO_OP -> null
            else -> ReduceOp.valueOf(builtin.name)
        }

    /**
     * Throws `MPI_ERR_OP` unless this op applies to [type]: a built-in op needs one element kind it is defined on — the
     * collectives module's table ([braid.collectives.Datatype.supports]): no bitwise op on floats, MAXLOC only on pair
     * types.
     */
    public fun checkApplies(type: Datatype, call: String) {
        if (freed) throw MPIException.of(ErrorClass.ERR_OP, call, "op $name has been freed")
        val k = builtin ?: return
        if (k == Kind.REPLACE || k == Kind.NO_OP) return
        val b =
            type.basic
                ?: throw MPIException.of(
                    ErrorClass.ERR_OP,
                    call,
                    "$name needs a datatype of one element kind; $type mixes kinds (use a user-defined op)",
                )
        if (b == BasicType.OPAQUE || !b.element.supports(reduceOp!!))
            throw MPIException.of(ErrorClass.ERR_OP, call, "$name is not defined on $type (elements of kind $b)")
        if ((type.complex || type.partlyComplex) && k != Kind.SUM && k != Kind.PROD)
            throw MPIException.of(
                ErrorClass.ERR_OP,
                call,
                "$name is not defined on complex numbers ($type): SUM and PROD are",
            )
        if (type.partlyComplex && k == Kind.PROD)
            throw MPIException.of(
                ErrorClass.ERR_OP,
                call,
                "$name on $type, which mixes complex and real elements, has no one meaning: use a user-defined op",
            )
    }

    /**
     * Whether this op on [type] is the complex product, which the collectives module's element-wise kernels cannot
     * compute: a reduction then gathers the contributions and folds them with [combinePacked].
     */
    @JvmSynthetic internal fun isComplexProduct(type: Datatype): Boolean = builtin == Kind.PROD && type.complex

    /**
     * `inout = in op inout` for [count] elements of [type] at byte offsets [inOffset] of [input] and [inoutOffset] of
     * [inout] (`MPI_Reduce_local`). Elements are read in native byte order, as MPI reads memory: a buffer of another
     * [ByteBuffer.order] with elements wider than a byte raises `MPI_ERR_BUFFER` (call `order(ByteOrder.nativeOrder())`
     * on it). Non-contiguous types are packed, combined, and spread back.
     */
    public fun reduce(
        input: ByteBuffer,
        inOffset: Int,
        inout: ByteBuffer,
        inoutOffset: Int,
        count: Int,
        type: Datatype,
    ) {
        val call = "MPI_Reduce_local"
        checkApplies(type, call)
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
        type.checkFits(call, "input", input.capacity(), inOffset, count)
        type.checkFits(call, "inout", inout.capacity(), inoutOffset, count)
        checkOrder(call, "input", input, type)
        checkOrder(call, "inout", inout, type)
        val bytes = (count * type.size).toInt()
        if (type.isContiguous) {
            val start = if (bytes == 0) 0 else type.trueLb.toInt()
            combinePacked(
                UnsafeBuffer(input, inOffset + start, bytes),
                0,
                UnsafeBuffer(inout, inoutOffset + start, bytes),
                0,
                count,
                type,
            )
        } else {
            val a = ByteBuffer.allocate(bytes).order(ByteOrder.nativeOrder())
            val b = ByteBuffer.allocate(bytes).order(ByteOrder.nativeOrder())
            type.packInto(input, inOffset, count, a, 0)
            type.packInto(inout, inoutOffset, count, b, 0)
            combinePacked(UnsafeBuffer(a), 0, UnsafeBuffer(b), 0, count, type)
            type.unpackFrom(b, 0, inout, inoutOffset, count)
        }
    }

    /**
     * `inout = in op inout` over [count] elements of [type] held packed (no gaps) in native order: the collectives
     * module's kernel for a built-in op, the user function otherwise (which sees the packed elements).
     */
    @JvmSynthetic
    internal fun combinePacked(
        input: DirectBuffer,
        inOffset: Int,
        inout: MutableDirectBuffer,
        inoutOffset: Int,
        count: Int,
        type: Datatype,
    ) {
        val bytes = (count * type.size).toInt()
        when (builtin) {
            Kind.NO_OP -> return
            Kind.REPLACE -> {
                inout.putBytes(inoutOffset, input, inOffset, bytes)
                return
            }
            null -> user!!.call(viewOf(input, inOffset, bytes), viewOf(inout, inoutOffset, bytes), count, type)
            else -> {
                val b = type.basic!!
                if (builtin == Kind.PROD && type.complex) complexProduct(input, inOffset, inout, inoutOffset, bytes, b)
                else reduceOp!!.reduceLocal(input, inOffset, inout, inoutOffset, bytes / b.size, b.element)
            }
        }
    }

    /**
     * `inout = in × inout` over the packed complex numbers (real, imaginary) of [bytes] bytes, parts of kind [part]
     * (FLOAT32 or FLOAT64): (a + bi)(c + di) = (ac − bd) + (ad + bc)i.
     */
    private fun complexProduct(
        input: DirectBuffer,
        inOffset: Int,
        inout: MutableDirectBuffer,
        inoutOffset: Int,
        bytes: Int,
        part: BasicType,
    ) {
        val order = ByteOrder.nativeOrder()
        if (part == BasicType.FLOAT32) {
            for (o in 0 until bytes step 8) {
                val a = input.getFloat(inOffset + o, order)
                val b = input.getFloat(inOffset + o + 4, order)
                val c = inout.getFloat(inoutOffset + o, order)
                val d = inout.getFloat(inoutOffset + o + 4, order)
                inout.putFloat(inoutOffset + o, a * c - b * d, order)
                inout.putFloat(inoutOffset + o + 4, a * d + b * c, order)
            }
        } else {
            for (o in 0 until bytes step 16) {
                val a = input.getDouble(inOffset + o, order)
                val b = input.getDouble(inOffset + o + 8, order)
                val c = inout.getDouble(inoutOffset + o, order)
                val d = inout.getDouble(inoutOffset + o + 8, order)
                inout.putDouble(inoutOffset + o, a * c - b * d, order)
                inout.putDouble(inoutOffset + o + 8, a * d + b * c, order)
            }
        }
    }

    /** For the collectives module: this user op on elements that are single [BasicType]s of [type]. */
    @JvmSynthetic
    internal fun asReduction(type: Datatype): UserReduction =
        object : UserReduction {
            override fun reduce(
                input: DirectBuffer,
                inputOffset: Int,
                inout: MutableDirectBuffer,
                inoutOffset: Int,
                count: Int,
                datatype: braid.collectives.Datatype,
            ) {
                user!!.call(
                    viewOf(input, inputOffset, count * datatype.size),
                    viewOf(inout, inoutOffset, count * datatype.size),
                    count,
                    type,
                )
            }

            override fun isCommutative(): Boolean = this@Op.isCommutative

            override fun toString(): String = "$name on $type"
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

/** The collectives module's element type for this kind: the two modules share one set of kernels. */
internal val BasicType.element: braid.collectives.Datatype
    get() =
        when (this) {
            BasicType.INT8 -> braid.collectives.Datatype.INT8
            BasicType.INT16 -> braid.collectives.Datatype.INT16
            BasicType.INT32 -> braid.collectives.Datatype.INT32
            BasicType.INT64 -> braid.collectives.Datatype.INT64
            BasicType.UINT8 -> braid.collectives.Datatype.UINT8
            BasicType.UINT16,
            BasicType.CHAR16 -> braid.collectives.Datatype.UINT16
            BasicType.UINT32 -> braid.collectives.Datatype.UINT32
            BasicType.UINT64 -> braid.collectives.Datatype.UINT64
            BasicType.FLOAT32 -> braid.collectives.Datatype.FLOAT
            BasicType.FLOAT64 -> braid.collectives.Datatype.DOUBLE
            BasicType.BOOL -> braid.collectives.Datatype.BOOL
            BasicType.OPAQUE -> braid.collectives.Datatype.BYTE
            BasicType.PAIR_INT_INT -> braid.collectives.Datatype.INT_INT
            BasicType.PAIR_SHORT_INT -> braid.collectives.Datatype.SHORT_INT
            BasicType.PAIR_LONG_INT -> braid.collectives.Datatype.LONG_INT
            BasicType.PAIR_FLOAT_INT -> braid.collectives.Datatype.FLOAT_INT
            BasicType.PAIR_DOUBLE_INT -> braid.collectives.Datatype.DOUBLE_INT
        }

/** Throws `MPI_ERR_BUFFER` if [buf]'s byte order is not native and [type]'s elements are wider than a byte. */
internal fun checkOrder(call: String, what: String, buf: ByteBuffer, type: Datatype) {
    val b = type.basic
    val wide = b == null || b.size > 1
    if (wide && buf.order() != ByteOrder.nativeOrder()) {
        throw MPIException.of(
            ErrorClass.ERR_BUFFER,
            call,
            "the $what buffer is ${buf.order()} but reductions read $type in native order (${ByteOrder.nativeOrder()}); call order(ByteOrder.nativeOrder()) on it before writing",
        )
    }
}

/**
 * A ByteBuffer over `buf[offset, offset+length)` in native order, sharing its memory (a copy only when it wraps a raw
 * address).
 */
internal fun viewOf(buf: DirectBuffer, offset: Int, length: Int): ByteBuffer {
    val adj = buf.wrapAdjustment() + offset
    // Agrona: relative to the array when there is one (a heap ByteBuffer too), else to the direct ByteBuffer's address.
    buf.byteArray()?.let { arr ->
        return ByteBuffer.wrap(arr, adj, length).slice().order(ByteOrder.nativeOrder())
    }
    buf.byteBuffer()?.let { bb ->
        return bb.duplicate().clear().position(adj).limit(adj + length).slice().order(ByteOrder.nativeOrder())
    }
    error("a buffer over a raw address cannot be shown to a user op")
}
