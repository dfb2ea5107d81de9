package braid.mpi

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.core.TrecvBatch
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

// The operations behind the point-to-point calls: each is a Request that posts itself to the
// endpoint (Mpi.submit) and is the context of its completion. Sends and receives are pooled
// (Mpi.takeSend/takeRecv, Mpi.recycle): a warm blocking call, or a nonblocking one whose request
// the caller recycles, allocates nothing.

/**
 * The bytes of `count` elements of a datatype as the endpoint sees them: the caller's memory in place when the layout
 * is contiguous (a reused view, no copy, no allocation), else a packed copy (`staging`) spread back on completion.
 * Owned by one operation and re-aimed per call.
 */
internal class Region {
    /** What the endpoint reads or writes. */
    val view = UnsafeBuffer(NO_BYTES)
    private var staging: ByteBuffer? = null
    private var user: ByteBuffer? = null
    private var count = 0
    private var type: Datatype = Datatype.BYTE

    /**
     * Aims this region at [count] × [type] from byte 0 of [buf]; packs now ([packNow]: a send) when the layout is not
     * contiguous.
     */
    fun set(buf: ByteBuffer, count: Int, type: Datatype, packNow: Boolean): Region {
        val bytes = (count * type.size).toInt()
        this.count = count
        this.type = type
        if (type.isContiguous) {
            staging = null
            user = null
            view.wrap(buf, if (bytes == 0) 0 else type.trueLb.toInt(), bytes)
            return this
        }
        val s = if (buf.isDirect) ByteBuffer.allocateDirect(bytes) else ByteBuffer.allocate(bytes)
        if (packNow) type.packInto(buf, 0, count, s, 0)
        staging = s
        user = buf
        view.wrap(s, 0, bytes)
        return this
    }

    /** Spreads [bytes] received into the staging copy over the user's layout (whole elements only). */
    fun unpack(bytes: Long) {
        val s = staging ?: return
        val elements = if (type.size == 0L) 0 else (minOf(bytes, count * type.size) / type.size).toInt()
        type.unpackFrom(s, 0, user!!, 0, elements)
    }

    /** Lets go of the caller's memory (the region is idle in a pool). */
    fun clear() {
        view.wrap(NO_BYTES)
        staging = null
        user = null
    }

    private companion object {
        val NO_BYTES = ByteArray(0)
    }
}

/**
 * A send of any mode: [set] aims it; `flags` add DELIVERY_COMPLETE for a synchronous send, and `onDone` (buffered
 * sends) runs once the endpoint is done with the data.
 */
internal class SendOp(mpi: Mpi) : Request(mpi, null) {
    val region = Region()
    private var dest = 0L
    private var bits = 0L
    private var flags = 0L
    private var onDone: Runnable? = null

    fun set(comm: Comm?, dest: Long, bits: Long, flags: Long, onDone: Runnable? = null): SendOp {
        this.comm = comm
        this.dest = dest
        this.bits = bits
        this.flags = flags
        this.onDone = onDone
        return this
    }

    /**
     * A send the endpoint can inject (up to [Mpi.injectSize], not synchronous) goes as `FI_INJECT`: the rail copies it
     * into the ring before returning and writes no completion for it, so the request completes here, at its post, with
     * no completion entry written, read and dispatched for it (MPI's eager sends complete locally, as MPICH's do). When
     * the ring has no room the inject is refused (shm never queues one) and the send is posted as any other, queued by
     * the rail with this request as its context, so a send that could not leave at once still reports its failure.
     */
    override fun post(): Int {
        val n = region.view.capacity()
        if (flags and OpFlags.DELIVERY_COMPLETE == 0L && n <= mpi.injectSize) {
            val rc =
                mpi.ep.trySendmsg(region.view, 0, n, dest, bits, 0, OpFlags.TAGGED or OpFlags.INJECT or flags, null)
            if (rc == 0) {
                onDone?.run()
                complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, n.toLong(), ErrorClass.SUCCESS)
                return 0
            }
            if (rc != -Errno.EAGAIN) return rc
        }
        return mpi.ep.trySendmsg(region.view, 0, n, dest, bits, 0, OpFlags.TAGGED or flags, this)
    }

    override fun onCompletion(c: Completion) {
        onDone?.run()
        complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, region.view.capacity().toLong(), ErrorClass.SUCCESS)
    }

    override fun onError(e: CompletionError) {
        onDone?.run()
        val to = peer()
        complete(
            Mpi.ANY_SOURCE,
            Mpi.ANY_TAG,
            e.len,
            errorClassOf(e.err),
            message = if (to == null) e.message else "the $to failed: ${e.message}",
        )
    }

    override fun peer(): String? = comm?.let { c -> "send to rank ${c.rankOfAddr(dest)} of ${c.getName()}" }

    override fun clear() {
        region.clear()
        onDone = null
        comm = null
    }
}

/**
 * A receive: posted with any source, matching the source through the match bits. `sourceAddr` is the sender's fabric
 * address when the receive names one (so its death can fail it: [DirectedRecv]), else `FiAddr.UNSPEC`.
 */
internal class RecvOp(mpi: Mpi) : DirectedRecv(mpi, null) {
    val region = Region()
    private var bits = 0L
    private var ignore = 0L

    fun set(comm: Comm?, bits: Long, ignore: Long, sourceAddr: Long): RecvOp {
        this.comm = comm
        this.bits = bits
        this.ignore = ignore
        this.sourceAddr = sourceAddr
        failedPeer = null
        return this
    }

    override fun post(): Int {
        val rc = mpi.ep.tryTrecv(region.view, 0, region.view.capacity(), FiAddr.UNSPEC, bits, ignore, this)
        if (rc == 0) posted()
        return rc
    }

    /** Adds this receive to [batch], which [Mpi] posts with the other receives waiting for its progress. */
    fun addTo(batch: TrecvBatch) {
        batch.add(region.view, 0, region.view.capacity(), FiAddr.UNSPEC, bits, ignore, this)
    }

    override fun cancelPosted() {
        mpi.locked { mpi.ep.cancel(this) } // 0: an ECANCELED completion follows; else it matched
    }

    override fun peer(): String? =
        comm?.let { c ->
            if (sourceAddr == FiAddr.UNSPEC) "receive on ${c.getName()}"
            else "receive from rank ${c.rankOfAddr(sourceAddr)} of ${c.getName()}"
        }

    override fun onCompletion(c: Completion) {
        mpi.finishedDirected(this)
        region.unpack(c.len)
        complete(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, ErrorClass.SUCCESS)
    }

    override fun onError(e: CompletionError) {
        if (!failedBySender(e, bits)) completeError(this, region, e)
    }

    override fun clear() {
        region.clear()
        comm = null
        failedPeer = null
    }
}

/** The error outcome of a receive: cancelled, truncated (the bytes that fit are kept) or failed. */
internal fun completeError(op: Request, region: Region?, e: CompletionError) {
    when (e.err) {
        Errno.ECANCELED -> op.complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, ErrorClass.SUCCESS, cancelled = true)
        Errno.ETRUNC -> {
            region?.unpack(e.len)
            op.complete(
                MatchBitsDescriptor.rank(e.tag),
                MatchBitsDescriptor.tag(e.tag),
                e.len,
                ErrorClass.ERR_TRUNCATE,
                message =
                    "a message of ${e.len + e.olen} bytes from rank ${MatchBitsDescriptor.rank(e.tag)} (tag ${MatchBitsDescriptor.tag(e.tag)}) does not fit the ${e.len}-byte receive",
            )
        }
        else ->
            op.complete(
                Mpi.ANY_SOURCE,
                Mpi.ANY_TAG,
                e.len,
                Request.errorClassOf(e.err),
                message = "${Errno.name(e.err)}: ${e.message}",
            )
    }
}

/** A complete request made at once: PROC_NULL operations and buffered sends. */
internal class DoneRequest(mpi: Mpi, comm: Comm?, s: Status) : Request(mpi, comm) {
    init {
        complete(s)
    }
}

/** `MPI_Iprobe` (PEEK) and `MPI_Improbe` (PEEK|CLAIM), and then the matched receive (CLAIM). */
internal class ProbeOp(mpi: Mpi, comm: Comm?, private val claim: Boolean) : Request(mpi, comm) {
    @Volatile var found: Boolean = false
    var source = 0
    var tag = 0
    var bytes = 0L
    private var region: Region? = null
    /** Where the received message goes from [region] (a memory region: a region's `MPI_Mrecv`), or null. */
    private var landing: RegionSpan? = null

    /** Looks once; true if a message matched (and, for a claim, is now reserved for this op). */
    fun look(bits: Long, ignore: Long): Boolean {
        done = false
        mpi.locked {
            // The receives called before this probe match first: a message one of them takes is not there to see.
            mpi.postReceives()
            val rc =
                mpi.ep.tryTrecv(
                    EMPTY,
                    0,
                    0,
                    FiAddr.UNSPEC,
                    bits,
                    ignore,
                    this,
                    OpFlags.PEEK or (if (claim) OpFlags.CLAIM else 0),
                )
            if (rc != 0)
                throw MPIException.of(
                    ErrorClass.ERR_OTHER,
                    "MPI_Iprobe",
                    "the endpoint refused the probe: ${Errno.name(-rc)}",
                )
        }
        mpi.progressUntil { done }
        return found
    }

    /** Receives the claimed message into [r], and from there into [then]'s memory region if not null. */
    fun receive(r: Region, then: RegionSpan? = null) {
        region = r
        landing = then
        done = false
        mpi.submit(this)
    }

    override fun post(): Int =
        mpi.ep.tryTrecv(region!!.view, 0, region!!.view.capacity(), FiAddr.UNSPEC, 0, 0, this, OpFlags.CLAIM)

    override fun onCompletion(c: Completion) {
        val r = region
        if (r == null) { // the probe's answer
            found = true
            source = MatchBitsDescriptor.rank(c.tag)
            tag = MatchBitsDescriptor.tag(c.tag)
            bytes = c.len
            complete(source, tag, bytes, ErrorClass.SUCCESS)
        } else {
            r.unpack(c.len)
            val to = landing
            if (to != null && !landed(this, to, r.view, c.len)) return
            complete(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, ErrorClass.SUCCESS)
        }
    }

    override fun onError(e: CompletionError) {
        if (region == null && e.err == Errno.ENOMSG) {
            found = false
            complete(Status.EMPTY)
            return
        }
        val to = landing
        val r = region
        if (to != null && r != null && e.err == Errno.ETRUNC && !landed(this, to, r.view, e.len)) return
        completeError(this, region, e)
    }

    private companion object {
        val EMPTY = UnsafeBuffer(ByteArray(0))
    }
}
