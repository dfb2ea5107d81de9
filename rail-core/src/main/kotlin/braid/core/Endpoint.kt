package braid.core

import braid.core.telemetry.Telemetry
import braid.provider.RailAv
import braid.provider.Transport
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A reliable-datagram endpoint (`fid_ep`, FI_EP_RDM): sends to and receives from any peer in its address vector.
 *
 * Every data operation comes in a `try…` form that never throws and allocates nothing: it returns 0 when the operation
 * was started, or a negated [Errno] — `-EAGAIN` when resources are momentarily exhausted (drive progress by reading the
 * CQ, then retry), `-EOPBADSTATE` before [enable], `-EMSGSIZE` past a size limit, `-EINVAL` for an unknown address. The
 * outcome of a started operation arrives as a completion, or an error completion, on the bound CQ.
 *
 * Buffers: an Agrona [DirectBuffer] region, or a [ByteBuffer]'s position..limit; heap or direct. A send's buffer must
 * stay untouched until its completion, except for inject, which copies before it returns.
 */
public class Endpoint
private constructor(
    public val domain: Domain,
    public val info: Info,
    /** Where the rails' completions land: the bound CQs, counters, EQ and AV (the rails' [braid.provider.RailHost]). */
    @get:JvmSynthetic internal val sink: EndpointSink,
    @get:JvmSynthetic internal val transport: Transport,
) : AutoCloseable {
    @get:JvmSynthetic
    internal val av: AddressVector?
        get() = sink.av

    @get:JvmSynthetic
    internal val txCq: CompletionQueue?
        get() = sink.txCq

    @get:JvmSynthetic
    internal val rxCq: CompletionQueue?
        get() = sink.rxCq

    /**
     * The shared receive context every provider of this endpoint matches against: its own, or the owner's once imported
     * with [bind].
     */
    public val srx: SharedReceiveContext
        get() = sink.srx

    private var srxImported = false
    private var peerTransferOpen = false
    private val view = UnsafeBuffer(0L, 0)
    private val compareView = UnsafeBuffer(0L, 0)
    private val resultView = UnsafeBuffer(0L, 0)
    private val byteView = UnsafeBuffer(0L, 0)
    private val compareByteView = UnsafeBuffer(0L, 0)
    private val resultByteView = UnsafeBuffer(0L, 0)
    private val txOpFlags = info.txAttr.opFlags
    private val rxOpFlags = info.rxAttr.opFlags
    private val maxMsgSize = info.endpointAttr.maxMsgSize
    private val injectSize = info.txAttr.injectSize
    private val anySource = transport.acceptsAnySource

    @Volatile
    public var enabled: Boolean = false
        private set

    @Volatile private var closed = false

    /** This endpoint's address blob (`fi_getname`): give it to peers to insert in their AV. */
    public val address: ByteArray
        get() = transport.address.copyOf()

    /**
     * Binds a completion queue (`fi_ep_bind`) for [OpFlags.TRANSMIT] and/or [OpFlags.RECV] completions; add
     * [OpFlags.SELECTIVE_COMPLETION] to report successes only for operations posted with [OpFlags.COMPLETION].
     */
    public fun bind(cq: CompletionQueue, flags: Long) {
        checkNotEnabled("bind a completion queue")
        if (cq.domain !== domain)
            throw FabricException.invalid(
                "endpoint: the completion queue belongs to domain '${cq.domain.name}', not '${domain.name}'"
            )
        if (flags and (OpFlags.TRANSMIT or OpFlags.RECV) == 0L) {
            throw FabricException(Errno.EBADFLAGS, "endpoint: bind(cq) needs OpFlags.TRANSMIT and/or OpFlags.RECV")
        }
        val selective = flags and OpFlags.SELECTIVE_COMPLETION != 0L
        if (flags and OpFlags.TRANSMIT != 0L) {
            sink.txCq = cq
            sink.txSelective = selective
        }
        if (flags and OpFlags.RECV != 0L) {
            sink.rxCq = cq
            sink.rxSelective = selective
        }
    }

    /** Binds the address vector whose fabric addresses data operations use. */
    public fun bind(av: AddressVector) {
        checkNotEnabled("bind an address vector")
        if (av.domain !== domain)
            throw FabricException.invalid(
                "endpoint: the address vector belongs to domain '${av.domain.name}', not '${domain.name}'"
            )
        sink.av = av
    }

    /**
     * Binds a counter (`fi_ep_bind`) for [OpFlags.SEND] and/or [OpFlags.RECV] completions, [OpFlags.READ] and/or
     * [OpFlags.WRITE] for RMA and atomics this endpoint starts (fetching atomics count as reads), and
     * [OpFlags.REMOTE_READ] and/or [OpFlags.REMOTE_WRITE] for those peers carry out on this endpoint's registered
     * memory.
     */
    public fun bind(counter: Counter, flags: Long) {
        checkNotEnabled("bind a counter")
        if (counter.domain !== domain)
            throw FabricException.invalid(
                "endpoint: the counter belongs to domain '${counter.domain.name}', not '${domain.name}'"
            )
        val known =
            OpFlags.SEND or OpFlags.RECV or OpFlags.READ or OpFlags.WRITE or OpFlags.REMOTE_READ or OpFlags.REMOTE_WRITE
        if (flags and known == 0L) {
            throw FabricException(
                Errno.EBADFLAGS,
                "endpoint: bind(counter) needs OpFlags.SEND, RECV, READ, WRITE, REMOTE_READ and/or REMOTE_WRITE",
            )
        }
        if (flags and OpFlags.SEND != 0L) sink.sendCounter = counter
        if (flags and OpFlags.RECV != 0L) sink.recvCounter = counter
        if (flags and OpFlags.READ != 0L) sink.readCounter = counter
        if (flags and OpFlags.WRITE != 0L) sink.writeCounter = counter
        if (flags and OpFlags.REMOTE_READ != 0L) sink.remoteReadCounter = counter
        if (flags and OpFlags.REMOTE_WRITE != 0L) sink.remoteWriteCounter = counter
    }

    /**
     * Imports the owner's shared receive context (the peer SRX of fi_peer(3)): this endpoint's rails match what they
     * receive against [owner]'s posted receives and queue what is unexpected there, and this endpoint's own receive
     * posting returns `-ENOSYS` — receives are posted on the owner. The owner's domain must be this one's owner
     * ([Fabric.domain]).
     */
    public fun bind(owner: SharedReceiveContext) {
        checkNotEnabled("bind a shared receive context")
        if (owner.lock !== domain.lock) {
            throw FabricException.invalid(
                "endpoint on '${domain.name}': the shared receive context belongs to another domain; open this domain with fabric.domain(info, owner = that domain) to import it"
            )
        }
        sink.srx = owner
        srxImported = true
    }

    /**
     * Opens a peer transfer over this endpoint (`FI_PEER_TRANSFER`): a peer provider's control traffic travels over
     * this endpoint's rails, in a tag space of its own, and its outcomes go to [ops] instead of this endpoint's CQ. See
     * [PeerTransfer].
     */
    public fun peerTransfer(ops: PeerTransferOps): PeerTransfer =
        synchronized(domain.lock) {
            peerTransferOpen = true
            PeerTransfer(this, ops)
        }

    /** Binds an event queue for control events such as [EventType.PEER_DOWN]. */
    public fun bind(eq: EventQueue) {
        checkNotEnabled("bind an event queue")
        sink.eq = eq
    }

    /** Enables the endpoint (`fi_enable`); it must be bound to a CQ for each direction and to an AV. */
    public fun enable() {
        if (closed) throw FabricException(Errno.EOPBADSTATE, "endpoint: closed")
        if (enabled) return
        if (txCq == null && rxCq == null) {
            throw FabricException(
                Errno.ENOCQ,
                "endpoint on '${domain.name}': not bound to a completion queue; call bind(cq, OpFlags.TRANSMIT or OpFlags.RECV) before enable()",
            )
        }
        if (txCq == null)
            throw FabricException(
                Errno.ENOCQ,
                "endpoint on '${domain.name}': no completion queue bound for TRANSMIT; bind one with bind(cq, OpFlags.TRANSMIT)",
            )
        if (rxCq == null)
            throw FabricException(
                Errno.ENOCQ,
                "endpoint on '${domain.name}': no completion queue bound for RECV; bind one with bind(cq, OpFlags.RECV)",
            )
        if (av == null)
            throw FabricException(
                Errno.ENOAV,
                "endpoint on '${domain.name}': not bound to an address vector; call bind(av) before enable()",
            )
        transport.enable()
        enabled = true
        domain.enabled(transport)
        Telemetry.endpointEnabled(this)
    }

    // ## Sends ##

    /** Sends `buffer[offset, offset+length)` to [dest] (`fi_send`). */
    public fun trySend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, context: Any?): Int =
        postSend(buffer, offset.toLong(), length, dest, 0, 0, OpFlags.MSG, context)

    /** Sends [buffer]'s position..limit to [dest]. */
    public fun trySend(buffer: ByteBuffer, dest: Long, context: Any?): Int =
        postBytes(buffer, dest, 0, 0, OpFlags.MSG, context)

    /** Sends with remote CQ data (`fi_senddata`). */
    public fun trySenddata(buffer: DirectBuffer, offset: Int, length: Int, data: Long, dest: Long, context: Any?): Int =
        postSend(buffer, offset.toLong(), length, dest, 0, data, OpFlags.MSG or OpFlags.REMOTE_CQ_DATA, context)

    /** Sends a small message and returns with the buffer reusable; no completion follows (`fi_inject`). */
    public fun tryInject(buffer: DirectBuffer, offset: Int, length: Int, dest: Long): Int =
        postSend(buffer, offset.toLong(), length, dest, 0, 0, OpFlags.MSG or OpFlags.INJECT, null)

    /** Sends a tagged message (`fi_tsend`). */
    public fun tryTsend(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long, context: Any?): Int =
        postSend(buffer, offset.toLong(), length, dest, tag, 0, OpFlags.TAGGED, context)

    /** Sends [buffer]'s position..limit as a tagged message. */
    public fun tryTsend(buffer: ByteBuffer, dest: Long, tag: Long, context: Any?): Int =
        postBytes(buffer, dest, tag, 0, OpFlags.TAGGED, context)

    /** Sends a tagged message with remote CQ data (`fi_tsenddata`). */
    public fun tryTsenddata(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        data: Long,
        dest: Long,
        tag: Long,
        context: Any?,
    ): Int =
        postSend(buffer, offset.toLong(), length, dest, tag, data, OpFlags.TAGGED or OpFlags.REMOTE_CQ_DATA, context)

    /** Injects a tagged message (`fi_tinject`). */
    public fun tryTinject(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long): Int =
        postSend(buffer, offset.toLong(), length, dest, tag, 0, OpFlags.TAGGED or OpFlags.INJECT, null)

    /**
     * The general send (`fi_sendmsg` / `fi_tsendmsg`): [flags] may add TAGGED, REMOTE_CQ_DATA, INJECT, COMPLETION,
     * INJECT_COMPLETE, TRANSMIT_COMPLETE or DELIVERY_COMPLETE.
     */
    public fun trySendmsg(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
    ): Int =
        postSend(
            buffer,
            offset.toLong(),
            length,
            dest,
            tag,
            data,
            if (flags and OpFlags.TAGGED != 0L) flags else flags or OpFlags.MSG,
            context,
        )

    // ## Receives ##

    /** Posts a receive for an untagged message from [src] or [FiAddr.UNSPEC] (`fi_recv`). */
    public fun tryRecv(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, context: Any?): Int =
        postRecv(false, buffer, offset, length, src, 0, -1L, 0, context)

    /** Posts a receive into [buffer]'s position..limit. */
    public fun tryRecv(buffer: ByteBuffer, src: Long, context: Any?): Int =
        postRecv(false, buffer, src, 0, -1L, 0, context)

    /**
     * Posts a tagged receive (`fi_trecv`): matches messages whose tag equals [tag] in every bit not set in [ignore].
     * [flags] may be [OpFlags.PEEK] (report a match without taking it, or ENOMSG), PEEK|CLAIM (reserve it for
     * [context]), PEEK|DISCARD (drop it), CLAIM (receive the message claimed earlier with this [context]) or
     * CLAIM|DISCARD (drop it).
     */
    @JvmOverloads
    public fun tryTrecv(
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        context: Any?,
        flags: Long = 0,
    ): Int = postRecv(true, buffer, offset, length, src, tag, ignore, flags, context)

    /** [tryTrecv] into [buffer]'s position..limit. */
    @JvmOverloads
    public fun tryTrecv(buffer: ByteBuffer, src: Long, tag: Long, ignore: Long, context: Any?, flags: Long = 0): Int =
        postRecv(true, buffer, src, tag, ignore, flags, context)

    /**
     * Posts every receive of [batch] in order, as that many [tryTrecv] calls would, under one acquisition of the
     * domain's lock. Returns 0 when all were posted, else the negated errno of the first refused ([TrecvBatch.posted]
     * says how many before it were posted; those after it were not tried). Allocates nothing.
     */
    public fun tryTrecv(batch: TrecvBatch): Int {
        batch.posted = 0
        domain.lock.guard {
            for (i in 0 until batch.size) {
                val buffer = batch.buffer(i)
                val offset = batch.offset(i).toLong()
                var rc = checkRange(buffer, offset, batch.length(i))
                if (rc == 0)
                    rc =
                        postRecvLocked(
                            true,
                            buffer,
                            offset,
                            batch.length(i),
                            batch.src(i),
                            batch.tag(i),
                            batch.ignore(i),
                            0,
                            batch.context(i),
                            false,
                            null,
                        )
                if (rc != 0) return rc
                batch.posted = i + 1
            }
        }
        return 0
    }

    /**
     * Cancels the posted receive whose context is [context] (`fi_cancel`): it completes in error with
     * [Errno.ECANCELED]. Returns 0, or `-ENOENT` if no posted receive has that context (it may have completed already).
     */
    public fun cancel(context: Any): Int =
        synchronized(domain.lock) {
            if (srxImported) return -Errno.ENOSYS
            val e = srx.cancel(context) ?: return -Errno.ENOENT
            sink.rxError(
                e.context,
                recvFlags(e.tagged, e.flags),
                0,
                0,
                e.tag,
                0,
                Errno.ECANCELED,
                FiAddr.NOTAVAIL,
                "receive cancelled",
            )
            srx.freeEntry(e)
            0
        }

    // ## RMA and atomics ##
    //
    // The target is addressed by [remoteOffset] bytes into the memory region registered under
    // [key] at the peer (offsets, not virtual addresses: MrMode has no VIRT_ADDR). The target
    // checks the key, the bounds and the access the region grants; a refusal arrives as an error
    // completion (EACCES: no such key or access not granted, EINVAL: out of bounds) whose message
    // names the key, offset and length. Completions report RMA|WRITE, RMA|READ, ATOMIC|WRITE or
    // ATOMIC|READ (fetching forms); they arrive once the target has carried the operation out.
    // Besides the codes of the sends, these return -ENOSYS on a rail without RMA, -EOPNOTSUPP for
    // an atomic operation that does not apply to the type or form, -EMSGSIZE past [atomicValid].
    //
    // Capabilities mean what libfabric's do: an endpoint whose [info] was not granted Caps.RMA
    // refuses RMA reads and writes, and one not granted Caps.ATOMIC refuses atomics, with
    // -EOPNOTSUPP, even where its rail carries them. Ask for them in the hints (hints naming no
    // primary capability are granted all the rail offers; Topology.open asks for all its rails
    // carry, RMA and atomics included).

    /** Writes `buffer[offset, offset+length)` into [dest]'s region [key] at [remoteOffset] (`fi_write`). */
    @JvmOverloads
    public fun tryWrite(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int = postRma(true, buffer, offset.toLong(), length, dest, remoteOffset, key, context, flags)

    /**
     * Reads `length` bytes from [src]'s region [key] at [remoteOffset] into `buffer[offset, offset+length)`
     * (`fi_read`).
     */
    @JvmOverloads
    public fun tryRead(
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int = postRma(false, buffer, offset.toLong(), length, src, remoteOffset, key, context, flags)

    /**
     * The one RMA write or read: of `buffer[offset, offset+length)`, or, with [device] set, of `device[offset,
     * offset+length)` staged through a bounce buffer ([buffer] unused): filled before a write, drained at a read's
     * completion ([EndpointSink]). A failed fill is an error completion with the copy's errno.
     */
    private fun postRma(
        write: Boolean,
        buffer: DirectBuffer,
        offset: Long,
        length: Int,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long,
        device: MemoryRegion? = null,
    ): Int {
        val bad = if (device != null) checkRegion(device, offset, length) else checkRange(buffer, offset, length)
        if (bad != 0) return bad
        if (remoteOffset < 0) return -Errno.EINVAL
        if (!granted(Caps.RMA)) return -Errno.EOPNOTSUPP
        synchronized(domain.lock) {
            if (!enabled) return -Errno.EOPBADSTATE
            if (length > maxMsgSize) return -Errno.EMSGSIZE
            val s = if (device != null) sink.staging.stage(device, offset, length, context) else null
            if (s != null && write) {
                val n = sink.staging.fill(s)
                if (n < 0) {
                    val why = sink.staging.explain(s, HmemOp.COPY_FROM_HMEM_IOV, n)
                    sink.rmaError(s, OpFlags.RMA or OpFlags.WRITE or flags, length.toLong(), (-n).toInt(), why)
                    return 0
                }
            }
            val v = s?.view ?: view.also { it.wrap(buffer, offset.toInt(), length) }
            val ctx = s ?: context
            val rc =
                if (write) transport.write(v, peer, remoteOffset, key, flags, ctx)
                else transport.read(v, peer, remoteOffset, key, flags, ctx)
            if (s != null && rc != 0) sink.staging.release(s)
            return rc
        }
    }

    /**
     * Applies [op] with the [count] elements of [type] at `buffer[offset…]` to [dest]'s region [key] at [remoteOffset],
     * element by element (`fi_atomic`).
     */
    @JvmOverloads
    public fun tryAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postAtomic(
            AtomicForm.UPDATE,
            buffer,
            offset,
            count,
            null,
            0,
            null,
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /**
     * [tryAtomic], also writing the target's old values to `result[resultOffset…]` (`fi_fetch_atomic`);
     * [AtomicOp.ATOMIC_WRITE] is a swap.
     */
    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        result: MutableDirectBuffer,
        resultOffset: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postAtomic(
            AtomicForm.FETCH,
            buffer,
            offset,
            count,
            null,
            0,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /**
     * Compare-and-swap (`fi_compare_atomic`, [op] = [AtomicOp.CSWAP]): each target element equal to its `compare`
     * element is replaced by its `buffer` element; every old value goes to `result`.
     */
    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        compare: DirectBuffer,
        compareOffset: Int,
        result: MutableDirectBuffer,
        resultOffset: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postAtomic(
            AtomicForm.COMPARE,
            buffer,
            offset,
            count,
            compare,
            compareOffset,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /** The most elements of [type] one [tryAtomic] with [op] carries (`fi_atomicvalid`); 0 if not supported. */
    public fun atomicValid(type: AtomicDatatype, op: AtomicOp): Int = atomicCount(AtomicForm.UPDATE, type, op)

    /** [atomicValid] for [tryFetchAtomic] (`fi_fetch_atomicvalid`). */
    public fun fetchAtomicValid(type: AtomicDatatype, op: AtomicOp): Int = atomicCount(AtomicForm.FETCH, type, op)

    /** [atomicValid] for [tryCompareAtomic] (`fi_compare_atomicvalid`). */
    public fun compareAtomicValid(type: AtomicDatatype, op: AtomicOp): Int = atomicCount(AtomicForm.COMPARE, type, op)

    /**
     * Whether this endpoint may issue operations of [cap] ([Caps.RMA] or [Caps.ATOMIC]): its [info] was granted it, or
     * its rail does not carry it at all (the rail then answers -ENOSYS).
     */
    @JvmSynthetic internal fun granted(cap: Long): Boolean = info.caps and cap != 0L || transport.rmaCaps and cap == 0L

    @JvmSynthetic
    internal fun atomicCount(form: AtomicForm, type: AtomicDatatype, op: AtomicOp): Int =
        if (!form.admits(op) || !op.appliesTo(type)) 0 else transport.maxAtomicCount(type, form)

    /** 0 if an atomic of [form] with [op] on [count] elements of [type] may be posted, else the refusal. */
    private fun atomicRefusal(
        form: AtomicForm,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        remoteOffset: Long,
    ): Int =
        when {
            !form.admits(op) || !op.appliesTo(type) || !granted(Caps.ATOMIC) -> -Errno.EOPNOTSUPP
            count <= 0 || remoteOffset < 0 -> -Errno.EINVAL
            else -> 0
        }

    private fun postAtomic(
        form: AtomicForm,
        buffer: DirectBuffer,
        offset: Int,
        count: Int,
        compare: DirectBuffer?,
        compareOffset: Int,
        result: MutableDirectBuffer?,
        resultOffset: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long,
    ): Int {
        val refused = atomicRefusal(form, type, op, count, remoteOffset)
        if (refused != 0) return refused
        val bytes = count.toLong() * type.size
        if (offset < 0 || offset + bytes > buffer.capacity()) return -Errno.EINVAL
        if (compare != null && (compareOffset < 0 || compareOffset + bytes > compare.capacity())) return -Errno.EINVAL
        if (result != null && (resultOffset < 0 || resultOffset + bytes > result.capacity())) return -Errno.EINVAL
        synchronized(domain.lock) {
            if (!enabled) return -Errno.EOPBADSTATE
            val n = bytes.toInt()
            return atomicLocked(
                buffer,
                offset,
                compare,
                compareOffset,
                result,
                resultOffset,
                n,
                dest,
                remoteOffset,
                key,
                type,
                op,
                count,
                flags,
                context,
            )
        }
    }

    /** Hands an atomic whose operands are [n] bytes each to the rail; checked already, caller holds the lock. */
    private fun atomicLocked(
        buffer: DirectBuffer,
        offset: Int,
        compare: DirectBuffer?,
        compareOffset: Int,
        result: MutableDirectBuffer?,
        resultOffset: Int,
        n: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int {
        view.wrap(buffer, offset, n)
        if (compare != null) compareView.wrap(compare, compareOffset, n)
        if (result != null) resultView.wrap(result, resultOffset, n)
        return transport.atomic(
            view,
            if (compare != null) compareView else null,
            if (result != null) resultView else null,
            dest,
            remoteOffset,
            key,
            type,
            op,
            count,
            flags,
            context,
        )
    }

    // ## ByteBuffer forms of send-with-data, inject, RMA and atomics ##
    //
    // Each reads or fills the buffer's position..limit (position and limit stay as they are) and
    // returns the same codes as its DirectBuffer form, plus -EINVAL for a buffer it cannot use:
    // a read-only one to write into, a read-only heap one, and for atomics a buffer not in the
    // native byte order or not holding a whole number of elements (see AtomicDatatype).

    /** [trySenddata] from [buffer]'s position..limit. */
    public fun trySenddata(buffer: ByteBuffer, data: Long, dest: Long, context: Any?): Int =
        postBytes(buffer, dest, 0, data, OpFlags.MSG or OpFlags.REMOTE_CQ_DATA, context)

    /** [tryTsenddata] from [buffer]'s position..limit. */
    public fun tryTsenddata(buffer: ByteBuffer, data: Long, dest: Long, tag: Long, context: Any?): Int =
        postBytes(buffer, dest, tag, data, OpFlags.TAGGED or OpFlags.REMOTE_CQ_DATA, context)

    /** [tryInject] from [buffer]'s position..limit. */
    public fun tryInject(buffer: ByteBuffer, dest: Long): Int =
        postBytes(buffer, dest, 0, 0, OpFlags.MSG or OpFlags.INJECT, null)

    /** [tryTinject] from [buffer]'s position..limit. */
    public fun tryTinject(buffer: ByteBuffer, dest: Long, tag: Long): Int =
        postBytes(buffer, dest, tag, 0, OpFlags.TAGGED or OpFlags.INJECT, null)

    /** [trySendmsg] from [buffer]'s position..limit. */
    public fun trySendmsg(buffer: ByteBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int =
        postBytes(buffer, dest, tag, data, if (flags and OpFlags.TAGGED != 0L) flags else flags or OpFlags.MSG, context)

    /** [tryWrite] from [buffer]'s position..limit. */
    @JvmOverloads
    public fun tryWrite(
        buffer: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(domain.lock) {
            if (ByteBuffers.problem(buffer, false, "") != null) return -Errno.EINVAL
            val v = ByteBuffers.wrap(byteView, buffer)
            postRma(true, v, 0, v.capacity(), dest, remoteOffset, key, context, flags)
        }

    /** [tryRead] into [buffer]'s position..limit. */
    @JvmOverloads
    public fun tryRead(
        buffer: ByteBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int =
        synchronized(domain.lock) {
            if (ByteBuffers.problem(buffer, true, "") != null) return -Errno.EINVAL
            val v = ByteBuffers.wrap(byteView, buffer)
            postRma(false, v, 0, v.capacity(), src, remoteOffset, key, context, flags)
        }

    /** [tryAtomic] with the elements between [buffer]'s position and limit (native byte order). */
    @JvmOverloads
    public fun tryAtomic(
        buffer: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int = postAtomicBytes(AtomicForm.UPDATE, buffer, null, null, dest, remoteOffset, key, type, op, context, flags)

    /** [tryFetchAtomic] with ByteBuffers in native byte order; the old values go to [result]'s position onwards. */
    @JvmOverloads
    public fun tryFetchAtomic(
        buffer: ByteBuffer,
        result: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int = postAtomicBytes(AtomicForm.FETCH, buffer, null, result, dest, remoteOffset, key, type, op, context, flags)

    /** [tryCompareAtomic] with ByteBuffers in native byte order. */
    @JvmOverloads
    public fun tryCompareAtomic(
        buffer: ByteBuffer,
        compare: ByteBuffer,
        result: ByteBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postAtomicBytes(AtomicForm.COMPARE, buffer, compare, result, dest, remoteOffset, key, type, op, context, flags)

    private fun postBytes(buffer: ByteBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        if (ByteBuffers.problem(buffer, false, "") != null) return -Errno.EINVAL
        return postSend(buffer, dest, tag, data, flags, context)
    }

    private fun postAtomicBytes(
        form: AtomicForm,
        buffer: ByteBuffer,
        compare: ByteBuffer?,
        result: ByteBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long,
    ): Int =
        synchronized(domain.lock) {
            if (ByteBuffers.atomicProblem(buffer, type, 0, false, "") != null) return -Errno.EINVAL
            val count = buffer.remaining() / type.size
            if (compare != null && ByteBuffers.atomicProblem(compare, type, count, false, "") != null)
                return -Errno.EINVAL
            if (result != null && ByteBuffers.atomicProblem(result, type, count, true, "") != null) return -Errno.EINVAL
            val c = if (compare != null) ByteBuffers.wrap(compareByteView, compare) else null
            val r = if (result != null) ByteBuffers.wrap(resultByteView, result) else null
            postAtomic(
                form,
                ByteBuffers.wrap(byteView, buffer),
                0,
                count,
                c,
                0,
                r,
                0,
                dest,
                remoteOffset,
                key,
                type,
                op,
                context,
                flags,
            )
        }

    // ## Device memory ##
    //
    // The forms below take a registered region and a byte range of it instead of a buffer: the
    // region says which memory it is ([MemoryRegion.iface]). System memory goes straight to the
    // buffer forms; device memory crosses the rail through a pooled host bounce buffer, filled and
    // drained by the copy service with this endpoint's overrides ([setOp]). A copy that fails turns
    // the operation into an error completion carrying the copy's errno. Besides the codes of the
    // buffer forms these return -EINVAL for a range outside the region or a region of another
    // domain, and -EOPNOTSUPP for device memory on a rail that does not offer Caps.HMEM.

    /**
     * Overrides [op] for this endpoint alone (its domain's override, if any, applies to the others). Returns 0, or
     * `-ENOSYS` where this endpoint's rail cannot honour it (it does not offer [Caps.HMEM]). [fn] null removes it.
     */
    public fun setOp(op: HmemOp, fn: HmemCopyFunction?): Int {
        val rc = domain.provider.hmemOverride(op, info, endpoint = true)
        if (rc != 0) return rc
        sink.hmemOps.set(op, fn)
        return 0
    }

    /**
     * Copies `region[offset, offset+length)` into `dst[dstOffset…]` through this endpoint's copy service (its override,
     * else its domain's, else the built-in copy), for a layer above that works on device memory host-side (a
     * collective's reduction). Returns 0, or the failed copy's negated errno (`-ENOSYS`: no copy function; see
     * [HmemCopy]), or `-EINVAL` for a range outside the region.
     */
    public fun copyFromRegion(
        region: MemoryRegion,
        offset: Long,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        length: Int,
    ): Int {
        if (!inRegion(region, offset, length)) return -Errno.EINVAL
        if (dstOffset < 0 || dstOffset.toLong() + length > dst.capacity()) return -Errno.EINVAL
        synchronized(domain.lock) {
            val n = HmemCopy.fromRegion(sink.hmemOps, region, offset, dst, dstOffset, length, hmemIov)
            return if (n < 0) n.toInt() else 0
        }
    }

    /** [copyFromRegion] into [dst]'s position..limit (its length is the copy's). */
    public fun copyFromRegion(region: MemoryRegion, offset: Long, dst: ByteBuffer): Int {
        if (dst.isReadOnly) return -Errno.EINVAL
        val v = UnsafeBuffer(dst, dst.position(), dst.remaining())
        return copyFromRegion(region, offset, v, 0, v.capacity())
    }

    /** Copies `src[srcOffset, srcOffset+length)` into [region] at [offset]; see [copyFromRegion]. */
    public fun copyToRegion(region: MemoryRegion, offset: Long, src: DirectBuffer, srcOffset: Int, length: Int): Int {
        if (!inRegion(region, offset, length)) return -Errno.EINVAL
        if (srcOffset < 0 || srcOffset.toLong() + length > src.capacity()) return -Errno.EINVAL
        synchronized(domain.lock) {
            val n = HmemCopy.toRegion(sink.hmemOps, region, offset, src, srcOffset, length, hmemIov)
            return if (n < 0) n.toInt() else 0
        }
    }

    /** [copyToRegion] from [src]'s position..limit. */
    public fun copyToRegion(region: MemoryRegion, offset: Long, src: ByteBuffer): Int {
        val v = UnsafeBuffer(src, src.position(), src.remaining())
        return copyToRegion(region, offset, v, 0, v.capacity())
    }

    private val hmemIov = LongArray(2)

    // A region form is its buffer form with the region as `desc`: system memory goes to the one implementation of the
    // operation on the region's buffer, device memory to the same implementation, which stages it (no second copy of
    // the checks or of the rail call).

    private fun postRegionSend(
        region: MemoryRegion,
        offset: Long,
        length: Int,
        dest: Long,
        tag: Long,
        flags: Long,
        context: Any?,
    ): Int =
        postSend(region.buffer, offset, length, dest, tag, 0, flags, context, region.takeUnless { it.iface.isSystem })

    private fun postRegionRecv(
        tagged: Boolean,
        region: MemoryRegion,
        offset: Long,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
    ): Int =
        postRecv(
            tagged,
            region.buffer,
            offset,
            length,
            src,
            tag,
            ignore,
            flags,
            context,
            false,
            region.takeUnless { it.iface.isSystem },
        )

    private fun postRegionRma(
        write: Boolean,
        region: MemoryRegion,
        offset: Long,
        length: Int,
        peer: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long,
    ): Int =
        postRma(
            write,
            region.buffer,
            offset,
            length,
            peer,
            remoteOffset,
            key,
            context,
            flags,
            region.takeUnless { it.iface.isSystem },
        )

    /** Sends `region[offset, offset+length)` to [dest] (`fi_send` with the region as `desc`). */
    public fun trySend(region: MemoryRegion, offset: Long, length: Int, dest: Long, context: Any?): Int =
        postRegionSend(region, offset, length, dest, 0, OpFlags.MSG, context)

    /**
     * The general send from `region[offset, offset+length)` (`fi_sendmsg` / `fi_tsendmsg` with the region as `desc`):
     * [flags] as for the buffer form (TAGGED, INJECT, DELIVERY_COMPLETE …); device memory is staged as by [tryTsend].
     */
    public fun trySendmsg(
        region: MemoryRegion,
        offset: Long,
        length: Int,
        dest: Long,
        tag: Long,
        flags: Long,
        context: Any?,
    ): Int =
        postRegionSend(
            region,
            offset,
            length,
            dest,
            tag,
            if (flags and OpFlags.TAGGED != 0L) flags else flags or OpFlags.MSG,
            context,
        )

    /** Starts [op], a suspend, future or blocking form's operation on [region]. Caller holds the lock. */
    @JvmSynthetic
    internal fun postRegion(op: PendingOp, region: MemoryRegion): Int {
        val at = op.regionOffset
        val c = OpFlags.COMPLETION
        return when (op.kind) {
            PendingOp.SEND -> postRegionSend(region, at, op.length, op.addr, 0, OpFlags.MSG or c, op)
            PendingOp.TSEND -> postRegionSend(region, at, op.length, op.addr, op.tag, OpFlags.TAGGED or c, op)
            PendingOp.RECV -> postRegionRecv(false, region, at, op.length, op.addr, 0, -1L, c, op)
            PendingOp.TRECV -> postRegionRecv(true, region, at, op.length, op.addr, op.tag, op.ignore, c, op)
            PendingOp.WRITE -> tryWrite(region, at, op.length, op.addr, op.remoteOffset, op.key, op, c)
            PendingOp.READ -> tryRead(region, at, op.length, op.addr, op.remoteOffset, op.key, op, c)
            PendingOp.ATOMIC,
            PendingOp.FETCH_ATOMIC,
            PendingOp.COMPARE_ATOMIC ->
                postStagedAtomic(
                    when (op.kind) {
                        PendingOp.ATOMIC -> AtomicForm.UPDATE
                        PendingOp.FETCH_ATOMIC -> AtomicForm.FETCH
                        else -> AtomicForm.COMPARE
                    },
                    region,
                    at,
                    op.length,
                    op.compareRegion,
                    op.compareRegionOffset,
                    op.fetchRegion,
                    op.fetchRegionOffset,
                    op.addr,
                    op.remoteOffset,
                    op.key,
                    op.atomicType,
                    op.atomicOp,
                    op,
                    c,
                )
            else -> -Errno.EOPNOTSUPP
        }
    }

    /**
     * Injects `region[offset, offset+length)` to [dest] (`fi_inject` with `desc`): staged through a bounce buffer
     * before this returns, so the region is reusable at once; no completion. A failed copy returns its negated errno.
     */
    public fun tryInject(region: MemoryRegion, offset: Long, length: Int, dest: Long): Int =
        postRegionSend(region, offset, length, dest, 0, OpFlags.MSG or OpFlags.INJECT, null)

    /** Injects `region[offset, offset+length)` as a tagged message (`fi_tinject` with `desc`); see [tryInject]. */
    public fun tryTinject(region: MemoryRegion, offset: Long, length: Int, dest: Long, tag: Long): Int =
        postRegionSend(region, offset, length, dest, tag, OpFlags.TAGGED or OpFlags.INJECT, null)

    /** Sends `region[offset, offset+length)` to [dest] as a tagged message (`fi_tsend` with `desc`). */
    public fun tryTsend(region: MemoryRegion, offset: Long, length: Int, dest: Long, tag: Long, context: Any?): Int =
        postRegionSend(region, offset, length, dest, tag, OpFlags.TAGGED, context)

    /** Receives an untagged message into `region[offset, offset+length)` (`fi_recv` with `desc`). */
    public fun tryRecv(region: MemoryRegion, offset: Long, length: Int, src: Long, context: Any?): Int =
        postRegionRecv(false, region, offset, length, src, 0, -1L, 0, context)

    /** Receives a tagged message into `region[offset, offset+length)` (`fi_trecv` with `desc`). */
    public fun tryTrecv(
        region: MemoryRegion,
        offset: Long,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        context: Any?,
    ): Int = postRegionRecv(true, region, offset, length, src, tag, ignore, 0, context)

    /** Writes `region[offset, offset+length)` into [dest]'s region [key] at [remoteOffset] (`fi_write` with `desc`). */
    @JvmOverloads
    public fun tryWrite(
        region: MemoryRegion,
        offset: Long,
        length: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int = postRegionRma(true, region, offset, length, dest, remoteOffset, key, context, flags)

    /**
     * Reads into `region[offset, offset+length)` from [src]'s region [key] at [remoteOffset] (`fi_read` with `desc`).
     */
    @JvmOverloads
    public fun tryRead(
        region: MemoryRegion,
        offset: Long,
        length: Int,
        src: Long,
        remoteOffset: Long,
        key: Long,
        context: Any?,
        flags: Long = 0,
    ): Int = postRegionRma(false, region, offset, length, src, remoteOffset, key, context, flags)

    /**
     * An atomic update of [dest]'s region [key] at [remoteOffset] whose operand is `count` elements at [offset] of
     * [region], memory of any interface (`fi_atomic` with `desc`): the operand is staged through a bounce buffer.
     */
    @JvmOverloads
    public fun tryAtomic(
        region: MemoryRegion,
        offset: Long,
        count: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postStagedAtomic(
            AtomicForm.UPDATE,
            region,
            offset,
            count,
            null,
            0,
            null,
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /**
     * A fetching atomic whose operand ([region] at [offset]) and result ([result] at [resultOffset]) are memory of any
     * interface (`fi_fetch_atomic` with `desc` and `result_desc`): the old values are copied into [result] when the
     * operation completes (a failed copy: an error completion with its errno).
     */
    @JvmOverloads
    public fun tryFetchAtomic(
        region: MemoryRegion,
        offset: Long,
        count: Int,
        result: MemoryRegion,
        resultOffset: Long,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postStagedAtomic(
            AtomicForm.FETCH,
            region,
            offset,
            count,
            null,
            0,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /** A compare-atomic whose operand, [compare] and [result] are memory of any interface; see [tryFetchAtomic]. */
    @JvmOverloads
    public fun tryCompareAtomic(
        region: MemoryRegion,
        offset: Long,
        count: Int,
        compare: MemoryRegion,
        compareOffset: Long,
        result: MemoryRegion,
        resultOffset: Long,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long = 0,
    ): Int =
        postStagedAtomic(
            AtomicForm.COMPARE,
            region,
            offset,
            count,
            compare,
            compareOffset,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            context,
            flags,
        )

    /**
     * An atomic whose local operands are regions: all in system memory, the buffer form on their buffers; else operand,
     * compare and result share one bounce buffer (`[operand | compare | result]`), the operand and compare copied in
     * now, the result copied out at completion, and the staged bytes go to the rail as the buffer form's would.
     */
    private fun postStagedAtomic(
        form: AtomicForm,
        region: MemoryRegion,
        offset: Long,
        count: Int,
        compare: MemoryRegion?,
        compareOffset: Long,
        result: MemoryRegion?,
        resultOffset: Long,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        context: Any?,
        flags: Long,
    ): Int {
        val refused = atomicRefusal(form, type, op, count, remoteOffset)
        if (refused != 0) return refused
        if (count.toLong() * type.size > MAX_STAGED / 3) return -Errno.EINVAL
        val n = count * type.size
        if (region.domain !== domain || !inRegion(region, offset, n)) return -Errno.EINVAL
        if (compare != null && (compare.domain !== domain || !inRegion(compare, compareOffset, n))) return -Errno.EINVAL
        if (result != null && (result.domain !== domain || !inRegion(result, resultOffset, n))) return -Errno.EINVAL
        val device = !region.iface.isSystem || compare?.iface?.isSystem == false || result?.iface?.isSystem == false
        if (!device) {
            return postAtomic(
                form,
                region.buffer,
                offset.toInt(),
                count,
                compare?.buffer,
                compareOffset.toInt(),
                result?.buffer,
                resultOffset.toInt(),
                dest,
                remoteOffset,
                key,
                type,
                op,
                context,
                flags,
            )
        }
        if (!HmemOverrides.honoured(info.caps)) return -Errno.EOPNOTSUPP
        synchronized(domain.lock) {
            if (!enabled) return -Errno.EOPBADSTATE
            val s = sink.staging.stage(result ?: region, if (result != null) resultOffset else offset, 3 * n, context)
            val b = s.bounce!!
            var rc = HmemCopy.fromRegion(sink.hmemOps, region, offset, b, 0, n, hmemIov)
            if (rc >= 0 && compare != null)
                rc = HmemCopy.fromRegion(sink.hmemOps, compare, compareOffset, b, n, n, hmemIov)
            if (rc < 0) {
                val why =
                    "memory region ${region.key}: " + HmemCopy.explain(region.iface, HmemOp.COPY_FROM_HMEM_IOV, rc)
                sink.rmaError(s, OpFlags.ATOMIC or flags, n.toLong(), (-rc).toInt(), why)
                return 0
            }
            if (result != null) s.drainAt = 2 * n
            val c = if (compare != null) b else null
            val r = if (result != null) b else null
            val posted = atomicLocked(b, 0, c, n, r, 2 * n, n, dest, remoteOffset, key, type, op, count, flags, s)
            if (posted != 0) sink.staging.release(s)
            return posted
        }
    }

    /** Whether `region[offset, offset+length)` lies inside [region]. */
    private fun inRegion(region: MemoryRegion, offset: Long, length: Int): Boolean =
        offset >= 0 && length >= 0 && offset + length <= region.length

    /** 0 if `buffer[offset, offset+length)` lies inside [buffer], else `-EINVAL`. */
    private fun checkRange(buffer: DirectBuffer, offset: Long, length: Int): Int =
        if (offset < 0 || length < 0 || offset + length > buffer.capacity()) -Errno.EINVAL else 0

    /** 0 if `region[offset, offset+length)` may be staged on this endpoint, else the refusal. */
    private fun checkRegion(region: MemoryRegion, offset: Long, length: Int): Int =
        when {
            region.domain !== domain -> -Errno.EINVAL
            !inRegion(region, offset, length) -> -Errno.EINVAL
            length > MAX_STAGED -> -Errno.EMSGSIZE
            !HmemOverrides.honoured(info.caps) -> -Errno.EOPNOTSUPP
            else -> 0
        }

    /**
     * A trigger-able alias of this endpoint (`fi_ep_alias` with `FI_TRIGGER`): every data operation posted on it is
     * deferred until [counter] reaches [threshold] (see [TriggeredEndpoint]).
     */
    @JvmOverloads
    public fun triggerAlias(counter: Counter, threshold: Long = 0): TriggeredEndpoint {
        if (counter.domain !== domain)
            throw FabricException.invalid(
                "endpoint: the counter belongs to domain '${counter.domain.name}', not '${domain.name}'"
            )
        return TriggeredEndpoint(this, counter, threshold)
    }

    /**
     * Closes the endpoint (`fi_close`), the same way on every rail. Operations waited on in their suspend, future or
     * blocking forms end with ESHUTDOWN; operations posted with the `try…` forms and not yet complete — receives still
     * posted included — produce no completion (as with fi_close, the application stops expecting them); deferred work
     * aimed at the endpoint is cancelled. To its peers the endpoint is gone as if its process had died: their sends and
     * RMA to it fail, their receives directed at it fail with EHOSTDOWN, and their event queues get PEER_DOWN.
     */
    override fun close() {
        if (closed) return
        closed = true
        synchronized(domain.lock) {
            enabled = false
            try {
                transport.close()
            } finally {
                domain.closed(this, transport)
                domain.hub.endpointClosed(this)
                domain.deferredWork.endpointClosed(this)
            }
        }
        Telemetry.endpointClosed(this)
        domain.hub.dispatchReady()
    }

    override fun toString(): String = "Endpoint(${info.provider}/${domain.name})"

    /** What each rail of this endpoint carried and how deep the receive queues got. */
    public fun stats(): EndpointStats = synchronized(domain.lock) { EndpointStats(transport.railStats(), srx.stats()) }

    /**
     * Stops counting traffic in [stats] (and in the table `BRAID_LINK_DUMP_STATS` prints) until [resumeStats]: what the
     * endpoint carries in between is left out, as a benchmark leaves out its warm-up. The queue depths
     * ([EndpointStats.queues]) go on being sampled. Nothing is paid per message.
     */
    public fun pauseStats(): Unit = synchronized(domain.lock) { transport.pauseStats(true) }

    /** Counts traffic in [stats] again, from the counts [pauseStats] left (a no-op when not paused). */
    public fun resumeStats(): Unit = synchronized(domain.lock) { transport.pauseStats(false) }

    /** The provider's view of this endpoint's channels and queues, for diagnostics. */
    public fun describe(): String = synchronized(domain.lock) { "$transport\n  ${srx.stats()}\n  ${sink.bounds}" }

    // ## Internals ##

    /**
     * The one send: of `buffer[offset, offset+length)`, or, with [device] set, of `device[offset, offset+length)`
     * staged through a bounce buffer ([buffer] unused) — whole for an inject (released before this returns: the region
     * is reusable at once), else whole up to the chunk size and chunk by chunk past it ([HmemStaging.stageSend]). A
     * failed copy is an error completion with its errno (an inject's: this call's return code).
     */
    private fun postSend(
        buffer: DirectBuffer,
        offset: Long,
        length: Int,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        device: MemoryRegion? = null,
    ): Int {
        val bad = if (device != null) checkRegion(device, offset, length) else checkRange(buffer, offset, length)
        if (bad != 0) return bad
        domain.lock.guard {
            return postSendLocked(buffer, offset, length, dest, tag, data, flags, context, device)
        }
    }

    /**
     * [trySendmsg] (an inject: INJECT in [flags], no [context]) for a caller that holds the domain lock: a [PendingOp]
     * starting, which would otherwise enter the lock a second time (a nested monitor enter still costs a locked
     * instruction).
     */
    @JvmSynthetic
    internal fun sendLocked(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val bad = checkRange(buffer, offset.toLong(), length)
        if (bad != 0) return bad
        val f = if (flags and OpFlags.TAGGED != 0L) flags else flags or OpFlags.MSG
        return postSendLocked(buffer, offset.toLong(), length, dest, tag, data, f, context, null)
    }

    /** [postSend] for a caller that holds the domain lock and has checked the range. */
    private fun postSendLocked(
        buffer: DirectBuffer,
        offset: Long,
        length: Int,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        device: MemoryRegion?,
    ): Int {
        val rc = checkSend(length, flags)
        if (rc != 0) return rc
        if (PeerTags.refused(peerTransferOpen, flags and OpFlags.TAGGED != 0L, tag)) return -Errno.EINVAL
        val inject = flags and OpFlags.INJECT != 0L
        val s =
            when {
                device == null -> null
                inject -> sink.staging.stage(device, offset, length, null)
                else -> sink.staging.stageSend(device, offset, length, context)
            }
        if (s != null) {
            val n = if (inject) sink.staging.fill(s) else sink.staging.fillFirst(s)
            if (n < 0 && inject) {
                sink.staging.release(s)
                return n.toInt()
            }
            if (n < 0) {
                val why = sink.staging.explain(s, HmemOp.COPY_FROM_HMEM_IOV, n)
                sink.txError(s, flags or txOpFlags, length.toLong(), tag, (-n).toInt(), why)
                return 0
            }
        }
        val v = s?.view ?: view.also { it.wrap(buffer, offset.toInt(), length) }
        val sent = transport.send(v, dest, tag, data, flags or txOpFlags, if (s != null && !inject) s else context)
        if (s != null && (inject || sent != 0)) sink.staging.release(s)
        return sent
    }

    private fun postSend(buffer: ByteBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int =
        domain.lock.guard {
            val v = ByteBuffers.wrap(byteView, buffer)
            postSend(v, 0, v.capacity(), dest, tag, data, flags, context)
        }

    @JvmSynthetic
    internal fun postPeerSend(
        buffer: DirectBuffer,
        offset: Int,
        length: Int,
        dest: Long,
        tag: Long,
        context: PeerTransferOp,
    ): Int {
        if (offset < 0 || length < 0 || offset.toLong() + length > buffer.capacity()) return -Errno.EINVAL
        synchronized(domain.lock) {
            val rc = checkSend(length, 0)
            if (rc != 0) return rc
            view.wrap(buffer, offset, length)
            return transport.send(view, dest, tag, 0, OpFlags.TAGGED or OpFlags.COMPLETION or txOpFlags, context)
        }
    }

    private fun checkSend(length: Int, flags: Long): Int =
        when {
            !enabled -> -Errno.EOPBADSTATE
            length > maxMsgSize -> -Errno.EMSGSIZE
            flags and OpFlags.INJECT != 0L && length > injectSize -> -Errno.EMSGSIZE
            else -> 0
        }

    @JvmSynthetic
    internal fun postRecv(
        tagged: Boolean,
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
        peer: Boolean = false,
    ): Int = postRecv(tagged, buffer, offset.toLong(), length, src, tag, ignore, flags, context, peer, null)

    /**
     * The one receive: into `buffer[offset, offset+length)`, or, with [device] set, into a bounce buffer of [length]
     * bytes drained into `device[offset…]` at the completion ([EndpointSink]; [buffer] unused). A device receive cannot
     * peek or claim (`-EOPNOTSUPP`).
     */
    private fun postRecv(
        tagged: Boolean,
        buffer: MutableDirectBuffer,
        offset: Long,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
        peer: Boolean,
        device: MemoryRegion?,
    ): Int {
        val bad = if (device != null) checkRegion(device, offset, length) else checkRange(buffer, offset, length)
        if (bad != 0) return bad
        domain.lock.guard {
            return postRecvLocked(tagged, buffer, offset, length, src, tag, ignore, flags, context, peer, device)
        }
    }

    /**
     * [tryTrecv] ([tagged]) or [tryRecv] for a caller that holds the domain lock: a [PendingOp] starting (see
     * [sendLocked]).
     */
    @JvmSynthetic
    internal fun recvLocked(
        tagged: Boolean,
        buffer: MutableDirectBuffer,
        offset: Int,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val bad = checkRange(buffer, offset.toLong(), length)
        if (bad != 0) return bad
        return postRecvLocked(tagged, buffer, offset.toLong(), length, src, tag, ignore, flags, context, false, null)
    }

    /** [postRecv] for a caller that holds the domain lock and has checked the range. */
    private fun postRecvLocked(
        tagged: Boolean,
        buffer: MutableDirectBuffer,
        offset: Long,
        length: Int,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
        peer: Boolean,
        device: MemoryRegion?,
    ): Int {
        val rc = checkRecv(tagged, src, tag, peer)
        if (rc != 0) return rc
        val mask = if (peer) ignore else PeerTags.applicationMask(peerTransferOpen, ignore)
        if (flags and (OpFlags.PEEK or OpFlags.CLAIM) != 0L) {
            if (device != null) return -Errno.EOPNOTSUPP
            return srx.probe(sink, tagged, buffer, offset.toInt(), length, src, tag, mask, flags, context)
        }
        val s = if (device != null) sink.staging.stage(device, offset, length, context) else null
        srx.post(
            tagged,
            src,
            tag,
            mask,
            flags or rxOpFlags or (if (peer) OpFlags.COMPLETION else 0),
            s ?: context,
            s?.view ?: buffer,
            if (s != null) 0 else offset.toInt(),
            length,
        )
        return 0
    }

    /** Refusals common to every receive; caller holds the lock. */
    private fun checkRecv(tagged: Boolean, src: Long, tag: Long, peer: Boolean): Int =
        when {
            !enabled -> -Errno.EOPBADSTATE
            srxImported -> -Errno.ENOSYS
            src == FiAddr.UNSPEC && !anySource -> -Errno.EINVAL
            !peer && PeerTags.refused(peerTransferOpen, tagged, tag) -> -Errno.EINVAL
            else -> 0
        }

    private fun postRecv(
        tagged: Boolean,
        buffer: ByteBuffer,
        src: Long,
        tag: Long,
        ignore: Long,
        flags: Long,
        context: Any?,
    ): Int =
        domain.lock.guard {
            if (buffer.isReadOnly) return -Errno.EINVAL
            val v = ByteBuffers.wrap(byteView, buffer)
            postRecv(tagged, v, 0, v.capacity(), src, tag, ignore, flags, context, false, null)
        }

    private fun checkNotEnabled(what: String) {
        if (enabled) throw FabricException(Errno.EOPBADSTATE, "endpoint: cannot $what after enable()")
    }

    internal companion object {
        private fun recvFlags(tagged: Boolean, flags: Long): Long = EndpointSink.recvFlags(tagged, flags)

        /** The largest device-memory operation staged whole through one bounce buffer. */
        private const val MAX_STAGED = 1 shl 30

        /**
         * Opens an endpoint of [domain] for [info] in two phases, so that no half-built endpoint escapes: its
         * [EndpointSink] (the rails' host) and the provider's transport first, then the endpoint over them, which the
         * sink names in the events it writes from then on.
         */
        @JvmSynthetic
        fun open(domain: Domain, info: Info): Endpoint {
            val sink = EndpointSink(domain, info)
            val transport = domain.provider.openEndpoint(sink, info, RailAv(sink, info.provider))
            return Endpoint(domain, info, sink, transport).also { sink.endpoint = it }
        }
    }
}
