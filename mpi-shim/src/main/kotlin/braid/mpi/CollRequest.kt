package braid.mpi

import braid.collectives.CollectiveRequest
import braid.core.FabricException

/**
 * The request of an MPI collective (`MPI_Ibarrier` …): one or more stages run in order, each a collectives-module call,
 * a point-to-point operation or several of them (an array, done when all are: a root's receives from every remote
 * rank), then local work ([after]: unpacking a staging copy, folding contributions). Completion is noticed when the
 * request is tested or waited on (or by any/all/some); the collective itself advances under any progress.
 *
 * A stage after the first starts only once the one before has ended. So that every member starts the same group
 * operations in the same order (as the collectives module requires), a later collective on the same communicator first
 * drives this request until its last stage has started ([CollOrder]).
 */
internal class CollRequest(
    mpi: Mpi,
    comm: Comm,
    private val stages: Array<() -> Any?>,
    private val after: (() -> Unit)?,
) : Request(mpi, comm) {
    private var next = 0
    private var current: Any? = null

    /** Whether every stage has been started (later collectives on the communicator may start). */
    val allStarted: Boolean
        get() = next >= stages.size

    /** Starts the first stage; called once by the communicator. */
    fun start(): CollRequest {
        synchronized(this) { if (stages.isNotEmpty()) startNext() }
        return this
    }

    /** Moves on as far as possible; true once complete (successfully or not). */
    fun advance(): Boolean {
        if (done) return true
        synchronized(this) {
            if (done) return true
            while (true) {
                val c = current
                // A stage's end, or the start of the next one, may fail: the request fails with it.
                val ended =
                    try {
                        val over =
                            when (c) {
                                null -> true
                                is CollectiveRequest -> c.test()
                                is Request ->
                                    c.isComplete &&
                                        run {
                                            c.finish()
                                            true
                                        }
                                is Array<*> -> allDone(c)
                                else -> error("stage returned $c")
                            }
                        if (over && next < stages.size) {
                            startNext()
                            continue
                        }
                        over
                    } catch (e: FabricException) {
                        fail(
                            Request.errorClassOf(e.code).takeIf { it != ErrorClass.SUCCESS } ?: ErrorClass.ERR_OTHER,
                            e.message ?: e.toString(),
                        )
                        return true
                    } catch (e: MPIException) {
                        fail(e.errorClass, e.message ?: e.toString())
                        return true
                    }
                if (!ended) return false
                try {
                    after?.invoke()
                    complete(Status.EMPTY)
                } catch (e: MPIException) {
                    fail(e.errorClass, e.message ?: e.toString())
                }
                return true
            }
        }
    }

    /** Whether every request of a stage is complete (finishing each, which raises a failure). */
    private fun allDone(rs: Array<*>): Boolean {
        for (r in rs) if (!(r as Request).isComplete) return false
        for (r in rs) (r as Request).finish()
        return true
    }

    private fun startNext() {
        current = null
        current = stages[next++]()
    }

    private fun fail(errorClass: Int, message: String) {
        next = stages.size
        complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, errorClass, -1), message)
    }

    override val isComplete: Boolean
        get() = advance()

    override fun waitInto(into: Status?): Status {
        if (isNull) return into?.also { it.set(Status.EMPTY) } ?: Status.EMPTY
        mpi.progressUntil { advance() }
        return finishInto(into)
    }

    override fun test(): Status? {
        if (isNull) return Status.EMPTY
        if (!advance()) {
            mpi.progress()
            if (!advance()) return null
        }
        return finish()
    }

    /** MPI: a nonblocking collective cannot be cancelled. */
    override fun cancel() {
        throw comm!!.raise(
            MPIException.of(
                ErrorClass.ERR_REQUEST,
                "MPI_Cancel",
                "a nonblocking collective cannot be cancelled; wait for it",
            )
        )
    }
}

/**
 * Where the collectives of one communicator keep their order: every member must start the collectives module's group
 * operations in the same order, so a collective waits until the last multi-stage one has started all its stages. An
 * intercommunicator's two groups (union and local) share one.
 */
internal class CollOrder {
    /** The last multi-stage request started, or null. */
    var lastStaged: CollRequest? = null
}
