package braid.core

import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.resume
import kotlinx.coroutines.CancellableContinuation
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Something the progress engine wakes after it has released the domain lock: a suspended operation, a future, a
 * coroutine waiting on a queue. Linked intrusively into the domain's ready list ([ProgressHub]), so queueing one
 * allocates nothing.
 */
internal abstract class Ready {
    @JvmField var nextReady: Ready? = null

    /** Runs outside the domain lock: may run the waiter's code (a future's dependents). */
    abstract fun fire()
}

/**
 * One data operation started through the `suspend`, future or blocking forms. The operation is its own context: when a
 * provider writes a completion or an error completion whose context is a [PendingOp], the [CompletionQueue] hands it
 * here instead of queueing it, so an application reading the queue never sees it and the raw path is untouched.
 *
 * State, guarded by the domain lock (the volatile [state] may be read without it): NEW → PENDING (posted, or queued for
 * a retry after `-EAGAIN`) → DONE (result or error recorded; withdrawn operations are DONE with [Errno.ECANCELED]).
 *
 * At most one waiter form is used per operation: a coroutine ([cont]), a [future], or a parked [thread]. A coroutine is
 * resumed exactly once, through the ready list. The operation is also the coroutine's cancellation handler, so a
 * suspended operation costs this object, its continuation and the caller's frames.
 *
 * Every form takes its operation from the domain's pool ([ProgressHub.obtainLocked]). The `suspend` and blocking forms
 * give it back once the outcome is handed out ([ProgressHub.recycleLocked]); a future born complete (an operation done
 * inline, such as an inject) gives it back at once; a pending future's operation waits, once DONE, in the pool's limbo
 * until [fire] has handed its outcome to the future, which from then on keeps it alone ([OpFuture]).
 */
internal class PendingOp(@JvmField val hub: ProgressHub) : Ready(), (Throwable?) -> Unit, Awaited {
    lateinit var ep: Endpoint
    @JvmField var kind: Int = SEND
    @JvmField var buffer: DirectBuffer = NO_BUFFER
    @JvmField var offset: Int = 0
    @JvmField var length: Int = 0
    @JvmField var addr: Long = 0
    @JvmField var tag: Long = 0
    @JvmField var ignore: Long = 0
    /** A device-memory operation's region (libfabric's `desc`) and offset in it; null for a buffer operation. */
    @JvmField var region: MemoryRegion? = null
    @JvmField var regionOffset: Long = 0
    /** A device-memory atomic's compare and result regions and their offsets (null: that form has none). */
    @JvmField var compareRegion: MemoryRegion? = null
    @JvmField var compareRegionOffset: Long = 0
    @JvmField var fetchRegion: MemoryRegion? = null
    @JvmField var fetchRegionOffset: Long = 0

    // ## Send-with-data, RMA and atomics ##
    /** Remote CQ data of a send-with-data. */
    @JvmField var data: Long = 0
    @JvmField var remoteOffset: Long = 0
    @JvmField var key: Long = 0
    @JvmField var atomicType: AtomicDatatype = AtomicDatatype.INT64
    @JvmField var atomicOp: AtomicOp = AtomicOp.SUM
    @JvmField var compare: DirectBuffer = NO_BUFFER
    @JvmField var compareOffset: Int = 0
    @JvmField var fetch: MutableDirectBuffer = NO_BUFFER
    @JvmField var fetchOffset: Int = 0

    /** Views of a caller's [java.nio.ByteBuffer]s, made once per operation and kept by the pool. */
    private var views: Array<UnsafeBuffer>? = null

    /** Whether this operation is counted in [ProgressHub.asyncWaiters] (a future not yet complete). */
    @JvmField var asyncCounted: Boolean = false

    constructor(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
    ) : this(ep.domain.hub) {
        set(ep, kind, buffer, offset, length, addr, tag, ignore)
    }

    /**
     * Written under the lock with release stores ([STATE]`.lazySet`), read without it: a reader that sees DONE sees the
     * outcome written before it. No write needs a full fence: a blocked thread arms itself under the lock ([arm]).
     */
    @Volatile @JvmField var state: Int = NEW

    /**
     * Where the completion goes: the caller's own (a suspend form's `into`), [NO_RESULT] for a suspend inject (nobody
     * reads it), or null until [complete] allocates one.
     */
    @JvmField var result: Completion? = null
    @JvmField var err: Int = 0
    @JvmField var errMessage: String = ""

    /** The outcome of a cancellation request: UNDECIDED, WITHDRAWN or KEPT. */
    @JvmField var decision: Int = UNDECIDED

    // ## Waiters ##
    @JvmField var cont: CancellableContinuation<Unit>? = null
    /** A continuation to resume from the ready list; volatile: the pool takes the op back only once it is null. */
    @Volatile @JvmField var toResume: CancellableContinuation<Unit>? = null
    /**
     * The future this operation completes; cleared, with a release store, once [fire] has settled it: from then on the
     * pool may take the operation back ([ProgressHub.obtainLocked]), and the future no longer looks at it.
     */
    @Volatile @JvmField var future: OpFuture? = null
    /** A thread blocked in a blocking form, armed to be unparked by [finish]; written and read under the lock. */
    @Volatile @JvmField var thread: Thread? = null
    /** Whether this operation's caller holds the domain's driver role (manual progress, inline). */
    @JvmField var driving: Boolean = false

    // ## Links (the domain's pending list and retry queue, or the pool) ##
    @JvmField var prev: PendingOp? = null
    @JvmField var next: PendingOp? = null
    @JvmField var registered: Boolean = false
    @JvmField var queuedForRetry: Boolean = false

    /** Fills in a fresh or recycled operation ([result] is left as the caller set it). */
    fun set(
        ep: Endpoint,
        kind: Int,
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        addr: Long,
        tag: Long,
        ignore: Long,
    ) {
        this.ep = ep
        this.kind = kind
        this.buffer = buffer
        this.offset = offset
        this.length = length
        this.addr = addr
        this.tag = tag
        this.ignore = ignore
        this.region = null
        this.compareRegion = null
        this.fetchRegion = null
    }

    /**
     * Whether the pool may take this operation back: it is DONE, its outcome handed out, and nothing refers to it any
     * more — no waiter, no list (a coroutine's op is on the ready list only while [toResume] is set), no provider (an
     * operation failed by its endpoint's close may still be known to the closed rail). Caller holds the lock.
     */
    val reusable: Boolean
        get() =
            state == DONE &&
                future == null &&
                thread == null &&
                toResume == null &&
                cont == null &&
                !registered &&
                !queuedForRetry &&
                !driving &&
                err != Errno.ESHUTDOWN

    /** Sets the RMA target: [key]'s region at [remoteOffset] of the peer. */
    fun rma(remoteOffset: Long, key: Long): PendingOp {
        this.remoteOffset = remoteOffset
        this.key = key
        return this
    }

    /** Sets an atomic's type and operation, and the compare and fetch buffers its form uses. */
    fun atomic(
        type: AtomicDatatype,
        op: AtomicOp,
        compare: DirectBuffer?,
        compareOffset: Int,
        fetch: MutableDirectBuffer?,
        fetchOffset: Int,
    ): PendingOp {
        atomicType = type
        atomicOp = op
        if (compare != null) {
            this.compare = compare
            this.compareOffset = compareOffset
        }
        if (fetch != null) {
            this.fetch = fetch
            this.fetchOffset = fetchOffset
        }
        return this
    }

    /** A view of [b]'s position..limit, in slot [i] of this operation's views (allocated once). */
    fun view(i: Int, b: java.nio.ByteBuffer): UnsafeBuffer {
        val vs = views ?: Array(3) { UnsafeBuffer(0L, 0) }.also { views = it }
        val v = vs[i]
        v.wrap(b, b.position(), b.remaining())
        return v
    }

    /** Clears everything but [hub], for the pool; drops the reference to the caller's buffer. */
    fun clear() {
        kind = SEND
        buffer = NO_BUFFER
        offset = 0
        length = 0
        addr = 0
        tag = 0
        ignore = 0
        data = 0
        remoteOffset = 0
        key = 0
        compare = NO_BUFFER
        compareOffset = 0
        fetch = NO_BUFFER
        fetchOffset = 0
        region = null
        compareRegion = null
        fetchRegion = null
        views?.let { vs -> for (v in vs) v.wrap(0L, 0) }
        STATE.lazySet(this, NEW)
        result = null
        err = 0
        errMessage = ""
        decision = UNDECIDED
        prev = null
        next = null
    }

    val isDone: Boolean
        get() = state == DONE

    val isReceive: Boolean
        get() = kind == RECV || kind == TRECV

    val isInject: Boolean
        get() = kind == INJECT || kind == TINJECT

    /**
     * Starts the operation on the endpoint; 0, `-EAGAIN` or another negated errno. Caller holds the lock: the message
     * kinds post through the endpoint's locked entries, without entering the lock again.
     */
    fun post(): Int =
        region?.let { ep.postRegion(this, it) }
            ?: when (kind) {
                SEND -> ep.sendLocked(buffer, offset, length, addr, 0, 0, OpFlags.COMPLETION, this)
                TSEND -> ep.sendLocked(buffer, offset, length, addr, tag, 0, OpFlags.TAGGED or OpFlags.COMPLETION, this)
                RECV ->
                    ep.recvLocked(
                        false,
                        buffer as MutableDirectBuffer,
                        offset,
                        length,
                        addr,
                        0,
                        -1L,
                        OpFlags.COMPLETION,
                        this,
                    )
                TRECV ->
                    ep.recvLocked(
                        true,
                        buffer as MutableDirectBuffer,
                        offset,
                        length,
                        addr,
                        tag,
                        ignore,
                        OpFlags.COMPLETION,
                        this,
                    )
                INJECT -> ep.sendLocked(buffer, offset, length, addr, 0, 0, OpFlags.INJECT, null)
                TINJECT -> ep.sendLocked(buffer, offset, length, addr, tag, 0, OpFlags.TAGGED or OpFlags.INJECT, null)
                SENDDATA ->
                    ep.sendLocked(
                        buffer,
                        offset,
                        length,
                        addr,
                        0,
                        data,
                        OpFlags.REMOTE_CQ_DATA or OpFlags.COMPLETION,
                        this,
                    )
                TSENDDATA ->
                    ep.sendLocked(
                        buffer,
                        offset,
                        length,
                        addr,
                        tag,
                        data,
                        OpFlags.TAGGED or OpFlags.REMOTE_CQ_DATA or OpFlags.COMPLETION,
                        this,
                    )
                WRITE -> ep.tryWrite(buffer, offset, length, addr, remoteOffset, key, this, OpFlags.COMPLETION)
                READ ->
                    ep.tryRead(
                        buffer as MutableDirectBuffer,
                        offset,
                        length,
                        addr,
                        remoteOffset,
                        key,
                        this,
                        OpFlags.COMPLETION,
                    )
                ATOMIC ->
                    ep.tryAtomic(
                        buffer,
                        offset,
                        length,
                        addr,
                        remoteOffset,
                        key,
                        atomicType,
                        atomicOp,
                        this,
                        OpFlags.COMPLETION,
                    )
                FETCH_ATOMIC ->
                    ep.tryFetchAtomic(
                        buffer,
                        offset,
                        length,
                        fetch,
                        fetchOffset,
                        addr,
                        remoteOffset,
                        key,
                        atomicType,
                        atomicOp,
                        this,
                        OpFlags.COMPLETION,
                    )
                COMPARE_ATOMIC ->
                    ep.tryCompareAtomic(
                        buffer,
                        offset,
                        length,
                        compare,
                        compareOffset,
                        fetch,
                        fetchOffset,
                        addr,
                        remoteOffset,
                        key,
                        atomicType,
                        atomicOp,
                        this,
                        OpFlags.COMPLETION,
                    )
                else -> error("unknown operation kind $kind")
            }

    // ## Outcomes (caller holds the domain lock) ##

    /** A successful completion written by a provider. */
    fun complete(flags: Long, len: Long, data: Long, tag: Long, source: Long) {
        if (state == DONE) return
        record(flags, len, data, tag, source)
        finish()
    }

    /** Writes a successful outcome into [result] (allocated here if the caller gave none). */
    private fun record(flags: Long, len: Long, data: Long, tag: Long, source: Long) {
        var r = result
        if (r == null) {
            r = Completion()
            result = r
        }
        if (r !== NO_RESULT) {
            r.context = null
            r.flags = flags
            r.len = len
            r.data = data
            r.tag = tag
            r.source = source
        }
    }

    // ## A blocked thread's wait ([Waiting.block]) ##

    override val awaitDone: Boolean
        get() = state == DONE

    /** Under the lock, so [finish], under the lock too, either sees the thread or happened before this look. */
    override fun arm(t: Thread): Boolean =
        synchronized(ep.domain.lock) {
            if (state == DONE) return false
            thread = t
            true
        }

    override fun disarm() {
        thread = null
    }

    /** An inject accepted by the rail: there is no completion, so report one of our own. */
    fun completeInject() {
        complete(injectFlags(), length.toLong(), 0, tag, FiAddr.NOTAVAIL)
    }

    /**
     * [completeInject] for an inject the rail took inside [ProgressHub.submitLocked], on the starting thread. Nothing
     * can wait on the operation yet (a future, a coroutine or a blocked thread attaches only after the start returns,
     * and it is queued nowhere), so DONE takes a release store rather than [finish]'s full fence, which exists for a
     * thread that armed itself to be unparked.
     */
    fun completeInjectStarting() {
        record(injectFlags(), length.toLong(), 0, tag, FiAddr.NOTAVAIL)
        STATE.lazySet(this, DONE)
        hub.unregister(this)
    }

    private fun injectFlags(): Long = OpFlags.SEND or (if (kind == TINJECT) OpFlags.TAGGED else OpFlags.MSG)

    /**
     * An error completion, or a failure of our own (close, a retry that failed). Only the errno and the message matter:
     * every waiting form reports a failure as a [FabricException].
     */
    fun fail(err: Int, message: String) {
        if (state == DONE) return
        this.err = err
        errMessage = message
        finish()
    }

    private fun finish() {
        STATE.lazySet(this, DONE)
        if (asyncCounted) {
            asyncCounted = false
            hub.asyncWaiterDoneLocked()
        }
        if (queuedForRetry) hub.dropRetry(this)
        hub.unregister(this)
        val c = cont
        if (c != null) {
            cont = null
            hub.waiterDetached()
            toResume = c
            hub.pushReady(this)
        } else if (future != null) {
            hub.pushReady(this)
            hub.limboLocked(this)
        }
        // A blocked thread arms itself under the lock ([arm]): it is either seen here or sees DONE (fi_trywait).
        thread?.let { LockSupport.unpark(it) }
    }

    /**
     * The cancellation handler of the suspended coroutine (it runs in the cancelling thread, at once): detaches the
     * cancelled continuation, then decides the outcome.
     */
    override fun invoke(cause: Throwable?) {
        synchronized(ep.domain.lock) {
            val c = cont
            if (c != null && c.isCancelled) {
                cont = null
                hub.waiterDetached()
            }
            decideCancel()
        }
    }

    override fun fire() {
        val c = toResume
        if (c != null) {
            // Nothing of this op is touched after the resume: the resumed caller recycles it.
            TO_RESUME.lazySet(this, null)
            c.resume(Unit)
            return
        }
        val f = future ?: return
        val outcome: Any =
            when {
                decision == WITHDRAWN -> WITHDRAWN_OUTCOME
                err != 0 -> exception()
                else -> result!!
            }
        f.settle(outcome)
        // The future is settled (a canceller that finds it no longer here finds it done), and nothing of this op is
        // touched after this store: the pool may hand it out again ([ProgressHub.obtainLocked]).
        FUTURE.lazySet(this, null)
    }

    /**
     * Decides, once and under the domain lock, what a cancellation request does: true if the operation was withdrawn
     * before it took effect (a receive still posted, or any operation still waiting to be retried after `-EAGAIN`),
     * false if it is kept and will deliver its own outcome (it completed, a receive already matched a message, or a
     * send the rail has taken).
     */
    fun decideCancel(): Boolean =
        synchronized(ep.domain.lock) {
            when (decision) {
                WITHDRAWN -> return true
                KEPT -> return false
            }
            if (state == DONE) {
                decision = KEPT
            } else if (queuedForRetry) {
                decision = WITHDRAWN
                fail(Errno.ECANCELED, "cancelled before the rail accepted it")
            } else if (isReceive && ep.cancel(this) == 0) {
                // Endpoint.cancel wrote the ECANCELED completion, which came back here: we are DONE.
                decision = WITHDRAWN
            } else {
                decision = KEPT
            }
            decision == WITHDRAWN
        }

    /** The completion, or the error as a [FabricException]; only once DONE. */
    fun resultOrThrow(): Completion {
        if (err != 0) throw exception()
        return result!!
    }

    fun exception(): FabricException = FabricException(err, "${describe()}: $errMessage")

    override fun describe(): String {
        val what = NAMES[kind]
        if (kind >= WRITE) {
            val size = if (kind >= ATOMIC) "$length $atomicType element(s), $atomicOp" else "$length bytes"
            val dir = if (kind == READ) "from" else "to"
            return "$what of $size $dir $addr at offset $remoteOffset of key $key on $ep"
        }
        val peer = if (isReceive) (if (addr == FiAddr.UNSPEC) "from any source" else "from $addr") else "to $addr"
        val tagged =
            if (kind == TSEND || kind == TRECV || kind == TINJECT || kind == TSENDDATA)
                ", tag 0x${java.lang.Long.toHexString(tag)}"
            else ""
        val ign = if (kind == TRECV && ignore != 0L) " ignore 0x${java.lang.Long.toHexString(ignore)}" else ""
        return "$what of $length bytes $peer$tagged$ign on $ep"
    }

    override fun toString(): String = "PendingOp(${describe()}, state=$state)"

    companion object {
        const val SEND = 0
        const val TSEND = 1
        const val RECV = 2
        const val TRECV = 3
        const val INJECT = 4
        const val TINJECT = 5
        const val SENDDATA = 6
        const val TSENDDATA = 7
        /** RMA and atomic kinds follow; [describe] relies on WRITE being the first. */
        const val WRITE = 8
        const val READ = 9
        /** [length] counts elements for the atomic kinds. */
        const val ATOMIC = 10
        const val FETCH_ATOMIC = 11
        const val COMPARE_ATOMIC = 12
        private val NAMES =
            arrayOf(
                "send",
                "tsend",
                "recv",
                "trecv",
                "inject",
                "tinject",
                "senddata",
                "tsenddata",
                "RMA write",
                "RMA read",
                "atomic",
                "fetching atomic",
                "compare atomic",
            )

        const val NEW = 0
        const val PENDING = 1
        const val DONE = 2

        const val UNDECIDED = 0
        const val WITHDRAWN = 1
        const val KEPT = 2

        @JvmField
        val STATE: AtomicIntegerFieldUpdater<PendingOp> =
            AtomicIntegerFieldUpdater.newUpdater(PendingOp::class.java, "state")

        @JvmField
        val FUTURE: AtomicReferenceFieldUpdater<PendingOp, OpFuture?> =
            AtomicReferenceFieldUpdater.newUpdater(PendingOp::class.java, OpFuture::class.java, "future")

        private val TO_RESUME: AtomicReferenceFieldUpdater<PendingOp, CancellableContinuation<*>?> =
            AtomicReferenceFieldUpdater.newUpdater(
                PendingOp::class.java,
                CancellableContinuation::class.java,
                "toResume",
            )

        /** The outcome [fire] hands a future whose operation was withdrawn: it is cancelled. */
        @JvmField val WITHDRAWN_OUTCOME: Any = Any()

        /** The [result] of a suspend inject: written by no one, read by no one. */
        @JvmField val NO_RESULT: Completion = Completion()

        private val NO_BUFFER: UnsafeBuffer = UnsafeBuffer(ByteArray(0))
    }
}

/**
 * The future of a [PendingOp]: a plain `CompletableFuture` to its callers. Under manual progress a blocking [get] or
 * [join] drives progress while it waits, as a blocking read does; [cancel] follows the operation's cancellation rule
 * and returns false when the operation is kept.
 *
 * It waits on its own state, never on the operation's: once [PendingOp.fire] has handed it its outcome ([settle]) the
 * operation goes back to the domain's pool and may carry someone else's message, so a joiner or canceller that looked a
 * moment earlier must not follow it there. The operation is this future's only while [PendingOp.future] is this future;
 * [cancel] and [describe] look at it only under the domain lock, and only then.
 */
internal class OpFuture(@JvmField internal val op: PendingOp) : CompletableFuture<Completion>(), Awaited {
    private val domain: Domain = op.ep.domain

    /** A thread blocked in [get] or [join], armed to be unparked by [settle]. */
    @Volatile private var waiter: Thread? = null

    init {
        // Made under the lock, whose release publishes it: no full fence.
        PendingOp.FUTURE.lazySet(op, this)
    }

    /** Completes this future with the outcome [PendingOp.fire] read; then wakes an armed joiner. */
    fun settle(outcome: Any) {
        when (outcome) {
            PendingOp.WITHDRAWN_OUTCOME -> super.cancel(false)
            is FabricException -> completeExceptionally(outcome)
            else -> complete(outcome as Completion)
        }
        // The completion's compare-and-set above, the volatile read here: a joiner that armed before its last look
        // at isDone is seen here, or saw the future done.
        waiter?.let { LockSupport.unpark(it) }
    }

    // ## A joiner's wait ([Waiting.block]) ##

    override val awaitDone: Boolean
        get() = isDone

    override fun arm(t: Thread): Boolean {
        waiter = t
        return !isDone
    }

    override fun disarm() {
        waiter = null
    }

    /** The operation's description while it is still this future's; a completed future's outcome says the rest. */
    override fun describe(): String =
        synchronized(domain.lock) { if (op.future === this) op.describe() else "an operation that has completed" }

    /**
     * Waits until done or [nanos] pass. Under manual progress the first looks drive progress rounds, as a raw poll
     * would (one for a timed wait, the idle policy's spins for an untimed one), before this thread counts as blocked on
     * the domain (two atomic updates): a future whose completion has arrived, or arrives within them, is joined at a
     * raw loop's price.
     */
    private fun await(nanos: Long): Boolean {
        if (!domain.hub.automatic) {
            domain.hub.noteJoin()
            // An untimed wait drives the idle policy's spins inline first, as a raw poll loop would: a reply that
            // comes within them is joined without the two atomic updates of a blocked thread (1.5 M of them in
            // 200,000 ping-pong round trips). The lingering driver keeps off meanwhile, as the join is noted.
            var spins = if (nanos == Long.MAX_VALUE) domain.inlineSpins else 0
            while (true) {
                domain.progress()
                if (isDone) return true
                if (--spins < 0) break
                Thread.onSpinWait()
            }
        }
        return Waiting.block(this, domain, nanos, null)
    }

    override fun get(): Completion {
        if (!isDone) await(Long.MAX_VALUE)
        return super.get()
    }

    override fun get(timeout: Long, unit: java.util.concurrent.TimeUnit): Completion {
        if (!isDone && !await(unit.toNanos(timeout))) {
            throw java.util.concurrent.TimeoutException("${describe()}: not complete within $timeout $unit")
        }
        return super.get() // done: settled by whoever handed the completion out
    }

    override fun join(): Completion {
        if (!isDone) await(Long.MAX_VALUE)
        return super.join()
    }

    override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
        if (isDone) return isCancelled
        // Decided on the operation while it is still this future's (under the lock the pool cannot hand it out);
        // once it is not, this future was settled before it let the operation go.
        val withdrawn = synchronized(domain.lock) { if (op.future === this) op.decideCancel() else return isCancelled }
        if (!withdrawn) return false
        domain.hub.dispatchReady()
        return super.cancel(mayInterruptIfRunning) || isCancelled
    }

    override fun toString(): String = "OpFuture(${if (isDone) "done" else describe()})"
}
