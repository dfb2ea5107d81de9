package braid.provider.ofi

import braid.core.Counter
import braid.core.CounterMirror
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.Domain
import braid.core.Errno
import braid.core.FabricException
import com.sun.jna.Memory
import com.sun.jna.Pointer
import java.util.IdentityHashMap
import org.agrona.DirectBuffer
import org.agrona.collections.Long2ObjectHashMap

/**
 * Native deferred work for one native domain: `fi_control(domain, FI_QUEUE_WORK, &work)` with native counters
 * (`fi_cntr_open`) bound to Braid's. libfabric 1.17's `sockets` implements it; every other provider here answers
 * `-FI_ENOSYS` to the first request, and from then on Braid's own queue serves the domain ([queue] returns false).
 *
 * What goes natively: a send or tagged send from off-heap memory on one of this domain's native endpoints, where the
 * provider needs no local descriptors (FI_MR_LOCAL) and [OfiParams.NATIVE_WORK] is on. Anything else stays with Braid's
 * queue. A request the provider took stays in Braid's heap too ([braid.provider.DomainProvider.queueWork]), so
 * `queued`, `cancel` and `flush` see it.
 *
 * Counters. Each Braid [Counter] a native request waits on or completes into is bound to one native counter ([Mirror]).
 * Braid to native: every change of the Braid counter, up or down, sets the native count to the Braid counter's success
 * plus error count (what Braid's thresholds compare), under the domain lock, and the provider fires what that count
 * reaches. Native to Braid: the provider writes no CQ entry for deferred work that succeeds (fi_trigger(3); sockets
 * forces it off); it adds one to the request's native completion counter, a separate native counter per Braid
 * completion counter ([Mirror] says why), or to its error count when the request failed. Each duty cycle of a native
 * rail reads both (`fi_cntr_read`, `fi_cntr_readerr`) while native requests are in flight ([poll]): each native success
 * completes one request of that counter (those Braid already saw fire first, then in queue order) and adds one to the
 * Braid completion counter, whose trigger copy (if a request waits on it) then fires the next hop of a chain natively;
 * each native error fails one with an error completion naming the provider. A failure the provider reports as a CQ
 * error entry on the request's endpoint (sockets' way) fails that very request with the entry's `prov_errno` and
 * `fi_cq_strerror` text ([nativeError]). A set that lowers a Braid counter lowers its native copy, and never touches a
 * native completion count, so no completion is lost.
 *
 * What is not seen: sockets drops a triggered operation whose post fails at once, with no count and no CQ entry; such a
 * request stays FIRED.
 *
 * Cancelling. No 1.17 provider implements `FI_CANCEL_WORK`; [cancel] asks, and throws naming the provider and the fix
 * when it cannot, leaving the request queued.
 *
 * ```
 *  struct fi_deferred_work (104 B): context(fi_context2)@0 threshold@64 triggering_cntr@72 completion_cntr@80
 *                                   op_type@88 op(pointer to the op struct)@96
 *  struct fi_op_msg (64 B):    ep@0 msg{msg_iov@8 desc@16 iov_count@24 addr@32 context@40 data@48} flags@56
 *  struct fi_op_tagged (80 B): ep@0 msg{msg_iov@8 desc@16 iov_count@24 addr@32 tag@40 ignore@48 context@56 data@64}
 *                              flags@72
 * ```
 *
 * sockets insists that the op's `msg.context` is the work's own context (`&work->context`). Every call is made under
 * the domain lock.
 */
internal class OfiDeferredWork(private val od: OfiDomain, private val domain: Domain, private val enabled: Boolean) :
    AutoCloseable {
    /** Null until the first request asks; then whether the native provider takes deferred work. */
    var supported: Boolean? = null
        private set

    private val native = od.native
    private val rail = "ofi:${native.provName}"
    /** Native triggering counters, by the Braid counter whose count they copy. */
    private val mirrors = IdentityHashMap<Counter, Mirror>()
    /** Native completion counters, by the Braid completion counter they report to (null: requests without one). */
    private val dones = IdentityHashMap<Counter?, Mirror>()
    /** Native requests not yet completed or failed. */
    private val byWork = IdentityHashMap<DeferredWork, Flight>()
    /** The same requests by the address of their `fi_deferred_work`, the op context of their native CQ entries. */
    private val byAddress = Long2ObjectHashMap<Flight>()
    private val scratch = Memory(32).also { it.clear() }

    /** Requests the native provider took. */
    var queued: Long = 0
        private set

    /** Native requests that completed or failed. */
    var finished: Long = 0
        private set

    /** A native request; [mem] holds its `fi_deferred_work`, which the provider reads until it completes. */
    class Flight(
        val work: DeferredWork,
        val mem: Memory,
        val done: Mirror,
        val ep: Long,
        val length: Long,
        val tag: Long,
    ) {
        val address: Long = Pointer.nativeValue(mem)
    }

    /**
     * A native counter for a Braid [counter]: a [trigger] copies its count (set by Braid, read by the provider's
     * triggers); otherwise it is a completion counter (added to by the provider, read by [poll]). Never both: sockets
     * fires a trigger from inside the completion that reaches its threshold, in its progress thread, while holding the
     * locks the triggered send needs, and deadlocks — so a native completion never moves a native trigger, and each hop
     * of a chain passes through Braid's counter (one duty cycle).
     */
    inner class Mirror(val counter: Counter?, val trigger: Boolean) : CounterMirror {
        val cntr: Long = openCounter()
        private val read = OfiCall.of(cntr, OfiOps.CNTR_OPS, OfiOps.CNTR_READ, "LL")!!
        private val readErr = OfiCall.of(cntr, OfiOps.CNTR_OPS, OfiOps.CNTR_READERR, "LL")!!
        private val set = OfiCall.of(cntr, OfiOps.CNTR_OPS, OfiOps.CNTR_SET, "LLI")!!
        /** The native count as Braid last set or read it, and the native error count as last read. */
        private var known = 0L
        private var knownErr = 0L
        /** Native completions and failures seen and not yet given to their requests. */
        var owed = 0L
        var owedErr = 0L
        /** Native requests in flight that complete into this counter, in queue order. */
        val flights = ArrayList<Flight>()

        init {
            if (trigger && counter != null) changed(counter)
        }

        /** Under the domain lock: the native count becomes the Braid counter's success plus error count. */
        override fun changed(counter: Counter) {
            val rc = set.arg(0, cntr).arg(1, counter.total).call().toInt()
            OfiNativeDomain.check(native.provName, "fi_cntr_set", rc)
        }

        /** Adds what the native side added since the last look to [owed] and [owedErr]. */
        fun collect() {
            if (flights.isEmpty()) return
            val n = read.arg(0, cntr).call()
            if (n > known) owed += n - known
            known = n
            val e = readErr.arg(0, cntr).call()
            if (e > knownErr) owedErr += e - knownErr
            knownErr = e
        }

        override fun toString(): String =
            "native ${if (trigger) "trigger" else "completion"} counter ${read.arg(0, cntr).call()}/" +
                "${readErr.arg(0, cntr).call()} (known $known/$knownErr, owed $owed/$owedErr, ${flights.size} in " +
                "flight) for ${counter ?: "no counter"}"

        fun close() {
            if (counter != null && counter.mirror === this) counter.mirror = null
            read.close()
            readErr.close()
            set.close()
            OfiOps.close(cntr)
        }
    }

    private fun openCounter(): Long {
        // fi_cntr_open(domain, &attr{events=FI_CNTR_EVENTS_COMP, wait_obj=FI_WAIT_NONE}, &cntr, NULL)
        val f =
            OfiOps.function(native.domain, OfiOps.DOMAIN_OPS, OfiOps.DOMAIN_CNTR_OPEN)
                ?: throw FabricException.unsupported("$rail: the native domain has no fi_cntr_open")
        scratch.clear()
        val attr = Pointer.nativeValue(scratch)
        val out = attr + 24
        OfiNativeDomain.check(native.provName, "fi_cntr_open", f.invokeInt(arrayOf(native.domain, attr, out, 0L)))
        return OfiOps.getLong(out)
    }

    private fun mirror(c: Counter, made: MutableList<Mirror>): Mirror =
        mirrors.getOrPut(c) {
            check(c.mirror == null) { "counter $c is bound to another native domain's deferred work" }
            Mirror(c, trigger = true).also {
                c.mirror = it
                made += it
            }
        }

    private fun done(c: Counter?, made: MutableList<Mirror>): Mirror =
        dones.getOrPut(c) { Mirror(c, trigger = false).also { made += it } }

    /** Queues [work] natively if this domain's provider takes it; false when Braid's queue is to serve it. */
    fun queue(work: DeferredWork): Boolean {
        if (!enabled || supported == false || od.mrLocal || work.triggered) return false
        val op = work.op
        val buffer: DirectBuffer
        val offset: Int
        val length: Int
        val dest: Long
        var tag = 0L
        when (op) {
            is DeferredOp.Tsend -> {
                buffer = op.buffer
                offset = op.offset
                length = op.length
                dest = op.dest
                tag = op.tag
            }
            is DeferredOp.Send -> {
                buffer = op.buffer
                offset = op.offset
                length = op.length
                dest = op.dest
            }
            else -> return false
        }
        val t = op.endpoint!!.transport as? OfiTransport ?: return false
        if (!t.ofDomain(od) || buffer.byteArray() != null || buffer.addressOffset() == 0L) return false
        val nativeDest = t.nativeAddress(dest)
        if (nativeDest < 0) return false
        val made = ArrayList<Mirror>(2)
        val trig = mirror(work.triggeringCounter, made)
        val done = done(work.completionCounter, made)
        val mem = Memory(WORK_SIZE).also { it.clear() }
        val w = Pointer.nativeValue(mem)
        val o = w + 104
        val iov = o + 80
        OfiOps.putLong(iov, buffer.addressOffset() + offset)
        OfiOps.putLong(iov + 8, length.toLong())
        OfiOps.putLong(w + 64, work.threshold)
        OfiOps.putLong(w + 72, trig.cntr)
        OfiOps.putLong(w + 80, done.cntr)
        OfiOps.putInt(w + 88, if (op is DeferredOp.Tsend) FI_OP_TSEND else FI_OP_SEND)
        OfiOps.putLong(w + 96, o)
        OfiOps.putLong(o, t.nativeEp)
        OfiOps.putLong(o + 8, iov)
        OfiOps.putLong(o + 24, 1)
        OfiOps.putLong(o + 32, nativeDest)
        if (op is DeferredOp.Tsend) {
            OfiOps.putLong(o + 40, tag)
            OfiOps.putLong(o + 56, w)
        } else {
            OfiOps.putLong(o + 40, w)
        }
        val rc = OfiOps.control(native.domain, OfiOps.FI_QUEUE_WORK, w)
        if (rc == -OfiOps.FI_ENOSYS) {
            supported = false
            // Nothing native waits on the counters bound for this request: Braid's counters stay Braid's alone.
            for (m in made) {
                if (m.trigger) mirrors.remove(m.counter) else dones.remove(m.counter)
                m.close()
            }
            return false
        }
        OfiNativeDomain.check(native.provName, "fi_control(FI_QUEUE_WORK)", rc)
        supported = true
        done.collect() // what came before this request is not its
        val f = Flight(work, mem, done, t.nativeEp, length.toLong(), tag)
        done.flights += f
        byWork[work] = f
        byAddress[f.address] = f
        queued++
        return true
    }

    /**
     * Under the domain lock, each duty cycle of a native rail: gives what the native counters added to the requests in
     * flight. Returns the requests completed or failed.
     */
    fun poll(): Int {
        if (byWork.isEmpty()) return 0
        var n = 0
        for (m in dones.values) n += settle(m)
        return n
    }

    private fun settle(m: Mirror): Int {
        m.collect()
        var n = 0
        while (m.owedErr > 0 && m.flights.isNotEmpty()) {
            m.owedErr--
            val f = take(m)
            fail(f, Errno.EIO, "fi_cntr_readerr of its native completion counter rose, with no CQ error entry")
            n++
        }
        while (m.owed > 0 && m.flights.isNotEmpty()) {
            m.owed--
            val f = take(m)
            domain.deferredWork.nativeSucceeded(f.work, f.length, f.tag)
            n++
        }
        if (m.flights.isEmpty()) {
            m.owed = 0 // counts no request of ours is left to take (a request cancelled natively)
            m.owedErr = 0
        }
        return n
    }

    /**
     * Under the domain lock, from a native rail's [OfiTransport.progress]: the native CQ error entry whose op context
     * is [opContext], if that is one of these requests (`fi_deferred_work` is its own context), fails that request with
     * [err] and [text] (`fi_cq_strerror` of the entry's `prov_errno`, as [OfiTransport] renders it) and returns true;
     * false for any other context. sockets writes such an entry, into the CQ of the request's endpoint, when an issued
     * deferred send fails (`sock_pe_report_tx_error`: deferred work gives up only its success completions), and counts
     * the failure on the endpoint's own send counter, which Braid does not bind, never on the request's completion
     * counter.
     */
    fun nativeError(opContext: Long, err: Int, text: String): Boolean {
        val f = byAddress[opContext] ?: return false
        f.done.flights.remove(f)
        byWork.remove(f.work)
        byAddress.remove(opContext)
        finished++
        fail(f, err, text)
        return true
    }

    private fun fail(f: Flight, err: Int, why: String) {
        val what = if (f.work.op is DeferredOp.Tsend) "tagged send" else "send"
        domain.deferredWork.nativeFailed(
            f.work,
            f.length,
            f.tag,
            err,
            "$rail: deferred $what of ${f.length} bytes failed in the native queue: $why",
        )
    }

    /** The request a native count belongs to: the first in queue order that Braid saw fire, else the first. */
    private fun take(m: Mirror): Flight {
        var i = m.flights.indexOfFirst { it.work.status == braid.core.WorkStatus.FIRED }
        if (i < 0) i = 0
        val f = m.flights.removeAt(i)
        byWork.remove(f.work)
        byAddress.remove(f.address)
        finished++
        return f
    }

    /** Native rails closed while native requests were queued on their endpoints, kept (with their memory) alive. */
    private val kept = ArrayList<Any>()

    /**
     * Whether a native request not yet completed is queued on native endpoint [ep]; if so [rail] is kept, so that the
     * memory its native objects use outlives them (the provider may still issue the request there).
     */
    fun holds(ep: Long, rail: Any): Boolean {
        val held = byWork.values.any { it.ep == ep }
        if (held) kept += rail
        return held
    }

    /** The address of [work]'s `fi_deferred_work` while the native queue holds it, or 0; for specs. */
    fun nativeWorkAddress(work: DeferredWork): Long = byWork[work]?.address ?: 0L

    /** The native completion counter of requests completing into [c] (null: those without one), or 0; for specs. */
    fun nativeCompletionCounter(c: Counter?): Long = dones[c]?.cntr ?: 0L

    /** Takes [work] off the native queue (`FI_CANCEL_WORK`), or throws naming the provider and the fix. */
    fun cancel(work: DeferredWork) {
        val f = byWork[work] ?: return
        val rc = OfiOps.control(native.domain, OfiOps.FI_CANCEL_WORK, f.address)
        if (rc == 0) {
            f.done.flights.remove(f)
            byWork.remove(work)
            byAddress.remove(f.address)
            return
        }
        throw FabricException(
            if (rc < 0) -rc else Errno.EIO,
            "deferred work (${work.op.describe()}) is held by $rail's native queue, which cannot cancel it " +
                "(fi_control(FI_CANCEL_WORK): ${OfiLibrary.strerror(rc)}); it stays queued and fires when its counter " +
                "reaches ${work.threshold}. Set ofi.native_work=false (BRAID_OFI_NATIVE_WORK=false) to keep deferred " +
                "work in Braid's queue, where it can be cancelled",
        )
    }

    override fun toString(): String =
        "$rail native deferred work: supported $supported, $queued queued, $finished finished; " +
            (mirrors.values + dones.values).joinToString("; ")

    override fun close() {
        for (m in mirrors.values) m.close()
        mirrors.clear()
        for (m in dones.values) m.close()
        dones.clear()
    }

    private companion object {
        const val WORK_SIZE = 104L + 80 + 16
        const val FI_OP_SEND = 1
        const val FI_OP_TSEND = 3
    }
}
