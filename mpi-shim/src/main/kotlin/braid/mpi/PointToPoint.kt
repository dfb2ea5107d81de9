package braid.mpi

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer

// The operations behind the point-to-point calls: each is a Request that posts itself to the
// endpoint (Mpi.submit) and is the context of its completion.

/**
 * The bytes of `count` elements of a datatype as the endpoint sees them: the caller's memory in
 * place when the layout is contiguous, else a packed copy ([staging]) spread back on completion.
 */
internal class Region(val view: UnsafeBuffer, val staging: ByteBuffer?, val user: ByteBuffer, val count: Int, val type: Datatype) {
    /** Spreads [bytes] received into [staging] over the user's layout (whole elements only). */
    fun unpack(bytes: Long) {
        val s = staging ?: return
        val elements = if (type.size == 0L) 0 else (minOf(bytes, count * type.size) / type.size).toInt()
        type.unpackFrom(s, 0, user, 0, elements)
    }

    companion object {
        fun of(buf: ByteBuffer, count: Int, type: Datatype, packNow: Boolean): Region {
            val bytes = (count * type.size).toInt()
            if (type.isContiguous) {
                val start = if (bytes == 0) 0 else type.trueLb.toInt()
                return Region(UnsafeBuffer(buf, start, bytes), null, buf, count, type)
            }
            val staging = if (buf.isDirect) ByteBuffer.allocateDirect(bytes) else ByteBuffer.allocate(bytes)
            if (packNow) type.packInto(buf, 0, count, staging, 0)
            return Region(UnsafeBuffer(staging, 0, bytes), staging, buf, count, type)
        }
    }
}

/** A send of any mode: [flags] add DELIVERY_COMPLETE for a synchronous send. */
internal class SendOp(
    mpi: Mpi,
    comm: Comm?,
    private val view: UnsafeBuffer,
    private val dest: Long,
    private val bits: Long,
    private val flags: Long,
    private val onDone: Runnable? = null,
) : Request(mpi, comm) {
    override fun post(): Int = mpi.ep.trySendmsg(view, 0, view.capacity(), dest, bits, 0, OpFlags.TAGGED or flags, this)

    override fun onCompletion(c: Completion) {
        onDone?.run()
        complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, view.capacity().toLong(), false, ErrorClass.SUCCESS, -1))
    }

    override fun onError(e: CompletionError) {
        onDone?.run()
        super.onError(e)
    }
}

/**
 * A receive: posted with any source, matching the source through the match bits. [sourceAddr]
 * is the sender's fabric address when the receive names one (so its death can fail it), else
 * `FiAddr.UNSPEC`.
 */
internal class RecvOp(
    mpi: Mpi,
    comm: Comm?,
    private val region: Region,
    private val bits: Long,
    private val ignore: Long,
    val sourceAddr: Long,
) : Request(mpi, comm) {
    /** Set when the sender died: the cancellation that follows completes as ERR_PROC_FAILED. */
    var failedPeer: String? = null

    override fun post(): Int {
        val rc = mpi.ep.tryTrecv(region.view, 0, region.view.capacity(), FiAddr.UNSPEC, bits, ignore, this)
        if (rc == 0 && sourceAddr != FiAddr.UNSPEC) {
            mpi.postedDirected(this)
            // A rail reports a peer dead (or closed: it finished) only after delivering all it had
            // sent, so a receive from it that matched none of that cannot complete: fail it
            // (the cancel is refused, 0 aside, when the receive already matched a message).
            mpi.deadPeer(sourceAddr)?.let { why -> failedPeer = why; mpi.ep.cancel(this) }
        }
        return rc
    }

    override fun cancelPosted() {
        mpi.lock.lock()
        try { mpi.ep.cancel(this) } finally { mpi.lock.unlock() } // 0: an ECANCELED completion follows; else it matched
    }

    override fun onCompletion(c: Completion) {
        if (sourceAddr != FiAddr.UNSPEC) mpi.finishedDirected(this)
        region.unpack(c.len)
        complete(Status(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, false, ErrorClass.SUCCESS, -1))
    }

    override fun onError(e: CompletionError) {
        if (sourceAddr != FiAddr.UNSPEC) mpi.finishedDirected(this)
        val failed = failedPeer
        if (failed != null && e.err == Errno.ECANCELED) {
            complete(Status(MatchBitsDescriptor.rank(bits), MatchBitsDescriptor.tag(bits), 0, false, ErrorClass.ERR_PROC_FAILED, -1), "the sender failed: $failed")
        } else {
            completeError(this, region, e)
        }
    }
}

/** The error outcome of a receive: cancelled, truncated (the bytes that fit are kept) or failed. */
internal fun completeError(op: Request, region: Region?, e: CompletionError) {
    when (e.err) {
        Errno.ECANCELED -> op.complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, true, ErrorClass.SUCCESS, -1))
        Errno.ETRUNC -> {
            region?.unpack(e.len)
            op.complete(
                Status(MatchBitsDescriptor.rank(e.tag), MatchBitsDescriptor.tag(e.tag), e.len, false, ErrorClass.ERR_TRUNCATE, -1),
                "a message of ${e.len + e.olen} bytes from rank ${MatchBitsDescriptor.rank(e.tag)} (tag ${MatchBitsDescriptor.tag(e.tag)}) does not fit the ${e.len}-byte receive",
            )
        }
        else -> op.complete(Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, e.len, false, Request.errorClassOf(e.err), -1), "${Errno.name(e.err)}: ${e.message}")
    }
}

/** A complete request made at once: PROC_NULL operations and buffered sends. */
internal class DoneRequest(mpi: Mpi, comm: Comm?, s: Status) : Request(mpi, comm) {
    init { complete(s) }
}

/** `MPI_Iprobe` (PEEK) and `MPI_Improbe` (PEEK|CLAIM), and then the matched receive (CLAIM). */
internal class ProbeOp(mpi: Mpi, comm: Comm?, private val claim: Boolean) : Request(mpi, comm) {
    @Volatile var found: Boolean = false
    var source = 0; var tag = 0; var bytes = 0L
    private var region: Region? = null

    /** Looks once; true if a message matched (and, for a claim, is now reserved for this op). */
    fun look(bits: Long, ignore: Long): Boolean {
        done = false
        mpi.lock.lock()
        try {
            val rc = mpi.ep.tryTrecv(EMPTY, 0, 0, FiAddr.UNSPEC, bits, ignore, this, OpFlags.PEEK or (if (claim) OpFlags.CLAIM else 0))
            if (rc != 0) throw MPIException.of(ErrorClass.ERR_OTHER, "MPI_Iprobe", "the endpoint refused the probe: ${Errno.name(-rc)}")
        } finally { mpi.lock.unlock() }
        mpi.progressUntil { done }
        return found
    }

    /** Receives the claimed message into [r]. */
    fun receive(r: Region) {
        region = r
        done = false
        mpi.submit(this)
    }

    override fun post(): Int = mpi.ep.tryTrecv(region!!.view, 0, region!!.view.capacity(), FiAddr.UNSPEC, 0, 0, this, OpFlags.CLAIM)

    override fun onCompletion(c: Completion) {
        val r = region
        if (r == null) { // the probe's answer
            found = true
            source = MatchBitsDescriptor.rank(c.tag); tag = MatchBitsDescriptor.tag(c.tag); bytes = c.len
            complete(Status(source, tag, bytes, false, ErrorClass.SUCCESS, -1))
        } else {
            r.unpack(c.len)
            complete(Status(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, false, ErrorClass.SUCCESS, -1))
        }
    }

    override fun onError(e: CompletionError) {
        if (region == null && e.err == Errno.ENOMSG) { found = false; complete(Status.EMPTY); return }
        completeError(this, region, e)
    }

    private companion object {
        val EMPTY = UnsafeBuffer(ByteArray(0))
    }
}
