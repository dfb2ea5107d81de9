package braid.collectives

import braid.core.Counter
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.Errno
import braid.core.LocalStep
import braid.core.WorkStatus
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * One collective compiled to deferred work (`fi_trigger(3)` requests on the endpoint's domain): built once per group
 * and operation shape, re-armed per call.
 *
 * Rounds. Steps — tagged sends and receives to group members, local REDUCE and COPY steps — are grouped in rounds.
 * Every step of round `r` is triggered when round `r-1`'s counter counts all of that round's steps (success plus error,
 * as fi_trigger compares), and completes into round `r`'s counter; round 0 waits on nothing (threshold 0) and fires on
 * the caller's thread as [startRun] queues the run. The first request of each round from round 1 on is a gate: if an
 * earlier step failed it cancels what is left (queued requests, posted receives) and fails the collective, so a failed
 * step never lets later steps send garbage. The last request notes the end. Nothing between the steps needs the caller:
 * whatever drives the domain's progress (a CQ read, the engine thread, [CollectiveRequest.waitFor]) completes
 * transfers, and the queue fires what they made due.
 *
 * Re-arming. The requests, their buffer views ([send], [recv]: rewrapped over the caller's buffers per call), scratch
 * buffers and counters are the schedule's own; a call resets the counters, writes each transfer's tag for this call's
 * sequence number and queues the same requests again as one batch ([braid.core.DeferredWorkQueue.queueAll]: one
 * acquisition of the domain lock per call, not one per request) — nothing is allocated.
 */
internal class Schedule(val group: CollectiveGroup, val kernel: Kernel?, val name: String) {
    private val domain = group.endpoint.domain
    private val queue = domain.deferredWork

    /** The caller's send buffer, rewrapped per call (unused when the operation takes none). */
    val send = UnsafeBuffer(0L, 0)
    /** The caller's receive buffer, rewrapped per call. */
    val recv = UnsafeBuffer(0L, 0)

    private val start: Counter = domain.counter()
    private val counters = ArrayList<Counter>()
    private val sizes = ArrayList<Int>()
    private var open = 0
    private val workList = ArrayList<DeferredWork>()
    private val taggedList = ArrayList<DeferredOp>()
    private val lowList = ArrayList<Int>()
    private var scratchBytes = 0L

    private lateinit var works: Array<DeferredWork>
    private lateinit var tagged: Array<DeferredOp>
    private lateinit var lows: IntArray
    private lateinit var finishWork: DeferredWork

    /** The request callers hold for a run of this schedule; one per instance, reused. */
    val request = CollectiveRequest(this)

    /** Steps (transfers and local steps, gates and the end not counted). */
    var steps = 0
        private set

    val rounds: Int
        get() = counters.size

    /** Sends and receives among the steps (what a call puts on the wire, and waits for). */
    var sends = 0
        private set

    var recvs = 0
        private set

    // ## Building ##

    /** A scratch buffer of [bytes] owned by the schedule. */
    fun scratch(bytes: Int): UnsafeBuffer {
        scratchBytes += bytes
        return UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(bytes, 1)))
    }

    /** Ends the current round; the next step starts a new one (an empty round is skipped). */
    fun round() {
        if (open == 0) return
        sizes += open
        open = 0
    }

    private fun add(op: DeferredOp) {
        val r = counters.size - (if (open > 0) 1 else 0)
        if (open == 0) {
            // First step of a new round.
            if (counters.isNotEmpty())
                workList += DeferredWork(counters.last(), sizes.last().toLong(), DeferredOp.Local(gate), null)
            counters += domain.counter()
        }
        // Round 0 waits on nothing: threshold 0 on the start counter (which stays 0), so it fires as the run is queued.
        val trigger = if (counters.size == 1) start else counters[counters.size - 2]
        val threshold = if (counters.size == 1) 0L else sizes[counters.size - 2].toLong()
        check(r >= 0)
        workList += DeferredWork(trigger, threshold, op, counters.last())
        open++
        steps++
    }

    /** Sends `buf[offset, offset+length)` to group rank [peer]; [step] names the message, the same on both sides. */
    fun send(peer: Int, buf: DirectBuffer, offset: Int, length: Int, step: Int) {
        val op = DeferredOp.Tsend(group.endpoint, buf, offset, length, group.addressOf(peer), 0)
        taggedList += op
        lowList += step
        sends++
        add(op)
    }

    /** Receives the message [step] from group rank [peer] into `buf[offset, offset+length)`. */
    fun recv(peer: Int, buf: MutableDirectBuffer, offset: Int, length: Int, step: Int) {
        val op = DeferredOp.Trecv(group.endpoint, buf, offset, length, group.addressOf(peer), 0, 0)
        taggedList += op
        lowList += step
        recvs++
        add(op)
    }

    /** `dst = src ∘ dst` ([srcFirst]) or `dst = dst ∘ src` over [count] elements, byte offsets. */
    fun reduce(
        src: DirectBuffer,
        srcOffset: Int,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        count: Int,
        srcFirst: Boolean,
    ) {
        if (count == 0) return
        add(DeferredOp.Reduce(kernel!!, src, srcOffset, dst, dstOffset, count, srcFirst))
    }

    /** A local step of its own (the offload provider's shared-memory phases); returns its request. */
    fun local(step: LocalStep): DeferredWork {
        add(DeferredOp.Local(step))
        return workList.last()
    }

    /**
     * `out = a ∘ b` over [count] elements, byte offsets, `a` holding the lower ranks' part: one step whether [out] is
     * one of the operands (a plain REDUCE) or neither (no copy first).
     */
    fun reduce3(
        a: DirectBuffer,
        aOffset: Int,
        b: DirectBuffer,
        bOffset: Int,
        out: MutableDirectBuffer,
        outOffset: Int,
        count: Int,
    ) {
        if (count == 0) return
        when {
            out === b && outOffset == bOffset -> reduce(a, aOffset, out, outOffset, count, true)
            out === a && outOffset == aOffset -> reduce(b, bOffset, out, outOffset, count, false)
            else -> add(DeferredOp.Local(Reduce3(kernel!!, a, aOffset, b, bOffset, out, outOffset, count)))
        }
    }

    private class Reduce3(
        val kernel: Kernel,
        val a: DirectBuffer,
        val aOffset: Int,
        val b: DirectBuffer,
        val bOffset: Int,
        val out: MutableDirectBuffer,
        val outOffset: Int,
        val count: Int,
    ) : LocalStep {
        override fun run(work: DeferredWork): Int = kernel.reduce3(a, aOffset, b, bOffset, out, outOffset, count)

        override fun toString(): String = "reduce of $count elements into a third buffer by $kernel"
    }

    fun copy(src: DirectBuffer, srcOffset: Int, dst: MutableDirectBuffer, dstOffset: Int, length: Int) {
        if (length == 0 || (src === dst && srcOffset == dstOffset)) return
        add(DeferredOp.Copy(src, srcOffset, dst, dstOffset, length))
    }

    /** Ends building: the end request, and the arrays a call walks. */
    fun seal(): Schedule {
        round()
        finishWork =
            if (counters.isEmpty()) DeferredWork(start, 0, DeferredOp.Local(finish), null)
            else DeferredWork(counters.last(), sizes.last().toLong(), DeferredOp.Local(finish), null)
        workList += finishWork
        works = workList.toTypedArray()
        tagged = taggedList.toTypedArray()
        lows = lowList.toIntArray()
        workList.clear()
        taggedList.clear()
        lowList.clear()
        return this
    }

    /** Requests in the schedule (steps, gates and the end). */
    val requests: Int
        get() = works.size

    /** Bytes of scratch buffers the schedule owns. */
    val scratchSize: Long
        get() = scratchBytes

    // ## Running ##

    /**
     * Whether a call may re-arm this instance: its last run ended, was seen ended, and none of its requests is still
     * out.
     */
    fun reusable(): Boolean {
        if (!request.released) return false
        for (w in works) if (w.status == WorkStatus.QUEUED || w.status == WorkStatus.FIRED) return false
        return true
    }

    /**
     * Whether a run is still in flight: not ended, or some request of it still queued or out (a receive being taken
     * back).
     */
    fun busy(): Boolean {
        if (!request.isDone) return true
        for (w in works) if (w.status == WorkStatus.QUEUED || w.status == WorkStatus.FIRED) return true
        return abortWork.status == WorkStatus.QUEUED || abortWork.status == WorkStatus.FIRED
    }

    /** Re-arms and starts a run with sequence number [seq]; the views are already wrapped. */
    fun startRun(seq: Int) {
        val base = group.tagBase(seq)
        for (i in tagged.indices) {
            when (val op = tagged[i]) {
                is DeferredOp.Tsend -> op.tag = base or lows[i].toLong()
                is DeferredOp.Trecv -> op.tag = base or lows[i].toLong()
                else -> Unit
            }
        }
        for (i in counters.indices) {
            val c = counters[i]
            c.set(0)
            c.setErr(0)
        }
        request.arm()
        // One batch under one acquisition of the domain lock; round 0 fires on this thread as it goes in.
        queue.queueAll(works)
    }

    /** Whether the app flushed our requests off the queue (then the end will never fire). */
    internal fun flushedAway(): Boolean = finishWork.status == WorkStatus.CANCELLED

    private fun errors(): Long {
        var n = start.errorValue
        for (i in counters.indices) n += counters[i].errorValue
        return n
    }

    private fun firstFailure(): DeferredWork? {
        for (w in works) if (w.status == WorkStatus.FAILED) return w
        return null
    }

    private val gate = LocalStep {
        if (errors() != 0L) {
            val f = firstFailure()
            abort(f?.error ?: Errno.EIO, "$name: ${f?.errorMessage ?: "a step failed"}")
        }
        0
    }

    private val finish = LocalStep {
        if (errors() != 0L) {
            val f = firstFailure()
            request.complete(f?.error ?: Errno.EIO, "$name: ${f?.errorMessage ?: "a step failed"}")
        } else {
            request.complete(0, "")
        }
        0
    }

    private val control: Counter = domain.counter()
    private var pendingErr = 0
    private var pendingMessage = ""
    private val abortWork =
        DeferredWork(
            control,
            0,
            DeferredOp.Local {
                abort(pendingErr, "$name: $pendingMessage")
                0
            },
            null,
        )

    /**
     * From any thread: [abort] under the domain lock, which collectives cannot take directly — a local step queued at
     * threshold 0 runs at once, under that lock, in the queue's firing loop.
     */
    fun abortLocked(err: Int, message: String) {
        synchronized(this) {
            if (abortWork.status == WorkStatus.QUEUED || abortWork.status == WorkStatus.FIRED) return
            pendingErr = err
            pendingMessage = message
            queue.queue(abortWork)
        }
    }

    /**
     * Told (under the domain lock) when a run is aborted: the offload's hierarchical schedules tell their host's other
     * ranks.
     */
    var onAbort: ((Int, String) -> Unit)? = null

    /** Under the domain lock: takes back what is left of the run and fails it with [err]. */
    fun abort(err: Int, message: String) {
        onAbort?.invoke(err, message)
        for (w in works) {
            if (w.status == WorkStatus.QUEUED) queue.cancel(w)
            else if (w.status == WorkStatus.FIRED && w.op is DeferredOp.Trecv) w.op.endpoint!!.cancel(w)
        }
        request.complete(err, message)
    }

    override fun toString(): String = "$name (${works.size} requests, ${counters.size} rounds)"
}
