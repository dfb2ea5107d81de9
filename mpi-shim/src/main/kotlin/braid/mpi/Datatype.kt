package braid.mpi

import java.nio.ByteBuffer

/**
 * An MPI datatype (`MPI_Datatype`): the built-ins as constants, derived ones from the factory functions of the
 * companion (contiguous, vector, hvector, indexed, hindexed, indexedBlock, hindexedBlock, struct, subarray, darray,
 * resized). A derived type must be [commit]ted before it is used in communication, and may be [free]d after.
 *
 * A type is held flattened: the byte segments (displacement, length) of one element in type-map order, adjacent
 * segments merged. [size] is the bytes of data in one element, [lb] and [extent] place consecutive elements (`count`
 * elements start at `i * extent`), [trueLb] and [trueExtent] bound the bytes actually touched. A type of one segment as
 * long as its extent is contiguous: sends and receives then use the caller's buffer in place, with no copy.
 */
public class Datatype
private constructor(
    private var name: String,
    /** Bytes of data in one element (`MPI_Type_size`). */
    public val size: Long,
    /** The lower bound (`MPI_Type_get_extent`'s lb). */
    public val lb: Long,
    /** The extent: the stride between consecutive elements. */
    public val extent: Long,
    @get:JvmSynthetic internal val segDisp: LongArray,
    @get:JvmSynthetic internal val segLen: LongArray,
    /** The element kind when every element of this type is of one kind; null for a mixed struct. */
    public val basic: BasicType?,
    @get:JvmSynthetic internal val alignment: Int,
    /** Built-in types are predefined: never freed, always committed. */
    public val isPredefined: Boolean,
) {
    /**
     * Whether every element of this type is a complex number ([C_FLOAT_COMPLEX], [C_DOUBLE_COMPLEX] or types made of
     * them only): `MPI_PROD` is then the complex product, and only SUM and PROD apply.
     */
    @get:JvmSynthetic
    internal var complex: Boolean = false
        private set

    /** Whether some elements are complex numbers and others real ones of the same [basic] kind. */
    @get:JvmSynthetic
    internal var partlyComplex: Boolean = false
        private set

    /** Marks this new type as made of complex numbers only ([all]) or in part ([some]); returns it. */
    private fun complexLike(all: Boolean, some: Boolean): Datatype {
        complex = all
        partlyComplex = some && !all
        return this
    }

    @Volatile private var committed: Boolean = isPredefined
    @Volatile private var freed: Boolean = false

    /** The lowest byte displacement actually touched (`MPI_Type_get_true_extent`'s lb). */
    public val trueLb: Long = if (segDisp.isEmpty()) 0 else segDisp.min()

    /** The span of the bytes actually touched. */
    public val trueExtent: Long =
        if (segDisp.isEmpty()) 0 else (segDisp.indices.maxOf { segDisp[it] + segLen[it] } - trueLb)

    /** The upper bound: [lb] + [extent]. */
    public val ub: Long
        get() = lb + extent

    /** Whether `count` elements are one run of bytes starting at [trueLb] (then no copy is made). */
    public val isContiguous: Boolean
        get() = size == 0L || (segDisp.size == 1 && segLen[0] == extent)

    /** The number of basic elements in one element, for `MPI_Get_elements`; -1 for a mixed struct. */
    public val basicCount: Long
        get() = basic?.let { size / it.size } ?: -1

    public fun getName(): String = name

    public fun setName(name: String) {
        this.name = name
    }

    /** `MPI_Type_commit`: makes a derived type usable in communication. */
    public fun commit(): Datatype {
        check("MPI_Type_commit")
        committed = true
        return this
    }

    /** `MPI_Type_free`: a built-in type cannot be freed; using a freed type raises `MPI_ERR_TYPE`. */
    public fun free() {
        if (isPredefined)
            throw MPIException.of(ErrorClass.ERR_TYPE, "MPI_Type_free", "$name is predefined and cannot be freed")
        check("MPI_Type_free")
        freed = true
    }

    /** `MPI_Type_dup`. */
    public fun dup(): Datatype = derived("dup($name)", size, lb, extent, segDisp, segLen, basic, alignment, this)

    /** Checks this type may be used by [call] in communication: not freed, committed. */
    @JvmSynthetic
    internal fun checkUsable(call: String) {
        check(call)
        if (!committed)
            throw MPIException.of(
                ErrorClass.ERR_TYPE,
                call,
                "datatype $name is not committed; call commit() before using it",
            )
    }

    private fun check(call: String) {
        if (freed) throw MPIException.of(ErrorClass.ERR_TYPE, call, "datatype $name has been freed")
    }

    /** Throws `MPI_ERR_BUFFER` unless `count` elements at [offset] fit in a buffer of [capacity] bytes. */
    @JvmSynthetic
    internal fun checkFits(call: String, what: String, capacity: Int, offset: Int, count: Int) {
        if (count == 0 || size == 0L)
            return // touches nothing (span's [0, 0)); checked on every send and receive, so no array
        val step = (count - 1) * extent
        val first = offset + trueLb + minOf(0, step)
        val end = offset + trueLb + trueExtent + maxOf(0, step)
        if (first < 0 || end > capacity) {
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                call,
                "$what: $count × $name at byte offset $offset needs bytes [$first, $end) but the buffer holds $capacity",
            )
        }
    }

    /**
     * Copies `count` elements at [offset] of [src] into [dst] from [dstPos] as packed bytes; returns the new position.
     */
    @JvmSynthetic
    internal fun packInto(src: ByteBuffer, offset: Int, count: Int, dst: ByteBuffer, dstPos: Int): Int {
        var p = dstPos
        for (i in 0 until count) {
            val base = offset + i * extent
            for (s in segDisp.indices) {
                val n = segLen[s].toInt()
                dst.put(p, src, (base + segDisp[s]).toInt(), n)
                p += n
            }
        }
        return p
    }

    /**
     * The reverse of [packInto]: spreads packed bytes from [src] at [srcPos] into `count` elements of [dst] at
     * [offset].
     */
    @JvmSynthetic
    internal fun unpackFrom(src: ByteBuffer, srcPos: Int, dst: ByteBuffer, offset: Int, count: Int): Int {
        var p = srcPos
        for (i in 0 until count) {
            val base = offset + i * extent
            for (s in segDisp.indices) {
                val n = segLen[s].toInt()
                dst.put((base + segDisp[s]).toInt(), src, p, n)
                p += n
            }
        }
        return p
    }

    /** `MPI_Pack_size`: the bytes [pack] needs for [count] elements. */
    public fun packSize(count: Int): Long {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, "MPI_Pack_size", "count is $count; it must be ≥ 0")
        return count * size
    }

    /**
     * `MPI_Pack`: appends [count] elements of this type, laid out from byte [offset] of [inbuf], to [outbuf] at byte
     * [position] (absolute); returns the position after them.
     */
    public fun pack(inbuf: ByteBuffer, offset: Int, count: Int, outbuf: ByteBuffer, position: Int): Int {
        checkPack("MPI_Pack", "input", inbuf, offset, count, outbuf, position)
        return packInto(inbuf, offset, count, outbuf, position)
    }

    /** `MPI_Unpack`: the reverse of [pack]; returns the position after the bytes read. */
    public fun unpack(inbuf: ByteBuffer, position: Int, outbuf: ByteBuffer, offset: Int, count: Int): Int {
        checkPack("MPI_Unpack", "output", outbuf, offset, count, inbuf, position)
        return unpackFrom(inbuf, position, outbuf, offset, count)
    }

    /** [pack]'s and [unpack]'s checks: [laid] holds the elements at [offset], [packed] the bytes at [position]. */
    private fun checkPack(
        call: String,
        what: String,
        laid: ByteBuffer,
        offset: Int,
        count: Int,
        packed: ByteBuffer,
        position: Int,
    ) {
        checkUsable(call)
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
        checkFits(call, what, laid.capacity(), offset, count)
        if (position < 0 || position + count * size > packed.capacity()) {
            throw MPIException.of(
                ErrorClass.ERR_TRUNCATE,
                call,
                "$count × $name is ${count * size} packed bytes at position $position; the packed buffer holds ${packed.capacity()}",
            )
        }
    }

    override fun toString(): String = name

    public companion object {
        private fun predefined(name: String, basic: BasicType): Datatype =
            Datatype(
                name,
                basic.size.toLong(),
                0,
                basic.size.toLong(),
                longArrayOf(0),
                longArrayOf(basic.size.toLong()),
                basic,
                minOf(basic.size, 8),
                true,
            )

        @JvmField public val BYTE: Datatype = predefined("MPI_BYTE", BasicType.INT8)
        /** Java `char` (two bytes), as in Open MPI's Java bindings. */
        @JvmField public val CHAR: Datatype = predefined("MPI_CHAR", BasicType.CHAR16)
        @JvmField public val SHORT: Datatype = predefined("MPI_SHORT", BasicType.INT16)
        @JvmField public val BOOLEAN: Datatype = predefined("MPI_BOOLEAN", BasicType.BOOL)
        @JvmField public val INT: Datatype = predefined("MPI_INT", BasicType.INT32)
        /** Java `long` (eight bytes). */
        @JvmField public val LONG: Datatype = predefined("MPI_LONG", BasicType.INT64)
        @JvmField public val FLOAT: Datatype = predefined("MPI_FLOAT", BasicType.FLOAT32)
        @JvmField public val DOUBLE: Datatype = predefined("MPI_DOUBLE", BasicType.FLOAT64)
        @JvmField public val PACKED: Datatype = predefined("MPI_PACKED", BasicType.OPAQUE)
        @JvmField public val INT8_T: Datatype = predefined("MPI_INT8_T", BasicType.INT8)
        @JvmField public val INT16_T: Datatype = predefined("MPI_INT16_T", BasicType.INT16)
        @JvmField public val INT32_T: Datatype = predefined("MPI_INT32_T", BasicType.INT32)
        @JvmField public val INT64_T: Datatype = predefined("MPI_INT64_T", BasicType.INT64)
        @JvmField public val UINT8_T: Datatype = predefined("MPI_UINT8_T", BasicType.UINT8)
        @JvmField public val UINT16_T: Datatype = predefined("MPI_UINT16_T", BasicType.UINT16)
        @JvmField public val UINT32_T: Datatype = predefined("MPI_UINT32_T", BasicType.UINT32)
        @JvmField public val UINT64_T: Datatype = predefined("MPI_UINT64_T", BasicType.UINT64)
        @JvmField public val INT2: Datatype = predefined("MPI_2INT", BasicType.PAIR_INT_INT)
        @JvmField public val SHORT_INT: Datatype = predefined("MPI_SHORT_INT", BasicType.PAIR_SHORT_INT)
        @JvmField public val LONG_INT: Datatype = predefined("MPI_LONG_INT", BasicType.PAIR_LONG_INT)
        @JvmField public val FLOAT_INT: Datatype = predefined("MPI_FLOAT_INT", BasicType.PAIR_FLOAT_INT)
        @JvmField public val DOUBLE_INT: Datatype = predefined("MPI_DOUBLE_INT", BasicType.PAIR_DOUBLE_INT)
        /**
         * `MPI_C_FLOAT_COMPLEX`: (real, imaginary) as two floats. `MPI_SUM` adds them, `MPI_PROD` is the complex
         * product; no other built-in reduction op applies (`MPI_ERR_OP`).
         */
        @JvmField
        public val C_FLOAT_COMPLEX: Datatype =
            contiguous(2, FLOAT).also { it.setName("MPI_C_FLOAT_COMPLEX") }.complexLike(true, false).commit()
        /** `MPI_C_DOUBLE_COMPLEX`: (real, imaginary) as two doubles, as [C_FLOAT_COMPLEX]. */
        @JvmField
        public val C_DOUBLE_COMPLEX: Datatype =
            contiguous(2, DOUBLE).also { it.setName("MPI_C_DOUBLE_COMPLEX") }.complexLike(true, false).commit()

        /** `MPI_ORDER_C` for [subarray]: the last dimension varies fastest. */
        public const val ORDER_C: Int = 0
        /** `MPI_ORDER_FORTRAN`: the first dimension varies fastest. */
        public const val ORDER_FORTRAN: Int = 1

        /** `MPI_DISTRIBUTE_BLOCK` for [darray]. */
        public const val DISTRIBUTE_BLOCK: Int = 121
        /** `MPI_DISTRIBUTE_CYCLIC` for [darray]. */
        public const val DISTRIBUTE_CYCLIC: Int = 122
        /** `MPI_DISTRIBUTE_NONE` for [darray]: the dimension is not distributed. */
        public const val DISTRIBUTE_NONE: Int = 123
        /** `MPI_DISTRIBUTE_DFLT_DARG` for [darray]: the distribution's default block size. */
        public const val DISTRIBUTE_DFLT_DARG: Int = -49767

        /**
         * `MPI_Type_create_darray`: the elements of a `gsizes` global array of [old] that process [rank] of [size] owns
         * on a `psizes` process grid (row-major), distributed per dimension by [DISTRIBUTE_BLOCK], [DISTRIBUTE_CYCLIC]
         * (block size `dargs[d]` or [DISTRIBUTE_DFLT_DARG]) or [DISTRIBUTE_NONE], listed in [order] ([ORDER_C] or
         * [ORDER_FORTRAN]); lower bound 0, extent the whole array's.
         */
        @JvmStatic
        public fun darray(
            size: Int,
            rank: Int,
            gsizes: IntArray,
            distribs: IntArray,
            dargs: IntArray,
            psizes: IntArray,
            order: Int,
            old: Datatype,
        ): Datatype = Darray.create(size, rank, gsizes, distribs, dargs, psizes, order, old)

        /** `MPI_Type_contiguous`. */
        @JvmStatic
        public fun contiguous(count: Int, old: Datatype): Datatype {
            nonNegative("MPI_Type_contiguous", "count", count)
            return build("contiguous($count, $old)", longArrayOf(0), intArrayOf(count), arrayOf(old), false)
        }

        /** `MPI_Type_vector`: [count] blocks of [blocklength] elements, [stride] elements apart. */
        @JvmStatic
        public fun vector(count: Int, blocklength: Int, stride: Int, old: Datatype): Datatype =
            hvectorNamed("vector($count, $blocklength, $stride, $old)", count, blocklength, stride * old.extent, old)

        /** `MPI_Type_create_hvector`: as [vector] with the stride in bytes. */
        @JvmStatic
        public fun hvector(count: Int, blocklength: Int, strideBytes: Long, old: Datatype): Datatype =
            hvectorNamed("hvector($count, $blocklength, $strideBytes, $old)", count, blocklength, strideBytes, old)

        private fun hvectorNamed(name: String, count: Int, blocklength: Int, stride: Long, old: Datatype): Datatype {
            nonNegative(name, "count", count)
            nonNegative(name, "blocklength", blocklength)
            return build(
                name,
                LongArray(count) { it * stride },
                IntArray(count) { blocklength },
                Array(count) { old },
                false,
            )
        }

        /** `MPI_Type_indexed`: blocks at displacements counted in elements of [old]. */
        @JvmStatic
        public fun indexed(blocklengths: IntArray, displacements: IntArray, old: Datatype): Datatype {
            sameLength("MPI_Type_indexed", blocklengths.size, displacements.size)
            return build(
                "indexed(${blocklengths.size} blocks, $old)",
                LongArray(displacements.size) { displacements[it] * old.extent },
                blocklengths,
                Array(blocklengths.size) { old },
                false,
            )
        }

        /** `MPI_Type_create_hindexed`: as [indexed] with byte displacements. */
        @JvmStatic
        public fun hindexed(blocklengths: IntArray, displacements: LongArray, old: Datatype): Datatype {
            sameLength("MPI_Type_create_hindexed", blocklengths.size, displacements.size)
            return build(
                "hindexed(${blocklengths.size} blocks, $old)",
                displacements.copyOf(),
                blocklengths,
                Array(blocklengths.size) { old },
                false,
            )
        }

        /** `MPI_Type_create_indexed_block`: blocks of one length at displacements in elements. */
        @JvmStatic
        public fun indexedBlock(blocklength: Int, displacements: IntArray, old: Datatype): Datatype =
            build(
                "indexedBlock($blocklength, ${displacements.size} blocks, $old)",
                LongArray(displacements.size) { displacements[it] * old.extent },
                IntArray(displacements.size) { blocklength },
                Array(displacements.size) { old },
                false,
            )

        /** `MPI_Type_create_hindexed_block`: as [indexedBlock] with byte displacements. */
        @JvmStatic
        public fun hindexedBlock(blocklength: Int, displacements: LongArray, old: Datatype): Datatype =
            build(
                "hindexedBlock($blocklength, ${displacements.size} blocks, $old)",
                displacements.copyOf(),
                IntArray(displacements.size) { blocklength },
                Array(displacements.size) { old },
                false,
            )

        /**
         * `MPI_Type_create_struct`. As in C, the extent is padded to a multiple of the largest alignment among the
         * members (their size, at most 8), so arrays of the struct keep every member aligned; [resized] removes the
         * padding.
         */
        @JvmStatic
        public fun struct(blocklengths: IntArray, displacements: LongArray, types: Array<Datatype>): Datatype {
            sameLength("MPI_Type_create_struct", blocklengths.size, displacements.size)
            sameLength("MPI_Type_create_struct", blocklengths.size, types.size)
            return build("struct(${types.joinToString()})", displacements.copyOf(), blocklengths, types, true)
        }

        /** `MPI_Type_create_resized`: the same data with lower bound [lb] and extent [extent]. */
        @JvmStatic
        public fun resized(old: Datatype, lb: Long, extent: Long): Datatype =
            derived(
                "resized($old, $lb, $extent)",
                old.size,
                lb,
                extent,
                old.segDisp,
                old.segLen,
                old.basic,
                old.alignment,
                old,
            )

        /**
         * `MPI_Type_create_subarray`: the [subsizes] block at [starts] of an array of [sizes] elements of [old], in
         * [order] ([ORDER_C] or [ORDER_FORTRAN]); its extent is the whole array's.
         */
        @JvmStatic
        public fun subarray(
            sizes: IntArray,
            subsizes: IntArray,
            starts: IntArray,
            order: Int,
            old: Datatype,
        ): Datatype {
            val call = "MPI_Type_create_subarray"
            val n = sizes.size
            if (n == 0) throw MPIException.of(ErrorClass.ERR_ARG, call, "an array of 0 dimensions")
            sameLength(call, n, subsizes.size)
            sameLength(call, n, starts.size)
            if (order != ORDER_C && order != ORDER_FORTRAN)
                throw MPIException.of(ErrorClass.ERR_ARG, call, "order $order is neither ORDER_C nor ORDER_FORTRAN")
            for (d in 0 until n) {
                if (sizes[d] < 1 || subsizes[d] < 0 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d]) {
                    throw MPIException.of(
                        ErrorClass.ERR_ARG,
                        call,
                        "dimension $d: start ${starts[d]} + subsize ${subsizes[d]} must lie within size ${sizes[d]}",
                    )
                }
            }
            // dims[0] varies fastest.
            val dims = if (order == ORDER_C) (n - 1 downTo 0).toList() else (0 until n).toList()
            val stride = LongArray(n)
            var s = 1L
            for (d in dims) {
                stride[d] = s
                s *= sizes[d]
            }
            val rows = dims.drop(1).fold(1) { acc, d -> acc * subsizes[d] }
            val disps = LongArray(if (subsizes[dims[0]] == 0) 0 else rows)
            val idx = IntArray(n)
            for (r in disps.indices) {
                var lin = starts[dims[0]].toLong() * stride[dims[0]]
                for (d in dims.drop(1)) lin += (starts[d] + idx[d]) * stride[d]
                disps[r] = lin * old.extent
                for (d in dims.drop(1)) {
                    if (++idx[d] < subsizes[d]) break
                    idx[d] = 0
                }
            }
            val inner =
                build("subarray", disps, IntArray(disps.size) { subsizes[dims[0]] }, Array(disps.size) { old }, false)
            return derived(
                "subarray(${sizes.joinToString("x")}, ${subsizes.joinToString("x")} at ${starts.joinToString(",")}, $old)",
                inner.size,
                0,
                s * old.extent,
                inner.segDisp,
                inner.segLen,
                inner.basic,
                inner.alignment,
                inner,
            )
        }

        private fun derived(
            name: String,
            size: Long,
            lb: Long,
            extent: Long,
            d: LongArray,
            l: LongArray,
            basic: BasicType?,
            alignment: Int,
            /** The type whose elements these are, for its complex marks. */
            of: Datatype? = null,
        ): Datatype =
            Datatype(name, size, lb, extent, d, l, basic, alignment, false)
                .complexLike(of?.complex == true, of?.partlyComplex == true)

        /** Blocks of `counts[i]` consecutive `types[i]` at byte displacement `disps[i]`, in type-map order. */
        private fun build(
            name: String,
            disps: LongArray,
            counts: IntArray,
            types: Array<Datatype>,
            isStruct: Boolean,
        ): Datatype {
            counts.forEachIndexed { i, c -> nonNegative(name, "blocklength[$i]", c) }
            val d = LongArrayBuilder()
            val l = LongArrayBuilder()
            var lb = Long.MAX_VALUE
            var ub = Long.MIN_VALUE
            var size = 0L
            var basic: BasicType? = null
            var mixed = false
            var align = 1
            var complexBlocks = 0
            var realBlocks = 0
            for (b in disps.indices) {
                val t = types[b]
                val c = counts[b]
                if (c == 0) continue
                t.check(name)
                lb = minOf(lb, disps[b] + t.lb, disps[b] + (c - 1) * t.extent + t.lb)
                ub = maxOf(ub, disps[b] + t.ub, disps[b] + (c - 1) * t.extent + t.ub)
                if (t.size > 0) {
                    if (t.basic == null || (basic != null && basic != t.basic)) mixed = true
                    basic = basic ?: t.basic
                    if (t.complex) complexBlocks++ else realBlocks++
                    if (t.partlyComplex) complexBlocks++
                }
                align = maxOf(align, t.alignment)
                for (j in 0 until c) {
                    val base = disps[b] + j * t.extent
                    for (s in t.segDisp.indices) {
                        val sd = base + t.segDisp[s]
                        val sl = t.segLen[s]
                        size += sl
                        if (d.size > 0 && d.last() + l.last() == sd) l.addToLast(sl)
                        else {
                            d.add(sd)
                            l.add(sl)
                        }
                    }
                }
            }
            if (lb == Long.MAX_VALUE) {
                lb = 0
                ub = 0
            }
            var extent = ub - lb
            if (isStruct && extent % align != 0L) extent += align - extent % align
            return derived(name, size, lb, extent, d.toArray(), l.toArray(), if (mixed) null else basic, align)
                .complexLike(complexBlocks > 0 && realBlocks == 0, complexBlocks > 0)
        }

        private fun nonNegative(call: String, what: String, v: Int) {
            if (v < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "$what is $v; it must be ≥ 0")
        }

        private fun sameLength(call: String, a: Int, b: Int) {
            if (a != b) throw MPIException.of(ErrorClass.ERR_ARG, call, "argument arrays differ in length ($a and $b)")
        }
    }
}

/** A growable LongArray for flattening types. */
private class LongArrayBuilder {
    private var a = LongArray(4)
    var size = 0
        private set

    fun add(v: Long) {
        if (size == a.size) a = a.copyOf(size * 2)
        a[size++] = v
    }

    fun last(): Long = a[size - 1]

    fun addToLast(v: Long) {
        a[size - 1] += v
    }

    fun toArray(): LongArray = a.copyOf(size)
}
