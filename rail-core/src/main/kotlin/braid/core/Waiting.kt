package braid.core

import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.resume
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import org.agrona.DirectBuffer
import org.agrona.concurrent.IdleStrategy

/**
 * How callers wait for a [PendingOp]: suspended ([await]), blocked ([block], [runBlocking]), or through an [OpFuture].
 * The cancellation rule is the same for all three:
 *
 * **Cancel versus complete.** A cancellation (coroutine cancellation, a blocking form's time-out or interrupt,
 * `future.cancel`) is decided once, under the domain lock, by [PendingOp.decideCancel]:
 * - if the operation had not taken effect — a receive still posted and unmatched ([Endpoint.cancel] removes it), or any
 *   operation still queued for a retry after `-EAGAIN` — it is withdrawn: its ECANCELED completion is consumed here,
 *   the caller gets a [CancellationException] (or [TimeoutException], `InterruptedException`, a cancelled future), and
 *   the message it would have taken stays available to a later receive;
 * - otherwise it is kept: a receive that already matched a message (delivered, or still arriving) completes and the
 *   caller gets the message — a cancelled coroutine returns normally with the completion and sees its cancellation at
 *   its next suspension point. A send the rail has taken cannot be taken back (the shm rail has no send cancel), so it
 *   is kept too: a suspended send waits for its completion even when cancelled, because its buffer is in use until
 *   then.
 *
 * So each operation has exactly one outcome: never both delivered and cancelled, never lost.
 */
/**
 * What a blocked thread waits for ([Waiting.block]): an operation (a blocking form's) or an [OpFuture] (a joiner's).
 */
internal interface Awaited {
    /** Whether the wait is over. */
    val awaitDone: Boolean

    /**
     * Arms [t] to be unparked when the wait ends, then looks once more: false if it has ended (nothing stays armed).
     */
    fun arm(t: Thread): Boolean

    /** Undoes [arm]. */
    fun disarm()

    /** What is waited for, for messages. */
    fun describe(): String
}

internal object Waiting {

    // ## The suspend forms ##

    /**
     * Starts an operation and returns its completion ([into] if given, else a new one), suspending only if it does not
     * complete within the inline phase ([startInline]); throws [FabricException] on failure.
     */
    suspend fun run(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
        into: Completion?,
    ): Completion {
        val r = startInline(coroutineContext, null, ep, kind, buffer, offset, length, addr, tag, ignore, into)
        if (r is Completion) return r
        return awaitSuspended(r as PendingOp) // a tail call: no continuation is allocated unless this suspends
    }

    /**
     * An operation from the domain's pool for [run] of a [prepared][runPrepared] operation: the caller fills in what
     * [PendingOp.set] does not carry (RMA target, atomic, views of ByteBuffers).
     */
    fun obtain(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
    ): PendingOp =
        synchronized(ep.domain.lock) { ep.domain.hub.obtainLocked(ep, kind, buffer, offset, length, addr, tag, 0) }

    /** [run] for an operation [obtain]ed and filled in by the caller. */
    suspend fun runPrepared(op: PendingOp, into: Completion?): Completion {
        val r =
            startInline(
                coroutineContext,
                op,
                op.ep,
                op.kind,
                op.buffer,
                op.offset,
                op.length,
                op.addr,
                op.tag,
                op.ignore,
                into,
            )
        if (r is Completion) return r
        return awaitSuspended(r as PendingOp)
    }

    /** [inject] for an operation [obtain]ed and filled in by the caller. */
    suspend fun injectPrepared(op: PendingOp) {
        val r =
            startInline(
                coroutineContext,
                op,
                op.ep,
                op.kind,
                op.buffer,
                op.offset,
                op.length,
                op.addr,
                op.tag,
                0,
                PendingOp.NO_RESULT,
            )
        if (r is Completion) return
        awaitInjected(r as PendingOp)
    }

    /** [run] for an inject, which returns no completion. */
    suspend fun inject(ep: Endpoint, kind: Int, buffer: DirectBuffer, offset: Int, length: Int, addr: Long, tag: Long) {
        val r = startInline(coroutineContext, null, ep, kind, buffer, offset, length, addr, tag, 0, PendingOp.NO_RESULT)
        if (r is Completion) return
        awaitInjected(r as PendingOp)
    }

    /**
     * The inline phase of a suspend form, which never suspends. Under one lock it takes an operation from the domain's
     * pool, posts it and — under manual progress, when no other waiter drives — takes the driver role and drives
     * progress once; then it drives progress for the rest of the idle policy's spins, one lock per poll, as a raw
     * polling loop would. If the operation completes meanwhile, the operation goes back to the pool under the lock of
     * the poll that saw it and its completion is returned (or its failure thrown): with a caller's [into], nothing was
     * allocated. Otherwise returns the pending operation (still holding the driver role if it took it) for
     * [awaitSuspended].
     */
    private fun startInline(
        context: CoroutineContext,
        prepared: PendingOp?,
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
        into: Completion?,
    ): Any {
        val domain = ep.domain
        val hub = domain.hub
        val op: PendingOp
        var out: Completion? = null
        var failure: FabricException? = null
        var handOver = false
        synchronized(domain.lock) {
            op = prepared ?: hub.obtainLocked(ep, kind, buffer, offset, length, addr, tag, ignore)
            op.result = into
            val rc = hub.submitLocked(op)
            if (rc != 0) {
                failure = refused(op, rc)
                op.state = PendingOp.DONE // never posted: nothing else refers to it
                hub.recycleLocked(op)
            } else {
                if (!op.isDone && hub.tryAcquireDriverLocked()) {
                    op.driving = true
                    try {
                        domain.progressLocked()
                    } catch (t: Throwable) {
                        // A provider threw: give the driver role up (a launch only queues a task).
                        op.driving = false
                        if (hub.releaseDriverLocked())
                            hub.launchDriver(context[ContinuationInterceptor] as? CoroutineDispatcher)
                        throw t
                    }
                }
                if (op.isDone) {
                    handOver = op.driving && hub.releaseDriverLocked()
                    op.driving = false
                    out = op.result
                    failure = harvestLocked(op)
                }
            }
        }
        try {
            hub.dispatchReady()
            if (out == null && failure == null && op.driving) {
                val spins = domain.idlePolicy.maxSpins
                var i = 1
                while (i < spins) {
                    synchronized(domain.lock) {
                        domain.progressLocked()
                        if (op.isDone) {
                            handOver = hub.releaseDriverLocked()
                            op.driving = false
                            out = op.result
                            failure = harvestLocked(op)
                        }
                    }
                    hub.dispatchReady()
                    if (out != null || failure != null) break
                    i++
                }
            }
        } catch (t: Throwable) {
            // A provider threw inside progress: give the driver role up, as the slow path does.
            if (op.driving) {
                op.driving = false
                hub.releaseDriver(context[ContinuationInterceptor] as? CoroutineDispatcher)
            }
            throw t
        }
        if (handOver) hub.launchDriver(context[ContinuationInterceptor] as? CoroutineDispatcher)
        failure?.let { throw it }
        return out ?: op
    }

    /**
     * Returns [op]'s failure (or null, its completion being in [PendingOp.result], which the caller has taken) and
     * gives the operation back to the pool. Caller holds the lock; [op] is DONE.
     */
    private fun harvestLocked(op: PendingOp): FabricException? {
        val failure = if (op.err != 0) op.exception() else null
        op.hub.recycleLocked(op)
        return failure
    }

    /**
     * The slow path of [run]: waits until [op] is DONE, applying the cancellation rule (a withdrawn [op] throws
     * CancellationException), then hands its outcome out.
     */
    private suspend fun awaitSuspended(op: PendingOp): Completion {
        if (!op.isDone) {
            try {
                waitFor(op)
            } catch (e: CancellationException) {
                if (op.decideCancel()) {
                    synchronized(op.ep.domain.lock) {
                        op.hub.recycleLocked(op)
                    } // its ECANCELED outcome is this exception
                    throw e
                }
                // Kept: the operation took effect first; deliver its outcome.
                withContext(NonCancellable) { waitFor(op) }
            }
        }
        val out: Completion?
        val failure =
            synchronized(op.ep.domain.lock) {
                out = op.result
                harvestLocked(op)
            }
        if (failure != null) throw failure
        return out!!
    }

    private suspend fun awaitInjected(op: PendingOp) {
        awaitSuspended(op)
    }

    @Suppress("NOTHING_TO_INLINE") // inline: one continuation frame per waiting operation, not two
    private suspend inline fun waitFor(op: PendingOp) {
        val hub = op.hub
        val dispatcher = coroutineContext[ContinuationInterceptor] as? CoroutineDispatcher
        // Manual progress: keep driving inline (yielding now), as raw polling would, if this
        // caller took the driver role in startInline or can take it now.
        if (!op.isDone && (op.driving || hub.tryAcquireDriver())) {
            val from = if (op.driving) op.ep.domain.idlePolicy.maxSpins else 0
            op.driving = true
            try {
                spin(op, from)
            } finally {
                op.driving = false
                hub.releaseDriver(dispatcher)
            }
        }
        while (!op.isDone) {
            suspendCancellableCoroutine<Unit> { cont ->
                cont.invokeOnCancellation(op)
                if (!hub.attach(op, cont, dispatcher)) cont.resume(Unit)
            }
        }
    }

    /**
     * The inline phase from attempt [from] on: progress until done, spinning then yielding, for the policy's budget.
     */
    private suspend fun spin(op: PendingOp, from: Int) {
        val domain = op.ep.domain
        val policy = domain.idlePolicy
        val total = policy.maxSpins + policy.maxYields
        var i = from
        while (i < total) {
            domain.progress()
            if (op.isDone) return
            if (i >= policy.maxSpins) yield()
            i++
        }
    }

    /**
     * Blocks the calling thread until [w] is done or [timeoutNanos] passes (false). Under manual progress the thread
     * drives [domain]'s progress and idles by its policy; under automatic progress it parks until the engine's
     * completion unparks it. [cancel] is the operation an interrupt withdraws (a blocking form's); without one an
     * interrupt throws at once.
     */
    fun block(w: Awaited, domain: Domain, timeoutNanos: Long, cancel: PendingOp?): Boolean {
        val hub = domain.hub
        val timed = timeoutNanos != Long.MAX_VALUE
        val start = if (timed) System.nanoTime() else 0L // a join reads no clock
        // This thread's kept strategy (as driveUntil's), taken at the first idle step: a wait that the first
        // progress call ends allocates nothing, and neither does a later one.
        var idle: IdleStrategy? = null
        // Only a waiter that may park needs to be unparked; spinning and yielding ones look again soon. Under
        // BACKOFF the strategy parks only after its spins and yields ([Domain.parkingAfter] steps), and until then
        // the thread need not arm itself: two volatile stores per look would slow the very polls that see the
        // completion.
        val parkingAfter = domain.parkingAfter
        var idleSteps = 0
        val me = Thread.currentThread()
        var interrupted = false
        hub.blockEntered()
        try {
            while (!w.awaitDone) {
                val automatic = hub.automatic
                if (!automatic) {
                    domain.progress()
                    if (w.awaitDone) break
                }
                val elapsed = if (timed) System.nanoTime() - start else 0L
                if (elapsed >= timeoutNanos) return false
                if (!automatic && idle == null) idle = domain.takeIdleStrategy()
                if (!automatic && ++idleSteps < parkingAfter) {
                    idle!!.idle(0)
                } else {
                    // Arm, then look again (fi_trywait): whoever completes the wait unparks us.
                    if (w.arm(me)) {
                        try {
                            if (automatic) LockSupport.parkNanos(w, minOf(timeoutNanos - elapsed, AUTO_PARK_CAP_NANOS))
                            else idle!!.idle(0)
                        } finally {
                            w.disarm()
                        }
                    }
                }
                if (Thread.interrupted()) {
                    if (cancel == null) throw InterruptedException("interrupted while waiting for ${w.describe()}")
                    if (cancel.decideCancel()) {
                        hub.dispatchReady()
                        throw InterruptedException(
                            "interrupted while waiting for ${cancel.describe()}; the operation was withdrawn"
                        )
                    }
                    interrupted = true // kept: wait for its outcome, then restore the flag
                }
            }
            return true
        } finally {
            hub.blockLeft()
            if (idle != null) domain.giveIdleStrategy()
            if (interrupted) me.interrupt()
        }
    }

    /** Starts [op] and blocks until its outcome or [timeoutMillis]; see the cancellation rule. */
    fun runBlocking(op: PendingOp, timeoutMillis: Long): Completion {
        val rc = op.hub.submit(op)
        op.hub.dispatchReady()
        if (rc != 0) throw refused(op, rc)
        val nanos = if (timeoutMillis < 0) Long.MAX_VALUE else timeoutMillis * 1_000_000
        if (!block(op, op.ep.domain, nanos, op)) {
            if (op.decideCancel()) {
                op.hub.dispatchReady()
                throw TimeoutException(
                    "${op.describe()}: no completion within $timeoutMillis ms; the operation was withdrawn"
                )
            }
            if (!op.isReceive && !op.isDone) {
                throw TimeoutException(
                    "${op.describe()}: no completion within $timeoutMillis ms; the rail has taken the message and cannot " +
                        "take it back, so it may still be delivered: leave its buffer untouched (its completion will be discarded)"
                )
            }
            block(op, op.ep.domain, Long.MAX_VALUE, null) // a receive that matched: it is arriving
        }
        return op.resultOrThrow()
    }

    /**
     * Starts [op] and returns its future. Under manual progress an incomplete future is counted in
     * [ProgressHub.asyncWaiters], which keeps the domain's driver running until it completes: the future completes
     * whether or not anyone calls `get()` on it.
     */
    fun runAsync(op: PendingOp): CompletableFuture<Completion> =
        async(op.ep, op, op.kind, op.buffer, op.offset, op.length, op.addr, op.tag, op.ignore, op.data)

    /**
     * [runAsync] of an operation taken from the domain's pool, filled in and started under one acquisition of the lock;
     * [data] is a send-with-data's. A pending future's operation goes back to the pool once the future is settled
     * ([PendingOp.fire]); one done at once (an inject) gives it back at once.
     */
    fun startAsync(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
        data: Long,
    ): CompletableFuture<Completion> = async(ep, null, kind, buffer, offset, length, addr, tag, ignore, data)

    private fun async(
        ep: Endpoint,
        prepared: PendingOp?,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
        data: Long,
    ): CompletableFuture<Completion> {
        val hub = ep.domain.hub
        var startDriver = false
        var f: OpFuture? = null
        var out: Completion? = null
        var failure: FabricException? = null
        synchronized(ep.domain.lock) {
            val op =
                prepared
                    ?: hub.obtainLocked(ep, kind, buffer, offset, length, addr, tag, ignore).also { it.data = data }
            val rc = hub.submitLocked(op)
            if (rc != 0) {
                failure = refused(op, rc)
                op.state = PendingOp.DONE // never posted: nothing else refers to it
                hub.recycleLocked(op)
            } else if (!op.isDone) {
                // Made under the lock, before any completion can reach the operation.
                f = OpFuture(op)
                op.asyncCounted = true
                startDriver = hub.asyncWaiterAddedLocked()
            } else {
                // Done inline (an inject): the future is born complete, with no trip through the ready list, and
                // the operation goes to the pool.
                out = op.result
                if (op.err != 0) failure = op.exception()
                hub.recycleLocked(op)
            }
        }
        hub.dispatchReady()
        if (startDriver) hub.launchDriver(null)
        f?.let {
            return it
        }
        failure?.let {
            return CompletableFuture.failedFuture(it)
        }
        return CompletableFuture.completedFuture(out)
    }

    fun refused(op: PendingOp, rc: Int): FabricException {
        val why =
            when (-rc) {
                Errno.EOPBADSTATE -> "the endpoint is not enabled, or closed; enable() it before use"
                Errno.EMSGSIZE ->
                    if (op.kind >= PendingOp.ATOMIC)
                        "${op.length} elements exceed what one atomic carries (see Endpoint.atomicValid)"
                    else
                        "${op.length} bytes exceed the limit (max message size ${op.ep.info.endpointAttr.maxMsgSize}, inject size ${op.ep.info.txAttr.injectSize})"
                Errno.ENOSYS ->
                    "this rail does not carry RMA or atomics (ask Braid.getInfo for Caps.RMA or Caps.ATOMIC)"
                Errno.EOPNOTSUPP ->
                    when {
                        op.kind >= PendingOp.WRITE && op.kind < PendingOp.ATOMIC && !op.ep.granted(Caps.RMA) ->
                            notGranted(op, "RMA")
                        op.kind >= PendingOp.ATOMIC && !op.ep.granted(Caps.ATOMIC) -> notGranted(op, "ATOMIC")
                        else ->
                            "${op.atomicOp} does not apply to ${op.atomicType} in this form (see Endpoint.atomicValid)"
                    }
                Errno.EINVAL -> invalid(op)
                Errno.EHOSTDOWN -> "the peer at ${op.addr} is down"
                Errno.EHOSTUNREACH -> "the peer at ${op.addr} is not reachable by this rail"
                Errno.ECONNREFUSED -> "the peer at ${op.addr} refused the connection (endpoint not open)"
                Errno.EACCES -> "the peer at ${op.addr} refused this job key (check BRAID_JOB_KEY on both sides)"
                Errno.ECONNRESET -> "the connection to the peer at ${op.addr} was reset or closed"
                Errno.EIO -> "the connection to the peer at ${op.addr} failed (corrupt or truncated traffic)"
                else -> "refused by the rail (${Errno.name(rc)})"
            }
        // A link of several rails says which it tried (read under the lock its rails keep their state under).
        val route =
            when (-rc) {
                Errno.EHOSTDOWN,
                Errno.EHOSTUNREACH,
                Errno.ECONNREFUSED,
                Errno.ECONNRESET ->
                    runCatching { synchronized(op.ep.domain.lock) { op.ep.transport.describeRoute(op.addr) } }
                        .getOrNull()
                else -> null
            }
        return FabricException(-rc, "${op.describe()}: $why" + if (route != null) "; $route" else "")
    }

    private fun notGranted(op: PendingOp, cap: String): String =
        "the endpoint was opened without Caps.$cap (its capabilities: ${Caps.toString(op.ep.info.caps and Caps.PRIMARY)}); " +
            "ask for Caps.$cap in the hints (or name no primary capability: all the rail carries is granted)"

    /**
     * Why a rail answered `-EINVAL`: the one of its two causes that is true (a region outside the buffer, or an unknown
     * address).
     */
    private fun invalid(op: PendingOp): String {
        val bytes = if (op.kind >= PendingOp.ATOMIC) op.length.toLong() * op.atomicType.size else op.length.toLong()
        val end = op.offset.toLong() + bytes
        if (op.offset < 0 || op.length < 0 || end > op.buffer.capacity()) {
            return "the buffer region [${op.offset}, $end) does not fit a buffer of ${op.buffer.capacity()} bytes"
        }
        val av = op.ep.av
        val wildcard = op.isReceive && op.addr == FiAddr.UNSPEC
        if (!wildcard && av != null && !av.contains(op.addr)) {
            return "address ${op.addr} is not in the address vector (insert the peer's address with av.insert first)"
        }
        return "the rail refused an argument (EINVAL): buffer region [${op.offset}, $end) of ${op.buffer.capacity()} bytes, address ${op.addr}"
    }
}
