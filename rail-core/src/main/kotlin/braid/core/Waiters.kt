package braid.core

import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.resume
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.delay
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.agrona.concurrent.IdleStrategy

// The wait objects of completion queues and counters, and how a waiter idles (fi_trywait).
//
// A waiter arms itself (joins the wait set), then checks its condition once more, and only then
// idles; a writer makes its change, then signals the wait set. With the arming and the change
// ordered by a lock or by volatile accesses, either the waiter's last check sees the change or
// the writer sees the waiter and unparks it (a permit given before the park makes the park
// return at once): no wake-up is lost. Work that arrives from another process has no writer in
// this process, so under manual progress a parked waiter also wakes on its own after at most
// the idle policy's longest park, and drives progress again.

/** How long a waiter parks under automatic progress before it looks again (the engine may have stopped). */
internal const val AUTO_PARK_CAP_NANOS: Long = 100_000_000

/** Threads waiting on a [Counter]: arming and signalling are ordered by volatile accesses. */
internal class WaitSet {
    @Volatile private var count = 0
    private val members = ArrayList<Thread>(2)

    fun add(t: Thread) {
        synchronized(this) {
            members.add(t)
            count = members.size
        }
    }

    fun remove(t: Thread) {
        synchronized(this) {
            members.remove(t)
            count = members.size
        }
    }

    /** Unparks every waiter; one volatile read when there is none. */
    fun signal() {
        if (count == 0) return
        synchronized(this) { for (i in 0 until members.size) LockSupport.unpark(members[i]) }
    }
}

/**
 * Threads and coroutines waiting for a [CompletionQueue] write. Guarded by the domain lock, which also guards the
 * queue, so arming and the last check are one atomic step.
 */
internal class QueueWaiters(private val domain: Domain) {
    /** Armed waiters; read by every write under the lock. */
    @JvmField var count: Int = 0
    private val threads = ArrayList<Thread>(2)
    private val coroutines = ArrayList<CoroutineWaker>(2)

    fun add(t: Thread) {
        threads.add(t)
        count++
    }

    fun remove(t: Thread) {
        if (threads.remove(t)) count--
    }

    fun add(w: CoroutineWaker) {
        coroutines.add(w)
        count++
    }

    fun remove(w: CoroutineWaker) {
        if (coroutines.remove(w)) count--
    }

    /** Wakes every armed waiter. Caller holds the domain lock. */
    fun signal() {
        for (i in 0 until threads.size) LockSupport.unpark(threads[i])
        if (coroutines.isEmpty()) return
        for (i in 0 until coroutines.size) {
            val w = coroutines[i]
            // A dispatched resume only queues a task, so it is safe under the lock and prompt
            // even when no progress call follows (a raw send that completed inline). A
            // coroutine that would run in place waits for the ready list instead.
            if (w.dispatched) w.cont.resume(Unit) else domain.hub.pushReady(w)
        }
        count -= coroutines.size
        coroutines.clear()
    }
}

/** A coroutine suspended until a queue is written. */
internal class CoroutineWaker(@JvmField val cont: CancellableContinuation<Unit>) : Ready() {
    @JvmField
    val dispatched: Boolean =
        (cont.context[ContinuationInterceptor] as? CoroutineDispatcher)?.isDispatchNeeded(cont.context) == true

    override fun fire() {
        cont.resume(Unit)
    }
}

/**
 * An [IdlePolicy] for a coroutine, which must not block the thread it shares: `yield()` where a thread would spin or
 * yield, and `delay` where it would park. Since a coroutine's shortest park is a millisecond, [IdleKind.BACKOFF] keeps
 * yielding for as long as a thread would take to back off to its longest park (about [IdlePolicy.maxParkNanos]) before
 * it starts to `delay`: a reply that takes a little longer than the spins costs a yield, not a millisecond.
 */
internal class CoroutineIdle(private val policy: IdlePolicy) {
    private var idleSince = 0L
    private var idle = false

    /** Whether the next idle round would park (suspend with `delay`) rather than yield. */
    val parking: Boolean
        get() = policy.kind == IdleKind.BACKOFF && idle && System.nanoTime() - idleSince >= policy.maxParkNanos

    suspend fun idle(work: Int) {
        if (work > 0) {
            idle = false
            yield()
            return
        }
        if (!idle) {
            idle = true
            idleSince = System.nanoTime()
        }
        if (parking) delay(policy.maxParkMillis) else yield()
    }

    fun reset() {
        idle = false
    }
}

/** One idle step of a thread waiting for a write to [cq]: arm, re-check, idle or park, disarm. */
internal fun CompletionQueue.idleForWrite(idle: IdleStrategy, remainingNanos: Long) {
    val me = Thread.currentThread()
    synchronized(domain.lock) {
        if (!isEmptyLocked()) return
        waiters.add(me)
    }
    try {
        if (domain.hub.automatic) LockSupport.parkNanos(this, minOf(remainingNanos, AUTO_PARK_CAP_NANOS))
        else idle.idle(0)
    } finally {
        synchronized(domain.lock) { waiters.remove(me) }
    }
}

/**
 * One idle step of a coroutine waiting for a write to [cq]: yields while the policy spins, then suspends until a write
 * wakes it — bounded by the policy's longest park under manual progress, where it must come back to drive progress
 * itself.
 */
internal suspend fun CompletionQueue.idleForWrite(idle: CoroutineIdle) {
    if (!domain.hub.automatic && !idle.parking) {
        idle.idle(0)
        return
    }
    val bound = if (domain.hub.automatic) AUTO_PARK_CAP_NANOS / 1_000_000 else domain.idlePolicy.maxParkMillis
    withTimeoutOrNull(bound) {
        suspendCancellableCoroutine<Unit> { cont ->
            val w = CoroutineWaker(cont)
            val armed =
                synchronized(domain.lock) {
                    if (!isEmptyLocked()) false
                    else {
                        waiters.add(w)
                        true
                    }
                }
            if (!armed) {
                cont.resume(Unit)
            } else {
                cont.invokeOnCancellation { synchronized(domain.lock) { waiters.remove(w) } }
            }
        }
    }
}
