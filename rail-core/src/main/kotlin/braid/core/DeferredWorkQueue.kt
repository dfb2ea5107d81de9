package braid.core

/**
 * A domain's deferred work queue (fi_trigger(3): `FI_QUEUE_WORK`, `FI_CANCEL_WORK`, `FI_FLUSH_WORK`): [DeferredWork]
 * requests waiting for their triggering counters.
 *
 * Order and cost. Each counter keeps its waiting requests in a binary heap ordered by threshold, then by submission;
 * when the counter moves, requests are taken from the top while their threshold is met, so they fire in threshold
 * order, and in submission order for equal thresholds, however far the counter jumped. Firing examines one request more
 * than it fires; queueing and cancelling cost O(log n) in that counter's requests; counters nobody waits on cost one
 * volatile read per update.
 *
 * Where requests fire. From wherever the counter reaches the threshold — an application's [Counter.add], a completion,
 * another request — under the domain lock. Firing is one loop over the counters that moved, never a recursion, so a
 * chain of any length (A's completion counter triggers B, whose completion counter triggers C, …) runs in constant
 * stack. Counters moved by completions inside a rail's duty cycle fire once the cycle is over, so no operation is
 * issued into a rail from inside its own callbacks. An operation the rail has no room for (`-EAGAIN`) is issued again
 * by progress, in order.
 *
 * Failures. A request whose operation cannot be issued or fails bumps the error side of its completion counter and, if
 * it asked for completions, writes an error completion; its [DeferredWork.status] is FAILED. What a rail cannot carry
 * at all is refused when queued.
 */
public class DeferredWorkQueue
internal constructor(private val domain: Domain, @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden()) {
    private val lock: Any
        get() = domain.lock

    private var nextSeq = 0L
    private val dirty = ArrayDeque<Counter>()
    private val armedCounters = ArrayList<Counter>()
    private val retries = ArrayDeque<DeferredWork>()
    private var firing = false
    private var flightHead: DeferredWork? = null

    /** Rail duty cycles under way (they defer firing to their end). Guarded by the lock. */
    @get:JvmSynthetic @set:JvmSynthetic internal var holds = 0

    /** Requests waiting for their counters. */
    public var queued: Int = 0
        private set

    /** Requests fired whose operations have not completed. */
    public var inFlight: Int = 0
        private set

    /** Waiting requests looked at to decide whether to fire (a cost measure for tests and benchmarks). */
    public var examined: Long = 0
        private set

    /** Whether anything waits to be fired or retried; read under the lock by [Domain.progressLocked]. */
    @get:JvmSynthetic
    internal val pending: Boolean
        get() = dirty.isNotEmpty() || retries.isNotEmpty()

    /**
     * Queues [work] (`FI_QUEUE_WORK`); if its threshold is already met it fires now. Throws [FabricException]: ENOSYS
     * for an operation the endpoint's rail cannot carry, EOPNOTSUPP or EMSGSIZE for an atomic it does not take, EINVAL
     * for an object of another domain, a buffer range outside its buffer, a negative threshold or a counter operation
     * with a completion counter, EBUSY if [work] is queued or in flight already.
     */
    public fun queue(work: DeferredWork): Unit =
        synchronized(lock) {
            check(work)
            admit(work)
            if (holds == 0 && !firing) runLoop()
        }

    /**
     * Queues `works[from until to]` as one batch (Braid's extension; fi_trigger(3) queues one request per call): one
     * acquisition of the domain lock for the whole batch instead of one per request, each request checked as [queue]
     * checks it, all of them checked before any is queued (a refused request leaves the batch unqueued and throws what
     * [queue] throws). The requests enter the queue in array order, so equal thresholds fire in that order; those whose
     * threshold is already met fire once the batch is in, on this thread. How a schedule of deferred work (a
     * collective) is re-armed per call.
     */
    @JvmOverloads
    public fun queueAll(works: Array<out DeferredWork>, from: Int = 0, to: Int = works.size): Unit =
        synchronized(lock) {
            if (from < 0 || to > works.size || from > to)
                throw FabricException.invalid(
                    "deferred work batch [$from, $to) is outside the array of ${works.size} requests"
                )
            for (i in from until to) check(works[i])
            // The same request twice in one batch would be queued twice: refused as queue() refuses it the second time.
            // (heapIndex is -1 for every request not in a heap; it marks the batch for this one pass.)
            var twice: DeferredWork? = null
            for (i in from until to) {
                val w = works[i]
                if (w.heapIndex == BATCHED) {
                    twice = w
                    break
                }
                w.heapIndex = BATCHED
            }
            for (i in from until to) works[i].heapIndex = -1
            if (twice != null)
                throw FabricException(
                    Errno.EBUSY,
                    "${what(twice)} is in the batch twice; a request is queued once until it has completed, failed or been cancelled",
                )
            for (i in from until to) admit(works[i])
            if (holds == 0 && !firing) runLoop()
        }

    /**
     * Takes [work] off the queue before it fires (`FI_CANCEL_WORK`): true, and it is CANCELLED; false if it was not
     * waiting.
     */
    public fun cancel(work: DeferredWork): Boolean =
        synchronized(lock) {
            if (work.status != WorkStatus.QUEUED) return false
            if (work.native) domain.provider.cancelWork(work) // throws, leaving it queued, where the provider cannot
            val heap = work.triggeringCounter.triggers!!
            heap.remove(work)
            queued--
            if (heap.size == 0) work.triggeringCounter.armed = false
            cancelled(work)
            true
        }

    /** Cancels every request waiting on [counter] (`FI_FLUSH_WORK` for one counter); returns them in firing order. */
    public fun flush(counter: Counter): List<DeferredWork> =
        synchronized(lock) {
            cancelNative(counter)
            val out = drain(counter)
            out.sortWith(FIRING_ORDER)
            out
        }

    /** Cancels every waiting request of the domain (`FI_FLUSH_WORK`); returns them in submission order. */
    public fun flushAll(): List<DeferredWork> =
        synchronized(lock) {
            for (c in armedCounters) cancelNative(c)
            val out = ArrayList<DeferredWork>(queued)
            for (c in armedCounters) {
                out += drain(c)
                c.listed = false
            }
            armedCounters.clear()
            out.sortBy { it.seq }
            out
        }

    // ## Queueing and firing (under the lock) ##

    /** Throws what [queue] documents; builds no message unless it throws (re-arming allocates nothing). */
    private fun check(work: DeferredWork) {
        if (work.status == WorkStatus.QUEUED || work.status == WorkStatus.FIRED) {
            throw FabricException(
                Errno.EBUSY,
                "${what(work)} is ${work.status}; queue it again once it has completed, failed or been cancelled",
            )
        }
        if (work.threshold < 0) throw FabricException.invalid("${what(work)}: threshold ${work.threshold} must be ≥ 0")
        foreign(work.triggeringCounter.domain, "triggering counter", work)
        work.completionCounter?.let { foreign(it.domain, "completion counter", work) }
        val op = work.op
        if (op.kind == DeferredOp.Kind.LOCAL) {
            if (work.flags and OpFlags.COMPLETION != 0L)
                throw FabricException.invalid(
                    "${what(work)}: a local step writes no completion; drop OpFlags.COMPLETION"
                )
        } else if (op.kind == DeferredOp.Kind.COUNTER) {
            if (work.completionCounter != null)
                throw FabricException.invalid(
                    "${what(work)}: a counter operation takes no completion counter (fi_trigger(3)); pass null"
                )
            if (work.flags and OpFlags.COMPLETION != 0L)
                throw FabricException.invalid(
                    "${what(work)}: a counter operation writes no completion; drop OpFlags.COMPLETION"
                )
            foreign(
                (op as? DeferredOp.CounterSet)?.counter?.domain ?: (op as DeferredOp.CounterAdd).counter.domain,
                "counter",
                work,
            )
        } else {
            foreign(op.endpoint!!.domain, "endpoint", work)
        }
        op.check()
    }

    private fun what(work: DeferredWork): String = "deferred work (${work.op.describe()})"

    private fun foreign(d: Domain, role: String, work: DeferredWork) {
        if (d !== domain)
            throw FabricException.invalid(
                "${what(work)}: its $role belongs to domain '${d.name}', not '${domain.name}'; deferred work stays within one domain"
            )
    }

    /**
     * Offers [work] to the provider's native queue, then puts it in Braid's heap either way: a native request is issued
     * by the provider, but waits, is counted, cancelled and flushed here like any other.
     */
    private fun admit(work: DeferredWork) {
        val native = domain.provider.queueWork(work)
        enqueue(work)
        work.native = native
    }

    /**
     * Takes [c]'s natively held requests off the provider's queue before a flush cancels them; the provider throws
     * where it cannot, and nothing is cancelled then.
     */
    private fun cancelNative(c: Counter) {
        val heap = c.triggers ?: return
        for (i in 0 until heap.size) {
            val w = heap[i]
            if (w.native) domain.provider.cancelWork(w)
        }
    }

    /** Puts [work] in its counter's heap; marks the counter to be looked at if the threshold is met. */
    @JvmSynthetic
    internal fun enqueue(work: DeferredWork) {
        work.native = false
        work.status = WorkStatus.QUEUED
        work.error = 0
        work.errorMessage = ""
        work.seq = nextSeq++
        val c = work.triggeringCounter
        val heap = c.triggers ?: TriggerHeap().also { c.triggers = it }
        if (!c.listed) {
            c.listed = true
            armedCounters += c
        }
        heap.add(work)
        queued++
        // Armed before the look at the count: an add() racing with us either sees armed or is seen here.
        c.armed = true
        if (work.threshold <= c.total) markDirty(c)
    }

    /** [c] moved (any thread). */
    @JvmSynthetic
    internal fun counterChanged(c: Counter): Unit =
        synchronized(lock) {
            if ((c.triggers?.size ?: 0) == 0) return
            markDirty(c)
            if (holds == 0 && !firing) runLoop()
        }

    private fun markDirty(c: Counter) {
        if (c.dirty) return
        c.dirty = true
        dirty.addLast(c)
    }

    /** Fires what is due, counter after counter, until nothing moved is left. */
    private fun runLoop() {
        firing = true
        try {
            while (true) {
                val c = dirty.removeFirstOrNull() ?: break
                c.dirty = false
                fireDue(c)
            }
        } finally {
            firing = false
        }
    }

    private fun fireDue(c: Counter) {
        val heap = c.triggers ?: return
        while (heap.size > 0) {
            val top = heap.peek()
            examined++
            if (top.threshold > c.total) break
            heap.poll()
            queued--
            fire(top)
        }
        if (heap.size == 0) c.armed = false
    }

    private fun fire(w: DeferredWork) {
        w.status = WorkStatus.FIRED
        addFlight(w)
        if (w.native) return // the provider issues it, from its native counter, and reports how it went
        if (issue(w)) {
            w.retrying = true
            retries.addLast(w)
        }
    }

    /** Posts [w]'s operation; true if the rail had no room (`-EAGAIN`) and it must be issued again. */
    private fun issue(w: DeferredWork): Boolean {
        val rc = w.op.post(w, w.flags)
        if (w.status != WorkStatus.FIRED) return false // completed or failed inside the post
        when {
            rc == DeferredOp.DONE -> {
                removeFlight(w)
                w.status = WorkStatus.COMPLETED
                w.completionCounter?.add(1)
            }
            rc == -Errno.EAGAIN -> return true
            rc != 0 -> failed(w, -rc, "${w.op.describe()}: the rail refused it when it fired: ${Errno.name(rc)}")
        }
        return false
    }

    /**
     * After a duty cycle ([holds] back to 0): fires what completions made due, and issues again what the rails had no
     * room for. Returns the work done.
     */
    @JvmSynthetic
    internal fun runPending(): Int {
        if (holds != 0 || firing) return 0
        var n = 0
        if (retries.isNotEmpty()) {
            firing = true
            try {
                while (retries.isNotEmpty()) {
                    val w = retries.removeFirst()
                    w.retrying = false
                    if (w.status != WorkStatus.FIRED) continue
                    if (issue(w)) {
                        w.retrying = true
                        retries.addFirst(w)
                        break
                    }
                    n++
                }
            } finally {
                firing = false
            }
        }
        if (dirty.isNotEmpty()) {
            n++
            runLoop()
        }
        return n
    }

    /** Runs [block] (a rail's duty cycle) with firing deferred to its end. */
    @JvmSynthetic
    internal inline fun <T> holding(block: () -> T): T {
        holds++
        try {
            return block()
        } finally {
            holds--
            if (holds == 0 && pending) runPending()
        }
    }

    // ## Completions of fired requests (under the lock; called by Endpoint) ##

    @JvmSynthetic
    internal fun succeeded(
        w: DeferredWork,
        kind: DeferredOp.Kind,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        source: Long,
    ) {
        if (w.status != WorkStatus.FIRED) return
        removeFlight(w)
        w.status = WorkStatus.COMPLETED
        val ep = w.op.endpoint!!
        if (w.triggered) {
            when (kind) {
                DeferredOp.Kind.TX -> ep.sink.txComplete(w.context, flags, len, tag)
                DeferredOp.Kind.RX -> ep.sink.rxSuccess(w.context, flags, len, data, tag, source, w.flags)
                else -> ep.sink.rmaComplete(w.context, flags, len)
            }
        } else if (w.flags and OpFlags.COMPLETION != 0L) {
            val reported =
                if (kind == DeferredOp.Kind.TX) OpFlags.SEND or (flags and (OpFlags.MSG or OpFlags.TAGGED))
                else flags and OpFlags.COMPLETION.inv()
            (if (kind == DeferredOp.Kind.RX) ep.rxCq else ep.txCq)!!.write(w, reported, len, data, tag, source)
        }
        w.completionCounter?.add(1)
        w.pool?.recycle(w)
    }

    /**
     * The provider's native queue issued [w] and it completed ([braid.provider.DomainProvider.queueWork]). The native
     * counter may have reached the threshold before Braid's did (a native chain): then [w] is taken off the heap here.
     */
    @JvmSynthetic
    internal fun nativeSucceeded(w: DeferredWork, len: Long, tag: Long) {
        if (!nativeFired(w)) return
        succeeded(w, w.op.kind, w.op.cqFlags, len, 0, tag, FiAddr.NOTAVAIL)
    }

    /** The provider's native queue issued [w] and it failed with [err]; [message] names the provider and its text. */
    @JvmSynthetic
    internal fun nativeFailed(w: DeferredWork, len: Long, tag: Long, err: Int, message: String) {
        if (!nativeFired(w)) return
        failed(w, w.op.kind, w.op.cqFlags, len, tag, 0, err, FiAddr.NOTAVAIL, message)
    }

    private fun nativeFired(w: DeferredWork): Boolean {
        if (!w.native) return false
        if (w.status == WorkStatus.QUEUED) {
            val heap = w.triggeringCounter.triggers!!
            heap.remove(w)
            queued--
            if (heap.size == 0) w.triggeringCounter.armed = false
            w.status = WorkStatus.FIRED
            addFlight(w)
        }
        return w.status == WorkStatus.FIRED
    }

    @JvmSynthetic
    internal fun failed(
        w: DeferredWork,
        kind: DeferredOp.Kind,
        flags: Long,
        len: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    ) {
        if (w.status != WorkStatus.FIRED) return
        if (w.retrying) {
            w.retrying = false
            retries.remove(w)
        }
        removeFlight(w)
        w.status = WorkStatus.FAILED
        w.error = err
        w.errorMessage = message
        val ep = w.op.endpoint
        if (ep != null && w.triggered) {
            when (kind) {
                DeferredOp.Kind.TX -> ep.sink.txError(w.context, flags, len, tag, err, message)
                DeferredOp.Kind.RX -> ep.sink.rxError(w.context, flags, len, 0, tag, olen, err, source, message)
                else -> ep.sink.rmaError(w.context, flags, len, err, message)
            }
        } else if (ep != null && w.flags and OpFlags.COMPLETION != 0L) {
            val cq = if (kind == DeferredOp.Kind.RX) ep.rxCq else ep.txCq
            cq!!.writeErr(w, flags and OpFlags.COMPLETION.inv(), len, 0, tag, olen, err, source, message)
        }
        w.completionCounter?.addErr(1)
        w.pool?.recycle(w)
    }

    private fun failed(w: DeferredWork, err: Int, message: String) =
        failed(w, w.op.kind, w.op.cqFlags, 0, 0, 0, err, FiAddr.NOTAVAIL, message)

    /** [ep] is closing: its fired requests will never complete, so they fail with ESHUTDOWN. */
    @JvmSynthetic
    internal fun endpointClosed(ep: Endpoint) {
        var w = flightHead
        while (w != null) {
            val next = w.nextFlight
            if (w.op.endpoint === ep)
                failed(w, Errno.ESHUTDOWN, "${w.op.describe()}: the endpoint was closed before the operation completed")
            w = next
        }
    }

    // ## Bookkeeping ##

    private fun drain(c: Counter): ArrayList<DeferredWork> {
        val heap = c.triggers ?: return ArrayList()
        val out = ArrayList<DeferredWork>(heap.size)
        while (heap.size > 0) out += heap.poll()
        queued -= out.size
        c.armed = false
        for (w in out) cancelled(w)
        return out
    }

    private fun cancelled(w: DeferredWork) {
        w.status = WorkStatus.CANCELLED
        w.error = Errno.ECANCELED
        w.errorMessage = "cancelled before it fired"
        w.pool?.recycle(w)
    }

    private fun addFlight(w: DeferredWork) {
        w.prevFlight = null
        w.nextFlight = flightHead
        flightHead?.prevFlight = w
        flightHead = w
        inFlight++
    }

    private fun removeFlight(w: DeferredWork) {
        val p = w.prevFlight
        val n = w.nextFlight
        if (p == null) {
            if (flightHead === w) flightHead = n
        } else p.nextFlight = n
        n?.prevFlight = p
        w.prevFlight = null
        w.nextFlight = null
        inFlight--
    }

    private companion object {
        const val BATCHED = -2
        val FIRING_ORDER: Comparator<DeferredWork> = compareBy<DeferredWork> { it.threshold }.thenBy { it.seq }
    }
}

/**
 * One counter's waiting requests: a binary heap by (threshold, submission sequence), each request knowing its index so
 * that cancelling one is O(log n). Guarded by the domain lock.
 */
internal class TriggerHeap {
    private var items = arrayOfNulls<DeferredWork>(8)
    var size = 0
        private set

    fun peek(): DeferredWork = items[0]!!

    /** The [i]th request in heap order (not firing order). */
    operator fun get(i: Int): DeferredWork = items[i]!!

    fun add(w: DeferredWork) {
        if (size == items.size) items = items.copyOf(size * 2)
        items[size] = w
        w.heapIndex = size
        size++
        siftUp(size - 1)
    }

    fun poll(): DeferredWork {
        val top = items[0]!!
        removeAt(0)
        return top
    }

    fun remove(w: DeferredWork) {
        val i = w.heapIndex
        check(i in 0 until size && items[i] === w) { "deferred work $w is not in this heap" }
        removeAt(i)
    }

    private fun removeAt(i: Int) {
        val gone = items[i]!!
        size--
        val last = items[size]!!
        items[size] = null
        gone.heapIndex = -1
        if (i == size) return
        items[i] = last
        last.heapIndex = i
        siftDown(i)
        if (items[i] === last) siftUp(i)
    }

    private fun less(a: DeferredWork, b: DeferredWork): Boolean =
        a.threshold < b.threshold || (a.threshold == b.threshold && a.seq < b.seq)

    private fun siftUp(start: Int) {
        var i = start
        val w = items[i]!!
        while (i > 0) {
            val parent = (i - 1) ushr 1
            val p = items[parent]!!
            if (!less(w, p)) break
            items[i] = p
            p.heapIndex = i
            i = parent
        }
        items[i] = w
        w.heapIndex = i
    }

    private fun siftDown(start: Int) {
        var i = start
        val w = items[i]!!
        while (true) {
            var child = 2 * i + 1
            if (child >= size) break
            val right = child + 1
            if (right < size && less(items[right]!!, items[child]!!)) child = right
            val c = items[child]!!
            if (!less(c, w)) break
            items[i] = c
            c.heapIndex = i
            i = child
        }
        items[i] = w
        w.heapIndex = i
    }
}
