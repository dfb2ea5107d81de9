package braid.core

import kotlinx.coroutines.asCoroutineDispatcher
import org.agrona.concurrent.IdleStrategy

/**
 * A completion queue (`fid_cq`). Providers write completions and error completions into it in the order operations
 * finish; the application reads them. Under manual progress every read first drives the providers of the queue's
 * domain, so a loop of [read] is a complete progress loop.
 *
 * The EAVAIL rule: when the next entry is an error, [read] returns `-EAVAIL` and keeps returning it until [readErr]
 * takes that entry; completions written after it wait behind it.
 *
 * Storage is a ring of primitive columns that grows by doubling, so writes never drop a completion and steady-state
 * reads and writes allocate nothing.
 *
 * Imported from an owner ([Domain.importCompletionQueue], the peer CQ of fi_peer(3)), it writes through to the owner
 * and every read returns `-ENOSYS`.
 *
 * Completions of operations started through the `suspend`, future and blocking forms ([send], [trecv], [tsendAsync], …)
 * go to their callers and are never queued here. Blocking reads ([sread]) wait the `fi_trywait` way: see [IdlePolicy]
 * for what waiting costs and how promptly a write wakes the reader.
 */
public class CompletionQueue
internal constructor(
    public val domain: Domain,
    public val format: CqFormat,
    initialCapacity: Int,
    /** The owner's queue this one was imported from ([Domain.importCompletionQueue]), or null. */
    public val owner: PeerCq? = null,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : PeerCq, AutoCloseable {
    private var capacity = Integer.highestOneBit(maxOf(16, initialCapacity) * 2 - 1)
    private var contexts = arrayOfNulls<Any>(capacity)
    private var flags = LongArray(capacity)
    private var lens = LongArray(capacity)
    private var datas = LongArray(capacity)
    private var tags = LongArray(capacity)
    private var sources = LongArray(capacity)
    /** Index into [errors] + 1 for an error entry, 0 for a completion. */
    private var errorSlots = IntArray(capacity)
    private var head = 0L
    private var tail = 0L
    private val errors = ArrayDeque<CompletionError>()
    private val spareErrors = ArrayDeque<CompletionError>()
    @Volatile private var closed = false

    /** Threads and coroutines waiting for a write (the queue's wait object). */
    @get:JvmSynthetic internal val waiters = QueueWaiters(domain)

    /** Completions and errors waiting to be read. */
    public val size: Int
        get() = synchronized(domain.lock) { (tail - head).toInt() }

    /**
     * Reads one completion into [out]: returns 1, `-EAGAIN` when there is none, or `-EAVAIL` when the next entry is an
     * error (read it with [readErr]).
     */
    public fun read(out: Completion): Int {
        if (owner != null) return -Errno.ENOSYS
        val rc =
            domain.lock.guard {
                domain.progressLocked()
                take(out, withSource = false)
            }
        domain.hub.dispatchReady()
        return rc
    }

    /** [read], also reporting the sender's address in [Completion.source] (`fi_cq_readfrom`). */
    public fun readFrom(out: Completion): Int {
        if (owner != null) return -Errno.ENOSYS
        val rc =
            domain.lock.guard {
                domain.progressLocked()
                take(out, withSource = true)
            }
        domain.hub.dispatchReady()
        return rc
    }

    /** Reads up to `out.size` completions; returns how many, or `-EAGAIN` / `-EAVAIL` if none. */
    public fun read(out: Array<Completion>): Int {
        if (owner != null) return -Errno.ENOSYS
        val rc =
            domain.lock.guard {
                domain.progressLocked()
                var n = 0
                var last = 1
                while (n < out.size) {
                    last = take(out[n], withSource = true)
                    if (last != 1) break
                    n++
                }
                if (n > 0 || last == 1) n else last
            }
        domain.hub.dispatchReady()
        return rc
    }

    /** Takes the error entry at the head into [out]: returns 1, or `-EAGAIN` if the head is not an error. */
    public fun readErr(out: CompletionError): Int =
        synchronized(domain.lock) {
            if (owner != null) return -Errno.ENOSYS
            if (head == tail) return -Errno.EAGAIN
            val slot = (head and (capacity - 1).toLong()).toInt()
            if (errorSlots[slot] == 0) return -Errno.EAGAIN
            val e = errors.removeFirst()
            out.context = e.context
            out.flags = e.flags
            out.len = e.len
            out.data = e.data
            out.tag = e.tag
            out.olen = e.olen
            out.err = e.err
            out.provErrno = e.provErrno
            out.source = e.source
            out.message = e.message
            e.context = null
            spareErrors.addLast(e)
            errorSlots[slot] = 0
            head++
            1
        }

    /**
     * Blocking read (`fi_cq_sread`): waits up to [timeoutMillis] (negative: for ever) for a completion, driving
     * progress and idling with [idle] between attempts. Returns 1, `-EAVAIL`, or `-EAGAIN` on time-out.
     *
     * Once [idle] parks, the reader sleeps until a thread of this process writes to the queue (it arms itself before
     * its last look, as `fi_trywait` does, so no write is missed) or, under manual progress, until its park period ends
     * and it drives progress again; under automatic progress it leaves polling to the [ProgressEngine] and parks until
     * woken.
     */
    @JvmOverloads
    public fun sread(out: Completion, timeoutMillis: Long, idle: IdleStrategy = domain.idleStrategy()): Int {
        if (owner != null) return -Errno.ENOSYS
        val deadline = if (timeoutMillis < 0) Long.MAX_VALUE else System.nanoTime() + timeoutMillis * 1_000_000
        idle.reset()
        while (true) {
            val rc = readFrom(out)
            if (rc != -Errno.EAGAIN) return rc
            if (closed) return -Errno.ESHUTDOWN
            val now = System.nanoTime()
            if (now >= deadline) return -Errno.EAGAIN
            idleForWrite(idle, if (deadline == Long.MAX_VALUE) Long.MAX_VALUE else deadline - now)
        }
    }

    // ## Provider side (the peer CQ operations of fi_peer(3)) ##

    /** Writes a successful completion (`fi_peer_cq::write`). Caller holds the domain lock. */
    override fun write(context: Any?, flags: Long, len: Long, data: Long, tag: Long, source: Long) {
        if (context is PendingOp) {
            context.complete(flags, len, data, tag, source)
            return
        }
        if (context is PeerTransferOp) {
            context.complete(flags, len, data, tag, source)
            return
        }
        if (owner != null) {
            owner.write(context, flags, len, data, tag, source)
            return
        }
        val slot = claimSlot()
        contexts[slot] = context
        this.flags[slot] = flags
        lens[slot] = len
        datas[slot] = data
        tags[slot] = tag
        sources[slot] = source
        errorSlots[slot] = 0
        if (waiters.count != 0) waiters.signal()
    }

    /** Writes an error completion (`fi_peer_cq::writeerr`). Caller holds the domain lock. */
    override fun writeErr(
        context: Any?,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    ) {
        if (context is PendingOp) {
            context.fail(err, message)
            return
        }
        if (context is PeerTransferOp) {
            context.fail(flags, len, data, tag, olen, err, source, message)
            return
        }
        if (owner != null) {
            owner.writeErr(context, flags, len, data, tag, olen, err, source, message)
            return
        }
        val slot = claimSlot()
        val e = spareErrors.removeLastOrNull() ?: CompletionError()
        e.context = context
        e.flags = flags
        e.len = len
        e.data = data
        e.tag = tag
        e.olen = olen
        e.err = err
        e.provErrno = 0
        e.source = source
        e.message = message
        errors.addLast(e)
        contexts[slot] = null
        errorSlots[slot] = errors.size
        if (waiters.count != 0) waiters.signal()
    }

    /**
     * The completions of this queue as a `java.util.concurrent.Flow.Publisher`, the Java form of the Kotlin flow
     * `completions()`: each subscriber reads the queue on [executor] (the common coroutine pool if null), taking a
     * completion off the queue only when it has demand, so reading drives progress under manual progress and the
     * subscriber gets every completion without a progress call. [onErrorCompletion] receives error completions and the
     * stream goes on; without one, the first error completion ends the stream with `onError` (a [FabricException]).
     * Closing the queue ends it with `onComplete`. One subscriber at a time should read a queue, as with [read];
     * completions of the future and `suspend` forms go to their callers and never appear here.
     */
    @JvmOverloads
    public fun publisher(
        onErrorCompletion: java.util.function.Consumer<CompletionError>? = null,
        executor: java.util.concurrent.Executor? = null,
    ): java.util.concurrent.Flow.Publisher<Completion> {
        domain.lock.share() // the publisher reads on the executor's threads
        return CompletionPublisher(
            this,
            onErrorCompletion,
            if (executor == null) kotlinx.coroutines.Dispatchers.Default else executor.asCoroutineDispatcher(),
        )
    }

    override fun close() {
        closed = true
        synchronized(domain.lock) { if (waiters.count != 0) waiters.signal() }
    }

    @get:JvmSynthetic
    internal val isClosed: Boolean
        get() = closed

    /** Whether nothing waits to be read. Caller holds the domain lock. */
    @JvmSynthetic internal fun isEmptyLocked(): Boolean = head == tail

    private fun take(out: Completion, withSource: Boolean): Int {
        if (head == tail) return -Errno.EAGAIN
        val slot = (head and (capacity - 1).toLong()).toInt()
        if (errorSlots[slot] != 0) return -Errno.EAVAIL
        out.context = contexts[slot]
        contexts[slot] = null
        when (format) {
            CqFormat.CONTEXT -> {
                out.flags = 0
                out.len = 0
                out.data = 0
                out.tag = 0
            }
            CqFormat.MSG -> {
                out.flags = flags[slot]
                out.len = lens[slot]
                out.data = 0
                out.tag = 0
            }
            CqFormat.DATA -> {
                out.flags = flags[slot]
                out.len = lens[slot]
                out.data = datas[slot]
                out.tag = 0
            }
            CqFormat.TAGGED -> {
                out.flags = flags[slot]
                out.len = lens[slot]
                out.data = datas[slot]
                out.tag = tags[slot]
            }
        }
        out.source = if (withSource) sources[slot] else FiAddr.NOTAVAIL
        head++
        return 1
    }

    private fun claimSlot(): Int {
        if (tail - head == capacity.toLong()) grow()
        val slot = (tail and (capacity - 1).toLong()).toInt()
        tail++
        return slot
    }

    private fun grow() {
        val n = capacity * 2
        val c = arrayOfNulls<Any>(n)
        val f = LongArray(n)
        val l = LongArray(n)
        val d = LongArray(n)
        val t = LongArray(n)
        val s = LongArray(n)
        val e = IntArray(n)
        var i = 0
        var p = head
        while (p < tail) {
            val o = (p and (capacity - 1).toLong()).toInt()
            c[i] = contexts[o]
            f[i] = flags[o]
            l[i] = lens[o]
            d[i] = datas[o]
            t[i] = tags[o]
            s[i] = sources[o]
            e[i] = errorSlots[o]
            i++
            p++
        }
        contexts = c
        flags = f
        lens = l
        datas = d
        tags = t
        sources = s
        errorSlots = e
        tail -= head
        head = 0
        capacity = n
    }
}
