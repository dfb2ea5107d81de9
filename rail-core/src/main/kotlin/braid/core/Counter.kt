package braid.core

import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.LockSupport
import org.agrona.concurrent.IdleStrategy

/**
 * A completion counter (`fid_cntr`): counts successful and failed operations of the endpoints bound to it. Reading it
 * under manual progress drives the domain's providers.
 *
 * Deferred work ([DeferredWorkQueue]) waits on counters: whenever [add], [set], [addErr] or [setErr] moves one that
 * requests wait on, those whose threshold the success plus error count now meets fire. A counter nobody waits on pays
 * one volatile read per update for this.
 */
public class Counter
internal constructor(public val domain: Domain, @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden()) :
    AutoCloseable {
    private val success = AtomicLong()
    private val errors = AtomicLong()
    private val waiters = WaitSet()

    // ## Deferred work waiting on this counter (guarded by the domain lock, but armed) ##
    @get:JvmSynthetic @set:JvmSynthetic internal var triggers: TriggerHeap? = null
    @get:JvmSynthetic @set:JvmSynthetic @Volatile internal var armed = false
    @get:JvmSynthetic @set:JvmSynthetic internal var dirty = false
    @get:JvmSynthetic @set:JvmSynthetic internal var listed = false

    /** Success plus error count: what thresholds are compared with. */
    @get:JvmSynthetic
    internal val total: Long
        get() = success.get() + errors.get()

    /** The success count, after driving progress (`fi_cntr_read`). */
    public fun read(): Long {
        domain.progress()
        return success.get()
    }

    /** The error count, after driving progress (`fi_cntr_readerr`). */
    public fun readErr(): Long {
        domain.progress()
        return errors.get()
    }

    /** The success count without driving progress. */
    public val value: Long
        get() = success.get()

    /** The error count without driving progress. */
    public val errorValue: Long
        get() = errors.get()

    public fun add(n: Long) {
        success.addAndGet(n)
        changed()
    }

    public fun set(n: Long) {
        success.set(n)
        changed()
    }

    public fun addErr(n: Long) {
        errors.addAndGet(n)
        changed()
    }

    public fun setErr(n: Long) {
        errors.set(n)
        changed()
    }

    /**
     * A provider's native counter bound to this one (native deferred work waits on it or completes into it), or null.
     * Set and read under the domain lock.
     */
    @get:JvmSynthetic @set:JvmSynthetic @Volatile internal var mirror: CounterMirror? = null

    private fun changed() {
        // The native copy first, so native deferred work waiting on it fires with Braid's. Lock order: the caller holds
        // no lock or the domain lock, and the native call takes only the provider's own locks (never one of Braid's).
        mirror?.let { m -> synchronized(domain.lock) { if (mirror === m) m.changed(this) } }
        waiters.signal()
        if (asyncWaitCount > 0) settleWaits()
        // After the update: a request queued meanwhile either is seen armed here or sees the new count.
        if (armed) domain.deferredWork.counterChanged(this)
    }

    /**
     * Waits until the success count reaches [threshold] (`fi_cntr_wait`): returns 0, `-EIO` if the error count moved
     * while waiting, or `-ETIMEDOUT` after [timeoutMillis] (negative: for ever).
     *
     * Once [idle] parks, the waiter sleeps until a thread of this process updates the counter (it arms itself before
     * its last look, so no update is missed) or, under manual progress, until its park period ends and it drives
     * progress again; under automatic progress it leaves polling to the [ProgressEngine].
     *
     * (Not named `wait`: from Java, `counter.wait(3, 1000)` would bind to `Object.wait(long, int)`.)
     */
    @JvmOverloads
    public fun waitFor(threshold: Long, timeoutMillis: Long, idle: IdleStrategy = domain.idleStrategy()): Int {
        val deadline = if (timeoutMillis < 0) Long.MAX_VALUE else System.nanoTime() + timeoutMillis * 1_000_000
        val errorsBefore = errors.get()
        idle.reset()
        while (true) {
            if (read() >= threshold) return 0
            if (errors.get() != errorsBefore) return -Errno.EIO
            val now = System.nanoTime()
            if (now >= deadline) return -Errno.ETIMEDOUT
            // fi_trywait: arm, look once more, then idle; add() and addErr() unpark armed waiters.
            val me = Thread.currentThread()
            waiters.add(me)
            try {
                if (success.get() < threshold && errors.get() == errorsBefore) {
                    if (domain.hub.automatic) {
                        LockSupport.parkNanos(
                            this,
                            minOf(
                                if (deadline == Long.MAX_VALUE) Long.MAX_VALUE else deadline - now,
                                AUTO_PARK_CAP_NANOS,
                            ),
                        )
                    } else {
                        idle.idle(0)
                    }
                }
            } finally {
                waiters.remove(me)
            }
        }
    }

    // ## Futures of waitAsync (the list is guarded by the domain lock) ##
    private val asyncWaits = ArrayList<CounterWait>(0)
    @Volatile private var asyncWaitCount = 0

    /**
     * A future that completes with the success count once it reaches [threshold] (`fi_cntr_wait` as a future), or
     * exceptionally with a [FabricException] carrying [Errno.EIO] if the error count moves first. Like every future
     * Braid hands out it completes on its own under either progress model: under manual progress the domain drives
     * progress in the background while it is outstanding (see `EndpointFutures.sendAsync`). Cancelling it withdraws the
     * wait.
     */
    public fun waitAsync(threshold: Long): CompletableFuture<Long> {
        val hub = domain.hub
        val w: CounterWait
        var startDriver = false
        synchronized(domain.lock) {
            w = CounterWait(this, threshold, errors.get())
            if (!w.due(success.get(), errors.get())) {
                w.listed = true
                if (asyncWaits.isEmpty()) hub.waitedCounters.add(this)
                asyncWaits.add(w)
                asyncWaitCount = asyncWaits.size
                startDriver = hub.asyncWaiterAddedLocked()
                // An update between the checks above and the listing is seen here.
                if (w.due(success.get(), errors.get())) settleWaitsLocked()
            } else {
                hub.pushReady(w)
            }
        }
        hub.dispatchReady()
        if (startDriver) hub.launchDriver(null)
        return w.future
    }

    @JvmSynthetic
    internal fun removeWait(w: CounterWait) {
        w.listed = false
        asyncWaits.remove(w)
        asyncWaitCount = asyncWaits.size
        if (asyncWaits.isEmpty()) domain.hub.waitedCounters.remove(this)
    }

    /**
     * Fails every outstanding [waitAsync] with [err] (the domain is closing). Caller holds the lock, then dispatches.
     */
    @JvmSynthetic
    internal fun failWaitsLocked(err: Int) {
        while (asyncWaits.isNotEmpty()) {
            val w = asyncWaits[asyncWaits.size - 1]
            w.listed = false
            asyncWaits.removeAt(asyncWaits.size - 1)
            w.fail(err)
            domain.hub.asyncWaiterDoneLocked()
            domain.hub.pushReady(w)
        }
        asyncWaitCount = 0
    }

    private fun settleWaits() {
        synchronized(domain.lock) { settleWaitsLocked() }
        // Inside a duty cycle the caller dispatches after releasing the lock; otherwise do it now.
        if (!Thread.holdsLock(domain.lock)) domain.hub.dispatchReady()
    }

    private fun settleWaitsLocked() {
        val s = success.get()
        val e = errors.get()
        var i = 0
        while (i < asyncWaits.size) {
            val w = asyncWaits[i]
            if (w.due(s, e)) {
                removeWait(w)
                domain.hub.asyncWaiterDoneLocked()
                domain.hub.pushReady(w)
            } else {
                i++
            }
        }
    }

    /** The old name of [waitFor], for Kotlin callers only: Java never sees it, so it cannot bind to `Object.wait`. */
    @Deprecated(
        "renamed: Java binds counter.wait(n, ms) to Object.wait",
        ReplaceWith("waitFor(threshold, timeoutMillis, idle)"),
    )
    @JvmSynthetic
    public fun wait(threshold: Long, timeoutMillis: Long, idle: IdleStrategy = domain.idleStrategy()): Int =
        waitFor(threshold, timeoutMillis, idle)

    override fun close() {}

    override fun toString(): String = "Counter(success=${success.get()}, errors=${errors.get()})"
}

/**
 * A provider's native counter bound to a [Counter] (`fi_cntr_open`, for native deferred work): told of every change,
 * increases and decreases alike, under the domain lock, and sets the native count to the counter's success plus error
 * count (what thresholds compare), so the native side sees what Braid's does.
 */
internal fun interface CounterMirror {
    fun changed(counter: Counter)
}
