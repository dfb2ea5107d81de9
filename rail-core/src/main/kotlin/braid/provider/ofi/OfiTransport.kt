package braid.provider.ofi

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Info
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RxEntry
import braid.provider.HostIdentity
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.RmaDescriptor
import braid.provider.Transport
import braid.provider.UnexpectedBounds
import com.sun.jna.Memory
import com.sun.jna.Pointer
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.IntArrayList
import org.agrona.concurrent.UnsafeBuffer

/**
 * A native endpoint as one Braid rail: a libfabric RDM endpoint with its own address vector and CQ (tagged format, read
 * with `fi_cq_readfrom` for the sender), driven by this rail's duty cycle.
 *
 * How it reaches Braid's shared receive context: Braid's header is not needed, since the native message already carries
 * what matching needs (tagged or not, the tag, the CQ data, the sender through FI_SOURCE). The rail keeps
 * [OfiParams.RECV_COUNT] native receives posted on each queue (untagged, and tagged with every tag bit ignored) into
 * buffers of [OfiParams.RECV_SIZE]; each message that lands is matched through the endpoint's [srx] exactly as shm's
 * and tcp's are (`getMsg`/`getTag`), copied into the receive it matched, or held as unexpected (counted in the
 * endpoint's shared bounds) until one does. The cost is one copy per message and a message size bounded by the receive
 * buffers. When the bounds are full the rail stops reposting its native receives, so the native provider pushes the
 * senders back.
 *
 * Sends go straight to native `fi_send`/`fi_tsend` (or the `…data` forms) from the caller's off-heap buffer (a heap
 * buffer, or an inject, is first copied into the operation's staging buffer). A native `-FI_EAGAIN` queues the send, in
 * order, for the duty cycle to retry. Native failures become error completions naming the native provider, the call and
 * libfabric's text (`fi_strerror`, and `fi_cq_strerror` for the provider's own `prov_errno`).
 *
 * Its parts: [OfiNativeEndpoint] holds the native objects and makes the calls on them, [OfiPeers] the native addresses,
 * [OfiReceives] the receive side. This class owns the operation slots (sends, RMA and atomics, from post to completion
 * or failure, with the liveness timeout) and the duty cycle that reads the CQ and dispatches its entries.
 *
 * Every call is made under the domain lock (FI_THREAD_DOMAIN use of the native objects).
 */
internal class OfiTransport(
    private val host: RailHost,
    private val info: Info,
    private val av: RailAv,
    private val domain: OfiDomain,
) : Transport {
    private val prov = domain.provName
    private val rail = "ofi:$prov"
    private val recvSize = info.settings[OfiParams.RECV_SIZE]
    private val recvCount = info.settings[OfiParams.RECV_COUNT]
    private val txSlots = info.settings[OfiParams.TX_SLOTS]
    /** [OfiParams.TX_TIMEOUT] in ns; 0: no liveness timeout. */
    private val txTimeout = info.settings[OfiParams.TX_TIMEOUT] * 1_000_000L
    private val injectWanted = info.settings[OfiParams.INJECT]
    private val slots = txSlots + 2 * recvCount

    override val counters: RailCounters = RailCounters(rail)
    private val account: UnexpectedBounds.Account = host.bounds.account(rail)

    // ## Native memory: the op contexts, tx slots first, then the receive buffers (untagged, then tagged) ##
    private val arena = Memory(slots * CONTEXT_SIZE).also { it.clear() }
    private val ctxBase = Pointer.nativeValue(arena)

    /** The native endpoint, its AV and CQ, and the calls on them. */
    private lateinit var nep: OfiNativeEndpoint

    /** The RMA and atomic capabilities this rail carries natively ([OfiDomain.rmaCaps]). */
    override val rmaCaps: Long = domain.rmaCaps
    private val mrLocal = domain.mrLocal
    /** The target's regions are keyed by their address (FI_MR_VIRT_ADDR): the native address is key + offset. */
    private val virtAddr = domain.virtAddr
    /** Zero-byte RMA slots to complete in the next duty cycle (a VIRT_ADDR provider never completes them). */
    private val emptyRma = IntArrayList()
    private val cache = domain.cache

    // ## Operation slots: tx slots first, then the receive buffers (untagged, then tagged) ##
    private val txContext = arrayOfNulls<Any>(txSlots)
    private val txFlags = LongArray(txSlots)
    private val txTag = LongArray(txSlots)
    private val txData = LongArray(txSlots)
    private val txLen = LongArray(txSlots)
    private val txAddr = LongArray(txSlots)
    private val txDest = LongArray(txSlots)
    /** What the slot carries: a send, or one of the RMA and atomic kinds. */
    private val txKind = IntArray(txSlots)
    private val txRemote = LongArray(txSlots)
    private val txKey = LongArray(txSlots)
    /** Atomics: the native datatype and op (`type shl 8 or op`), the element count, compare and result addresses. */
    private val txAtomic = IntArray(txSlots)
    private val txCount = IntArray(txSlots)
    private val txCmp = LongArray(txSlots)
    private val txRes = LongArray(txSlots)
    /** Where a staged read or fetch is copied back to at completion (a heap buffer's), else null. */
    private val txBack = arrayOfNulls<UnsafeBuffer>(txSlots)
    private val txBackAt = IntArray(txSlots)
    /**
     * Whether the slot holds an operation (its context may be null), and since when ([System.nanoTime]) the liveness
     * check first saw it ([NOT_SEEN] until then: stamping each operation as it starts would read the clock per send).
     */
    private val txBusy = BooleanArray(txSlots)
    private val txSince = LongArray(txSlots)
    /**
     * Failed by the liveness timeout while the native provider still holds it: the slot is not reused until its native
     * completion or error arrives, which is then dropped (a later operation must not receive it).
     */
    private val txZombie = BooleanArray(txSlots)
    private var lastLivenessCheck = 0L
    /** Duty cycles since the liveness check last read the clock. */
    private var livenessPolls = 0
    /** The cached registration the slot's local buffer holds (FI_MR_LOCAL providers), else null. */
    private val txMr = arrayOfNulls<OfiMrCache.Entry>(txSlots)
    private val txStage = arrayOfNulls<UnsafeBuffer>(txSlots)
    private val txFree = IntArrayList(txSlots, -1)
    /** Sends native `-FI_EAGAIN` refused, retried in order by [progress]. */
    private val txPending = IntArrayList()
    /** Whether the slot's send goes as a native inject ([OfiParams.INJECT]). */
    private val txInject = BooleanArray(txSlots)
    /**
     * Injected sends, completed in order by the next duty cycle (the native provider writes no completion for them).
     */
    private var injected = IntArrayList()
    /** The list [completeInjected] works through while new injects go to [injected]. */
    private var injectedNow = IntArrayList()
    /** The most bytes a send may have to go as a native inject; -1 where the rail does not inject. */
    private var injectMax = -1L

    /** Sends that went as native injects so far (for the tests). */
    var injectedSends = 0L
        private set

    /** The rail's peers in its native AV, and its receive side; made once the native objects are open. */
    private lateinit var peers: OfiPeers
    private lateinit var rx: OfiReceives

    override val address: ByteArray
    private var dead: String? = null
    private var closed = false

    init {
        for (i in txSlots - 1 downTo 0) txFree.addInt(i)
        val native = domain.native
        try {
            nep = OfiNativeEndpoint(rail, prov, native, slots.toLong(), rmaCaps, txSlots)
            peers = OfiPeers(rail, host, av, nep.nav, nep.avInsert)
            rx =
                OfiReceives(
                    rail,
                    host,
                    this,
                    account,
                    counters,
                    peers,
                    recvSize,
                    recvCount,
                    nep.ep,
                    nep.fnRecv,
                    nep.fnTRecv,
                    ctxBase + txSlots * CONTEXT_SIZE,
                    CONTEXT_SIZE,
                    domain.memory,
                    mrLocal,
                )
            if (injectWanted && nep.injectSize > 0) injectMax = nep.injectSize
            val format = OfiOps.getInt(native.info + OfiInfoDescriptor.ADDR_FORMAT)
            address = OfiAddressDescriptor.encode(HostIdentity.id, prov, format, nep.name)
        } catch (t: Throwable) {
            closeNative()
            throw t
        }
    }

    override fun enable() = rx.postAll()

    // ## Addresses ##

    /** The native endpoint (`struct fid_ep *`), for native deferred work ([OfiDeferredWork]). */
    val nativeEp: Long
        get() = nep.ep

    /** Whether this rail's native objects are [d]'s. */
    fun ofDomain(d: OfiDomain): Boolean = domain === d && !closed && nep.ep != 0L

    /** The native fi_addr of Braid's [dest] ([nativeDest]); -1 if it is not this rail's. Under the domain lock. */
    fun nativeAddress(dest: Long): Long = peers.nativeDest(dest)

    // ## Sends ##

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        dead?.let {
            return -Errno.ECONNRESET
        }
        val len = buffer.capacity()
        if (len > recvSize) return -Errno.EMSGSIZE
        val nd = peers.nativeDest(dest)
        if (nd < 0) return -Errno.EINVAL
        if (txFree.isEmpty()) return -Errno.EAGAIN
        val s = txFree.removeAt(txFree.size - 1)
        txBusy[s] = true
        txSince[s] = NOT_SEEN
        txKind[s] = KIND_SEND
        txContext[s] = context
        txFlags[s] = flags
        txTag[s] = tag
        txData[s] = data
        txLen[s] = len.toLong()
        txDest[s] = nd
        val inject = len <= injectMax && flags and NATIVE_COMPLETE == 0L
        txInject[s] = inject
        val direct = buffer.byteArray() == null && buffer.addressOffset() != 0L
        txAddr[s] =
            if (direct && flags and OpFlags.INJECT == 0L) buffer.addressOffset()
            else {
                val stage = stage(s, len)
                if (len > 0) stage.putBytes(0, buffer, 0, len)
                stage.addressOffset()
            }
        if (mrLocal && len > 0 && !inject)
            txMr[s] =
                if (txAddr[s] == buffer.addressOffset()) cache.acquire(buffer, len, braid.core.MrAccess.SEND)
                else cache.acquire(txStage[s]!!, len, braid.core.MrAccess.SEND)
        counters.sent(len)
        if (txPending.isEmpty()) {
            val rc = post(s)
            if (rc == -OfiOps.FI_EAGAIN.toLong()) txPending.addInt(s)
            else if (rc < 0) fail(s, rc.toInt(), "fi_${if (flags and OpFlags.TAGGED != 0L) "t" else ""}send")
        } else {
            txPending.addInt(s)
        }
        return 0
    }

    private fun stage(s: Int, len: Int): UnsafeBuffer {
        val have = txStage[s]
        if (have != null && have.capacity() >= len) return have
        val b = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(len, STAGE_MIN)))
        txStage[s] = b
        return b
    }

    /** Posts tx slot [s] natively; the native return code. */
    private fun post(s: Int): Long {
        val ctx = ctxBase + s.toLong() * CONTEXT_SIZE
        val desc = txMr[s]?.descriptor ?: 0L
        when (txKind[s]) {
            KIND_SEND -> {}
            KIND_WRITE -> return nep.writeDelivered(s, txAddr[s], txLen[s], desc, txDest[s], txRemote[s], txKey[s], ctx)
            KIND_READ -> return nep.read(txAddr[s], txLen[s], desc, txDest[s], txRemote[s], txKey[s], ctx)
            else -> return postAtomic(s, desc, ctx)
        }
        val flags = txFlags[s]
        val tagged = flags and OpFlags.TAGGED != 0L
        val withData = flags and OpFlags.REMOTE_CQ_DATA != 0L
        if (txInject[s]) {
            val rc = nep.inject(tagged, withData, txAddr[s], txLen[s], txData[s], txDest[s], txTag[s])
            if (rc == 0L) {
                injected.addInt(s)
                injectedSends++
            }
            return rc
        }
        if (flags and OpFlags.DELIVERY_COMPLETE != 0L)
            return nep.sendDelivered(
                s,
                tagged,
                withData,
                txAddr[s],
                txLen[s],
                desc,
                txData[s],
                txDest[s],
                txTag[s],
                ctx,
            )
        return when {
            tagged && withData -> nep.tsendData(txAddr[s], txLen[s], desc, txData[s], txDest[s], txTag[s], ctx)
            tagged -> nep.tsend(txAddr[s], txLen[s], desc, txDest[s], txTag[s], ctx)
            withData -> nep.sendData(txAddr[s], txLen[s], desc, txData[s], txDest[s], ctx)
            else -> nep.send(txAddr[s], txLen[s], desc, txDest[s], ctx)
        }
    }

    private fun postAtomic(s: Int, desc: Long, ctx: Long): Long {
        val type = txAtomic[s] ushr 8
        val op = txAtomic[s] and 0xff
        val n = txCount[s].toLong()
        return when (txKind[s]) {
            KIND_ATOMIC ->
                nep.atomicDelivered(s, txAddr[s], n, desc, txDest[s], txRemote[s], txKey[s], txAtomic[s], ctx)
            KIND_FETCH -> nep.fetchAtomic(txAddr[s], n, desc, txRes[s], txDest[s], txRemote[s], txKey[s], type, op, ctx)
            else ->
                nep.compareAtomic(
                    txAddr[s],
                    n,
                    desc,
                    txCmp[s],
                    txRes[s],
                    txDest[s],
                    txRemote[s],
                    txKey[s],
                    type,
                    op,
                    ctx,
                )
        }
    }

    // ## RMA and atomics ##

    override fun write(
        buffer: DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = startRma(KIND_WRITE, buffer, null, dest, remoteOffset, key, flags, context)

    override fun read(
        buffer: MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = startRma(KIND_READ, buffer, buffer, src, remoteOffset, key, flags, context)

    private fun startRma(
        kind: Int,
        buffer: DirectBuffer,
        into: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        if (rmaCaps and OfiGetInfo.RMA_CAPS == 0L) return -Errno.ENOSYS
        dead?.let {
            return -Errno.ECONNRESET
        }
        val len = buffer.capacity()
        val s = claim(dest) ?: return lastRefusal
        txKind[s] = kind
        txContext[s] = context
        txFlags[s] = flags
        txLen[s] = len.toLong()
        txRemote[s] = if (virtAddr) key + remoteOffset else remoteOffset
        txKey[s] = key
        val direct = buffer.byteArray() == null && buffer.addressOffset() != 0L
        if (direct) {
            txAddr[s] = buffer.addressOffset()
            if (mrLocal && len > 0) txMr[s] = cache.acquire(buffer, len, localAccess(kind))
        } else {
            val stage = stage(s, len)
            if (kind == KIND_WRITE && len > 0) stage.putBytes(0, buffer, 0, len)
            if (into != null) backTo(s, into, 0)
            txAddr[s] = stage.addressOffset()
            if (mrLocal && len > 0) txMr[s] = cache.acquire(stage, len, localAccess(kind))
        }
        if (len == 0 && virtAddr) {
            // shm (FI_MR_VIRT_ADDR) never completes a zero-byte RMA; it moves nothing, so it completes here, in the
            // next duty cycle (never from inside this call).
            emptyRma.addInt(s)
            return 0
        }
        return launch(s, if (kind == KIND_WRITE) "fi_write" else "fi_read")
    }

    override fun atomic(
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int {
        if (rmaCaps and OfiGetInfo.ATOMIC_CAPS == 0L) return -Errno.ENOSYS
        dead?.let {
            return -Errno.ECONNRESET
        }
        val form =
            if (compare != null) AtomicForm.COMPARE else if (result != null) AtomicForm.FETCH else AtomicForm.UPDATE
        if (count > maxAtomicCount(type, form)) return -Errno.EMSGSIZE
        val n = count * type.size
        val s = claim(dest) ?: return lastRefusal
        txKind[s] =
            when (form) {
                AtomicForm.UPDATE -> KIND_ATOMIC
                AtomicForm.FETCH -> KIND_FETCH
                AtomicForm.COMPARE -> KIND_COMPARE
            }
        txContext[s] = context
        txFlags[s] = flags
        txLen[s] = n.toLong()
        txRemote[s] = if (virtAddr) key + remoteOffset else remoteOffset
        txKey[s] = key
        txAtomic[s] = (type.code shl 8) or op.code
        txCount[s] = count
        // Operand, compare and result go through the slot's staging buffer: one registration serves all three, and a
        // heap buffer needs the copy anyway. An atomic carries a few elements; the copies cost little.
        val stage = stage(s, 3 * n)
        stage.putBytes(0, operand, 0, n)
        if (compare != null) stage.putBytes(n, compare, 0, n)
        val at = stage.addressOffset()
        txAddr[s] = at
        txCmp[s] = at + n
        txRes[s] = at + 2L * n
        if (result != null) backTo(s, result, 2 * n)
        if (mrLocal) txMr[s] = cache.acquire(stage, 3 * n, braid.core.MrAccess.READ or braid.core.MrAccess.WRITE)
        return launch(
            s,
            "fi_${if (form == AtomicForm.COMPARE) "compare_" else if (form == AtomicForm.FETCH) "fetch_" else ""}atomic",
        )
    }

    /**
     * What the native provider carries, within the limits every Braid rail keeps ([RmaDescriptor.MAX_ATOMIC_BYTES] per
     * atomic, half of it for compare-and-swap), so that a caller sizing atomics by [AtomicForm] gets the same answer on
     * every rail.
     */
    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int {
        if (rmaCaps and OfiGetInfo.ATOMIC_CAPS == 0L) return 0
        val braid = RmaDescriptor.MAX_ATOMIC_BYTES / type.size
        return minOf(nep.atomicMax[form.ordinal][type.code], if (form == AtomicForm.COMPARE) braid / 2 else braid)
    }

    /** Why [claim] refused: a negated errno. */
    private var lastRefusal = 0

    /** A free tx slot for an operation to [dest], its native address set; null with [lastRefusal] if none. */
    private fun claim(dest: Long): Int? {
        val nd = peers.nativeDest(dest)
        if (nd < 0) {
            lastRefusal = -Errno.EINVAL
            return null
        }
        if (txFree.isEmpty()) {
            lastRefusal = -Errno.EAGAIN
            return null
        }
        val s = txFree.removeAt(txFree.size - 1)
        txBusy[s] = true
        txSince[s] = NOT_SEEN
        txDest[s] = nd
        return s
    }

    private fun backTo(s: Int, into: MutableDirectBuffer, at: Int) {
        val b = txBack[s] ?: UnsafeBuffer(0L, 0).also { txBack[s] = it }
        b.wrap(into, 0, into.capacity())
        txBackAt[s] = at
    }

    private fun localAccess(kind: Int): Int =
        if (kind == KIND_READ) braid.core.MrAccess.WRITE or braid.core.MrAccess.RECV
        else braid.core.MrAccess.READ or braid.core.MrAccess.SEND

    /**
     * Posts RMA slot [s] now, or queues it behind the sends and RMA that native `-FI_EAGAIN` held back. A native
     * refusal at once is the return code (`-EOPNOTSUPP` for an atomic the provider does not carry on that type).
     */
    private fun launch(s: Int, call: String): Int {
        if (txPending.isNotEmpty()) {
            txPending.addInt(s)
            return 0
        }
        val rc = post(s)
        if (rc == -OfiOps.FI_EAGAIN.toLong()) {
            txPending.addInt(s)
            return 0
        }
        if (rc < 0) {
            releaseTx(s)
            return rc.toInt()
        }
        return 0
    }

    /** An RMA or atomic slot completed: results copied back where staged, then the completion. */
    private fun rmaDone(s: Int) {
        val back = txBack[s]
        val kind = txKind[s]
        if (back != null && back.capacity() > 0) {
            val n = txLen[s].toInt()
            val from = txStage[s]!!
            back.putBytes(0, from, txBackAt[s], minOf(n, back.capacity()))
        }
        val ctx = txContext[s]
        val flags = rmaFlags(s)
        val len = txLen[s]
        releaseTx(s)
        host.rmaComplete(ctx, flags, len)
    }

    private fun rmaFlags(s: Int): Long =
        (txFlags[s] and OpFlags.COMPLETION) or
            when (txKind[s]) {
                KIND_WRITE -> OpFlags.RMA or OpFlags.WRITE
                KIND_READ -> OpFlags.RMA or OpFlags.READ
                KIND_ATOMIC -> OpFlags.ATOMIC or OpFlags.WRITE
                else -> OpFlags.ATOMIC or OpFlags.READ
            }

    private fun describeRma(s: Int): String {
        val what =
            when (txKind[s]) {
                KIND_WRITE -> "RMA write of ${txLen[s]} bytes to"
                KIND_READ -> "RMA read of ${txLen[s]} bytes from"
                else -> {
                    val t = AtomicDatatype.of(txAtomic[s] ushr 8)
                    val o = AtomicOp.of(txAtomic[s] and 0xff)
                    val form =
                        when (txKind[s]) {
                            KIND_COMPARE -> "compare-atomic"
                            KIND_FETCH -> "fetch-atomic"
                            else -> "atomic"
                        }
                    "$form $o of ${txCount[s]} $t on"
                }
            }
        return "$rail: $what native peer ${txDest[s]} at key ${txKey[s]}, offset ${txRemote[s]}"
    }

    private fun fail(s: Int, rc: Int, call: String) {
        if (txKind[s] != KIND_SEND) {
            failRma(s, ofiErrno(rc), "${describeRma(s)}: $call failed: ${OfiLibrary.strerror(rc)} ($rc)")
            return
        }
        val ctx = txContext[s]
        val flags = txFlags[s]
        val len = txLen[s]
        val tag = txTag[s]
        releaseTx(s)
        host.txError(
            ctx,
            flags,
            len,
            tag,
            ofiErrno(rc),
            "$rail: $call of $len bytes failed: ${OfiLibrary.strerror(rc)} ($rc)",
        )
    }

    private fun failRma(s: Int, err: Int, message: String) {
        val ctx = txContext[s]
        val flags = rmaFlags(s)
        releaseTx(s)
        host.rmaError(ctx, flags, 0, err, message)
    }

    private fun releaseTx(s: Int) {
        txBusy[s] = false
        txZombie[s] = false
        txContext[s] = null
        txMr[s]?.let { cache.release(it) }
        txMr[s] = null
        txBack[s]?.wrap(0L, 0)
        txFree.addInt(s)
    }

    private fun retryPending(): Int {
        var n = 0
        while (txPending.isNotEmpty()) {
            val s = txPending.getInt(0)
            val rc = post(s)
            if (rc == -OfiOps.FI_EAGAIN.toLong()) break
            txPending.removeAt(0)
            n++
            if (rc < 0) fail(s, rc.toInt(), "fi_send")
        }
        return n
    }

    // ## Receives: [OfiReceives] ##

    override fun startMsg(entry: RxEntry) = rx.start(entry)

    override fun startTag(entry: RxEntry) = rx.start(entry)

    override fun discardMsg(entry: RxEntry) = rx.discard(entry)

    override fun discardTag(entry: RxEntry) = rx.discard(entry)

    // ## The duty cycle ##

    override fun progress(): Int {
        if (closed) return 0
        peers.sweep()
        var work = completeInjected() + retryPending() + rx.repostParked()
        if (txTimeout > 0) work += checkLiveness()
        work += domain.work.poll()
        while (emptyRma.isNotEmpty()) {
            rmaDone(emptyRma.removeAt(emptyRma.size - 1))
            work++
        }
        while (true) {
            val n = nep.readCq()
            if (n > 0) {
                for (k in 0 until n.toInt()) completion(nep.entry(k), nep.source(k))
                work += n.toInt()
                if (n < nep.batch) break
            } else if (n == -OfiOps.FI_EAVAIL.toLong()) {
                readError()
                work++
            } else {
                if (n != -OfiOps.FI_EAGAIN.toLong())
                    host.eventError(
                        ofiErrno(n.toInt()),
                        "$rail: fi_cq_readfrom failed: ${OfiLibrary.strerror(n.toInt())} ($n)",
                    )
                break
            }
        }
        return work
    }

    /**
     * Completes the sends the native provider took as injects, in the order they went: their bytes are the provider's
     * now, and it writes no completion for them. A completion may start new sends, which the next duty cycle completes.
     */
    private fun completeInjected(): Int {
        if (injected.isEmpty()) return 0
        val batch = injected
        injected = injectedNow
        injectedNow = batch
        val n = batch.size
        for (k in 0 until n) {
            val s = batch.getInt(k)
            val ctx = txContext[s]
            val flags = txFlags[s]
            val len = txLen[s]
            val tag = txTag[s]
            releaseTx(s)
            host.txComplete(ctx, flags, len, tag)
        }
        batch.clear()
        return n
    }

    /**
     * The liveness timeout ([OfiParams.TX_TIMEOUT]): an operation the native provider has not completed, or that its
     * `-FI_EAGAIN` has held back, for that long fails with ETIMEDOUT naming the peer — a killed peer on a provider that
     * never says so (shm's queue to a dead process fills and stays full) ends in an error, never a hang. Looked at a
     * few times per period, so it costs nothing per operation: the clock is read only while an operation is in flight,
     * and then once every [LIVENESS_POLLS] duty cycles (a busy-polling loop reads no clock per poll), and an
     * operation's age counts from the first look that found it, so it fails between one and one and a half periods
     * after it began.
     */
    private fun checkLiveness(): Int {
        if (txFree.size == txSlots || ++livenessPolls < LIVENESS_POLLS) return 0
        livenessPolls = 0
        val now = System.nanoTime()
        if (now - lastLivenessCheck < txTimeout / 4) return 0
        lastLivenessCheck = now
        var failed = 0
        for (s in 0 until txSlots) {
            if (!txBusy[s] || txZombie[s]) continue
            if (txSince[s] == NOT_SEEN) {
                txSince[s] = now
                continue
            }
            if (now - txSince[s] < txTimeout) continue
            val why =
                "no completion from native peer ${peers.braidSource(txDest[s]).let { if (it == FiAddr.NOTAVAIL) "?" else it }} " +
                    "in ${txTimeout / 1_000_000} ms (ofi.tx_timeout, BRAID_OFI_TX_TIMEOUT): the peer is gone or " +
                    "unreachable"
            val queued = txPending.indexOf(s)
            if (queued >= 0) txPending.removeAt(queued) else txZombie[s] = true
            failTimedOut(s, why, zombie = queued < 0)
            failed++
        }
        return failed
    }

    /** Reports slot [s] failed by the liveness timeout; a [zombie] keeps its slot until the native answer comes. */
    private fun failTimedOut(s: Int, why: String, zombie: Boolean) {
        val ctx = txContext[s]
        val err = Errno.ETIMEDOUT
        if (txKind[s] != KIND_SEND) {
            val message = "${describeRma(s)} timed out: $why"
            val flags = rmaFlags(s)
            if (zombie) txContext[s] = null else releaseTx(s)
            host.rmaError(ctx, flags, 0, err, message)
        } else {
            val flags = txFlags[s]
            val len = txLen[s]
            val tag = txTag[s]
            if (zombie) txContext[s] = null else releaseTx(s)
            host.txError(ctx, flags, len, tag, err, "$rail: send of $len bytes timed out: $why")
        }
    }

    private fun slotOf(opContext: Long): Int {
        val off = opContext - ctxBase
        if (off < 0 || off % CONTEXT_SIZE != 0L) return -1
        val s = (off / CONTEXT_SIZE).toInt()
        return if (s < slots) s else -1
    }

    private fun completion(entry: Long, nativeSrc: Long) {
        val s = slotOf(OfiOps.getLong(entry))
        if (s < 0) return
        if (s < txSlots) {
            if (txZombie[s]) {
                releaseTx(s) // failed by the liveness timeout already; its late completion is dropped
                return
            }
            if (txKind[s] != KIND_SEND) {
                rmaDone(s)
                return
            }
            val ctx = txContext[s]
            val flags = txFlags[s]
            val len = txLen[s]
            val tag = txTag[s]
            releaseTx(s)
            host.txComplete(ctx, flags, len, tag)
        } else {
            rx.arrived(
                s - txSlots,
                OfiOps.getLong(entry + 8),
                OfiOps.getLong(entry + 16),
                OfiOps.getLong(entry + 32),
                OfiOps.getLong(entry + 40),
                nativeSrc,
            )
        }
    }

    /** Reads one native error entry and turns it into an error completion naming the provider and its message. */
    private fun readError() {
        if (!nep.readErr()) return
        val s = slotOf(nep.errContext)
        val err = nep.errCode
        val len = nep.errLen
        val olen = nep.errOlen
        val text = nep.errText()
        if (s < 0) {
            // Not this rail's slot: a native deferred request issued on this endpoint (its fi_deferred_work is its
            // context), or else nothing Braid knows, which is reported as an event.
            if (!domain.work.nativeError(nep.errContext, ofiErrno(-err), text))
                host.eventError(ofiErrno(-err), "$rail: $text")
        } else if (s < txSlots && txZombie[s]) {
            releaseTx(s)
        } else if (s < txSlots && txKind[s] != KIND_SEND) {
            failRma(s, ofiErrno(-err), "${describeRma(s)} failed: $text")
        } else if (s < txSlots) {
            val ctx = txContext[s]
            val flags = txFlags[s]
            val tag = txTag[s]
            val n = txLen[s]
            releaseTx(s)
            host.txError(ctx, flags, n, tag, ofiErrno(-err), "$rail: send of $n bytes failed: $text")
        } else {
            val i = s - txSlots
            if (err != Errno.ECANCELED && !closed)
                host.eventError(
                    ofiErrno(-err),
                    "$rail: a message of ${len + olen} bytes could not be received into a $recvSize-byte native " +
                        "receive: $text; raise ofi.recv_size (BRAID_OFI_RECV_SIZE)",
                )
            if (!closed) rx.post(i)
        }
    }

    // ## Failure and close ##

    override fun abort(err: Int, why: String) {
        dead = why
        host.eventError(err, "$rail endpoint ${host.name}: $why")
        emptyRma.clear() // their slots fail below with the rest
        injected.clear()
        for (s in 0 until txSlots) if (txBusy[s] && !txZombie[s]) failNow(s, err, why)
        txPending.clear()
    }

    private fun failNow(s: Int, err: Int, why: String) {
        if (txKind[s] != KIND_SEND) {
            failRma(s, err, "${describeRma(s)} not carried out: $why")
            return
        }
        val ctx = txContext[s]
        val flags = txFlags[s]
        val len = txLen[s]
        val tag = txTag[s]
        releaseTx(s)
        host.txError(ctx, flags, len, tag, err, "$rail: send of $len bytes not delivered: $why")
    }

    override fun close() {
        if (closed) return
        closed = true
        closeNative()
        account.held(0, 0)
    }

    private fun closeNative() {
        if (!::nep.isInitialized) return
        // A native deferred request still queued on this endpoint would be issued on it after fi_close (sockets keeps
        // no reference): the native objects, and this rail's receive buffers, stay until the domain is gone.
        if (nep.ep != 0L && domain.work.holds(nep.ep, this)) return
        nep.close()
        if (::rx.isInitialized) rx.close()
    }

    private companion object {
        const val CONTEXT_SIZE = 64L
        const val STAGE_MIN = 256
        /** [txSince] of an operation the liveness check has not looked at yet. */
        const val NOT_SEEN = Long.MIN_VALUE
        /** Duty cycles between two readings of the clock by the liveness check while operations are in flight. */
        const val LIVENESS_POLLS = 64
        const val KIND_SEND = 0
        /** Sends that must complete natively, never as an inject. */
        const val NATIVE_COMPLETE = OpFlags.DELIVERY_COMPLETE or OpFlags.TRANSMIT_COMPLETE
        const val KIND_WRITE = 1
        const val KIND_READ = 2
        const val KIND_ATOMIC = 3
        const val KIND_FETCH = 4
        const val KIND_COMPARE = 5
    }
}

/** The errno of a native return code [rc] (a negated `FI_E*`), EIO for a failure that says none. */
internal fun ofiErrno(rc: Int): Int = if (rc < 0) -rc else if (rc == 0) Errno.EIO else rc
