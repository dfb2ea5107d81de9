package braid.mpi

import braid.collectives.CollectiveRequest
import braid.core.FabricException

/**
 * The request of an MPI collective (`MPI_Ibarrier` …): one or more stages run in order, each
 * a collectives-module call or a point-to-point operation, then local work ([after]: unpacking
 * a staging copy, folding contributions). Completion is noticed when the request is tested or
 * waited on (or by any/all/some); the collective itself advances under any progress.
 *
 * A stage after the first starts only once the one before has ended. So that every member starts
 * the same group operations in the same order (as the collectives module requires), a later
 * collective on the same communicator first drives this request until its last stage has
 * started ([Comm.collectiveOrder]).
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
    val allStarted: Boolean get() = next >= stages.size

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
                val ended = try {
                    when (c) {
                        null -> true
                        is CollectiveRequest -> c.test()
                        is Request -> c.isComplete && run { c.finish(); true }
                        else -> error("stage returned $c")
                    }
                } catch (e: FabricException) {
                    fail(Request.errorClassOf(e.code).takeIf { it != ErrorClass.SUCCESS } ?: ErrorClass.ERR_OTHER, e.message ?: e.toString()); return true
                } catch (e: MPIException) {
                    fail(e.errorClass, e.message ?: e.toString()); return true
                }
                if (!ended) return false
                if (next < stages.size) { startNext(); continue }
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

    private fun startNext() {
        current = null
        current = stages[next++]()
    }

    private fun fail(errorClass: Int, message: String) {
        next = stages.size
        complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, errorClass, -1), message)
    }

    override val isComplete: Boolean get() = advance()

    override fun waitInto(into: Status?): Status {
        if (isNull) return into?.also { it.set(Status.EMPTY) } ?: Status.EMPTY
        mpi.progressUntil { advance() }
        return finishInto(into)
    }

    override fun test(): Status? {
        if (isNull) return Status.EMPTY
        if (!advance()) { mpi.progress(); if (!advance()) return null }
        return finish()
    }

    /** MPI: a nonblocking collective cannot be cancelled. */
    override fun cancel() {
        throw comm!!.raise(MPIException.of(ErrorClass.ERR_REQUEST, "MPI_Cancel", "a nonblocking collective cannot be cancelled; wait for it"))
    }
}
