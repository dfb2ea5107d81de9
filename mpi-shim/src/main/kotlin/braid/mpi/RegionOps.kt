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

    /** A non-contiguous layout's elements packed into a new host buffer through the copy service. */
    fun packed(call: String, ep: braid.core.Endpoint): UnsafeBuffer {
        val out = ByteBuffer.allocateDirect(maxOf(1, bytes)).order(ByteOrder.nativeOrder())
        RegionPack(ep).pack(call, type, region, offset, count, out, 0)
        return UnsafeBuffer(out, 0, bytes)
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
    private val sourceAddr: Long,
) : Request(mpi, comm) {
    private var failedPeer: String? = null

    /** Posts now if the receives called before it have gone, else waits behind them (`-EAGAIN`). Caller: locked. */
    override fun post(): Int {
        if (mpi.receivesQueued) mpi.postReceives()
        if (mpi.receivesQueued) return -Errno.EAGAIN
        val rc =
            if (host != null) mpi.ep.tryTrecv(host, 0, host.capacity(), FiAddr.UNSPEC, bits, ignore, this)
            else mpi.ep.tryTrecv(span.region, span.start, span.bytes, FiAddr.UNSPEC, bits, ignore, this)
        if (rc == 0 && sourceAddr != FiAddr.UNSPEC) {
            val why = mpi.deadPeer(sourceAddr)
            if (why != null) {
                failedPeer = why
                mpi.ep.cancel(this)
            }
        }
        return rc
    }

    override fun cancelPosted() {
        mpi.locked { mpi.ep.cancel(this) }
    }

    override fun peer(): String = "receive into memory region ${span.region.key} on ${comm?.getName()}"

    override fun onCompletion(c: Completion) {
        if (host != null) {
            try {
                val whole = if (span.type.size == 0L) 0 else (c.len / span.type.size).toInt()
                RegionPack(mpi.ep)
                    .unpack(
                        "MPI_Recv",
                        span.type,
                        host.byteBuffer(),
                        0,
                        span.region,
                        span.offset,
                        minOf(whole, span.count),
                    )
            } catch (e: MPIException) {
                complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, c.len, e.errorClass, message = e.message ?: "")
                return
            }
        }
        complete(MatchBitsDescriptor.rank(c.tag), MatchBitsDescriptor.tag(c.tag), c.len, ErrorClass.SUCCESS)
    }

    override fun onError(e: CompletionError) {
        val failed = failedPeer
        if (failed != null && e.err == Errno.ECANCELED)
            complete(
                MatchBitsDescriptor.rank(bits),
                MatchBitsDescriptor.tag(bits),
                0,
                ErrorClass.ERR_PROC_FAILED,
                message = "the sender failed: $failed",
            )
        else completeError(this, null, e)
    }
}

/** Starts a send of [span] ([CommRegions.isend] …): checks as the buffer form does, then posts in call order. */
internal fun Comm.startRegionSend(call: String, span: RegionSpan, dest: Int, tag: Int, synchronous: Boolean): Request =
    guard {
        checkUsable(call)
        checkDest(call, dest)
        checkTag(call, tag, receive = false)
        span.check(call, mpi.ep, "send buffer")
        if (dest == Mpi.PROC_NULL) return@guard DoneRequest(mpi, this, Status.PROC_NULL)
        failedPeer(call, dest)?.let {
            return@guard it
        }
        val bits = MatchBitsDescriptor.bits(context, MatchBitsDescriptor.SUB_PT2PT, rank, tag)
        val host = if (span.contiguous) null else span.packed(call, mpi.ep)
        val flags = if (synchronous) OpFlags.DELIVERY_COMPLETE else 0L
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
    val host =
        if (span.contiguous) null
        else UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, span.bytes)).order(ByteOrder.nativeOrder()), 0, span.bytes)
    val op = RegionRecvOp(mpi, this, span, host, recvBits(source, tag), recvIgnore(source, tag), from)
    mpi.locked {
        val rc = op.post()
        when {
            rc == -Errno.EAGAIN -> mpi.submit(op) // behind receives the endpoint pushed back: rare
            rc != 0 -> op.failPost(rc)
        }
    }
    op
}
