package braid.mpi

/**
 * Spent requests of one kind waiting for reuse ([Mpi.takeSend], [Mpi.takeRecv], [Mpi.recycle]): a stack threaded
 * through [Request.nextPooled], so a take and a give are a few field writes on the request itself, with no array, index
 * arithmetic or null store into a deque's backing array (`ArrayDeque.removeLast` was ~6% of a window's samples in
 * `MpiWindowCpu`). At most [limit] wait; more are left to the garbage collector. Not thread-safe: [Mpi] calls it under
 * its lock when several threads may.
 */
internal class RequestPool<T : Request>(private val limit: Int) {
    private var top: T? = null
    var size: Int = 0
        private set

    /** The request given back last, now out of the pool, or null when none waits. */
    fun take(): T? {
        val op = top ?: return null
        @Suppress("UNCHECKED_CAST")
        top = op.nextPooled as T?
        op.nextPooled = null
        size--
        return op
    }

    /** Keeps [op] for a later [take]; false (and [op] not kept) when [limit] already wait. */
    fun give(op: T): Boolean {
        if (size >= limit) return false
        op.nextPooled = top
        top = op
        size++
        return true
    }
}
