package braid.core

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield
import java.util.concurrent.TimeoutException
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.coroutineContext
import kotlin.coroutines.resume

/**
 * How callers wait for a [PendingOp]: suspended ([await]), blocked ([block], [runBlocking]),
 * or through an [OpFuture]. The cancellation rule is the same for all three:
 *
 * **Cancel versus complete.** A cancellation (coroutine cancellation, a blocking form's time-out
 * or interrupt, `future.cancel`) is decided once, under the domain lock, by [PendingOp.decideCancel]:
 * - if the operation had not taken effect — a receive still posted and unmatched
 *   ([Endpoint.cancel] removes it), or any operation still queued for a retry after `-EAGAIN` —
 *   it is withdrawn: its ECANCELED completion is consumed here, the caller gets a
 *   [CancellationException] (or [TimeoutException], `InterruptedException`, a cancelled
 *   future), and the message it would have taken stays available to a later receive;
 * - otherwise it is kept: a receive that already matched a message (delivered, or still
 *   arriving) completes and the caller gets the message — a cancelled coroutine returns
 *   normally with the completion and sees its cancellation at its next suspension point. A send
 *   the rail has taken cannot be taken back (the shm rail has no send cancel), so it is kept too:
 *   a suspended send waits for its completion even when cancelled, because its buffer is in use
 *   until then.
 *
 * So each operation has exactly one outcome: never both delivered and cancelled, never lost.
 */
internal object Waiting {

    /** Starts [op] and suspends until its outcome; throws [FabricException] on failure. */
    suspend fun run(op: PendingOp): Completion {
        val rc = op.hub.submit(op)
        op.hub.dispatchReady()
        if (rc != 0) throw refused(op, rc)
        return await(op)
    }

    suspend fun await(op: PendingOp): Completion {
        if (!op.isDone) {
            try {
                waitFor(op)
            } catch (e: CancellationException) {
                if (op.decideCancel()) throw e
                // Kept: the operation took effect first; deliver its outcome.
                withContext(NonCancellable) { waitFor(op) }
            }
        }
        return op.resultOrThrow()
    }

    @Suppress("NOTHING_TO_INLINE") // inline: one continuation frame per waiting operation, not two
    private suspend inline fun waitFor(op: PendingOp) {
        val hub = op.hub
        val dispatcher = coroutineContext[ContinuationInterceptor] as? CoroutineDispatcher
        // Manual progress and nobody driving: drive inline for a while, as raw polling would.
        if (!op.isDone && hub.tryAcquireDriver()) {
            try {
                spin(op)
            } finally {
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

    /** The inline phase: progress until done, spinning then yielding, for the policy's budget. */
    private suspend fun spin(op: PendingOp) {
        val domain = op.ep.domain
        val policy = domain.idlePolicy
        val total = policy.maxSpins + policy.maxYields
        var i = 0
        while (i < total) {
            domain.progress()
            if (op.isDone) return
            if (i >= policy.maxSpins) yield()
            i++
        }
    }

    /**
     * Blocks the calling thread until [op] is DONE or [timeoutNanos] passes (false). Under manual
     * progress the thread drives progress and idles by the domain's policy; under automatic
     * progress it parks until the engine's completion unparks it.
     */
    fun block(op: PendingOp, timeoutNanos: Long, cancelOnTimeout: Boolean): Boolean {
        val domain = op.ep.domain
        val hub = op.hub
        val start = System.nanoTime()
        val idle = domain.idlePolicy.newStrategy()
        val me = Thread.currentThread()
        var interrupted = false
        try {
            while (!op.isDone) {
                if (!hub.automatic) {
                    domain.progress()
                    if (op.isDone) break
                }
                val elapsed = System.nanoTime() - start
                if (elapsed >= timeoutNanos) return false
                op.thread = me // arm, then look again (fi_trywait): PendingOp.finish unparks us
                try {
                    if (!op.isDone) {
                        if (hub.automatic) LockSupport.parkNanos(op, minOf(timeoutNanos - elapsed, AUTO_PARK_CAP_NANOS)) else idle.idle(0)
                    }
                } finally {
                    op.thread = null
                }
                if (Thread.interrupted()) {
                    if (!cancelOnTimeout) throw InterruptedException("interrupted while waiting for ${op.describe()}")
                    if (op.decideCancel()) {
                        hub.dispatchReady()
                        throw InterruptedException("interrupted while waiting for ${op.describe()}; the operation was withdrawn")
                    }
                    interrupted = true // kept: wait for its outcome, then restore the flag
                }
            }
            return true
        } finally {
            if (interrupted) me.interrupt()
        }
    }

    /** Starts [op] and blocks until its outcome or [timeoutMillis]; see the cancellation rule. */
    fun runBlocking(op: PendingOp, timeoutMillis: Long): Completion {
        val rc = op.hub.submit(op)
        op.hub.dispatchReady()
        if (rc != 0) throw refused(op, rc)
        val nanos = if (timeoutMillis < 0) Long.MAX_VALUE else timeoutMillis * 1_000_000
        if (!block(op, nanos, cancelOnTimeout = true)) {
            if (op.decideCancel()) {
                op.hub.dispatchReady()
                throw TimeoutException("${op.describe()}: no completion within $timeoutMillis ms; the operation was withdrawn")
            }
            if (!op.isReceive && !op.isDone) {
                throw TimeoutException(
                    "${op.describe()}: no completion within $timeoutMillis ms; the rail has taken the message and cannot " +
                        "take it back, so it may still be delivered: leave its buffer untouched (its completion will be discarded)",
                )
            }
            block(op, Long.MAX_VALUE, cancelOnTimeout = false) // a receive that matched: it is arriving
        }
        return op.resultOrThrow()
    }

    /** Starts [op] and returns its future. */
    fun runAsync(op: PendingOp): OpFuture {
        val f = OpFuture(op)
        val rc = op.hub.submit(op)
        op.hub.dispatchReady()
        if (rc != 0) f.completeExceptionally(refused(op, rc))
        return f
    }

    fun refused(op: PendingOp, rc: Int): FabricException {
        val why = when (-rc) {
            Errno.EOPBADSTATE -> "the endpoint is not enabled, or closed; enable() it before use"
            Errno.EMSGSIZE -> "${op.length} bytes exceed the limit (max message size ${op.ep.info.endpointAttr.maxMsgSize}, inject size ${op.ep.info.txAttr.injectSize})"
            Errno.EINVAL -> "the buffer region [${op.offset}, ${op.offset.toLong() + op.length}) does not fit a buffer of ${op.buffer.capacity()} bytes, or address ${op.addr} is not in the address vector"
            Errno.EHOSTDOWN -> "the peer at ${op.addr} is down"
            Errno.EHOSTUNREACH -> "the peer at ${op.addr} is not reachable by this rail"
            Errno.ECONNREFUSED -> "the peer at ${op.addr} refused the connection (endpoint not open)"
            Errno.EACCES -> "the peer at ${op.addr} refused this job key (check BRAID_JOB_KEY on both sides)"
            Errno.ECONNRESET -> "the connection to the peer at ${op.addr} was reset or closed"
            Errno.EIO -> "the connection to the peer at ${op.addr} failed (corrupt or truncated traffic)"
            else -> "refused by the rail (${Errno.name(rc)})"
        }
        return FabricException(-rc, "${op.describe()}: $why")
    }
}
