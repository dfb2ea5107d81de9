package braid.mpi

/** MPI's thread support levels (`MPI_THREAD_*`), in increasing order. */
public enum class ThreadLevel {
    /** One thread only. */
    SINGLE,
    /** Several threads; only the one that called init makes MPI calls. */
    FUNNELED,
    /** Several threads make MPI calls, never two at once. */
    SERIALIZED,
    /** Any thread may call at any time. */
    MULTIPLE,
}
