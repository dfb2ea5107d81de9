package braid.collectives

/**
 * The algorithms a collective can be compiled to. [AUTO] lets [CollectiveTuning] choose by message size and group size;
 * a forced algorithm that cannot serve a call — ring or Rabenseifner for a non-commutative reduction,
 * recursive-doubling allgather on a group whose size is not a power of two — falls back to the automatic choice for
 * that call.
 */
public enum class CollectiveAlgorithm {
    AUTO,
    /** Barrier: ⌈log₂ p⌉ rounds, rank r signals r+2ᵏ. */
    DISSEMINATION,
    /** Broadcast and reduce: a binomial tree (over ranks in order for non-commutative reductions). */
    BINOMIAL,
    /** Broadcast: binomial scatter of p chunks, then a ring allgather (van de Geijn's pipelined broadcast). */
    SCATTER_ALLGATHER,
    /**
     * Allreduce, scan, exscan and allgather: recursive doubling (allreduce folds the ranks past the largest power of
     * two).
     */
    RECURSIVE_DOUBLING,
    /** Allreduce (reduce-scatter ring + allgather ring), allgather, reduce-scatter: a ring. */
    RING,
    /** Allreduce: reduce-scatter by recursive halving + allgather by recursive doubling. */
    RABENSEIFNER,
    /** Gather, scatter: the root exchanges with every rank at once. */
    LINEAR,
    /** Alltoall: p−1 rounds, in round s rank r sends to r+s and receives from r−s. */
    PAIRWISE,
}

/** The collective operations (`enum fi_collective_op` plus MPI's). */
public enum class CollectiveOp {
    BARRIER,
    BROADCAST,
    REDUCE,
    ALLREDUCE,
    ALLGATHER,
    ALLGATHERV,
    REDUCE_SCATTER_BLOCK,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLTOALL,
    ALLTOALLV,
    SCAN,
    EXSCAN,
}
