package braid.mpi

/**
 * A process topology attached to a communicator (MPI §7): a Cartesian grid ([CartTopology], `MPI_Cart_create`), a graph
 * every process knows whole ([GraphTopology], `MPI_Graph_create`), or a distributed graph each process knows its own
 * edges of ([DistGraphTopology], `MPI_Dist_graph_create` and `_adjacent`). Ranks are never reordered: a process keeps
 * its rank of the communicator the topology was made from. The neighbor collectives ([Comm.neighborAlltoall] …)
 * exchange with [sources] and [destinations] in the order these list them.
 */
public sealed class Topology {
    /** The ranks this process receives from in a neighbor collective, in block order. */
    public abstract fun sources(rank: Int): IntArray

    /** The ranks this process sends to in a neighbor collective, in block order. */
    public abstract fun destinations(rank: Int): IntArray

    /**
     * The tag that tells apart several messages between one pair of processes in a neighbor collective: the sender's
     * [k]th destination (and the receiver's [k]th source) in MPI's order; by default the order of posting does it.
     */
    @JvmSynthetic internal open fun sendTag(rank: Int, k: Int): Int = 0

    @JvmSynthetic internal open fun recvTag(rank: Int, k: Int): Int = 0
}

/** A Cartesian grid of [dims] (row-major: the last dimension varies fastest), periodic where [periods] says. */
public class CartTopology(dims: IntArray, periods: BooleanArray) : Topology() {
    private val dims = dims.copyOf()
    private val periods = periods.copyOf()

    init {
        if (dims.size != periods.size)
            throw MPIException.of(
                ErrorClass.ERR_DIMS,
                "MPI_Cart_create",
                "dims has ${dims.size} entries and periods ${periods.size}; give one period per dimension",
            )
        dims.forEachIndexed { i, d ->
            if (d <= 0)
                throw MPIException.of(ErrorClass.ERR_DIMS, "MPI_Cart_create", "dimension $i is $d; each must be ≥ 1")
        }
    }

    /** The number of dimensions. */
    public val ndims: Int
        get() = dims.size

    /** The number of processes in the grid (the product of the dimensions). */
    public val size: Int
        get() = dims.fold(1) { a, b -> a * b }

    public fun getDims(): IntArray = dims.copyOf()

    public fun getPeriods(): BooleanArray = periods.copyOf()

    /** `MPI_Cart_coords`: the coordinates of [rank]. */
    public fun coords(rank: Int): IntArray {
        if (rank !in 0 until size)
            throw MPIException.of(ErrorClass.ERR_RANK, "MPI_Cart_coords", "rank $rank is outside the grid of $size")
        val c = IntArray(dims.size)
        var r = rank
        for (i in dims.indices.reversed()) {
            c[i] = r % dims[i]
            r /= dims[i]
        }
        return c
    }

    /**
     * `MPI_Cart_rank`: the rank at [coords]; a coordinate outside a periodic dimension wraps, one outside another
     * raises `MPI_ERR_ARG`.
     */
    public fun rank(coords: IntArray): Int {
        if (coords.size != dims.size)
            throw MPIException.of(
                ErrorClass.ERR_DIMS,
                "MPI_Cart_rank",
                "${coords.size} coordinates for a grid of ${dims.size} dimensions",
            )
        var r = 0
        for (i in dims.indices) {
            var c = coords[i]
            if (c !in 0 until dims[i]) {
                if (!periods[i])
                    throw MPIException.of(
                        ErrorClass.ERR_ARG,
                        "MPI_Cart_rank",
                        "coordinate $c is outside 0..${dims[i] - 1} of non-periodic dimension $i",
                    )
                c = Math.floorMod(c, dims[i])
            }
            r = r * dims[i] + c
        }
        return r
    }

    /** The rank [disp] steps from [rank] along [direction], or [Mpi.PROC_NULL] off a non-periodic edge. */
    private fun neighbor(rank: Int, direction: Int, disp: Int): Int {
        val c = coords(rank)
        val moved = c[direction] + disp
        if (!periods[direction] && moved !in 0 until dims[direction]) return Mpi.PROC_NULL
        c[direction] = Math.floorMod(moved, dims[direction])
        return rank(c)
    }

    /**
     * `MPI_Cart_shift`: (the rank [rank] receives from, the rank it sends to) for a shift of [disp] along [direction].
     */
    public fun shift(rank: Int, direction: Int, disp: Int): IntArray {
        if (direction !in dims.indices)
            throw MPIException.of(
                ErrorClass.ERR_DIMS,
                "MPI_Cart_shift",
                "direction $direction is outside 0..${dims.size - 1}",
            )
        return intArrayOf(neighbor(rank, direction, -disp), neighbor(rank, direction, disp))
    }

    /** Per dimension, the neighbor at -1 then the one at +1 (MPI's order), [Mpi.PROC_NULL] off an edge. */
    override fun sources(rank: Int): IntArray =
        IntArray(2 * dims.size) { neighbor(rank, it / 2, if (it % 2 == 0) -1 else 1) }

    override fun destinations(rank: Int): IntArray = sources(rank)

    // A block sent towards -1 arrives on the receiver's +1 side: tags name the side it arrives on, so a periodic
    // dimension of 1 or 2 (where both neighbors are one process) still pairs blocks rightly.
    @JvmSynthetic override fun sendTag(rank: Int, k: Int): Int = (k / 2) * 2 + (1 - k % 2)

    @JvmSynthetic override fun recvTag(rank: Int, k: Int): Int = k

    /** `MPI_Cart_sub`'s grid: the dimensions [remain] keeps. */
    public fun sub(remain: BooleanArray): CartTopology =
        CartTopology(
            dims.filterIndexed { i, _ -> remain[i] }.toIntArray(),
            periods.filterIndexed { i, _ -> remain[i] }.toBooleanArray(),
        )

    override fun toString(): String = "Cart(${dims.joinToString("x")})"

    public companion object {
        /**
         * `MPI_Dims_create`: fills the zero entries of [dims] so that the product of all is [nnodes], the filled ones
         * as close to each other as possible and non-increasing; entries > 0 are kept.
         */
        @JvmStatic
        public fun createDims(nnodes: Int, dims: IntArray) {
            val call = "MPI_Dims_create"
            if (nnodes < 1) throw MPIException.of(ErrorClass.ERR_ARG, call, "nnodes is $nnodes; it must be ≥ 1")
            var fixed = 1
            var free = 0
            for (d in dims) {
                if (d < 0) throw MPIException.of(ErrorClass.ERR_DIMS, call, "dims holds $d; entries must be ≥ 0")
                if (d > 0) fixed *= d else free++
            }
            if (nnodes % fixed != 0)
                throw MPIException.of(
                    ErrorClass.ERR_DIMS,
                    call,
                    "the fixed dimensions' product $fixed does not divide $nnodes",
                )
            if (free == 0) {
                if (fixed != nnodes)
                    throw MPIException.of(ErrorClass.ERR_DIMS, call, "the dimensions' product $fixed is not $nnodes")
                return
            }
            val filled = IntArray(free) { 1 }
            var rest = nnodes / fixed
            val primes = ArrayList<Int>()
            var p = 2
            while (p * p <= rest) {
                while (rest % p == 0) {
                    primes += p
                    rest /= p
                }
                p++
            }
            if (rest > 1) primes += rest
            for (q in primes.sortedDescending()) {
                val smallest = filled.indices.minBy { filled[it] }
                filled[smallest] *= q
            }
            filled.sortDescending()
            var k = 0
            for (i in dims.indices) if (dims[i] == 0) dims[i] = filled[k++]
        }
    }
}

/**
 * A graph every process knows whole: node i's neighbors are `edges[index[i-1] until index[i]]` (`MPI_Graph_create`).
 */
public class GraphTopology(index: IntArray, edges: IntArray) : Topology() {
    private val index = index.copyOf()
    private val edges = edges.copyOf()

    init {
        var prev = 0
        for (i in index.indices) {
            if (index[i] < prev || index[i] > edges.size)
                throw MPIException.of(
                    ErrorClass.ERR_ARG,
                    "MPI_Graph_create",
                    "index[$i] = ${index[i]} must be non-decreasing and at most the ${edges.size} edges",
                )
            prev = index[i]
        }
        edges.forEach {
            if (it !in index.indices)
                throw MPIException.of(
                    ErrorClass.ERR_RANK,
                    "MPI_Graph_create",
                    "edge to $it is outside the ${index.size} nodes",
                )
        }
    }

    /** The number of nodes. */
    public val size: Int
        get() = index.size

    public fun getIndex(): IntArray = index.copyOf()

    public fun getEdges(): IntArray = edges.copyOf()

    /** `MPI_Graph_neighbors`. */
    public fun neighbors(rank: Int): IntArray {
        if (rank !in index.indices)
            throw MPIException.of(ErrorClass.ERR_RANK, "MPI_Graph_neighbors", "rank $rank is outside the graph")
        return edges.copyOfRange(if (rank == 0) 0 else index[rank - 1], index[rank])
    }

    override fun sources(rank: Int): IntArray = neighbors(rank)

    override fun destinations(rank: Int): IntArray = neighbors(rank)

    override fun toString(): String = "Graph(${index.size} nodes, ${edges.size} edges)"
}

/** This process's edges of a distributed graph: whom it receives from and sends to, with weights if [weighted]. */
public class DistGraphTopology(
    sources: IntArray,
    sourceWeights: IntArray?,
    destinations: IntArray,
    destWeights: IntArray?,
) : Topology() {
    private val ins = sources.copyOf()
    private val outs = destinations.copyOf()
    private val inW = sourceWeights?.copyOf() ?: IntArray(ins.size) { 1 }
    private val outW = destWeights?.copyOf() ?: IntArray(outs.size) { 1 }

    /** Whether weights were given (`MPI_Dist_graph_neighbors_count`'s `weighted`). */
    public val weighted: Boolean = sourceWeights != null || destWeights != null

    public fun getSources(): IntArray = ins.copyOf()

    public fun getSourceWeights(): IntArray = inW.copyOf()

    public fun getDestinations(): IntArray = outs.copyOf()

    public fun getDestWeights(): IntArray = outW.copyOf()

    override fun sources(rank: Int): IntArray = ins.copyOf()

    override fun destinations(rank: Int): IntArray = outs.copyOf()

    override fun toString(): String = "DistGraph(in ${ins.size}, out ${outs.size})"
}
