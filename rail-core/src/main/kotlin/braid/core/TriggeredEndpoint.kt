package braid.core

import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import java.nio.ByteBuffer

/**
 * The trigger condition of one operation posted on a [TriggeredEndpoint]
 * (`struct fi_triggered_context` with `FI_TRIGGER_THRESHOLD`): pass it as the operation's
 * context to defer that operation until [counter] reaches [threshold] instead of the alias's
 * own condition. Completions report [context].
 */
public class TriggeredContext(public val counter: Counter, public val threshold: Long, public val context: Any?)

/**
 * A trigger-able alias of an [Endpoint] (`fi_ep_alias(FI_TRIGGER)`, [Endpoint.triggerAlias]):
 * every data operation posted on it is deferred until [counter]'s success plus error count
 * reaches [threshold] — or, when the operation's context is a [TriggeredContext], that
 * context's counter and threshold — then issued on the endpoint, reading its buffers at that
 * moment; at once if the condition is already met. Operations with equal thresholds fire in the
 * order posted.
 *
 * Unlike requests queued on the [DeferredWorkQueue], these are the endpoint's own operations:
 * they complete on its CQ and counters (selective completion applies as usual), with the
 * context they were posted with; [completionCounter], if set, is bumped as well.
 *
 * The `try…` forms return 0, or a negated errno for what [DeferredWorkQueue.queue] refuses
 * (`-ENOSYS`, `-EOPNOTSUPP`, `-EMSGSIZE`, `-EINVAL`). Each posted operation is a
 * [DeferredWork] the alias allocates; for allocation-free re-arming, queue reusable requests on
 * the domain's [DeferredWorkQueue] instead. Waiting operations are cancelled with
 * [DeferredWorkQueue.flush] on their counter.
 */
public class TriggeredEndpoint internal constructor(
    public val endpoint: Endpoint,
    @Volatile public var counter: Counter,
    @Volatile public var threshold: Long,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) {
    /** Bumped by one as each deferred operation completes (its error side when it fails); optional. */
    @Volatile public var completionCounter: Counter? = null

    public fun trySend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, context: Any?): Int =
        defer(DeferredOp.Send(endpoint, buffer, offset, length, dest), context, 0)

    public fun tryTsend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long, context: Any?): Int =
        defer(DeferredOp.Tsend(endpoint, buffer, offset, length, dest, tag), context, 0)

    public fun tryRecv(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, context: Any?): Int =
        defer(DeferredOp.Recv(endpoint, buffer, offset, length, src), context, 0)

    public fun tryTrecv(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, tag: Long, ignore: Long, context: Any?): Int =
        defer(DeferredOp.Trecv(endpoint, buffer, offset, length, src, tag, ignore), context, 0)

    @JvmOverloads
    public fun tryWrite(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, remoteOffset: Long, key: Long, context: Any?, flags: Long = 0): Int =
        defer(DeferredOp.Write(endpoint, buffer, offset, length, dest, remoteOffset, key), context, flags)

    @JvmOverloads
    public fun tryRead(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, remoteOffset: Long, key: Long, context: Any?, flags: Long = 0): Int =
        defer(DeferredOp.Read(endpoint, buffer, offset, length, src, remoteOffset, key), context, flags)

    @JvmOverloads
    public fun tryAtomic(
        buffer: DirectBuffer, offset: Int, count: Int, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0,
    ): Int = defer(DeferredOp.Atomic(endpoint, buffer, offset, count, dest, remoteOffset, key, type, op), context, flags)

    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: DirectBuffer, offset: Int, count: Int, result: MutableDirectBuffer, resultOffset: Int,
        dest: Long, remoteOffset: Long, key: Long, type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0,
    ): Int = defer(DeferredOp.FetchAtomic(endpoint, buffer, offset, count, result, resultOffset, dest, remoteOffset, key, type, op), context, flags)

    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: DirectBuffer, offset: Int, count: Int, compare: DirectBuffer, compareOffset: Int,
        result: MutableDirectBuffer, resultOffset: Int, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0,
    ): Int = defer(DeferredOp.CompareAtomic(endpoint, buffer, offset, count, compare, compareOffset, result, resultOffset, dest, remoteOffset, key, type, op), context, flags)

    // ## ByteBuffer forms: position..limit, read when the operation fires; -EINVAL for a buffer
    // the operation cannot use (see ByteBuffers; atomics need the native byte order). ##

    public fun trySend(buffer: ByteBuffer, dest: Long, context: Any?): Int = deferChecked(context, 0) { DeferredOp.Send(endpoint, buffer, dest) }

    public fun tryTsend(buffer: ByteBuffer, dest: Long, tag: Long, context: Any?): Int = deferChecked(context, 0) { DeferredOp.Tsend(endpoint, buffer, dest, tag) }

    public fun tryRecv(buffer: ByteBuffer, src: Long, context: Any?): Int = deferChecked(context, 0) { DeferredOp.Recv(endpoint, buffer, src) }

    public fun tryTrecv(buffer: ByteBuffer, src: Long, tag: Long, ignore: Long, context: Any?): Int =
        deferChecked(context, 0) { DeferredOp.Trecv(endpoint, buffer, src, tag, ignore) }

    @JvmOverloads
    public fun tryWrite(buffer: ByteBuffer, dest: Long, remoteOffset: Long, key: Long, context: Any?, flags: Long = 0): Int =
        deferChecked(context, flags) { DeferredOp.Write(endpoint, buffer, dest, remoteOffset, key) }

    @JvmOverloads
    public fun tryRead(buffer: ByteBuffer, src: Long, remoteOffset: Long, key: Long, context: Any?, flags: Long = 0): Int =
        deferChecked(context, flags) { DeferredOp.Read(endpoint, buffer, src, remoteOffset, key) }

    @JvmOverloads
    public fun tryAtomic(buffer: ByteBuffer, dest: Long, remoteOffset: Long, key: Long, type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0): Int =
        deferChecked(context, flags) { DeferredOp.Atomic(endpoint, buffer, dest, remoteOffset, key, type, op) }

    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: ByteBuffer, result: ByteBuffer, dest: Long, remoteOffset: Long, key: Long, type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0,
    ): Int = deferChecked(context, flags) { DeferredOp.FetchAtomic(endpoint, buffer, result, dest, remoteOffset, key, type, op) }

    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: ByteBuffer, compare: ByteBuffer, result: ByteBuffer, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, context: Any?, flags: Long = 0,
    ): Int = deferChecked(context, flags) { DeferredOp.CompareAtomic(endpoint, buffer, compare, result, dest, remoteOffset, key, type, op) }

    private inline fun deferChecked(context: Any?, flags: Long, op: () -> DeferredOp): Int {
        val o = try { op() } catch (e: FabricException) { return -e.code }
        return defer(o, context, flags)
    }

    private fun defer(op: DeferredOp, context: Any?, flags: Long): Int {
        val trigger = context as? TriggeredContext
        val work = DeferredWork(trigger?.counter ?: counter, trigger?.threshold ?: threshold, op, completionCounter, flags, trigger?.context ?: context)
        work.triggered = true
        return try {
            endpoint.domain.deferredWork.queue(work)
            0
        } catch (e: FabricException) {
            -e.code
        }
    }

    override fun toString(): String = "TriggeredEndpoint($endpoint, at $threshold on $counter)"
}
