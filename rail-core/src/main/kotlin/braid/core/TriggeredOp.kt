package braid.core

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The reusable operation of a [TriggeredEndpoint]'s pooled [DeferredWork]: any one data operation ([Code]), its
 * arguments in mutable fields, so that a `try…` call fills a recycled one instead of allocating a [DeferredOp]
 * subclass. It checks and posts exactly as those classes do. ByteBuffer arguments are wrapped in views it owns
 * ([view]).
 *
 * Filled, queued and recycled under the domain lock.
 */
internal class TriggeredOp : DeferredOp() {
    enum class Code(val kind: Kind, val cqFlags: Long, val label: String) {
        SEND(Kind.TX, OpFlags.SEND or OpFlags.MSG, "send"),
        TSEND(Kind.TX, OpFlags.SEND or OpFlags.TAGGED, "tsend"),
        RECV(Kind.RX, OpFlags.RECV or OpFlags.MSG, "recv"),
        TRECV(Kind.RX, OpFlags.RECV or OpFlags.TAGGED, "trecv"),
        WRITE(Kind.RMA, OpFlags.RMA or OpFlags.WRITE, "RMA write"),
        READ(Kind.RMA, OpFlags.RMA or OpFlags.READ, "RMA read"),
        ATOMIC(Kind.RMA, OpFlags.ATOMIC or OpFlags.WRITE, "atomic"),
        FETCH(Kind.RMA, OpFlags.ATOMIC or OpFlags.READ, "fetch-atomic"),
        COMPARE(Kind.RMA, OpFlags.ATOMIC or OpFlags.READ, "compare-atomic"),
    }

    override var endpoint: Endpoint? = null
    var code: Code = Code.SEND
    /** The operand (or the buffer received into, for RECV, TRECV and READ). */
    var buffer: DirectBuffer? = null
    var offset = 0
    /** Bytes, or elements for the atomics. */
    var length = 0
    /** The destination, or the source of a receive or read. */
    var addr = 0L
    var tag = 0L
    var ignore = 0L
    var remoteOffset = 0L
    var key = 0L
    var type: AtomicDatatype = AtomicDatatype.INT64
    var op: AtomicOp = AtomicOp.SUM
    var compare: DirectBuffer? = null
    var compareOffset = 0
    var result: MutableDirectBuffer? = null
    var resultOffset = 0

    /** Views this op owns for ByteBuffer arguments: operand, compare, result. */
    private val views = arrayOf(UnsafeBuffer(0L, 0), UnsafeBuffer(0L, 0), UnsafeBuffer(0L, 0))

    /** [b]'s position..limit in view [i] (checked by the caller). */
    fun view(i: Int, b: ByteBuffer): UnsafeBuffer = views[i].also { it.wrap(b, b.position(), b.remaining()) }

    fun set(ep: Endpoint, code: Code, buffer: DirectBuffer, offset: Int, length: Int, addr: Long): TriggeredOp {
        endpoint = ep
        this.code = code
        this.buffer = buffer
        this.offset = offset
        this.length = length
        this.addr = addr
        tag = 0
        ignore = 0
        remoteOffset = 0
        key = 0
        compare = null
        result = null
        return this
    }

    /** Drops every reference it holds, once its work is done. */
    fun clear() {
        endpoint = null
        buffer = null
        compare = null
        result = null
        for (v in views) v.wrap(0L, 0)
    }

    override val kind: Kind
        get() = code.kind

    override val cqFlags: Long
        get() = code.cqFlags

    override fun check() {
        val ep = endpoint!!
        val b = buffer!!
        when (code) {
            Code.SEND,
            Code.TSEND,
            Code.RECV,
            Code.TRECV -> checkRange(ep, b.capacity(), offset, length.toLong())
            Code.WRITE,
            Code.READ -> {
                checkRma(ep, if (code == Code.READ) Caps.READ else Caps.WRITE, remoteOffset)
                checkRange(ep, b.capacity(), offset, length.toLong())
            }
            Code.ATOMIC,
            Code.FETCH,
            Code.COMPARE -> {
                checkAtomic(
                    ep,
                    if (code == Code.ATOMIC) AtomicForm.UPDATE
                    else if (code == Code.FETCH) AtomicForm.FETCH else AtomicForm.COMPARE,
                    type,
                    op,
                    length,
                    remoteOffset,
                )
                val bytes = length.toLong() * type.size
                checkRange(ep, b.capacity(), offset, bytes)
                if (code == Code.COMPARE) checkRange(ep, compare!!.capacity(), compareOffset, bytes)
                if (code != Code.ATOMIC) checkRange(ep, result!!.capacity(), resultOffset, bytes)
            }
        }
    }

    override fun post(work: DeferredWork, flags: Long): Int {
        val ep = endpoint!!
        val b = buffer!!
        return when (code) {
            Code.SEND -> ep.trySendmsg(b, offset, length, addr, 0, 0, flags and OpFlags.TAGGED.inv(), work)
            Code.TSEND -> ep.trySendmsg(b, offset, length, addr, tag, 0, flags or OpFlags.TAGGED, work)
            Code.RECV ->
                ep.postRecv(
                    false,
                    b as MutableDirectBuffer,
                    offset,
                    length,
                    addr,
                    0,
                    -1L,
                    flags and OpFlags.COMPLETION,
                    work,
                )
            Code.TRECV ->
                ep.postRecv(
                    true,
                    b as MutableDirectBuffer,
                    offset,
                    length,
                    addr,
                    tag,
                    ignore,
                    flags and OpFlags.COMPLETION,
                    work,
                )
            Code.WRITE -> ep.tryWrite(b, offset, length, addr, remoteOffset, key, work, flags)
            Code.READ -> ep.tryRead(b as MutableDirectBuffer, offset, length, addr, remoteOffset, key, work, flags)
            Code.ATOMIC -> ep.tryAtomic(b, offset, length, addr, remoteOffset, key, type, op, work, flags)
            Code.FETCH ->
                ep.tryFetchAtomic(
                    b,
                    offset,
                    length,
                    result!!,
                    resultOffset,
                    addr,
                    remoteOffset,
                    key,
                    type,
                    op,
                    work,
                    flags,
                )
            Code.COMPARE ->
                ep.tryCompareAtomic(
                    b,
                    offset,
                    length,
                    compare!!,
                    compareOffset,
                    result!!,
                    resultOffset,
                    addr,
                    remoteOffset,
                    key,
                    type,
                    op,
                    work,
                    flags,
                )
        }
    }

    override fun describe(): String =
        when (code) {
            Code.SEND,
            Code.TSEND,
            Code.WRITE -> "${code.label} of $length bytes to $addr"
            Code.RECV,
            Code.TRECV -> "${code.label} of up to $length bytes from $addr"
            Code.READ -> "${code.label} of $length bytes from $addr at key $key, offset $remoteOffset"
            Code.ATOMIC,
            Code.FETCH,
            Code.COMPARE -> "${code.label} $op of $length $type to $addr at key $key, offset $remoteOffset"
        }
}
