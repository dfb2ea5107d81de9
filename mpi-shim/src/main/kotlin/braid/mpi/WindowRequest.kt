package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * One one-sided operation of a [Window] on one target, as the rail carries it: a list of pieces, each one RMA write,
 * read or atomic on a contiguous run of target memory (a derived target datatype is one piece per run; a run longer
 * than one atomic carries is split). [post] posts the pieces in order and is called again where the endpoint pushed
 * back (`-EAGAIN`), so it resumes at the first piece not yet posted. Every piece completes through this request (its
 * context); the request completes once every posted piece has, and then copies what was read out of its staging buffer
 * into the caller's, when the caller's layout was not contiguous.
 *
 * A failed piece fails the request with the error class its errno means for a window (a bounds or key refusal at the
 * target: `MPI_ERR_RMA_RANGE`; a dead peer: `MPIX_ERR_PROC_FAILED`), and a message naming the window, the call and the
 * target.
 */
internal class WindowRequest(
    private val win: Window,
    private var call: String,
    /** The target's rank in the window's group. */
    target: Int,
    private var kind: Int,
    /** The origin data (put, accumulate operands, compare-and-swap's new value), or the read buffer (get). */
    private var local: UnsafeBuffer,
    private var localBase: Int,
    /** Where fetched values go ([kind] FETCH and CAS); indexed as [local]. */
    private val result: UnsafeBuffer?,
    private val compare: UnsafeBuffer?,
    private val type: AtomicDatatype?,
    private val aop: AtomicOp?,
    /** Per piece: its offset in the packed local data, its length in bytes, the target offset and the region key. */
    private var pieceAt: IntArray,
    private var pieceLen: IntArray,
    private var remoteAt: LongArray,
    private var keys: LongArray,
    /** Run at completion (unpacking a staging buffer into the caller's); null: nothing to do. */
    private val finisher: Runnable?,
) : Request(win.mpi, win.comm) {
    /** The target's rank in the window's group. */
    @get:JvmSynthetic
    internal var target: Int = target
        private set

    /** Where this request goes back once complete (a plain put or get the window pools); null: not pooled. */
    private var home: WindowRequests? = null
    /** The caller's memory, as a pooled request wraps it (its own view, so re-arming allocates nothing). */
    private val view = UnsafeBuffer(0, 0)
    /** A pooled put's copy of a small origin (made once, on its first small put). */
    private var inline: UnsafeBuffer? = null

    private var next = 0
    private var posted = 0
    private var completed = 0
    private var firstErrno = 0
    private var errorText = ""
    /** Whether a failure is also left with the window for its next synchronisation (a plain put, get or accumulate). */
    @get:JvmSynthetic @set:JvmSynthetic internal var report: Boolean = false
    /** Whether this request uses the caller's memory (not a copy of it) until it completes: see `flushLocal`. */
    @get:JvmSynthetic @set:JvmSynthetic internal var borrows: Boolean = true
    /** Whether this request still counts in its window's operations in flight to [target]. */
    private var counted = true

    @JvmSynthetic
    override fun post(): Int {
        val ep = mpi.ep
        val dest = win.addrOf(target)
        while (next < pieceAt.size) {
            val i = next
            val at = localBase + pieceAt[i]
            val rc =
                when (kind) {
                    PUT -> ep.tryWrite(local, at, pieceLen[i], dest, remoteAt[i], keys[i], this)
                    GET -> ep.tryRead(local, at, pieceLen[i], dest, remoteAt[i], keys[i], this)
                    ACC ->
                        ep.tryAtomic(
                            local,
                            at,
                            pieceLen[i] / type!!.size,
                            dest,
                            remoteAt[i],
                            keys[i],
                            type,
                            aop!!,
                            this,
                        )
                    FETCH ->
                        ep.tryFetchAtomic(
                            local,
                            at,
                            pieceLen[i] / type!!.size,
                            result!!,
                            pieceAt[i],
                            dest,
                            remoteAt[i],
                            keys[i],
                            type,
                            aop!!,
                            this,
                        )
                    else ->
                        ep.tryCompareAtomic(
                            local,
                            at,
                            pieceLen[i] / type!!.size,
                            compare!!,
                            pieceAt[i],
                            result!!,
                            pieceAt[i],
                            dest,
                            remoteAt[i],
                            keys[i],
                            type,
                            AtomicOp.CSWAP,
                            this,
                        )
                }
            if (rc == -Errno.EAGAIN) return rc
            if (rc != 0) {
                // Refused outright: post nothing more; the request fails once what was posted has completed.
                failWith(-rc, "the endpoint refused it: ${Errno.name(-rc)}")
                next = pieceAt.size
                break
            }
            next++
            posted++
        }
        if (completed == posted) finishAll()
        return 0
    }

    @JvmSynthetic
    override fun onCompletion(c: Completion) {
        completed++
        if (next == pieceAt.size && completed == posted) finishAll()
    }

    @JvmSynthetic
    override fun onError(e: CompletionError) {
        failWith(e.err, e.message)
        completed++
        if (next == pieceAt.size && completed == posted) finishAll()
    }

    private fun failWith(errno: Int, text: String) {
        if (firstErrno != 0) return
        firstErrno = errno
        errorText = text
    }

    private fun finishAll() {
        if (done) return
        if (firstErrno == 0) {
            finisher?.run()
            complete(target, Mpi.ANY_TAG, pieceLen.sum().toLong(), ErrorClass.SUCCESS)
        } else {
            val cls = classOf(firstErrno)
            val msg = "$call to rank $target of ${win.messageName()} failed: $errorText"
            complete(target, Mpi.ANY_TAG, 0, cls, message = msg)
            if (report)
                win.noteError(target, MPIException.of(cls, call, "rank $target of ${win.messageName()}: $errorText"))
        }
        if (counted) {
            counted = false
            win.finished(target, borrows)
        }
        home?.let {
            home = null
            local = WindowRequest.EMPTY
            view.wrap(0, 0) // lets go of the caller's memory while pooled
            it.give(this)
        }
    }

    @JvmSynthetic override fun peer(): String = "$call to rank $target of ${win.messageName()}"

    /**
     * Makes this pooled request a new one-run [PUT] or [GET] of [len] bytes between the caller's contiguous [buffer] at
     * [at] and [remote] in region [key] of [target], which goes back to [pool] once complete. A plain operation's
     * failure is left with the window for its next synchronisation.
     */
    @JvmSynthetic
    internal fun rearm(
        pool: WindowRequests,
        call: String,
        kind: Int,
        target: Int,
        buffer: java.nio.ByteBuffer,
        at: Int,
        len: Int,
        remote: Long,
        key: Long,
    ): WindowRequest {
        reset()
        this.call = call
        this.kind = kind
        this.target = target
        if (kind == PUT && len <= INLINE) {
            // A small put carries a copy: the caller's buffer is free again at once (flushLocal waits for nothing).
            val copy =
                inline ?: UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(INLINE, 64)).also { inline = it }
            copy.putBytes(0, buffer, at, len)
            local = copy
            localBase = 0
            borrows = false
        } else {
            view.wrap(buffer)
            local = view
            localBase = at
            borrows = true
        }
        if (pieceAt.size != 1) {
            pieceAt = IntArray(1)
            pieceLen = IntArray(1)
            remoteAt = LongArray(1)
            keys = LongArray(1)
        }
        pieceAt[0] = 0
        pieceLen[0] = len
        remoteAt[0] = remote
        keys[0] = key
        next = 0
        posted = 0
        completed = 0
        firstErrno = 0
        errorText = ""
        counted = true
        report = true
        home = pool
        return this
    }

    internal companion object {
        const val PUT = 0
        const val GET = 1
        const val ACC = 2
        const val FETCH = 3
        const val CAS = 4
        /** The largest put a pooled request copies rather than reads from the caller's buffer. */
        const val INLINE = 512

        /** What a failed piece's errno means for a window operation. */
        fun classOf(errno: Int): Int =
            when (errno) {
                Errno.EINVAL,
                Errno.EACCES -> ErrorClass.ERR_RMA_RANGE
                Errno.EOPNOTSUPP,
                Errno.ENOSYS -> ErrorClass.ERR_UNSUPPORTED_OPERATION
                else -> Request.errorClassOf(errno)
            }

        /** An empty buffer for requests that carry no data. */
        val EMPTY: UnsafeBuffer = UnsafeBuffer(ByteBuffer.allocateDirect(0))
    }
}

/**
 * The window's pool of one-run requests for plain `put` and `get` (whose requests the caller never sees), so a warm put
 * or get allocates nothing: taken by the calling thread, given back by whichever thread completes the request.
 */
internal class WindowRequests(private val win: Window) {
    private val idle = ArrayDeque<WindowRequest>()

    fun take(): WindowRequest =
        synchronized(idle) { idle.removeLastOrNull() }
            ?: WindowRequest(
                win,
                "",
                0,
                WindowRequest.PUT,
                WindowRequest.EMPTY,
                0,
                null,
                null,
                null,
                null,
                IntArray(1),
                IntArray(1),
                LongArray(1),
                LongArray(1),
                null,
            )

    fun give(r: WindowRequest) {
        synchronized(idle) { if (idle.size < MAX_IDLE) idle.addLast(r) }
    }

    private companion object {
        /** The most idle requests kept (a window of puts before one flush needs one each). */
        const val MAX_IDLE = 1024
    }
}

/** The window as messages name it: its own name, which says "window" unless the user renamed it. */
private fun Window.messageName(): String = name().let { if (it.startsWith("window")) it else "window $it" }
