package braid.mpi

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno

/**
 * A nonblocking operation (`MPI_Request`). [waitFor] blocks until it completes, [test] looks
 * once; both drive this process's progress. Once a nonblocking request's completion has been
 * returned the request is spent ([isNull], `MPI_REQUEST_NULL`); a persistent one ([Prequest])
 * becomes inactive and can be [Prequest.start]ed again.
 *
 * An operation that failed completes with the error in its [Status]; [waitFor] and [test] then
 * raise it through the communicator's error handler (a cancelled operation is not an error).
 */
public abstract class Request internal constructor(
    internal val mpi: Mpi,
    internal val comm: Comm?,
) {
    @Volatile internal var done: Boolean = false
    internal var status: Status = Status.EMPTY
    private var spent = false

    /** Whether this request is `MPI_REQUEST_NULL` (its completion was returned, or it was freed). */
    public open val isNull: Boolean get() = spent

    /** Whether the operation completed (no progress is made; [test] makes some). */
    public open val isComplete: Boolean get() = done

    /** `MPI_Wait`: blocks until complete and returns the status; `MPI_REQUEST_NULL` returns an empty status. */
    public open fun waitFor(): Status {
        if (spent) return Status.EMPTY
        mpi.progressUntil { done }
        return finish()
    }

    /** `MPI_Test`: the status if complete (the request is then spent), else null. */
    public open fun test(): Status? {
        if (spent) return Status.EMPTY
        if (!done) mpi.progress()
        return if (done) finish() else null
    }

    /**
     * `MPI_Cancel`: a receive not yet matched is withdrawn (its status then says cancelled); a
     * send is withdrawn only while it has not reached the endpoint (queued behind back
     * pressure). Otherwise the operation completes normally. Wait for the request either way.
     */
    public open fun cancel() {
        if (spent || done) return
        if (mpi.withdraw(this)) { complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, true, ErrorClass.SUCCESS, -1)); return }
        cancelPosted()
    }

    /** `MPI_Request_free`: lets the operation finish on its own; the request is spent. */
    public open fun free() {
        spent = true
    }

    // ## For the operations ##

    internal open fun post(): Int = 0

    internal open fun cancelPosted() {}

    internal open fun onCompletion(c: Completion) {
        complete(Status.EMPTY)
    }

    internal open fun onError(e: CompletionError) {
        complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, e.len, false, errorClassOf(e.err), -1), e.message)
    }

    /** The endpoint refused the post outright (not `-EAGAIN`). */
    internal fun failPost(rc: Int) {
        complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, errorClassOf(-rc), -1), "the endpoint refused the operation: ${Errno.name(-rc)}")
    }

    internal var errorMessage: String = ""

    internal fun complete(s: Status, message: String = "") {
        status = s
        errorMessage = message
        done = true
    }

    /** Spends the request and returns its status, raising its error. */
    internal open fun finish(): Status {
        spent = true
        return checked(status)
    }

    internal fun checked(s: Status): Status {
        if (s.error != ErrorClass.SUCCESS) {
            val e = MPIException.of(s.error, "MPI_Wait", "the operation failed: $errorMessage")
            throw comm?.raise(e) ?: e
        }
        return s
    }

    public companion object {
        /**
         * `MPI_Waitany`: waits until one of the active [requests] completes; its status has
         * [Status.index]. With no active request, returns a status whose index is [Mpi.UNDEFINED].
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
            requests.forEach { r -> if (r != null && !r.isNull && !r.isComplete) r.mpi.progress() }
            return firstComplete(requests)
        }

        /** `MPI_Waitall`: waits for every request; one that failed raises `MPI_ERR_IN_STATUS` after all are done. */
        @JvmStatic
        public fun waitAll(requests: Array<out Request?>): Array<Status> {
            progressAll(requests) { requests.all { it == null || it.isNull || it.isComplete } }
            return finishAll(requests)
        }

        /** `MPI_Testall`: every status if all requests completed (spending them), else null. */
        @JvmStatic
        public fun testAll(requests: Array<out Request?>): Array<Status>? {
            requests.forEach { r -> if (r != null && !r.isNull && !r.isComplete) r.mpi.progress() }
            return if (requests.all { it == null || it.isNull || it.isComplete }) finishAll(requests) else null
        }

        /** `MPI_Waitsome`: waits until at least one active request completes; returns all completed (with indices). Empty if none is active. */
        @JvmStatic
        public fun waitSome(requests: Array<out Request?>): Array<Status> {
            progressAll(requests) { requests.none { it != null && !it.isNull } || requests.any { it != null && !it.isNull && it.isComplete } }
            return finishSome(requests)
        }

        /** `MPI_Testsome`: the completed requests' statuses (with indices), possibly none. */
        @JvmStatic
        public fun testSome(requests: Array<out Request?>): Array<Status> {
            requests.forEach { r -> if (r != null && !r.isNull && !r.isComplete) r.mpi.progress() }
            return finishSome(requests)
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
            val out = Array(requests.size) { i ->
                val r = requests[i]
                if (r == null || r.isNull) Status.EMPTY.withIndex(i)
                else try { r.finish().withIndex(i) } catch (e: MPIException) { failed = failed ?: r; r.status.withIndex(i) }
            }
            failed?.let { r ->
                val e = MPIException.of(ErrorClass.ERR_IN_STATUS, "MPI_Waitall", "a request failed (${ErrorClass.name(r.status.error)}: ${r.errorMessage}); see each Status.error")
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
            val mpis = requests.mapNotNull { it?.mpi }.distinct()
            if (mpis.isEmpty()) { done(); return }
            if (mpis.size == 1) { mpis[0].progressUntil { done() }; return }
            while (!done()) { var w = 0; mpis.forEach { w += it.progress() }; if (w == 0) Thread.onSpinWait() }
        }

        internal fun errorClassOf(errno: Int): Int = when (errno) {
            Errno.ETRUNC -> ErrorClass.ERR_TRUNCATE
            Errno.ECANCELED -> ErrorClass.SUCCESS
            Errno.EHOSTDOWN, Errno.EIO, Errno.ECONNRESET, Errno.ENOTCONN, Errno.EHOSTUNREACH -> ErrorClass.ERR_PROC_FAILED
            Errno.EMSGSIZE -> ErrorClass.ERR_COUNT
            Errno.EINVAL -> ErrorClass.ERR_ARG
            else -> ErrorClass.ERR_OTHER
        }
    }
}
