package braid.mpi

/**
 * `MPI_Type_create_darray`: the part of a global array of `gsizes` elements of `old` that process [rank] of a `psizes`
 * process grid owns under HPF-style distributions, per the MPI standard (§4.1.4). Processes are numbered in row-major
 * (C) order over the grid whatever the array [order] is. Per dimension:
 * - [Datatype.DISTRIBUTE_BLOCK]: blocks of `darg` elements (default ⌈gsize / psize⌉; `darg × psize` must cover the
 *   dimension), process coordinate c owning `[c·b, min((c+1)·b, gsize))`;
 * - [Datatype.DISTRIBUTE_CYCLIC]: blocks of `darg` elements (default 1) dealt round-robin;
 * - [Datatype.DISTRIBUTE_NONE]: the whole dimension (its `psize` must be 1).
 *
 * The type's map lists the owned elements in the order of a local array of the same [order] (C: last dimension fastest;
 * Fortran: first), at their byte displacements in the global array; its lower bound is 0 and its extent the whole
 * global array's.
 */
internal object Darray {
    fun create(
        size: Int,
        rank: Int,
        gsizes: IntArray,
        distribs: IntArray,
        dargs: IntArray,
        psizes: IntArray,
        order: Int,
        old: Datatype,
    ): Datatype {
        val call = "MPI_Type_create_darray"
        val n = gsizes.size
        fun bad(what: String): Nothing = throw MPIException.of(ErrorClass.ERR_ARG, call, what)
        if (n == 0) bad("an array of 0 dimensions")
        if (distribs.size != n || dargs.size != n || psizes.size != n)
            bad(
                "gsizes, distribs, dargs and psizes differ in length (${gsizes.size}, ${distribs.size}, ${dargs.size}, ${psizes.size})"
            )
        if (order != Datatype.ORDER_C && order != Datatype.ORDER_FORTRAN)
            bad("order $order is neither ORDER_C nor ORDER_FORTRAN")
        if (psizes.fold(1L) { a, p -> a * p } != size.toLong())
            bad("the process grid ${psizes.joinToString("x")} does not hold $size processes")
        if (rank !in 0 until size)
            throw MPIException.of(ErrorClass.ERR_RANK, call, "rank $rank is not in 0 until $size")
        // Row-major coordinates of [rank] in the process grid.
        val coords = IntArray(n)
        var rest = rank
        for (d in n - 1 downTo 0) {
            coords[d] = rest % psizes[d]
            rest /= psizes[d]
        }
        val owned = Array(n) { d -> indices(call, d, gsizes[d], distribs[d], dargs[d], psizes[d], coords[d]) }
        // Linear strides of the global array in [order].
        val stride = LongArray(n)
        var s = 1L
        for (d in (if (order == Datatype.ORDER_C) (n - 1 downTo 0) else (0 until n))) {
            stride[d] = s
            s *= gsizes[d]
        }
        val count = owned.fold(1L) { a, o -> a * o.size }
        if (count > Int.MAX_VALUE) bad("$count elements are too many for one type")
        val disps = LongArray(count.toInt())
        val idx = IntArray(n)
        val fastestFirst = if (order == Datatype.ORDER_C) (n - 1 downTo 0).toList() else (0 until n).toList()
        for (e in disps.indices) {
            var lin = 0L
            for (d in 0 until n) lin += owned[d][idx[d]] * stride[d]
            disps[e] = lin * old.extent
            for (d in fastestFirst) {
                if (++idx[d] < owned[d].size) break
                idx[d] = 0
            }
        }
        val map = Datatype.hindexed(IntArray(disps.size) { 1 }, disps, old)
        return Datatype.resized(map, 0, s * old.extent).also {
            it.setName("darray(${gsizes.joinToString("x")} over ${psizes.joinToString("x")}, rank $rank, $old)")
        }
    }

    /** The global indices of dimension [d] that grid coordinate [c] owns. */
    private fun indices(call: String, d: Int, gsize: Int, distrib: Int, darg: Int, psize: Int, c: Int): IntArray {
        fun bad(what: String): Nothing = throw MPIException.of(ErrorClass.ERR_ARG, call, "dimension $d: $what")
        if (gsize < 1 || psize < 1) bad("gsize $gsize and psize $psize must be ≥ 1")
        if (darg != Datatype.DISTRIBUTE_DFLT_DARG && darg < 1) bad("darg $darg must be ≥ 1 or DISTRIBUTE_DFLT_DARG")
        return when (distrib) {
            Datatype.DISTRIBUTE_NONE -> {
                if (psize != 1) bad("DISTRIBUTE_NONE needs psize 1, not $psize")
                IntArray(gsize) { it }
            }
            Datatype.DISTRIBUTE_BLOCK -> {
                val b = if (darg == Datatype.DISTRIBUTE_DFLT_DARG) (gsize + psize - 1) / psize else darg
                if (b.toLong() * psize < gsize) bad("blocks of $b over $psize processes do not cover $gsize elements")
                val from = minOf(c.toLong() * b, gsize.toLong()).toInt()
                val to = minOf((c + 1).toLong() * b, gsize.toLong()).toInt()
                IntArray(to - from) { from + it }
            }
            Datatype.DISTRIBUTE_CYCLIC -> {
                val b = if (darg == Datatype.DISTRIBUTE_DFLT_DARG) 1 else darg
                val out = ArrayList<Int>()
                var start = c.toLong() * b
                while (start < gsize) {
                    for (i in start until minOf(start + b, gsize.toLong())) out += i.toInt()
                    start += b.toLong() * psize
                }
                out.toIntArray()
            }
            else -> bad("distribution $distrib is not DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC or DISTRIBUTE_NONE")
        }
    }
}
