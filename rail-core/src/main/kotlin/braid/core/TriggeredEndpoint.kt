package braid.core

import braid.core.TriggeredOp.Code
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * The trigger condition of one operation posted on a [TriggeredEndpoint] (`struct fi_triggered_context` with
 * `FI_TRIGGER_THRESHOLD`): pass it as the operation's context to defer that operation until [counter] reaches
 * [threshold] instead of the alias's own condition. Completions report [context].
 */
public class TriggeredContext(public val counter: Counter, public val threshold: Long, public val context: Any?)

/**
 * A trigger-able alias of an [Endpoint] (`fi_ep_alias(FI_TRIGGER)`, [Endpoint.triggerAlias]): every data operation
 * posted on it is deferred until [counter]'s success plus error count reaches [threshold] — or, when the operation's
 * context is a [TriggeredContext], that context's counter and threshold — then issued on the endpoint, reading its
 * buffers at that moment; at once if the condition is already met. Operations with equal thresholds fire in the order
 * posted.
 *
 * Unlike requests queued on the [DeferredWorkQueue], these are the endpoint's own operations: they complete on its CQ
 * and counters (selective completion applies as usual), with the context they were posted with; [completionCounter], if
 * set, is bumped as well.
 *
 * The `try…` forms return 0, or a negated errno for what [DeferredWorkQueue.queue] refuses (`-ENOSYS`, `-EOPNOTSUPP`,
 * `-EMSGSIZE`, `-EINVAL`). They allocate nothing once warm: each posted operation is a [DeferredWork] from the alias's
 * pool, back in the pool once it completes, fails or is cancelled. Waiting operations are cancelled with
 * [DeferredWorkQueue.flush] on their counter; the requests such a flush returns for this alias are its pooled ones, to
 * be read before the alias posts again.
 */
public class TriggeredEndpoint
internal constructor(
    public val endpoint: Endpoint,
    @Volatile public var counter: Counter,
    @Volatile public var threshold: Long,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) {
    /** Bumped by one as each deferred operation completes (its error side when it fails); optional. */
    @Volatile public var completionCounter: Counter? = null

    public fun trySend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, context: Any?): Int =
        synchronized(lock) { defer(op().set(endpoint, Code.SEND, buffer, offset, length, dest), context, 0) }

    public fun tryTsend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long, context: Any?): Int =
        synchronized(lock) {
            defer(op().set(endpoint, Code.TSEND, buffer, offset, length, dest).also { it.tag = tag }, context, 0)
        }

    public fun tryRecv(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, context: Any?): Int =
        synchronized(lock) { defer(op().set(endpoint, Code.RECV, buffer, offset, length, src), context, 0) }

    public fun tryTrecv(
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        context: Any?,
    ): Int =
        synchronized(lock) {
            defer(
                op().set(endpoint, Code.TRECV, buffer, offset, length, src).also {
                    it.tag = tag
                    it.ignore = ignore
                },
                context,
                0,
            )
        }

    @JvmOverloads
    public fun tryWrite(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            defer(
                op().set(endpoint, Code.WRITE, buffer, offset, length, dest).also {
                    it.remoteOffset = remoteOffset
                    it.key = key
                },
                context,
                flags,
            )
        }

    @JvmOverloads
    public fun tryRead(
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            defer(
                op().set(endpoint, Code.READ, buffer, offset, length, src).also {
                    it.remoteOffset = remoteOffset
                    it.key = key
                },
                context,
                flags,
            )
        }

    @JvmOverloads
    public fun tryAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            defer(atomic(Code.ATOMIC, buffer, offset, count, dest, remoteOffset, key, type, op), context, flags)
        }

    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        result: MutableDirectBuffer,
        resultOffset: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            defer(
                atomic(Code.FETCH, buffer, offset, count, dest, remoteOffset, key, type, op).also {
                    it.result = result
                    it.resultOffset = resultOffset
                },
                context,
                flags,
            )
        }

    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        compare: DirectBuffer,
        compareOffset: Int,
        result: MutableDirectBuffer,
        resultOffset: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            defer(
                atomic(Code.COMPARE, buffer, offset, count, dest, remoteOffset, key, type, op).also {
                    it.compare = compare
                    it.compareOffset = compareOffset
                    it.result = result
                    it.resultOffset = resultOffset
                },
                context,
                flags,
            )
        }

    // ## ByteBuffer forms: position..limit, read when the operation fires; -EINVAL for a buffer
    // the operation cannot use (see ByteBuffers; atomics need the native byte order). ##

    public fun trySend(buffer: ByteBuffer, dest: Long, context: Any?): Int =
        synchronized(lock) {
            checked(buffer, false, "send") { o ->
                    o.set(endpoint, Code.SEND, o.view(0, buffer), 0, buffer.remaining(), dest)
                }
                ?.let { defer(it, context, 0) } ?: refused
        }

    public fun tryTsend(buffer: ByteBuffer, dest: Long, tag: Long, context: Any?): Int =
        synchronized(lock) {
            checked(buffer, false, "tsend") { o ->
                    o.set(endpoint, Code.TSEND, o.view(0, buffer), 0, buffer.remaining(), dest).also { it.tag = tag }
                }
                ?.let { defer(it, context, 0) } ?: refused
        }

    public fun tryRecv(buffer: ByteBuffer, src: Long, context: Any?): Int =
        synchronized(lock) {
            checked(buffer, true, "recv") { o ->
                    o.set(endpoint, Code.RECV, o.view(0, buffer), 0, buffer.remaining(), src)
                }
                ?.let { defer(it, context, 0) } ?: refused
        }

    public fun tryTrecv(buffer: ByteBuffer, src: Long, tag: Long, ignore: Long, context: Any?): Int =
        synchronized(lock) {
            checked(buffer, true, "trecv") { o ->
                    o.set(endpoint, Code.TRECV, o.view(0, buffer), 0, buffer.remaining(), src).also {
                        it.tag = tag
                        it.ignore = ignore
                    }
                }
                ?.let { defer(it, context, 0) } ?: refused
        }

    @JvmOverloads
    public fun tryWrite(
        buffer: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            checked(buffer, false, "write") { o ->
                    o.set(endpoint, Code.WRITE, o.view(0, buffer), 0, buffer.remaining(), dest).also {
                        it.remoteOffset = remoteOffset
                        it.key = key
                    }
                }
                ?.let { defer(it, context, flags) } ?: refused
        }

    @JvmOverloads
    public fun tryRead(
        buffer: ByteBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            checked(buffer, true, "read") { o ->
                    o.set(endpoint, Code.READ, o.view(0, buffer), 0, buffer.remaining(), src).also {
                        it.remoteOffset = remoteOffset
                        it.key = key
                    }
                }
                ?.let { defer(it, context, flags) } ?: refused
        }

    @JvmOverloads
    public fun tryAtomic(
        buffer: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            atomicBuffers(Code.ATOMIC, buffer, null, null, dest, remoteOffset, key, type, op)?.let {
                defer(it, context, flags)
            } ?: refused
        }

    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: ByteBuffer,
        result: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            atomicBuffers(Code.FETCH, buffer, null, result, dest, remoteOffset, key, type, op)?.let {
                defer(it, context, flags)
            } ?: refused
        }

    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: ByteBuffer,
        compare: ByteBuffer,
        result: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(lock) {
            atomicBuffers(Code.COMPARE, buffer, compare, result, dest, remoteOffset, key, type, op)?.let {
                defer(it, context, flags)
            } ?: refused
        }

    // ## The pool: requests and their operations, reused once done (under the domain lock) ##

    private val lock = endpoint.domain.lock
    private val pool = ArrayDeque<DeferredWork>()
    /** What a ByteBuffer form returns when [checked] refused the buffer. */
    private var refused = 0

    /** A recycled operation (its request is taken with it in [defer]). */
    private fun op(): TriggeredOp = (pool.lastOrNull()?.op as TriggeredOp?) ?: TriggeredOp()

    private fun atomic(
        code: Code,
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
    ): TriggeredOp =
        op().set(endpoint, code, buffer, offset, count, dest).also {
            it.remoteOffset = remoteOffset
            it.key = key
            it.type = type
            it.op = op
        }

    /**
     * [fill]s a recycled operation once [buffer] passed [ByteBuffers.check]; null (and [refused] set) if it did not.
     */
    private inline fun checked(
        buffer: ByteBuffer,
        writable: Boolean,
        role: String,
        fill: (TriggeredOp) -> TriggeredOp,
    ): TriggeredOp? {
        try {
            ByteBuffers.check(buffer, writable, role, endpoint)
        } catch (e: FabricException) {
            refused = -e.code
            return null
        }
        return fill(op())
    }

    private fun atomicBuffers(
        code: Code,
        buffer: ByteBuffer,
        compare: ByteBuffer?,
        result: ByteBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
    ): TriggeredOp? {
        val count = buffer.remaining() / type.size
        try {
            ByteBuffers.checkAtomic(buffer, type, 0, false, "operand", endpoint)
            if (compare != null) ByteBuffers.checkAtomic(compare, type, count, false, "compare", endpoint)
            if (result != null) ByteBuffers.checkAtomic(result, type, count, true, "result", endpoint)
        } catch (e: FabricException) {
            refused = -e.code
            return null
        }
        val o = op()
        atomic(code, o.view(0, buffer), 0, count, dest, remoteOffset, key, type, op)
        if (compare != null) {
            o.compare = o.view(1, compare)
            o.compareOffset = 0
        }
        if (result != null) {
            o.result = o.view(2, result)
            o.resultOffset = 0
        }
        return o
    }

    /** Queues [op] (from [op]) as a pooled request; 0 or the negated errno of what the queue refused. */
    private fun defer(op: TriggeredOp, context: Any?, flags: Long): Int {
        val trigger = context as? TriggeredContext
        val work = pool.removeLastOrNull()
        val w =
            if (work != null && work.op === op) {
                work.triggeringCounter = trigger?.counter ?: counter
                work.threshold = trigger?.threshold ?: threshold
                work.completionCounter = completionCounter
                work.flags = flags
                work.context = trigger?.context ?: context
                work.status = WorkStatus.IDLE
                work
            } else {
                work?.let { pool.addLast(it) }
                DeferredWork(
                        trigger?.counter ?: counter,
                        trigger?.threshold ?: threshold,
                        op,
                        completionCounter,
                        flags,
                        trigger?.context ?: context,
                    )
                    .also {
                        it.triggered = true
                        it.pool = this
                    }
            }
        return try {
            endpoint.domain.deferredWork.queue(w)
            0
        } catch (e: FabricException) {
            recycle(w)
            -e.code
        }
    }

    /** [w] is done (completed, failed, cancelled or refused): its references go, and it waits to be reused. */
    @JvmSynthetic
    internal fun recycle(w: DeferredWork) {
        (w.op as TriggeredOp).clear()
        w.context = null
        pool.addLast(w)
    }

    override fun toString(): String = "TriggeredEndpoint($endpoint, at $threshold on $counter)"
}
