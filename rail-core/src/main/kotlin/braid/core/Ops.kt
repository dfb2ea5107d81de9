package braid.core

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * Builds the [PendingOp] of one data operation for the `suspend` forms ([pooled]: from the domain's pool, so a quick
 * completion allocates nothing) and for the future and blocking forms (a fresh one, which a future's settling hands to
 * the pool). The ByteBuffer builders check the buffer first ([ByteBuffers]) and throw [FabricException] with
 * [Errno.EINVAL] naming what is wrong, before anything is posted; the operation then reads a view of the buffer kept in
 * the operation.
 */
internal object Ops {
    fun of(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        pooled: Boolean,
    ): PendingOp =
        if (pooled) Waiting.obtain(ep, kind, buffer, offset, length, addr, tag)
        else PendingOp(ep, kind, buffer, offset, length, addr, tag, 0)

    /** A message operation on [b]'s position..limit ([writable] for receives). */
    fun bytes(
        ep: Endpoint,
        kind: Int,
        b: ByteBuffer,
        addr: Long,
        tag: Long,
        writable: Boolean,
        pooled: Boolean,
    ): PendingOp {
        ByteBuffers.check(b, writable, "message", ep)
        val op = of(ep, kind, EMPTY, 0, 0, addr, tag, pooled)
        op.buffer = op.view(0, b)
        op.length = b.remaining()
        return op
    }

    fun withData(op: PendingOp, data: Long): PendingOp {
        op.data = data
        return op
    }

    /** An RMA write or read of `buffer[offset, offset+length)`. */
    fun rma(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        pooled: Boolean,
    ): PendingOp = of(ep, kind, buffer, offset, length, peer, 0, pooled).rma(remoteOffset, key)

    /** An RMA write or read of [b]'s position..limit. */
    fun rma(
        ep: Endpoint,
        kind: Int,
        b: ByteBuffer,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        pooled: Boolean,
    ): PendingOp = bytes(ep, kind, b, peer, 0, kind == PendingOp.READ, pooled).rma(remoteOffset, key)

    /** An atomic of [count] elements at `buffer[offset…]`, with its compare and fetch buffers for those forms. */
    fun atomic(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        compare: DirectBuffer?,
        compareOffset: Int,
        fetch: MutableDirectBuffer?,
        fetchOffset: Int,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        pooled: Boolean,
    ): PendingOp =
        of(ep, kind, buffer, offset, count, peer, 0, pooled)
            .rma(remoteOffset, key)
            .atomic(type, op, compare, compareOffset, fetch, fetchOffset)

    /** An atomic on the elements between [b]'s position and limit (native byte order, checked). */
    fun atomic(
        ep: Endpoint,
        kind: Int,
        b: ByteBuffer,
        compare: ByteBuffer?,
        fetch: ByteBuffer?,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        pooled: Boolean,
    ): PendingOp {
        val what = ep
        ByteBuffers.checkAtomic(b, type, 0, false, "operand", what)
        val count = b.remaining() / type.size
        if (compare != null) ByteBuffers.checkAtomic(compare, type, count, false, "compare", what)
        if (fetch != null) ByteBuffers.checkAtomic(fetch, type, count, true, "result", what)
        val o = of(ep, kind, EMPTY, 0, count, peer, 0, pooled).rma(remoteOffset, key)
        o.buffer = o.view(0, b)
        return o.atomic(type, op, compare?.let { o.view(1, it) }, 0, fetch?.let { o.view(2, it) }, 0)
    }

    private val EMPTY = org.agrona.concurrent.UnsafeBuffer(ByteArray(0))
}
