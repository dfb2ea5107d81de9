package braid.mpi

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Domain
import braid.core.Errno
import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle

/**
 * A nonblocking operation (`MPI_Request`). [waitFor] blocks until it completes, [test] looks once; both drive this
 * process's progress. Once a nonblocking request's completion has been returned the request is spent ([isNull],
 * `MPI_REQUEST_NULL`); a persistent one ([Prequest]) becomes inactive and can be [Prequest.start]ed again.
 *
 * An operation that failed completes with the error in its [Status]; [waitFor] and [test] then raise it through the
 * communicator's error handler (a cancelled operation is not an error).
 */
public abstract class Request internal constructor(@get:JvmSynthetic internal val mpi: Mpi, comm: Comm?) {
    /** The communicator whose error handler this request's failure goes through (null: internal traffic). */
    @get:JvmSynthetic @set:JvmSynthetic internal var comm: Comm? = comm
    @set:JvmSynthetic @get:JvmSynthetic @Volatile internal var done: Boolean = false
    // The status, held as fields so a completion allocates nothing; [status] builds the object.
    @get:JvmSynthetic @set:JvmSynthetic internal var statusSource: Int = Mpi.ANY_SOURCE
    @set:JvmSynthetic @get:JvmSynthetic internal var statusTag: Int = Mpi.ANY_TAG
    @set:JvmSynthetic @get:JvmSynthetic internal var statusBytes: Long = 0
    @get:JvmSynthetic @set:JvmSynthetic internal var statusCancelled: Boolean = false
    @set:JvmSynthetic @get:JvmSynthetic internal var statusError: Int = ErrorClass.SUCCESS
    private var spent = false
    /** Whether this request sits idle in its process's pool (see [recycle]). */
    @get:JvmSynthetic @set:JvmSynthetic internal var pooled: Boolean = false
    /** The next idle request below this one in its [RequestPool]. */
    @get:JvmSynthetic @set:JvmSynthetic internal var nextPooled: Request? = null

    /** Whether this request is `MPI_REQUEST_NULL` (its completion was returned, or it was freed). */
    public open val isNull: Boolean
        get() = spent

    /** Whether the operation completed (no progress is made; [test] makes some). */
    public open val isComplete: Boolean
        get() = done

    /** `MPI_Wait`: blocks until complete and returns the status; `MPI_REQUEST_NULL` returns an empty status. */
    public fun waitFor(): Status = waitInto(null)

    /**
     * `MPI_Wait` with the caller's status (C's `MPI_Status *`): blocks until complete, fills [status] and returns it.
     * Allocates nothing, where [waitFor] returns a new [Status].
     */
    public fun waitFor(status: Status): Status = waitInto(status)

    /** `MPI_Test`: the status if complete (the request is then spent), else null. */
    public open fun test(): Status? {
        if (spent) return Status.EMPTY
        if (!done) mpi.progress()
        return if (done) finish() else null
    }

    /**
     * `MPI_Request_get_status`: the status once the operation is complete, without spending the request (a later wait
     * or test still returns it); null while it is in flight. Makes progress.
     */
    public open fun peekStatus(): Status? {
        if (spent) return Status.EMPTY
        if (!done) mpi.progress()
        return if (done) status() else null
    }

    /**
     * `MPI_Cancel`: a receive not yet matched is withdrawn (its status then says cancelled); a send is withdrawn only
     * while it has not reached the endpoint (queued behind back pressure). Otherwise the operation completes normally.
     * Wait for the request either way.
     */
    public open fun cancel() {
        if (spent || done) return
        if (mpi.withdraw(this)) {
            complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, ErrorClass.SUCCESS, cancelled = true)
            return
        }
        cancelPosted()
    }

    /** `MPI_Request_free`: lets the operation finish on its own; the request is spent. */
    public open fun free() {
        spent = true
    }

    /**
     * Hands this spent request back to its process, which may return this same object from a later [Comm.isend] or
     * [Comm.irecv] (or another nonblocking send) instead of allocating one: what keeps a warm nonblocking loop free of
     * allocation. Call it once the request's completion was returned ([waitFor], [test] or an any/all/some call) and
     * only when nothing will use this reference again: from then on it may stand for another operation. Raises
     * `MPI_ERR_REQUEST` on a request still in flight; other kinds of request (persistent, matched receives, `PROC_NULL`
     * and buffered sends) ignore it.
     */
    public fun recycle() {
        if (this !is SendOp && this !is RecvOp) return
        if (!spent || !done) {
            val e =
                MPIException.of(
                    ErrorClass.ERR_REQUEST,
                    "recycle",
                    "the request is still in flight; wait for it (or test it) to completion first",
                )
            throw comm?.raise(e) ?: e
        }
        mpi.recycle(this)
    }

    // ## For the operations ##

    @JvmSynthetic internal open fun post(): Int = 0

    @JvmSynthetic internal open fun cancelPosted() {}

    @JvmSynthetic
    internal open fun onCompletion(c: Completion) {
        complete(Status.EMPTY)
    }

    @JvmSynthetic
    internal open fun onError(e: CompletionError) {
        complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, e.len, errorClassOf(e.err), message = e.message)
    }

    /** Lets go of the caller's memory before this request rests in the pool. */
    @JvmSynthetic internal open fun clear() {}

    /** Makes a pooled request new again. */
    @JvmSynthetic
    internal fun reset() {
        // Nobody else holds a pooled request, and whoever gets it next learns of it through its post (under the
        // domain's guard) or this thread: a release store, not a volatile one, whose full fence was ~11% of a
        // window's CPU per message (MpiWindowCpu under JFR with -XX:+DebugNonSafepoints).
        DONE.setRelease(this, false)
        spent = false
        statusSource = Mpi.ANY_SOURCE
        statusTag = Mpi.ANY_TAG
        statusBytes = 0
        statusCancelled = false
        statusError = ErrorClass.SUCCESS
        errorMessage = ""
    }

    /** The endpoint refused the post outright (not `-EAGAIN`). */
    @JvmSynthetic
    internal fun failPost(rc: Int) {
        val what = peer()?.let { "the endpoint refused the $it" } ?: "the endpoint refused the operation"
        complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, errorClassOf(-rc), message = "$what: ${Errno.name(-rc)}${hint(-rc)}")
    }

    /**
     * The operation and the peer it names, in words ("send to rank 3 of MPI_COMM_WORLD"), or null when it names none.
     */
    @JvmSynthetic internal open fun peer(): String? = null

    @get:JvmSynthetic @set:JvmSynthetic internal var errorMessage: String = ""

    @JvmSynthetic
    internal fun complete(
        source: Int,
        tag: Int,
        bytes: Long,
        error: Int,
        cancelled: Boolean = false,
        message: String = "",
    ) {
        statusSource = source
        statusTag = tag
        statusBytes = bytes
        statusCancelled = cancelled
        statusError = error
        errorMessage = message
        // A release store: the status above is seen by whoever sees done (its reads are volatile), without the full
        // fence of a volatile store, which drained the store buffer of the copy just made once per message. A
        // waiter that parks is woken after the round that completed it ([Mpi.progress] fences before the wake-up).
        DONE.setRelease(this, true)
    }

    @JvmSynthetic
    internal fun complete(s: Status, message: String = "") =
        complete(s.source, s.tag, s.bytes, s.error, s.isCancelled, message)

    /** This request's status as a new object, with [index]. */
    @JvmSynthetic
    internal fun status(index: Int = -1): Status =
        Status(statusSource, statusTag, statusBytes, statusCancelled, statusError, index)

    /** Waits until complete, then spends the request: fills [into] (or a new status) and raises its error. */
    @JvmSynthetic
    internal open fun waitInto(into: Status?): Status {
        if (spent) return into?.also { it.set(Status.EMPTY) } ?: Status.EMPTY
        if (!done) mpi.progressUntil { done }
        return finishInto(into)
    }

    /** Spends the request and returns its status, raising its error. */
    @JvmSynthetic internal fun finish(): Status = finishInto(null)

    /** Spends the request, fills [into] (or a new status) and raises its error. */
    @JvmSynthetic
    internal open fun finishInto(into: Status?): Status {
        spent = true
        raiseError()
        if (into == null) return status()
        into.set(statusSource, statusTag, statusBytes, statusCancelled, statusError, -1)
        return into
    }

    /** Throws this request's error through its communicator's handler, if it failed. */
    @JvmSynthetic
    internal fun raiseError() {
        if (statusError != ErrorClass.SUCCESS) {
            val e = MPIException.of(statusError, "MPI_Wait", "the operation failed: $errorMessage")
            throw comm?.raise(e) ?: e
        }
    }

    /** What a refusal's errno means for an MPI program. */
    private fun hint(errno: Int): String =
        when (errno) {
            Errno.ECONNREFUSED,
            Errno.EHOSTDOWN,
            Errno.ECONNRESET -> " (that rank's process has ended or closed its endpoint)"
            else -> ""
        }

    public companion object {
        /**
         * `MPI_Waitany`: waits until one of the active [requests] completes; its status has [Status.index]. With no
         * active request, returns a status whose index is [Mpi.UNDEFINED].
         */
        @JvmStatic
        public fun waitAny(requests: Array<out Request?>): Status {
            var found: Status? = null
            progressAll(requests) {
                found = firstComplete(requests)
                found != null
            }
            return found!!
        }

        /** `MPI_Testany`: the status of one completed request (with its index), or null. */
        @JvmStatic
        public fun testAny(requests: Array<out Request?>): Status? {
            progressOnce(requests)
            return firstComplete(requests)
        }

        /** `MPI_Waitall`: waits for every request; one that failed raises `MPI_ERR_IN_STATUS` after all are done. */
        @JvmStatic
        public fun waitAll(requests: Array<out Request?>): Array<Status> {
            awaitAll(requests)
            return finishAll(requests)
        }

        /**
         * `MPI_Waitall` into the caller's [statuses] (one per request, each given its index; null:
         * `MPI_STATUSES_IGNORE`) instead of a new array: allocates nothing. A request that failed raises
         * `MPI_ERR_IN_STATUS` after all are done, as [waitAll] does.
         */
        @JvmStatic
        public fun waitAll(requests: Array<out Request?>, statuses: Array<Status>?) {
            awaitAll(requests)
            var failed: Request? = null
            for (i in requests.indices) {
                val into = statuses?.get(i) ?: Status.IGNORED
                val r = requests[i]
                if (r == null || r.isNull) {
                    into.set(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, ErrorClass.SUCCESS, i)
                    continue
                }
                try {
                    r.finishInto(into)
                } catch (e: MPIException) {
                    failed = failed ?: r
                    into.set(r.statusSource, r.statusTag, r.statusBytes, r.statusCancelled, r.statusError, i)
                    continue
                }
                into.set(into.source, into.tag, into.bytes, into.isCancelled, into.error, i)
            }
            failed?.let { r ->
                val e =
                    MPIException.of(
                        ErrorClass.ERR_IN_STATUS,
                        "MPI_Waitall",
                        "a request failed (${ErrorClass.name(r.statusError)}: ${r.errorMessage}); see each Status.error",
                    )
                throw r.comm?.raise(e) ?: e
            }
        }

        /** [recycle] for each of [requests] (nulls skipped): after [waitAll], hands them all back for reuse. */
        @JvmStatic
        public fun recycleAll(requests: Array<out Request?>) {
            for (r in requests) r?.recycle()
        }

        /** `MPI_Testall`: every status if all requests completed (spending them), else null. */
        @JvmStatic
        public fun testAll(requests: Array<out Request?>): Array<Status>? {
            if (allDoneFrom(requests, 0) < requests.size) {
                progressOnce(requests)
                if (allDoneFrom(requests, 0) < requests.size) return null
            }
            return finishAll(requests)
        }

        /**
         * `MPI_Waitsome`: waits until at least one active request completes; returns all completed (with indices).
         * Empty if none is active.
         */
        @JvmStatic
        public fun waitSome(requests: Array<out Request?>): Array<Status> {
            progressAll(requests) { someDone(requests) }
            return finishSome(requests)
        }

        /** `MPI_Testsome`: the completed requests' statuses (with indices), possibly none. */
        @JvmStatic
        public fun testSome(requests: Array<out Request?>): Array<Status> {
            progressOnce(requests)
            return finishSome(requests)
        }

        /**
         * Waits until every request of [requests] is done (or null, or spent). A request once done stays done, so the
         * look after each round of progress resumes where the last one stopped: a window of n requests costs n checks
         * in all, not n per round (with 64 in flight, rescanning the whole window after each round was the receiver's
         * largest cost).
         */
        private fun awaitAll(requests: Array<out Request?>) {
            var next = allDoneFrom(requests, 0)
            if (next == requests.size) return
            progressAll(requests) {
                next = allDoneFrom(requests, next)
                next == requests.size
            }
        }

        /** Whether one active request of [requests] is complete, or none is active: one pass. */
        private fun someDone(requests: Array<out Request?>): Boolean {
            var active = false
            for (r in requests) {
                if (r == null || r.isNull) continue
                if (r.isComplete) return true
                active = true
            }
            return !active
        }

        /** The index of the first request at or after [from] that is still in flight, or the size if none is. */
        private fun allDoneFrom(requests: Array<out Request?>, from: Int): Int {
            var i = from
            while (i < requests.size) {
                val r = requests[i]
                if (r != null && !r.isNull && !r.isComplete) return i
                i++
            }
            return i
        }

        /**
         * One round of progress for the `test` calls: each process that [requests] belong to is driven once (a round
         * dispatches every completion it finds to its request), not once per request. Nothing is driven when none is in
         * flight.
         */
        private fun progressOnce(requests: Array<out Request?>) {
            var one: Mpi? = null
            for (r in requests) {
                if (r == null || r.isNull || r.isComplete) continue
                val m = r.mpi
                if (one == null) {
                    one = m
                    m.progress()
                } else if (m !== one) {
                    // Ranks of one JVM (as the tests run them): the rare mixed array drives each process once.
                    progressDistinct(requests)
                    return
                }
            }
        }

        private fun progressDistinct(requests: Array<out Request?>) {
            val driven = ArrayList<Mpi>(2)
            for (r in requests) {
                if (r == null || r.isNull || r.isComplete) continue
                if (driven.none { it === r.mpi }) {
                    driven += r.mpi
                    r.mpi.progress()
                }
            }
        }

        private fun firstComplete(requests: Array<out Request?>): Status? {
            var active = false
            for (i in requests.indices) {
                val r = requests[i] ?: continue
                if (r.isNull) continue
                active = true
                if (r.isComplete) return r.finish().withIndex(i)
            }
            return if (active) null else Status.EMPTY.withIndex(Mpi.UNDEFINED)
        }

        private fun finishAll(requests: Array<out Request?>): Array<Status> {
            var failed: Request? = null
            val out =
                Array(requests.size) { i ->
                    val r = requests[i]
                    if (r == null || r.isNull) Status.EMPTY.withIndex(i)
                    else
                        try {
                            r.finish().withIndex(i)
                        } catch (e: MPIException) {
                            failed = failed ?: r
                            r.status(i)
                        }
                }
            failed?.let { r ->
                val e =
                    MPIException.of(
                        ErrorClass.ERR_IN_STATUS,
                        "MPI_Waitall",
                        "a request failed (${ErrorClass.name(r.statusError)}: ${r.errorMessage}); see each Status.error",
                    )
                throw r.comm?.raise(e) ?: e
            }
            return out
        }

        private fun finishSome(requests: Array<out Request?>): Array<Status> {
            val out = ArrayList<Status>()
            for (i in requests.indices) {
                val r = requests[i] ?: continue
                if (!r.isNull && r.isComplete) out += r.finish().withIndex(i)
            }
            return out.toTypedArray()
        }

        private inline fun progressAll(requests: Array<out Request?>, crossinline done: () -> Boolean) {
            var one: Mpi? = null
            var several = false
            for (r in requests) {
                val m = r?.mpi ?: continue
                if (one == null) one = m else if (m !== one) several = true
            }
            if (one == null) {
                done()
                return
            }
            if (!several) {
                one.progressUntil { done() }
                return
            }
            // Requests of several instances (ranks of one JVM, as the tests run them): one wait drives them all.
            val mpis = requests.mapNotNull { it?.mpi }.distinct()
            one.domain.driveUntil(
                Domain.NO_DEADLINE,
                {
                    var w = 0
                    for (m in mpis) w += m.progress()
                    w
                },
            ) {
                done()
            }
        }

        @JvmSynthetic
        internal fun errorClassOf(errno: Int): Int =
            when (errno) {
                Errno.ETRUNC -> ErrorClass.ERR_TRUNCATE
                Errno.ECANCELED -> ErrorClass.SUCCESS
                Errno.EHOSTDOWN,
                Errno.EIO,
                Errno.ECONNRESET,
                Errno.ENOTCONN,
                Errno.EHOSTUNREACH -> ErrorClass.ERR_PROC_FAILED
                Errno.EMSGSIZE -> ErrorClass.ERR_COUNT
                Errno.EINVAL -> ErrorClass.ERR_ARG
                else -> ErrorClass.ERR_OTHER
            }
    }
}

/** [Request.done], for its release store. */
private val DONE: VarHandle =
    MethodHandles.privateLookupIn(Request::class.java, MethodHandles.lookup())
        .findVarHandle(Request::class.java, "done", java.lang.Boolean.TYPE)
