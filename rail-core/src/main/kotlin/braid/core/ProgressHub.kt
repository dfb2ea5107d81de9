package braid.core

import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineName
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.agrona.DirectBuffer

/**
 * The progress side of one [Domain]: what turns provider completions into resumed coroutines, completed futures and
 * unparked threads, and who drives the providers when the application is waiting rather than reading.
 * - The **ready list**: operations and waiters whose outcome was decided under the domain lock ([Ready]), fired by
 *   whoever drove progress once it has released the lock ([dispatchReady]), so no waiter's code ever runs inside a
 *   provider's duty cycle or under the lock.
 * - The **pending list**: every [PendingOp] not yet DONE, so closing an endpoint fails them all.
 * - The **retry queue**: operations a rail refused with `-EAGAIN`; every progress call re-posts them in order, so
 *   waiting for resources needs no polling by the waiter.
 * - The **pool** of operations for the `suspend` forms, so that one completing inline allocates nothing; it keeps at
 *   most [POOL_LIMIT].
 * - The **driver**, under manual progress: while coroutines are suspended in operations of this domain, one coroutine
 *   drives progress on the dispatcher of the waiter that started it (the waiters lend their dispatcher to progress; no
 *   thread is created). While futures (or counter waits) handed out by this domain are outstanding ([asyncWaiters]),
 *   the same driver runs on the default dispatcher, so a future completes whether or not anyone calls `get()` on it. It
 *   gives the role up when the last waiter is resumed and the last future completed, or to a thread blocked in a
 *   future's `get()`; a driver of futures then lingers without the role ([linger]) rather than stopping, so a loop of
 *   futures launches no driver per operation. Under automatic progress the [ProgressEngine] does this instead.
 *
 * Everything here is guarded by the domain lock except the volatile fields read on fast paths.
 */
internal class ProgressHub(private val domain: Domain) {
    private val lock: Any
        get() = domain.lock

    // ## Ready list ##

    /**
     * Written under the lock with release stores ([READY_HEAD]`.lazySet`: the lock's release publishes them anyway, and
     * a full volatile store would add two fences to every future's completion), read without it by [dispatchReady],
     * where a stale null only leaves the list to the thread that filled it, which always dispatches after the lock.
     */
    @Volatile @JvmField internal var readyHead: Ready? = null
    private var readyTail: Ready? = null

    /** Queues [r] to be fired after the lock is released. Caller holds the lock; [r] is not queued. */
    fun pushReady(r: Ready) {
        r.nextReady = null
        val t = readyTail
        if (t == null) READY_HEAD.lazySet(this, r) else t.nextReady = r
        readyTail = r
    }

    /**
     * Fires everything made ready so far; call after releasing the lock. One volatile read when nothing is ready, so
     * the raw read path pays nothing else.
     */
    fun dispatchReady(): Int {
        if (readyHead == null) return 0
        return fire(domain.lock.guard { takeReadyLocked() })
    }

    /**
     * Takes the whole ready list, for a caller that holds the lock anyway and fires it with [fire] once it has released
     * the lock: a progress round that completed futures then takes the lock once, not twice.
     */
    fun takeReadyLocked(): Ready? {
        val h = readyHead ?: return null
        READY_HEAD.lazySet(this, null)
        readyTail = null
        return h
    }

    /** Fires a list taken by [takeReadyLocked]; call without the lock. Returns how many fired. */
    fun fire(list: Ready?): Int {
        var r = list
        var n = 0
        while (r != null) {
            val next = r.nextReady
            r.nextReady = null
            r.fire()
            n++
            r = next
        }
        return n
    }

    // ## Pending operations ##

    private var pendingHead: PendingOp? = null

    /** Operations started through the suspend, future or blocking forms and not yet DONE. */
    var pendingCount: Int = 0
        private set

    fun register(op: PendingOp) {
        op.registered = true
        op.prev = null
        op.next = pendingHead
        pendingHead?.prev = op
        pendingHead = op
        pendingCount++
    }

    fun unregister(op: PendingOp) {
        if (!op.registered) return
        op.registered = false
        val p = op.prev
        val n = op.next
        if (p == null) pendingHead = n else p.next = n
        n?.prev = p
        op.prev = null
        op.next = null
        pendingCount--
    }

    /**
     * Starts [op]: registers it, posts it (or queues it behind earlier refused operations), and returns 0, or the
     * negated errno of a post that failed for good. Caller does [dispatchReady] afterwards.
     */
    fun submit(op: PendingOp): Int = synchronized(lock) { submitLocked(op) }

    /** [submit], for a caller that holds the lock. */
    fun submitLocked(op: PendingOp): Int {
        if (!op.ep.enabled) return -Errno.EOPBADSTATE
        PendingOp.STATE.lazySet(op, PendingOp.PENDING)
        register(op)
        if (retries.isNotEmpty()) {
            queueRetry(op)
            return 0
        }
        val rc = op.post()
        when {
            rc == 0 -> if (op.isInject) op.completeInjectStarting()
            rc == -Errno.EAGAIN -> if (!op.isDone) queueRetry(op)
            else -> {
                unregister(op)
                PendingOp.STATE.lazySet(op, PendingOp.NEW)
                return rc
            }
        }
        return 0
    }

    // ## Operation pool ##

    /** Operations handed back by the suspend forms, linked through [PendingOp.next]. */
    private var free: PendingOp? = null
    private var freeCount = 0

    /**
     * Operations of futures, DONE and waiting to be fired ([PendingOp.fire] settles the future, then lets go of the
     * operation by clearing [PendingOp.future]), oldest first, linked through [PendingOp.next]. [obtainLocked] takes
     * the fired ones into the pool; a pending future thus costs no operation of its own once warm.
     */
    private var limboHead: PendingOp? = null
    private var limboTail: PendingOp? = null
    private var limboCount = 0

    /** Puts [op], DONE with a future to settle, in the limbo. Caller holds the lock; [op] is on no list. */
    fun limboLocked(op: PendingOp) {
        if (limboCount >= POOL_LIMIT) return // a future nobody fires for long: its operation is simply let go
        op.next = null
        val t = limboTail
        if (t == null) limboHead = op else t.next = op
        limboTail = op
        limboCount++
    }

    /** Moves the operations fired so far from the limbo to the pool. Caller holds the lock. */
    private fun drainLimboLocked() {
        var op = limboHead
        while (op != null && op.future == null) {
            val next = op.next
            op.next = null
            limboCount--
            recycleLocked(op)
            op = next
        }
        limboHead = op
        if (op == null) limboTail = null
    }

    /** An operation from the pool (or a new one) filled in with the arguments. Caller holds the lock. */
    fun obtainLocked(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
    ): PendingOp {
        if (limboHead != null) drainLimboLocked()
        val op = free
        val o =
            if (op == null) PendingOp(this)
            else {
                free = op.next
                op.next = null
                freeCount--
                op
            }
        o.set(ep, kind, buffer, offset, length, addr, tag, ignore)
        return o
    }

    /** Gives [op] back to the pool if nothing refers to it any more ([PendingOp.reusable]). Caller holds the lock. */
    fun recycleLocked(op: PendingOp) {
        if (freeCount >= POOL_LIMIT || !op.reusable) return
        op.clear()
        op.next = free
        free = op
        freeCount++
    }

    // ## Retry queue ##

    private val retries = ArrayDeque<PendingOp>()

    /** Whether operations wait for a retry; read by [Domain.progressLocked] under the lock. */
    @JvmField var retryPending: Boolean = false

    private fun queueRetry(op: PendingOp) {
        op.queuedForRetry = true
        retries.addLast(op)
        retryPending = true
    }

    fun dropRetry(op: PendingOp) {
        op.queuedForRetry = false
        retries.remove(op)
        retryPending = retries.isNotEmpty()
    }

    /** Re-posts refused operations in order until the rail refuses again. Caller holds the lock. */
    fun retryLocked(): Int {
        var n = 0
        while (retries.isNotEmpty()) {
            // Out of the queue before the post: a send may complete inside it.
            val op = retries.removeFirst()
            op.queuedForRetry = false
            val rc = op.post()
            if (rc == -Errno.EAGAIN) {
                op.queuedForRetry = true
                retries.addFirst(op)
                break
            }
            n++
            if (rc != 0) op.fail(-rc, "the rail refused it: ${Errno.name(rc)}")
            else if (op.isInject) op.completeInject()
        }
        retryPending = retries.isNotEmpty()
        return n
    }

    /** Fails every pending operation of [ep] (it is closing). Caller holds the lock, then dispatches. */
    fun endpointClosed(ep: Endpoint) {
        var op = pendingHead
        while (op != null) {
            val next = op.next
            if (op.ep === ep) {
                op.fail(Errno.ESHUTDOWN, "the endpoint was closed while the operation was pending")
            }
            op = next
        }
    }

    // ## Suspended coroutines and the manual-progress driver ##

    /** Coroutines suspended in operations of this domain (attached to a [PendingOp]). */
    @Volatile
    var suspendedWaiters: Int = 0
        private set

    /** Whether a coroutine drives progress for the suspended waiters (inline, or [driverLoop]). */
    private var driverRunning = false

    /**
     * Futures and counter waits handed out and not yet complete: while there are any (under manual progress) the driver
     * runs, so they complete without anyone calling `get()`. Guarded by the lock.
     */
    val asyncWaiters: Int
        get() = asyncWaiterCount

    /**
     * [asyncWaiters]: written under the lock with release stores (as [readyHead]), read without it by the lingering
     * driver and [blockLeft], which look again under the lock before they act on it.
     */
    @Volatile @JvmField internal var asyncWaiterCount: Int = 0

    /**
     * Threads blocked in a blocking form or a future's `get()`, each driving progress itself under manual progress:
     * while there are any, the driver leaves polling to them (two pollers on one domain only contend for its lock). One
     * atomic word counts both the threads blocked now (its low 32 bits) and every entry so far (its high bits), so the
     * lingering driver can tell that futures are being joined ([linger]) at no extra cost to the joining thread.
     */
    private val blocked = java.util.concurrent.atomic.AtomicLong()

    /** A thread starts blocking on this domain ([Waiting.block]). */
    fun blockEntered() {
        blocked.addAndGet(BLOCK_ENTRY)
    }

    /**
     * A thread stops blocking; when it was the last while futures are outstanding, nobody drives them now: a parked
     * lingering driver is woken.
     */
    fun blockLeft() {
        if (blocked.decrementAndGet() and BLOCKED_MASK == 0L && asyncWaiters > 0) wakeLinger()
    }

    /** Whether a thread is blocked on this domain now, driving progress itself; read by tests too. */
    internal val anyBlocked: Boolean
        get() = blocked.get() and BLOCKED_MASK != 0L

    /**
     * Entries into blocking waits so far, and joins that ended at their first look (wrapping): it moves while a thread
     * joins futures.
     */
    private val joins: Long
        get() = (blocked.get() ushr 32) + quickJoins

    /**
     * Joins of a future that looked once, driving one progress round, before blocking ([OpFuture]): a hint that futures
     * are joined, written with a plain release store (two joiners may count one), so a join that ends at once costs no
     * atomic update.
     */
    @Volatile @JvmField internal var quickJoins: Long = 0

    /** A thread joins a future: counted in [joins] at the cost of a release store. */
    fun noteJoin() {
        QUICK_JOINS.lazySet(this, quickJoins + 1)
    }

    /** Whether anything waits for the driver: suspended coroutines or outstanding futures. */
    private val needsDriver: Boolean
        get() = suspendedWaiters > 0 || asyncWaiters > 0

    /**
     * Counts one more outstanding future; starts the driver on the default dispatcher if none runs. Caller holds the
     * lock, and calls [launchDriver]`(null)` after releasing it if this returns true.
     */
    fun asyncWaiterAddedLocked(): Boolean {
        ASYNC_WAITERS.lazySet(this, asyncWaiterCount + 1)
        asyncStarted++
        futuresUsed = true
        // A lingering driver takes the role if nobody drives ([linger]); launching one per future would cost a
        // coroutine and a wake-up of another thread per operation, while the caller usually drives it from join().
        if (lingering) wakeLingerLocked()
        if (automatic || driverRunning || lingering) return false
        driverRunning = true
        return true
    }

    /**
     * Futures started so far; [linger] looks at it to tell whether futures are in use. Written under the lock; the
     * watching driver reads it without (a stale value only delays its park).
     */
    private var asyncStarted = 0L

    /** Whether this domain has handed out a future: its driver then lingers ([linger]). Guarded by the lock. */
    private var futuresUsed = false

    /** Whether the futures' driver lingers without the driver role ([linger]). Guarded by the lock. */
    private var lingering = false

    /** Drivers launched so far (each a coroutine and a task handed to another thread); read by tests. */
    @Volatile
    var driverLaunches: Long = 0
        private set

    /** Rounds the driver has run, each after a wake-up of its thread (a yield or a timed park); read by tests. */
    @Volatile
    var driverRounds: Long = 0
        private set

    /** The waits entered ([joins]) when the lingering driver last looked, and when it last saw them move. */
    private var seenJoins = 0L
    private var joinedAt = System.nanoTime() - JOINED_NANOS

    /** Spins of the lingering driver watching for unjoined futures ([linger]); one writer; read by tests. */
    @Volatile
    var watchSpins: Long = 0
        private set

    /**
     * Counters with futures of [Counter.waitAsync] outstanding, so closing the domain fails them. Guarded by the lock.
     */
    val waitedCounters: ArrayList<Counter> = ArrayList(0)

    /** The domain is closing: fails every counter wait still outstanding. Caller then dispatches. */
    fun domainClosedLocked() {
        wakeLingerLocked() // it ends: a parked one would hold the domain until its park ran out
        while (waitedCounters.isNotEmpty()) waitedCounters
            .removeAt(waitedCounters.size - 1)
            .failWaitsLocked(Errno.ESHUTDOWN)
    }

    /** One outstanding future completed (or was withdrawn). Caller holds the lock. */
    fun asyncWaiterDoneLocked() {
        ASYNC_WAITERS.lazySet(this, asyncWaiterCount - 1)
    }

    /** Called by [PendingOp] when its coroutine is detached. Caller holds the lock. */
    fun waiterDetached() {
        suspendedWaiters--
    }

    /**
     * Attaches a suspended coroutine to [op]; false if [op] is already DONE (resume at once). Under manual progress,
     * starts a driver if none runs. Runs inside suspendCancellableCoroutine.
     */
    fun attach(op: PendingOp, cont: CancellableContinuation<Unit>, dispatcher: CoroutineDispatcher?): Boolean {
        val startDriver: Boolean
        synchronized(lock) {
            if (op.isDone) return false
            // A cancelled waiter that is waiting again (its operation was kept) replaces itself.
            if (op.cont == null) suspendedWaiters++
            op.cont = cont
            startDriver = !automatic && !driverRunning
            if (startDriver) driverRunning = true
        }
        if (startDriver) launchDriver(dispatcher)
        return true
    }

    /** Takes the driver role for an inline spin if nobody drives; the caller must [releaseDriver]. */
    fun tryAcquireDriver(): Boolean = synchronized(lock) { tryAcquireDriverLocked() }

    /** [tryAcquireDriver], for a caller that holds the lock. */
    fun tryAcquireDriverLocked(): Boolean {
        if (automatic || driverRunning) return false
        driverRunning = true
        return true
    }

    /** Gives the driver role up, handing it to a new driver coroutine if waiters still need one. */
    fun releaseDriver(dispatcher: CoroutineDispatcher?) {
        if (synchronized(lock) { releaseDriverLocked() }) launchDriver(dispatcher)
    }

    /**
     * Gives the driver role up; true if suspended waiters still need a driver, which the caller then starts with
     * [launchDriver] once it has released the lock. Caller holds the lock.
     */
    fun releaseDriverLocked(): Boolean {
        if (needsDriver && !automatic) return true
        driverRunning = false
        return false
    }

    /**
     * Starts a driver coroutine for the role its caller took. The role must come back however the coroutine ends,
     * including when it never runs: a dispatcher that refuses the task (its executor shut down) cancels the coroutine
     * before its body starts, so a `finally` in the body would not run. The completion handler runs on every end, and
     * [driverEnded] hands the role on after a cancellation or a provider's throw; a normal end already gave it up.
     */
    fun launchDriver(dispatcher: CoroutineDispatcher?) {
        domain.lock.share() // a pool thread drives the domain from now on: it leaves solo mode first
        val d = if (dispatcher == null || dispatcher === Dispatchers.Unconfined) Dispatchers.Default else dispatcher
        driverLaunches++ // one launcher at a time: the role is exclusive
        CoroutineScope(d + CoroutineName("braid-progress-${domain.name}"))
            .launch { driverLoop() }
            .invokeOnCompletion(driverEnded)
    }

    /** Lets another driver take over from one that was cancelled (or never ran) or whose provider threw. */
    private val driverEnded: (Throwable?) -> Unit = { cause ->
        if (cause != null) {
            // A lingering driver holds no role: it gives up only its lingering.
            synchronized(lock) { if (lingering) lingering = false else driverRunning = false }
            if (needsDriver && tryAcquireDriver()) launchDriver(Dispatchers.Default)
        }
    }

    private suspend fun driverLoop() {
        val idle = CoroutineIdle(domain.idlePolicy)
        while (true) {
            driverRounds++ // one driver at a time
            val lending = anyBlocked
            val work = if (lending) 0 else domain.progress()
            // Give the role up as soon as the last waiter is resumed, before idling: the resumed
            // caller's next operation then finds no driver and polls inline, without suspending.
            // A driver of futures also gives it up to a thread blocked in get() or join(), which
            // drives, and completes the futures on its own thread.
            if (lending || !needsDriver || automatic) {
                when (synchronized(lock) { giveUpLocked(lending) }) {
                    STOP -> return
                    LINGER -> {
                        if (!linger()) return
                        idle.reset()
                        continue
                    }
                }
            }
            if (lending) delay(domain.idlePolicy.maxParkMillis) else idle.idle(work)
        }
    }

    /**
     * What the driver does next: KEEP its role, STOP, or LINGER without the role. Caller holds the lock.
     *
     * A driver gives its role up to a blocked thread only while nothing but futures needs it: the lingering driver
     * watches futures alone ([linger] looks at [asyncWaiters]), and a thread leaving its wait wakes it only for them
     * ([blockLeft]). A suspended coroutine keeps its driver, which lends (it sleeps, driving nothing) while a thread is
     * blocked and drives again once none is: had it given the role up, the coroutine would have been left with no
     * driver once the blocked thread left (a `trecv` in `runBlocking` that hung after futures had been joined beside
     * it).
     */
    private fun giveUpLocked(lending: Boolean): Int {
        val done = !needsDriver || automatic
        if (!done && !(lending && futuresUsed && suspendedWaiters == 0)) return KEEP
        driverRunning = false
        if (automatic || domain.closed || !futuresUsed || lingering) return STOP // one lingers at most
        lingering = true
        return LINGER
    }

    /**
     * The futures' driver between its turns, holding no role (so a suspend form still polls inline and a blocked
     * `get()` drives alone). It watches in one of two ways, by what the application does with its futures:
     * - **Joined** (a thread entered a blocking `get()` or `join()` within [JOINED_NANOS]): that thread drives progress
     *   and completes its futures itself, so the driver keeps off the cores. It sleeps [JOINED_TICK_MILLIS] at a time
     *   (a timed suspension: nothing to wake, nothing spinning beside the joining thread, which on a machine with as
     *   many busy threads as cores would take turns with it) and takes the role back when a whole tick passed with
     *   futures outstanding, no thread blocked and none entering a wait: a future nobody joins is then driven within
     *   one to two ticks.
     * - **Unjoined** (callbacks, `allOf`, `isDone()` polling): it spins on volatile counts and takes the role back as
     *   soon as a future is outstanding with no thread blocked on the domain for [TAKE_OVER_NANOS], so such futures are
     *   driven within microseconds.
     *
     * After [WATCH_NANOS] with no future started and none left unwaited it parks, for the idle policy's longest park at
     * a time; a future handed out, or a blocked waiter leaving with futures outstanding, wakes it at once
     * ([wakeLinger]). Returns true with the role taken, or false once nothing moved for [LINGER_ROUNDS] parks (or the
     * domain closed, or an engine drives it).
     */
    private suspend fun linger(): Boolean {
        var quiet = 0
        var seenStarted = asyncStarted
        var busySince = System.nanoTime()
        // Entered because a thread blocked in get(): futures are being joined.
        if (anyBlocked) joinedAt = busySince
        var tickJoins = -1L // joins when the last tick began (-1: no tick yet)
        var unwaitedSince = 0L
        var spins = 0
        while (true) {
            val outstanding = asyncWaiters > 0
            val blocked = anyBlocked
            val started = asyncStarted
            val joined = joins
            val now = System.nanoTime()
            if (started != seenStarted) {
                seenStarted = started
                busySince = now
                quiet = 0
            }
            if (joined != seenJoins) {
                seenJoins = joined
                joinedAt = now
                busySince = now
            }
            if (now - joinedAt < JOINED_NANOS) {
                // Joined: a whole tick with futures outstanding and no thread entering a wait means nobody
                // joins those: drive them. Otherwise sleep a tick.
                if (outstanding && !blocked && joined == tickJoins) {
                    when (synchronized(lock) { takeOverLocked() }) {
                        TAKEN -> return true
                        ENDED -> return false
                    }
                }
                tickJoins = joined
                delay(JOINED_TICK_MILLIS)
                driverRounds++
                if (automatic || domain.closed) {
                    synchronized(lock) { lingering = false }
                    return false
                }
                unwaitedSince = 0L
                continue
            }
            tickJoins = -1L
            if (outstanding && !blocked) {
                busySince = now
                if (unwaitedSince == 0L) unwaitedSince = now
                else if (now - unwaitedSince >= TAKE_OVER_NANOS) {
                    when (synchronized(lock) { takeOverLocked() }) {
                        TAKEN -> return true
                        ENDED -> return false
                    }
                    unwaitedSince = 0L // someone else drives (an inline spin): watch again
                }
            } else {
                unwaitedSince = 0L
            }
            if (now - busySince < WATCH_NANOS) {
                // A thread blocked in get() drives meanwhile: give the core to it rather than spin beside it.
                if (blocked) Thread.yield() else Thread.onSpinWait()
                watchSpins++
                if (++spins and YIELD_MASK == 0) yield()
                continue
            }
            // Quiet: park until woken or the longest park passes.
            val park =
                synchronized(lock) {
                    when {
                        automatic || domain.closed -> {
                            lingering = false
                            return false
                        }
                        asyncWaiters > 0 && !anyBlocked -> false // look again: about to take over
                        else -> {
                            lingerParked = true
                            true
                        }
                    }
                }
            if (!park) continue
            val woken = withTimeoutOrNull(domain.idlePolicy.maxParkMillis) { lingerWake.receive() } != null
            driverRounds++
            synchronized(lock) {
                lingerParked = false
                if (automatic || domain.closed) {
                    lingering = false
                    return false
                }
                if (!woken && asyncStarted == seenStarted && asyncWaiters == 0 && ++quiet >= LINGER_ROUNDS) {
                    lingering = false
                    return false
                }
            }
            busySince = System.nanoTime()
        }
    }

    /** Takes the role back for outstanding futures nobody waits on: TAKEN, ENDED (linger no more) or BUSY. */
    private fun takeOverLocked(): Int {
        if (automatic || domain.closed) {
            lingering = false
            return ENDED
        }
        if (!needsDriver) return BUSY
        if (driverRunning) return BUSY
        lingering = false
        driverRunning = true
        return TAKEN
    }

    /** Whether the lingering driver is parked ([linger]), so a future handed out must wake it. */
    @Volatile private var lingerParked = false

    /** Wakes the parked lingering driver ([linger]); conflated, so a wake nobody took is simply seen next time. */
    private val lingerWake = kotlinx.coroutines.channels.Channel<Unit>(kotlinx.coroutines.channels.Channel.CONFLATED)

    /**
     * Wakes the lingering driver if it is parked: a future was handed out, or the last thread blocked on the domain
     * left while futures are outstanding. Nothing but a volatile read when it is not parked.
     */
    fun wakeLinger() {
        if (!lingerParked) return
        synchronized(lock) { wakeLingerLocked() }
    }

    /** [wakeLinger], for a caller that holds the lock. */
    private fun wakeLingerLocked() {
        if (!lingerParked) return
        lingerParked = false
        lingerWake.trySend(Unit)
    }

    // ## Automatic progress ##

    @Volatile
    var engine: ProgressEngine? = null
        private set

    /** Whether a [ProgressEngine] drives this domain. */
    val automatic: Boolean
        get() = engine != null

    fun attachEngine(e: ProgressEngine) {
        domain.lock.share() // the engine's thread drives the domain from now on
        synchronized(lock) {
            val current = engine
            if (current != null) {
                throw FabricException(
                    Errno.EBUSY,
                    "domain '${domain.name}': already driven by $current; close it before starting another engine",
                )
            }
            engine = e
        }
    }

    fun detachEngine(e: ProgressEngine) {
        val needDriver =
            synchronized(lock) {
                if (engine !== e) return
                engine = null
                needsDriver &&
                    !driverRunning &&
                    run {
                        driverRunning = true
                        true
                    }
            }
        // Coroutines that relied on the engine still wait: drive for them under manual progress.
        if (needDriver) launchDriver(Dispatchers.Default)
    }

    private companion object {
        val READY_HEAD: java.util.concurrent.atomic.AtomicReferenceFieldUpdater<ProgressHub, Ready?> =
            java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(
                ProgressHub::class.java,
                Ready::class.java,
                "readyHead",
            )

        val QUICK_JOINS: java.util.concurrent.atomic.AtomicLongFieldUpdater<ProgressHub> =
            java.util.concurrent.atomic.AtomicLongFieldUpdater.newUpdater(ProgressHub::class.java, "quickJoins")

        val ASYNC_WAITERS: java.util.concurrent.atomic.AtomicIntegerFieldUpdater<ProgressHub> =
            java.util.concurrent.atomic.AtomicIntegerFieldUpdater.newUpdater(
                ProgressHub::class.java,
                "asyncWaiterCount",
            )

        /** Operations the pool keeps at most; more waiters than this at once simply allocate. */
        const val POOL_LIMIT = 256

        /** Parks (of the idle policy's longest) that the futures' driver lingers without a future started. */
        const val LINGER_ROUNDS = 100

        /** How long a future may stay outstanding with no thread blocked on it before the lingering driver drives. */
        const val TAKE_OVER_NANOS = 5_000L

        /** How long the lingering driver watches, spinning, after the last sign of futures in use, before it parks. */
        const val WATCH_NANOS = 200_000L

        /**
         * How long the lingering driver sleeps at a time while futures are being joined ([linger]): a future nobody
         * joins then waits one to two of these for the driver.
         */
        const val JOINED_TICK_MILLIS = 1L

        /** How long after a thread last entered a wait the lingering driver still takes futures to be joined. */
        const val JOINED_NANOS = 50_000_000L

        /** [blocked] adds this per thread entering a wait: one to the threads blocked now, one to the entries. */
        const val BLOCK_ENTRY = (1L shl 32) + 1

        /** The threads blocked now, in [blocked]. */
        const val BLOCKED_MASK = 0xffff_ffffL

        /** The watching driver yields its thread once every this many + 1 spins. */
        const val YIELD_MASK = 63

        // What takeOverLocked finds.
        const val TAKEN = 0
        const val ENDED = 1
        const val BUSY = 2

        // What the driver does when it may give its role up (giveUpLocked).
        const val KEEP = 0
        const val STOP = 1
        const val LINGER = 2
    }
}
