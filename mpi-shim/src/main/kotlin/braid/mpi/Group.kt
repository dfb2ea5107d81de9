package braid.mpi

/**
 * An ordered set of processes (`MPI_Group`) and its algebra. A process is named by its index in its [Mpi] instance's
 * process table (world ranks first, then processes met through ports), so groups of one instance compare and translate
 * by identity.
 */
public class Group
internal constructor(
    @get:JvmSynthetic internal val procs: IntArray,
    /** The calling process's index in the process table. */
    @get:JvmSynthetic internal val self: Int,
) {
    /** The number of processes (`MPI_Group_size`). */
    public val size: Int
        get() = procs.size

    /** The caller's rank in this group, or [Mpi.UNDEFINED] (`MPI_Group_rank`). */
    public val rank: Int
        get() = procs.indexOf(self).let { if (it < 0) Mpi.UNDEFINED else it }

    /** `MPI_Group_incl`: the processes of these ranks, in this order. */
    public fun incl(ranks: IntArray): Group {
        checkRanks("MPI_Group_incl", ranks)
        return Group(IntArray(ranks.size) { procs[ranks[it]] }, self)
    }

    /** `MPI_Group_excl`: this group without these ranks, order kept. */
    public fun excl(ranks: IntArray): Group {
        checkRanks("MPI_Group_excl", ranks)
        val out = ranks.toHashSet()
        return Group(procs.filterIndexed { i, _ -> i !in out }.toIntArray(), self)
    }

    /** `MPI_Group_range_incl`: each row (first, last, stride) adds ranks first, first+stride, … up to last. */
    public fun rangeIncl(ranges: Array<IntArray>): Group = incl(expand("MPI_Group_range_incl", ranges))

    /** `MPI_Group_range_excl`. */
    public fun rangeExcl(ranges: Array<IntArray>): Group = excl(expand("MPI_Group_range_excl", ranges))

    /** `MPI_Group_translate_ranks`: each of [ranks] in this group as a rank of [other], or [Mpi.UNDEFINED]. */
    public fun translateRanks(ranks: IntArray, other: Group): IntArray =
        IntArray(ranks.size) { i ->
            val r = ranks[i]
            if (r == Mpi.PROC_NULL) Mpi.PROC_NULL
            else {
                if (r !in procs.indices)
                    throw MPIException.of(
                        ErrorClass.ERR_RANK,
                        "MPI_Group_translate_ranks",
                        "rank $r is out of range for a group of size $size",
                    )
                other.procs.indexOf(procs[r]).let { if (it < 0) Mpi.UNDEFINED else it }
            }
        }

    /** `MPI_Group_compare`: [IDENT] (same processes, same order), [SIMILAR] (same set) or [UNEQUAL]. */
    public fun compare(other: Group): Int =
        when {
            procs.contentEquals(other.procs) -> IDENT
            procs.size == other.procs.size && procs.toSet() == other.procs.toSet() -> SIMILAR
            else -> UNEQUAL
        }

    override fun toString(): String = "Group(${procs.joinToString()})"

    private fun checkRanks(call: String, ranks: IntArray) {
        val seen = HashSet<Int>()
        for (r in ranks) {
            if (r !in procs.indices)
                throw MPIException.of(ErrorClass.ERR_RANK, call, "rank $r is out of range for a group of size $size")
            if (!seen.add(r)) throw MPIException.of(ErrorClass.ERR_RANK, call, "rank $r appears twice")
        }
    }

    private fun expand(call: String, ranges: Array<IntArray>): IntArray {
        val out = ArrayList<Int>()
        for (row in ranges) {
            if (row.size != 3)
                throw MPIException.of(
                    ErrorClass.ERR_ARG,
                    call,
                    "a range has ${row.size} values; it needs (first, last, stride)",
                )
            val (first, last, stride) = Triple(row[0], row[1], row[2])
            if (stride == 0) throw MPIException.of(ErrorClass.ERR_ARG, call, "range ($first, $last, 0) has stride 0")
            var r = first
            while (if (stride > 0) r <= last else r >= last) {
                out += r
                r += stride
            }
        }
        return out.toIntArray()
    }

    public companion object {
        /** [compare]: the same processes in the same order (also `MPI_Comm_compare`'s `MPI_IDENT`). */
        public const val IDENT: Int = 0
        /** `MPI_Comm_compare` only: the same group under another context. */
        public const val CONGRUENT: Int = 1
        /** [compare]: the same processes in another order. */
        public const val SIMILAR: Int = 2
        /** [compare]: different processes. */
        public const val UNEQUAL: Int = 3

        /** `MPI_GROUP_EMPTY`: no processes. */
        @JvmField public val EMPTY: Group = Group(IntArray(0), -1)

        /** `MPI_Group_union`: [a]'s processes, then [b]'s not in [a]. */
        @JvmStatic
        public fun union(a: Group, b: Group): Group {
            val inA = a.procs.toHashSet()
            return Group(a.procs + b.procs.filter { it !in inA }, a.self)
        }

        /** `MPI_Group_intersection`: [a]'s processes that are in [b], in [a]'s order. */
        @JvmStatic
        public fun intersection(a: Group, b: Group): Group {
            val inB = b.procs.toHashSet()
            return Group(a.procs.filter { it in inB }.toIntArray(), a.self)
        }

        /** `MPI_Group_difference`: [a]'s processes not in [b], in [a]'s order. */
        @JvmStatic
        public fun difference(a: Group, b: Group): Group {
            val inB = b.procs.toHashSet()
            return Group(a.procs.filter { it !in inB }.toIntArray(), a.self)
        }
    }
}
