package braid.mpi

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.MemoryRegion
import braid.core.OpFlags
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

// The point-to-point operations of [CommRegions]: a send or receive of memory of any interface (device memory
// included). A contiguous type goes to the endpoint's region form (`desc`), which stages device bytes through its
// pooled bounce buffers with the endpoint's copy service (chunk by chunk for a large send); any other type is packed
// or unpacked host-side through the same service ([RegionPack]), as `MPI_Pack` of a region is. Not pooled: each call
// makes its request.

/** `count` elements of a type at byte `offset` of a region, checked: where its bytes start, and how many. */
internal class RegionSpan(val region: MemoryRegion, val offset: Long, val count: Int, val type: Datatype) {
    /** The bytes the elements carry (packed); valid once [check] has passed. */
    val bytes: Int = (count.toLong() * type.size).toInt()

    /** Where a contiguous layout's bytes start in the region. */
    val start: Long
        get() = offset + (if (bytes == 0) 0 else type.trueLb)

    val contiguous: Boolean
        get() = type.isContiguous

    /** Refuses a count, type, region or range the call cannot take, naming it. */
    fun check(call: String, ep: braid.core.Endpoint, what: String): RegionSpan {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
        type.checkUsable(call)
        val n = count.toLong() * type.size
        if (n > Int.MAX_VALUE)
            throw MPIException.of(ErrorClass.ERR_COUNT, call, "the $what: $count × $type is $n bytes; at most 2 GiB")
        if (!contiguous) RegionPack.spanOf(call, type, region, offset, count)
        if (region.domain !== ep.domain)
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                call,
                "the $what (memory region ${region.key}) belongs to domain '${region.domain.name}', not this " +
                    "process's '${ep.domain.name}'; register it with Mpi.registerMemory",
            )
        if (contiguous && (start < 0 || start + bytes > region.length))
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                call,
                "the $what: $count × $type at byte offset $offset of memory region ${region.key} needs bytes " +
                    "[$start, ${start + bytes}) but the region holds ${region.length}",
            )
        return this
    }

    /** A new host buffer of [bytes] (at least one byte, so it always has an address). */
    fun hostBuffer(): UnsafeBuffer =
        UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes)).order(ByteOrder.nativeOrder()), 0, bytes)

    /** The elements packed into a new host buffer through the copy service (any layout). */
    fun packed(call: String, ep: braid.core.Endpoint): UnsafeBuffer =
        hostBuffer().also { RegionPack(ep).pack(call, type, region, offset, count, it.byteBuffer(), 0) }

    /**
     * The whole elements of [len] bytes received into [host] put into the region through the copy service: copied for a
     * contiguous layout, unpacked over the span for another (the gaps keep their bytes). A failed copy throws.
     */
    fun land(call: String, ep: braid.core.Endpoint, host: UnsafeBuffer, len: Long) {
        val whole = if (type.size == 0L) 0 else minOf((len / type.size).toInt(), count)
        if (!contiguous) {
            RegionPack(ep).unpack(call, type, host.byteBuffer(), 0, region, offset, whole)
            return
        }
        val rc = ep.copyToRegion(region, start, host, 0, (whole * type.size).toInt())
        if (rc != 0)
            throw MPIException.of(
                Request.errorClassOf(-rc).takeIf { it != ErrorClass.SUCCESS } ?: ErrorClass.ERR_OTHER,
                call,
                "the copy into memory region ${region.key} (${region.iface}) failed with ${Errno.name(rc)}; set a " +
                    "copy function with setOp or install the interface's runtime",
            )
    }
}

/** A send from a region ([CommRegions.isend] and friends); [host] holds a non-contiguous type's packed bytes. */
internal class RegionSendOp(
    mpi: Mpi,
    comm: Comm,
    private val span: RegionSpan,
    private val host: UnsafeBuffer?,
    private val dest: Long,
    private val bits: Long,
    private val flags: Long,
) : Request(mpi, comm) {
    override fun post(): Int {
        val f = OpFlags.TAGGED or flags
        return if (host != null) mpi.ep.trySendmsg(host, 0, span.bytes, dest, bits, 0, f, this)
        else mpi.ep.trySendmsg(span.region, span.start, span.bytes, dest, bits, f, this)
    }

    override fun onCompletion(c: Completion) {
        complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, span.bytes.toLong(), ErrorClass.SUCCESS)
    }

    override fun onError(e: CompletionError) {
        complete(
            Mpi.ANY_SOURCE,
            Mpi.ANY_TAG,
            e.len,
            errorClassOf(e.err),
            message = "the ${peer()} failed: ${e.message}",
        )
    }

    override fun peer(): String =
        "send from memory region ${span.region.key} to rank ${comm?.rankOfAddr(dest)} of ${comm?.getName()}"
}

/**
 * A receive into a region. Posted alone (not in braid.mpi's batch of receives), after the receives called before it, so
 * matching keeps the order of the calls. A non-contiguous type lands in [host] and is unpacked into the region at the
 * completion (the gaps keep their bytes).
 */
internal class RegionRecvOp(
    mpi: Mpi,
    comm: Comm,
    private val span: RegionSpan,
    private val host: UnsafeBuffer?,
    private val bits: Long,
    private val ignore: Long,
    source: Long,
) : DirectedRecv(mpi, comm) {
    init {
        sourceAddr = source
    }

    /**
     * Posts now if the receives called before it have gone, else waits behind them (`-EAGAIN`); once posted, a named
     * source's death fails it ([DirectedRecv]). Caller: locked.
     */
    override fun post(): Int {
        if (mpi.receivesQueued) mpi.postReceives()
        if (mpi.receivesQueued) return -Errno.EAGAIN
        val rc =
            if (host != null) mpi.ep.tryTrecv(host, 0, host.capacity(), FiAddr.UNSPEC, bits, ignore, this)
            else mpi.ep.tryTrecv(span.region, span.start, span.bytes, FiAddr.UNSPEC, bits, ignore, this)
        if (rc == 0) posted()
        return rc
    }

    override fun cancelPosted() {
        mpi.locked { mpi.ep.cancel(this) }
    }

    override fun peer(): String = "receive into memory region ${span.region.key} on ${comm?.getName()}"

    override fun onCompletion(c: Completion) {
        mpi.finishedDirected(this)
        if (host == null || landed(this, span, host, c.len))
            complete(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, ErrorClass.SUCCESS)
    }

    override fun onError(e: CompletionError) {
        if (!failedBySender(e, bits)) completeError(this, null, e)
    }
}

/**
 * [len] bytes received into [host] put into [span]'s region; on a failed copy [op] completes with its error and this
 * answers false.
 */
internal fun landed(op: Request, span: RegionSpan, host: UnsafeBuffer, len: Long): Boolean =
    try {
        span.land("MPI_Recv", op.mpi.ep, host, len)
        true
    } catch (e: MPIException) {
        op.complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, len, e.errorClass, message = e.message ?: "")
        false
    }

/**
 * Starts a send of [span] in [mode] ([Comm.MODE_STANDARD] …; ready is carried as standard, as for buffers): checks as
 * the buffer form does, then posts in call order. A buffered send packs the span into the attached buffer through the
 * copy service and completes at once, as [Comm.bsend] of a buffer does.
 */
internal fun Comm.startRegionSend(call: String, span: RegionSpan, dest: Int, tag: Int, mode: Int): Request = guard {
    checkUsable(call)
    checkDest(call, dest)
    checkTag(call, tag, receive = false)
    span.check(call, mpi.ep, "send buffer")
    if (dest == Mpi.PROC_NULL) return@guard DoneRequest(mpi, this, Status.PROC_NULL)
    failedPeer(call, dest)?.let {
        return@guard it
    }
    val bits = MatchBitsDescriptor.bits(context, MatchBitsDescriptor.SUB_PT2PT, rank, tag)
    if (mode == Comm.MODE_BUFFERED) {
        val staged =
            mpi.buffered.stage(span.bytes) { b, at ->
                regionPack.pack(call, span.type, span.region, span.offset, span.count, b, at)
            }
        return@guard bufferedSend(staged, dest, bits, span.bytes.toLong())
    }
    val host = if (span.contiguous) null else span.packed(call, mpi.ep)
    val flags = if (mode == Comm.MODE_SYNCHRONOUS) OpFlags.DELIVERY_COMPLETE else 0L
    RegionSendOp(mpi, this, span, host, destAddr[dest], bits, flags).also { mpi.submit(it) }
}

/** Starts a receive into [span] ([CommRegions.irecv]). */
internal fun Comm.startRegionRecv(call: String, span: RegionSpan, source: Int, tag: Int): Request = guard {
    checkUsable(call)
    checkSource(call, source)
    checkTag(call, tag, receive = true)
    span.check(call, mpi.ep, "receive buffer")
    if (source == Mpi.PROC_NULL) return@guard DoneRequest(mpi, this, Status.PROC_NULL)
    val from = if (source == Mpi.ANY_SOURCE) FiAddr.UNSPEC else destAddr[source]
    val host = if (span.contiguous) null else span.hostBuffer()
    postRegionRecv(RegionRecvOp(mpi, this, span, host, recvBits(source, tag), recvIgnore(source, tag), from))
}

/** Posts [op] at once, after the receives called before it ([RegionRecvOp.post]); returns it. */
internal fun Comm.postRegionRecv(op: RegionRecvOp): RegionRecvOp {
    mpi.locked {
        val rc = op.post()
        when {
            rc == -Errno.EAGAIN -> mpi.submit(op) // behind receives the endpoint pushed back: rare
            rc != 0 -> op.failPost(rc)
        }
    }
    return op
}
