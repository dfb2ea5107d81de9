package braid.mpi

/**
 * A persistent request (`MPI_Send_init`, `MPI_Recv_init` and the other modes): created inactive, [start]ed any number
 * of times, each start completing like the nonblocking operation it stands for; waiting on it returns it to inactive.
 * [free] releases it.
 */
public class Prequest internal constructor(mpi: Mpi, comm: Comm, private val starter: () -> Request) :
    Request(mpi, comm) {
    private var current: Request? = null
    private var freed = false

    /** Whether a started operation is in flight. */
    public val isActive: Boolean
        get() = current != null

    override val isNull: Boolean
        get() = freed

    /** Inactive counts as complete (`MPI_Wait` on an inactive request returns at once). */
    override val isComplete: Boolean
        get() = current?.isComplete ?: true

    /** `MPI_Start`: begins one round of the operation. */
    public fun start() {
        if (freed)
            throw comm!!.raise(
                MPIException.of(ErrorClass.ERR_REQUEST, "MPI_Start", "the persistent request has been freed")
            )
        if (current != null)
            throw comm!!.raise(
                MPIException.of(
                    ErrorClass.ERR_REQUEST,
                    "MPI_Start",
                    "the persistent request is already active; wait for it first",
                )
            )
        current = starter()
    }

    @JvmSynthetic
    override fun waitInto(into: Status?): Status {
        val c = current ?: return into?.also { it.set(Status.EMPTY) } ?: Status.EMPTY
        mpi.progressUntil { c.isComplete }
        return finishInto(into)
    }

    override fun test(): Status? {
        val c = current ?: return Status.EMPTY
        if (!c.isComplete) mpi.progress()
        return if (c.isComplete) finish() else null
    }

    override fun peekStatus(): Status? = current?.peekStatus() ?: Status.EMPTY

    override fun cancel() {
        current?.cancel()
    }

    @JvmSynthetic
    override fun finishInto(into: Status?): Status {
        val c = current ?: return into?.also { it.set(Status.EMPTY) } ?: Status.EMPTY
        current = null
        // The round's operation was never handed out, so it goes back to the pool (allocation-free restarts).
        try {
            return c.finishInto(into)
        } finally {
            mpi.recycle(c)
        }
    }

    /** `MPI_Request_free`: an active round still completes on its own. */
    override fun free() {
        freed = true
    }

    public companion object {
        /** `MPI_Startall`. */
        @JvmStatic
        public fun startAll(requests: Array<Prequest>) {
            requests.forEach { it.start() }
        }
    }
}
