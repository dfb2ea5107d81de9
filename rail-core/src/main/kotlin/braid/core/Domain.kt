package braid.core

import braid.core.telemetry.SlowWaitEvent
import braid.core.telemetry.Telemetry
import braid.provider.DomainProvider
import braid.provider.Transport
import java.nio.ByteBuffer
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.function.BooleanSupplier
import java.util.function.IntSupplier
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.IdleStrategy
import org.agrona.concurrent.UnsafeBuffer

/**
 * A domain (`fid_domain`): one provider's access to its transport, the factory of endpoints, completion queues,
 * counters, address vectors and memory regions.
 *
 * Threading is FI_THREAD_SAFE by default: one lock per domain serialises data operations and progress, so any thread
 * may post and any thread may read completions. Uncontended, it costs a compare-and-swap each way per call. Opened with
 * [Threading.DOMAIN] (and manual progress) the application promises one thread at a time, and the per-message path
 * takes no lock until Braid starts a thread of its own that drives the domain ([DomainLock]).
 *
 * Progress is manual by default: reading a completion queue or a counter, a blocking read, a blocking or suspended
 * operation, or [progress] drives the providers. With [DomainAttr.progress] = [ProgressModel.AUTO], or once a
 * [ProgressEngine] is started on it, an engine drives them and operations complete without the application calling in.
 * What waiting costs is the domain's [idlePolicy].
 */
public class Domain
internal constructor(
    public val fabric: Fabric,
    public val info: Info,
    /** The domain this one was opened as a peer of ([Fabric.domain] with an owner), or null. */
    public val owner: Domain? = null,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : AutoCloseable {
    @get:JvmSynthetic
    internal val lock: DomainLock =
        owner?.lock
            ?: DomainLock(
                solo = info.domainAttr.threading == Threading.DOMAIN && info.domainAttr.progress != ProgressModel.AUTO
            )
    private var peers: Array<Domain> = emptyArray()
    @get:JvmSynthetic internal val hub = ProgressHub(this)

    /** The deferred work queue (fi_trigger(3)): requests that wait for counters of this domain. */
    public val deferredWork: DeferredWorkQueue = DeferredWorkQueue(this)
    @get:JvmSynthetic internal val provider: DomainProvider = fabric.provider.openDomain(this, info)
    private var transports: Array<Transport> = emptyArray()
    private val endpoints = ArrayList<Endpoint>()
    private val regions = Long2ObjectHashMap<MemoryRegion>()
    private val nextKey = AtomicLong(1)
    @Volatile
    @get:JvmSynthetic
    internal var closed: Boolean = false
        private set

    public val name: String
        get() = info.domainName

    /** Opens an endpoint (`fi_endpoint`); bind it to a CQ and an AV, then [Endpoint.enable] it. */
    @JvmOverloads
    public fun endpoint(info: Info = this.info): Endpoint {
        checkOpen()
        val ep = Endpoint.open(this, info)
        synchronized(lock) { endpoints += ep }
        return ep
    }

    /** Opens a completion queue (`fi_cq_open`). */
    @JvmOverloads
    public fun completionQueue(format: CqFormat = CqFormat.TAGGED, size: Int = 1024): CompletionQueue {
        checkOpen()
        if (size <= 0) throw FabricException.invalid("domain '$name': completion queue size $size must be > 0")
        return CompletionQueue(this, format, size)
    }

    /**
     * Imports [owner] as this domain's completion queue (`fi_cq_open` with `FI_PEER`): what this domain's endpoints
     * complete is written into [owner]; reading the returned queue returns `-ENOSYS`. This domain must be a peer of the
     * owner's ([Fabric.domain] with an owner).
     */
    public fun importCompletionQueue(owner: PeerCq): CompletionQueue {
        checkOpen()
        if (owner is CompletionQueue && owner.domain.lock !== lock) {
            throw FabricException.invalid(
                "domain '$name': cannot import a completion queue of domain '${owner.domain.name}': open this domain with fabric.domain(info, owner = that domain) first"
            )
        }
        return CompletionQueue(this, (owner as? CompletionQueue)?.format ?: CqFormat.TAGGED, 16, owner)
    }

    /** Opens an address vector (`fi_av_open`). */
    @JvmOverloads
    public fun addressVector(type: AvType = info.domainAttr.avType): AddressVector {
        checkOpen()
        return AddressVector(this, if (type == AvType.UNSPEC) AvType.TABLE else type, AddressTable.local(), null, false)
    }

    /**
     * Creates a named address vector (`fi_av_open` with `fi_av_attr.name`), shared by the processes of this host: one
     * copy of the addressing data per host instead of one per process. This process inserts and removes; the others
     * open it with [openSharedAddressVector] and see every insert, under the same fi_addrs (a TABLE AV's are its
     * indices; a MAP AV's carry generations kept in the shared file, and a shared MAP AV never reuses a slot). It holds
     * up to [count] addresses (`fi_av_attr.count`; [FabricException] ENOSPC past it). The file, `braid-av-NAME` in the
     * shared-memory directory ([braid.core.shm.SharedMemoryDir]), is removed when this process closes the AV.
     *
     * [name] is letters, digits, `.`, `_` and `-` (1–100 of them); how the processes agree on it is the application's
     * (fi_setup(7)). Refused with EBUSY if an AV of that name exists on the host.
     */
    @JvmOverloads
    public fun createSharedAddressVector(name: String, count: Int, type: AvType = AvType.TABLE): AddressVector {
        checkOpen()
        val avType = if (type == AvType.UNSPEC) AvType.TABLE else type
        if (count < 1 || count > AddressTable.MAX_SHARED)
            throw FabricException.invalid(
                "address vector '$name': count $count; a shared AV holds 1 .. ${AddressTable.MAX_SHARED} addresses"
            )
        val path = sharedAvPath(name)
        val table =
            try {
                AddressTable.create(path, count, avType.ordinal)
            } catch (e: FabricException) {
                if (java.nio.file.Files.exists(path))
                    throw FabricException(
                        Errno.EBUSY,
                        "address vector '$name': $path exists: another process created this AV (open it with " +
                            "openSharedAddressVector), or a crashed one left it (remove the file)",
                    )
                throw e
            }
        return AddressVector(this, avType, table, name, false)
    }

    /**
     * Opens the named address vector [name] that another process on this host created with [createSharedAddressVector],
     * read-only (`FI_READ`): lookups, sends and receives through its fi_addrs work; insert and remove are refused
     * (EACCES). Refused with ENOENT, naming the file, when no AV of that name exists yet.
     */
    public fun openSharedAddressVector(name: String): AddressVector {
        checkOpen()
        val path = sharedAvPath(name)
        val table =
            AddressTable.open(path)
                ?: throw FabricException(
                    Errno.ENOENT,
                    "address vector '$name': no shared AV at $path; the process that inserts must create it first " +
                        "(createSharedAddressVector), then the others open it",
                )
        return AddressVector(this, AvType.entries[table.typeOrdinal], table, name, true)
    }

    private fun sharedAvPath(name: String): java.nio.file.Path {
        if (!SHARED_AV_NAME.matches(name))
            throw FabricException.invalid(
                "address vector name '$name': use 1-100 letters, digits, '.', '_' or '-' (it names a file)"
            )
        return braid.core.shm.SharedMemoryDir.of(info.settings).resolve("braid-av-$name")
    }

    /** Opens a counter (`fi_cntr_open`). */
    public fun counter(): Counter {
        checkOpen()
        return Counter(this)
    }

    /**
     * Registers [buffer]'s remaining bytes (`fi_mr_reg`). The buffer must be direct. With [requestedKey] 0 the domain
     * picks a key; a key already in use is refused with ENOKEY.
     */
    @JvmOverloads
    public fun registerMemory(buffer: ByteBuffer, access: Int, requestedKey: Long = 0): MemoryRegion =
        register(MemoryRegion.viewOf(buffer, "domain '$name': registerMemory"), access, requestedKey)

    /** Registers an off-heap Agrona buffer (its whole capacity). */
    @JvmOverloads
    public fun registerMemory(buffer: UnsafeBuffer, access: Int, requestedKey: Long = 0): MemoryRegion {
        if (buffer.byteArray() != null) {
            throw FabricException.invalid(
                "domain '$name': registerMemory: the buffer wraps a heap array; use off-heap memory"
            )
        }
        return register(UnsafeBuffer(buffer, 0, buffer.capacity()), access, requestedKey)
    }

    /**
     * Registers [length] bytes of [iface] memory at [address] on [device] (`fi_mr_regattr` with `iface` and `device`):
     * a device buffer the rails cannot address. Data operations given the region move its bytes through the copy
     * service: the override set with [setOp], else the built-in copy of [iface] (CUDA: `libcudart`). System memory is
     * registered with the ByteBuffer forms instead.
     */
    @JvmOverloads
    public fun registerMemory(
        iface: HmemIface,
        device: Long,
        address: Long,
        length: Int,
        access: Int,
        requestedKey: Long = 0,
    ): MemoryRegion {
        if (iface.isSystem) {
            throw FabricException.invalid(
                "domain '$name': registerMemory: SYSTEM memory is registered as a ByteBuffer or UnsafeBuffer; pass the buffer instead of an address"
            )
        }
        if (length < 0) throw FabricException.invalid("domain '$name': registerMemory: length $length must be ≥ 0")
        return register(EMPTY, access, requestedKey, iface, device, address, length)
    }

    /**
     * Overrides [op] for every endpoint of this domain, now and later, unless the endpoint sets its own (the seed's
     * `fi_set_op` on a domain; libfabric's `FI_SET_OPS_HMEM_OVERRIDE` is both copies at once). Returns 0 when the
     * domain's rail honours the override, or `-ENOSYS` when it cannot ([Caps.HMEM] not offered, e.g. the native rail):
     * not a fatal error, the built-in copy stays. [fn] null removes the override.
     */
    public fun setOp(op: HmemOp, fn: HmemCopyFunction?): Int {
        val rc = provider.hmemOverride(op, info, endpoint = false)
        if (rc != 0) return rc
        hmemOps.set(op, fn)
        return 0
    }

    /** The overrides set on this domain; endpoints read them through their own. */
    @get:JvmSynthetic internal val hmemOps: HmemOverrides = HmemOverrides(null)

    private fun register(
        view: UnsafeBuffer,
        access: Int,
        requestedKey: Long,
        iface: HmemIface = HmemIface.SYSTEM,
        device: Long = 0,
        address: Long = 0,
        length: Int = 0,
    ): MemoryRegion =
        synchronized(lock) {
            checkOpen()
            if (requestedKey < 0) throw FabricException.invalid("domain '$name': memory key $requestedKey must be ≥ 0")
            val key =
                if (requestedKey != 0L) requestedKey
                else {
                    var k = nextKey.getAndIncrement()
                    while (regions.containsKey(k)) k = nextKey.getAndIncrement()
                    k
                }
            if (regions.containsKey(key)) {
                throw FabricException(
                    Errno.ENOKEY,
                    "domain '$name': memory key $key is already registered; request another or pass 0",
                )
            }
            // A native rail registers host memory itself; its key (FI_MR_PROV_KEY) may differ from Braid's. Device
            // memory is staged through host bounce buffers, so no provider sees its address.
            val native = if (iface.isSystem) provider.registerMemory(view, access, key, requestedKey != 0L) else null
            val filed = native?.key ?: key
            if (filed != key && regions.containsKey(filed)) {
                native!!.close()
                throw FabricException(
                    Errno.ENOKEY,
                    "domain '$name': the provider's key $filed is already registered here; deregister that region first",
                )
            }
            val mr = MemoryRegion(this, view, access, filed, iface, device, address, length, native)
            regions.put(filed, mr)
            mr
        }

    @JvmSynthetic
    internal fun deregister(mr: MemoryRegion): Unit =
        synchronized(lock) {
            if (regions.get(mr.key) === mr) regions.remove(mr.key)
            mr.native?.close()
        }

    /** The region registered under [key], or null. Caller holds the lock. */
    @JvmSynthetic internal fun region(key: Long): MemoryRegion? = regions.get(key)

    /**
     * Drives every enabled endpoint's provider once, re-posts operations a rail refused with `-EAGAIN`, and hands out
     * the completions of suspended and future operations; returns the work done. A round that found work wakes the
     * threads parked in [driveUntil].
     */
    public fun progress(): Int {
        // The ready list is taken under the round's own lock and fired after it, so completing a future or resuming
        // a coroutine costs no second acquisition.
        var ready: Ready? = null
        val done =
            lock.guard {
                val w = progressLocked()
                ready = hub.takeReadyLocked()
                w
            }
        val work = done + hub.fire(ready)
        if (work > 0)
            driveWaiters.signal() // after the changes: an armed waiter's last look saw them, or it is unparked
        return work
    }

    @JvmSynthetic
    internal fun progressLocked(): Int {
        var work = 0
        // Deferred work made due by completions fires after the rails' duty cycles, not inside them.
        work +=
            deferredWork.holding {
                var w = 0
                for (t in transports) {
                    w +=
                        try {
                            t.progress()
                        } catch (e: RuntimeException) {
                            railFailed(t, e)
                            1
                        }
                }
                w
            }
        for (p in peers) work += p.progressLocked()
        if (hub.retryPending) work += hub.retryLocked()
        return work
    }

    /**
     * A rail threw from its duty cycle: it is driven no more, and everything in flight on it fails (error completions,
     * PEER_DOWN, an error event naming the exception) instead of the progress engine dying with it. The domain's other
     * endpoints go on.
     */
    private fun railFailed(t: Transport, e: RuntimeException) {
        transports = transports.filter { it !== t }.toTypedArray()
        val why = "the ${info.provider} rail of an endpoint on '$name' failed in its duty cycle ($e) and was stopped"
        log.log(System.Logger.Level.ERROR, why, e)
        try {
            t.abort(Errno.EIO, why)
        } catch (again: RuntimeException) {
            log.log(System.Logger.Level.ERROR, "domain '$name': aborting the failed rail failed too", again)
        }
    }

    /** What waiting costs on this domain ([DomainAttr.idle]). */
    public val idlePolicy: IdlePolicy
        get() = info.domainAttr.idle

    /** A fresh idle strategy of this domain's [idlePolicy], for one waiting thread. */
    public fun idleStrategy(): IdleStrategy = idlePolicy.newStrategy()

    // ## The one wait ##
    //
    // Every layer above that waits for something of this domain (MPI requests, collective
    // requests and joins, the offload's blocking calls) waits here, so backing off is decided once,
    // by the domain's idle policy.

    /**
     * Drives this domain's progress until [condition] holds, idling under the domain's [idlePolicy] after every round
     * that found no work; true once the condition holds, false if it still does not when [deadlineNanos] (a
     * [System.nanoTime] instant, or [NO_DEADLINE]) has passed. The condition is asked first, so a wait for what already
     * holds drives nothing; otherwise progress is driven at least once, even past the deadline.
     *
     * A waiter that has backed off to parking is woken by every round of this domain's [progress] that found work, on
     * whichever thread (the [ProgressEngine]'s too), and by [wakeWaiters]: it arms itself before its last look, so no
     * such wake-up is lost. What changes the condition otherwise (another process, a thread that calls neither) is seen
     * at the next look, at most the policy's longest park ([IdlePolicy.maxParkNanos]) later. Under automatic progress
     * the wait leaves driving to the engine. An interrupt does not end the wait (its flag stays set). Each thread idles
     * with a strategy of its own, kept for its next wait, so a wait allocates nothing; a wait inside another's
     * condition gets a second one.
     */
    public fun driveUntil(deadlineNanos: Long, condition: BooleanSupplier): Boolean =
        driveUntil(deadlineNanos) { condition.asBoolean }

    /**
     * [driveUntil] with the caller's own progress: [progress] drives one round (it drives this domain itself, as
     * reading a [CompletionQueue] does, and dispatches what it read) and returns the work done; 0 makes the wait idle.
     * For a layer whose progress is more than the domain's; it calls [wakeWaiters] after a round that dispatched
     * something, for the threads parked here.
     */
    public fun driveUntil(deadlineNanos: Long, progress: IntSupplier, condition: BooleanSupplier): Boolean =
        driveUntil(deadlineNanos, { progress.asInt }, { condition.asBoolean })

    /** [driveUntil] for Kotlin callers: inlined, so a hot path's wait allocates no lambda either. */
    @JvmSynthetic
    public inline fun driveUntil(deadlineNanos: Long, condition: () -> Boolean): Boolean =
        driveUntil(deadlineNanos, { driveOnce() }, condition)

    /** [driveUntil] with the caller's own [progress], for Kotlin callers: inlined, allocation-free. */
    @JvmSynthetic
    public inline fun driveUntil(deadlineNanos: Long, progress: () -> Int, condition: () -> Boolean): Boolean {
        var idle: IdleStrategy? =
            null // taken at the first idle step: a wait that finds work at once pays nothing for it
        var idleSteps = 0
        try {
            while (!condition()) {
                val work = progress()
                if (deadlineNanos != NO_DEADLINE && System.nanoTime() - deadlineNanos >= 0) return condition()
                if (work > 0) {
                    if (idle != null) {
                        idle.reset()
                        idleSteps = 0
                    }
                } else {
                    val s = idle ?: takeIdleStrategy()
                    idle = s
                    if (++idleSteps < parkingAfter) {
                        s.idle()
                    } else {
                        // fi_trywait: arm, look once more, then park; a wake-up after the change unparks us.
                        armWait()
                        try {
                            if (condition()) return true
                            s.idle()
                        } finally {
                            disarmWait()
                        }
                    }
                }
            }
            return true
        } finally {
            if (idle != null) giveIdleStrategy()
        }
    }

    /**
     * The suspending form of [driveUntil] (no deadline: wrap it in `withTimeout`): drives progress until [condition]
     * holds, yielding to the coroutine's dispatcher while the policy would spin or yield and suspending with `delay`
     * once it would park (see [IdlePolicy]). Cancellable at every idle step.
     */
    public suspend fun awaitUntil(condition: () -> Boolean) {
        if (condition()) return
        val idle = CoroutineIdle(idlePolicy)
        while (true) {
            val work = driveOnce()
            if (condition()) return
            idle.idle(work)
        }
    }

    /**
     * Wakes the threads parked in [driveUntil] on this domain, so they look at their conditions again. [progress] calls
     * it after every round that found work; a layer that completes what its waiters wait for outside this domain's
     * progress (reading a completion queue and dispatching the entries itself) calls it after it has done so. One
     * volatile read when no thread is parked.
     */
    public fun wakeWaiters() {
        driveWaiters.signal()
    }

    /** Threads parked in [driveUntil]. */
    private val driveWaiters = WaitSet()

    /** Each waiting thread's strategies of [idlePolicy], kept between its waits. */
    private val waitIdle = ThreadLocal.withInitial { WaitIdlers(idlePolicy, info.domainName) }

    /** Idle steps in a row after which a [driveUntil] strategy parks: from then on the waiter arms itself first. */
    @PublishedApi
    internal val parkingAfter: Int =
        idlePolicy.let { if (it.kind == IdleKind.BACKOFF) it.maxSpins + it.maxYields + 1 else Int.MAX_VALUE }

    /**
     * Progress rounds a future's untimed join drives inline, spinning between them, before it counts as blocked on the
     * domain: the idle policy's spins (none under YIELD).
     */
    @get:JvmSynthetic
    internal val inlineSpins: Int = idlePolicy.let { if (it.kind == IdleKind.YIELD) 0 else it.maxSpins }

    /** One round of a wait's progress: the domain's, unless an engine drives it. */
    @PublishedApi internal fun driveOnce(): Int = if (hub.automatic) 0 else progress()

    /** This thread's idle strategy for a [driveUntil], reset for a new wait; [giveIdleStrategy] when the wait ends. */
    @PublishedApi internal fun takeIdleStrategy(): IdleStrategy = waitIdle.get().take()

    @PublishedApi
    internal fun giveIdleStrategy() {
        waitIdle.get().give()
    }

    /**
     * A thread's idle strategies, one per level of waits nested in a condition (a probe's look is a wait of its own):
     * an inner wait must not reset the outer one's back-off. A level's strategy is made the first time the thread
     * reaches it and kept.
     */
    private class WaitIdlers(private val policy: IdlePolicy, private val domain: String) {
        private var strategies = arrayOfNulls<IdleStrategy>(2)
        /** Per level, the JFR slow-wait event begun when the wait first idled (null unless a recording wants it). */
        private var slow = arrayOfNulls<SlowWaitEvent>(2)
        private var depth = 0

        fun take(): IdleStrategy {
            if (depth == strategies.size) {
                strategies = strategies.copyOf(depth * 2)
                slow = slow.copyOf(depth * 2)
            }
            val s = strategies[depth] ?: policy.newStrategy().also { strategies[depth] = it }
            slow[depth] = Telemetry.slowWaitBegin(domain)
            depth++
            s.reset()
            return s
        }

        fun give() {
            depth--
            val e = slow[depth] ?: return
            slow[depth] = null
            Telemetry.slowWaitEnd(e)
        }
    }

    @PublishedApi
    internal fun armWait() {
        driveWaiters.add(Thread.currentThread())
    }

    @PublishedApi
    internal fun disarmWait() {
        driveWaiters.remove(Thread.currentThread())
    }

    /** [ProgressModel.AUTO] while a [ProgressEngine] drives this domain, else [ProgressModel.MANUAL]. */
    public val progressModel: ProgressModel
        get() = if (hub.automatic) ProgressModel.AUTO else ProgressModel.MANUAL

    /**
     * Whether the per-message path runs without the domain's lock: opened with [Threading.DOMAIN] under manual
     * progress, and no other thread made to drive it yet ([shareAcrossThreads]).
     */
    public val isSolo: Boolean
        get() = lock.solo

    /**
     * Makes a [Threading.DOMAIN] domain take its lock on every call from now on, as a [Threading.SAFE] one does, so
     * that a thread started after this call may drive it ([progress]) beside the one that posts. Call it on the thread
     * that drives the domain, before starting the other. One-way; nothing changes on a domain that is not [solo]. Braid
     * does it itself before a thread of its own drives the domain (a [ProgressEngine], the driver of futures and
     * suspended calls, tcp's keepalive when nobody drives progress, a completion queue's publisher).
     */
    public fun shareAcrossThreads(): Unit = lock.share()

    /** The engine driving this domain, if any. */
    public val progressEngine: ProgressEngine?
        get() = hub.engine

    @JvmSynthetic internal fun enabled(t: Transport): Unit = synchronized(lock) { transports += t }

    @JvmSynthetic
    internal fun closed(ep: Endpoint, t: Transport?): Unit =
        synchronized(lock) {
            endpoints -= ep
            if (t != null) transports = transports.filter { it !== t }.toTypedArray()
        }

    override fun close() {
        if (closed) return
        val eps = synchronized(lock) { endpoints.toList() }
        eps.forEach { it.close() }
        synchronized(lock) { hub.domainClosedLocked() }
        hub.dispatchReady()
        closed = true
        if (owner != null) synchronized(lock) { owner.peers = owner.peers.filter { it !== this }.toTypedArray() }
        hub.engine?.close()
        // Native registrations go before the native domain they belong to.
        synchronized(lock) {
            for (mr in regions.values) mr.native?.close()
            regions.clear()
        }
        provider.close()
    }

    init {
        if (owner != null) synchronized(lock) { owner.peers += this }
        if (info.domainAttr.progress == ProgressModel.AUTO) ProgressEngine.thread(this)
    }

    private fun checkOpen() {
        if (closed) throw FabricException(Errno.EOPBADSTATE, "domain '$name' is closed")
    }

    public companion object {
        /** A [driveUntil] deadline that never passes. */
        public const val NO_DEADLINE: Long = Long.MAX_VALUE

        /** The [driveUntil] deadline [timeoutMillis] from now; negative: [NO_DEADLINE]. */
        @JvmStatic
        public fun deadlineAfter(timeoutMillis: Long): Long {
            if (timeoutMillis < 0) return NO_DEADLINE
            val now = System.nanoTime()
            val deadline = now + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
            return if (deadline < now) NO_DEADLINE else deadline // so long a time-out that it overflows: none
        }

        private val log: System.Logger = System.getLogger("braid.core")

        /** What a shared AV's name may be: it names a file. */
        private val SHARED_AV_NAME = Regex("[A-Za-z0-9._-]{1,100}")

        /** What a device region's [MemoryRegion.buffer] is: nothing the rails can address. */
        private val EMPTY = UnsafeBuffer(0L, 0)
    }
}
