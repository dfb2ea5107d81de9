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
import com.sun.jna.Function
import com.sun.jna.Memory
import com.sun.jna.Pointer
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.IntArrayList
import org.agrona.collections.Long2LongHashMap
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
    private val slots = txSlots + 2 * recvCount

    override val counters: RailCounters = RailCounters(rail)
    private val account: UnexpectedBounds.Account = host.bounds.account(rail)

    // ## Native memory: one arena for contexts and call arguments, one for receive buffers ##
    private val arena = Memory((slots * CONTEXT_SIZE + txSlots * MSG_AREA + SCRATCH).toLong()).also { it.clear() }
    private val base = Pointer.nativeValue(arena)
    private val ctxBase = base
    /** Per tx slot: the `fi_msg_rma`/`fi_msg_atomic` of a write or update atomic, its iovec, rma iov and desc. */
    private val msgBase = base + slots * CONTEXT_SIZE
    private val cqBuf = msgBase + txSlots * MSG_AREA
    private val srcBuf = cqBuf + CQ_BATCH * CQ_ENTRY
    private val errBuf = srcBuf + CQ_BATCH * 8
    private val outPtr = errBuf + ERR_ENTRY
    private val nameLen = outPtr + 8
    private val nameBuf = nameLen + 8
    private val attrBuf = nameBuf + NAME_MAX
    private val bounce: ByteBuffer = ByteBuffer.allocateDirect(2 * recvCount * recvSize)
    private val bounceBase = UnsafeBuffer(bounce).addressOffset()
    private val bounceView = UnsafeBuffer(0L, 0)

    // ## Native objects ##
    private var cq = 0L
    private var nav = 0L
    private var ep = 0L
    // The hot calls go through libffi directly (OfiCall: no boxing, no argument array); the rest through Function.
    private lateinit var fnSend: OfiCall
    private lateinit var fnSendData: OfiCall
    private lateinit var fnRecv: OfiCall
    private lateinit var fnTSend: OfiCall
    private lateinit var fnTSendData: OfiCall
    private lateinit var fnTRecv: OfiCall
    private lateinit var fnReadFrom: OfiCall
    private lateinit var fnReadErr: Function
    private var fnStrError: Function? = null
    private lateinit var fnAvInsert: Function
    private lateinit var fnSendMsg: OfiCall
    private lateinit var fnTSendMsg: OfiCall
    private var fnRead: OfiCall? = null
    private var fnWriteMsg: OfiCall? = null
    private var fnAtomicMsg: OfiCall? = null
    private var fnFetch: OfiCall? = null
    private var fnCompare: OfiCall? = null
    private val calls = ArrayList<OfiCall>()

    /** The RMA and atomic capabilities this rail carries natively ([OfiDomain.rmaCaps]). */
    override val rmaCaps: Long = domain.rmaCaps
    private val mrLocal = domain.mrLocal
    /** The target's regions are keyed by their address (FI_MR_VIRT_ADDR): the native address is key + offset. */
    private val virtAddr = domain.virtAddr
    /** Zero-byte RMA slots to complete in the next duty cycle (a VIRT_ADDR provider never completes them). */
    private val emptyRma = IntArrayList()
    private val cache = domain.cache
    /** The most elements per native atomic, by form and datatype code (`fi_atomicvalid` and its kin, asked once). */
    private val atomicMax = Array(3) { IntArray(16) }
    /** The registration of the native receive buffers, when the provider needs local descriptors. */
    private var bounceMr: OfiRegion? = null
    private val bounceDesc: Long
        get() = bounceMr?.descriptor ?: 0L

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
    /** Receive buffers not reposted (the bounds are full, or the repost answered `-FI_EAGAIN`). */
    private val rxParked = IntArrayList()

    // ## Addresses ##
    private val byKey = HashMap<String, Long>()
    private val destCache = Long2LongHashMap(-1L)
    private var destGeneration = -2L
    private var nativeToBraid = LongArray(16) { FiAddr.NOTAVAIL }
    private var sweptGeneration = -2L

    override val address: ByteArray
    private var dead: String? = null
    private var closed = false

    init {
        for (i in txSlots - 1 downTo 0) txFree.addInt(i)
        val native = domain.native
        try {
            openNative(native)
            val format = OfiOps.getInt(native.info + OfiInfoDescriptor.ADDR_FORMAT)
            address = OfiAddressDescriptor.encode(HostIdentity.id, prov, format, getname())
        } catch (t: Throwable) {
            closeNative()
            throw t
        }
    }

    private fun openNative(native: OfiNativeDomain) {
        val d = native.domain
        // fi_av_open(domain, &attr{type=FI_AV_TABLE}, &av, NULL)
        arena.setMemory(attrBuf - base, ATTR_SIZE.toLong(), 0)
        OfiOps.putInt(attrBuf, OfiInfoDescriptor.FI_AV_TABLE)
        nav = open(d, OfiOps.DOMAIN_AV_OPEN, "fi_av_open", attrBuf)
        // fi_cq_open(domain, &attr{size, format=FI_CQ_FORMAT_TAGGED, wait_obj=FI_WAIT_NONE}, &cq, NULL)
        arena.setMemory(attrBuf - base, ATTR_SIZE.toLong(), 0)
        OfiOps.putLong(attrBuf, (txSlots + 2 * recvCount).toLong())
        OfiOps.putInt(attrBuf + 16, FI_CQ_FORMAT_TAGGED)
        OfiOps.putInt(attrBuf + 20, FI_WAIT_NONE)
        cq = open(d, OfiOps.DOMAIN_CQ_OPEN, "fi_cq_open", attrBuf)
        ep = open(d, OfiOps.DOMAIN_ENDPOINT, "fi_endpoint", native.info)
        check("fi_ep_bind(av)", OfiOps.bind(ep, nav, 0))
        check("fi_ep_bind(cq)", OfiOps.bind(ep, cq, OpFlags.SEND or OpFlags.RECV))
        check("fi_enable", OfiOps.control(ep, OfiOps.FI_ENABLE, 0))
        // Signatures: L a 64-bit integer or pointer, I an int; the last letter is the return type (ssize_t).
        fnSend = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_SEND, "fi_send", "LLLLLLL")
        fnSendData = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_SENDDATA, "fi_senddata", "LLLLLLLL")
        fnRecv = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_RECV, "fi_recv", "LLLLLLL")
        fnTSend = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SEND, "fi_tsend", "LLLLLLLL")
        fnTSendData = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SENDDATA, "fi_tsenddata", "LLLLLLLLL")
        fnTRecv = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_RECV, "fi_trecv", "LLLLLLLLL")
        fnReadFrom = hot(cq, OfiOps.CQ_OPS, OfiOps.CQ_READFROM, "fi_cq_readfrom", "LLLLL")
        fnSendMsg = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_SENDMSG, "fi_sendmsg", "LLLL")
        fnTSendMsg = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SENDMSG, "fi_tsendmsg", "LLLL")
        // fi_cq_readfrom(cq, buf, count, src_addr) always reads into the same place: set once.
        fnReadFrom.arg(0, cq).arg(1, cqBuf).arg(2, CQ_BATCH.toLong()).arg(3, srcBuf)
        fnReadErr = need(cq, OfiOps.CQ_OPS, OfiOps.CQ_READERR, "fi_cq_readerr")
        fnStrError = OfiOps.function(cq, OfiOps.CQ_OPS, OfiOps.CQ_STRERROR)
        fnAvInsert = need(nav, OfiOps.AV_OPS, OfiOps.AV_INSERT, "fi_av_insert")
        if (rmaCaps and OfiGetInfo.RMA_CAPS != 0L) {
            fnRead = hot(ep, OfiOps.EP_RMA, OfiOps.RMA_READ, "fi_read", "LLLLLLLLL")
            fnWriteMsg = hot(ep, OfiOps.EP_RMA, OfiOps.RMA_WRITEMSG, "fi_writemsg", "LLLL")
        }
        if (rmaCaps and OfiGetInfo.ATOMIC_CAPS != 0L) {
            fnAtomicMsg = hot(ep, OfiOps.EP_ATOMIC, OfiOps.ATOMIC_WRITEMSG, "fi_atomicmsg", "LLLL")
            fnFetch = hot(ep, OfiOps.EP_ATOMIC, OfiOps.ATOMIC_READWRITE, "fi_fetch_atomic", "LLLLLLLLLIIL" + "L")
            fnCompare = hot(ep, OfiOps.EP_ATOMIC, OfiOps.ATOMIC_COMPWRITE, "fi_compare_atomic", "LLLLLLLLLLLIIL" + "L")
            queryAtomics()
        }
        if (mrLocal)
            bounceMr = domain.memory.registerLocal(bounceBase, bounce.capacity().toLong(), braid.core.MrAccess.RECV)
    }

    /**
     * Asks the provider once how many elements one atomic of each datatype carries, per form (`fi_atomicvalid`,
     * `fi_fetch_atomicvalid`, `fi_compare_atomicvalid` with SUM, SUM and CSWAP); 0 where it refuses.
     */
    private fun queryAtomics() {
        val slots = intArrayOf(OfiOps.ATOMIC_WRITEVALID, OfiOps.ATOMIC_READWRITEVALID, OfiOps.ATOMIC_COMPWRITEVALID)
        for (form in 0 until 3) {
            val f = OfiOps.function(ep, OfiOps.EP_ATOMIC, slots[form]) ?: continue
            val op = if (form == 2) AtomicOp.CSWAP.code else AtomicOp.SUM.code
            for (t in AtomicDatatype.entries) {
                OfiOps.putLong(outPtr, 0)
                val rc = f.invokeInt(arrayOf<Any>(ep, t.code, op, outPtr))
                atomicMax[form][t.code] =
                    if (rc == 0) minOf(OfiOps.getLong(outPtr), Int.MAX_VALUE.toLong()).toInt() else 0
            }
        }
    }

    /** Opens a domain child through the domain ops slot [slot] (`fi_av_open`, `fi_cq_open`, `fi_endpoint`). */
    private fun open(d: Long, slot: Int, call: String, attr: Long): Long {
        val f = need(d, OfiOps.DOMAIN_OPS, slot, call)
        OfiOps.putLong(outPtr, 0)
        check(call, f.invokeInt(arrayOf(d, attr, outPtr, 0L)))
        return OfiOps.getLong(outPtr)
    }

    private fun hot(obj: Long, table: Int, slot: Int, call: String, signature: String): OfiCall {
        need(obj, table, slot, call)
        return OfiCall.of(obj, table, slot, signature)!!.also { calls += it }
    }

    private fun need(obj: Long, table: Int, slot: Int, call: String): Function =
        OfiOps.function(obj, table, slot)
            ?: throw braid.core.FabricException.unsupported("$rail: the native provider does not implement $call")

    private fun check(call: String, rc: Int) = OfiNativeDomain.check(prov, call, rc)

    private fun getname(): ByteArray {
        val f = need(ep, OfiOps.EP_CM, OfiOps.CM_GETNAME, "fi_getname")
        OfiOps.putLong(nameLen, NAME_MAX.toLong())
        check("fi_getname", f.invokeInt(arrayOf(ep, nameBuf, nameLen)))
        val n = OfiOps.getLong(nameLen).toInt()
        return arena.getByteArray(nameBuf - base, n)
    }

    override fun enable() {
        for (i in 0 until 2 * recvCount) postRecv(i)
    }

    // ## Addresses ##

    /** The native endpoint (`struct fid_ep *`), for native deferred work ([OfiDeferredWork]). */
    val nativeEp: Long
        get() = ep

    /** Whether this rail's native objects are [d]'s. */
    fun ofDomain(d: OfiDomain): Boolean = domain === d && !closed && ep != 0L

    /** The native fi_addr of Braid's [dest] ([nativeDest]); -1 if it is not this rail's. Under the domain lock. */
    fun nativeAddress(dest: Long): Long = nativeDest(dest)

    /** The native fi_addr of Braid's [dest], inserting it into the native AV on first use; -1 if it is not ours. */
    private fun nativeDest(dest: Long): Long {
        val g = av.generation
        if (g != destGeneration) {
            destCache.clear()
            destGeneration = g
        }
        val cached = destCache.get(dest)
        if (cached != -1L) return cached
        val a = av.query(dest) as? OfiAddress ?: return -1
        val n = insert(a, dest)
        if (n >= 0) destCache.put(dest, n)
        return n
    }

    private fun insert(a: OfiAddress, braid: Long): Long {
        val known = byKey[a.key]
        val n =
            if (known != null) known
            else {
                val m = arena.share(nameBuf - base, NAME_MAX.toLong())
                m.write(0, a.native, 0, minOf(a.native.size, NAME_MAX))
                OfiOps.putLong(outPtr, -1)
                val rc = fnAvInsert.invokeInt(arrayOf(nav, nameBuf, 1L, outPtr, 0L, 0L))
                if (rc != 1) {
                    host.eventError(
                        Errno.EINVAL,
                        "$rail: fi_av_insert refused the peer address ${a.render()}: " +
                            (if (rc < 0) OfiLibrary.strerror(rc) else "inserted $rc of 1") +
                            " ($rc)",
                    )
                    return -1
                }
                OfiOps.getLong(outPtr).also { byKey[a.key] = it }
            }
        if (n >= 0 && n < Int.MAX_VALUE) {
            if (n >= nativeToBraid.size) {
                val old = nativeToBraid
                nativeToBraid = LongArray(maxOf(old.size * 2, n.toInt() + 1)) { FiAddr.NOTAVAIL }
                old.copyInto(nativeToBraid)
            }
            nativeToBraid[n.toInt()] = braid
        }
        return n
    }

    /** When the AV changed, inserts every address of this rail natively, so receives know their senders. */
    private fun sweep() {
        val g = av.generation
        if (g == sweptGeneration || !av.bound) return
        sweptGeneration = g
        val count = host.av?.count ?: return
        var found = 0
        var fi = 0L
        while (found < count && fi < count + SWEEP_SLACK) {
            val a = av.query(fi)
            if (a != null) {
                found++
                if (a is OfiAddress) insert(a, fi)
            }
            fi++
        }
    }

    private fun braidSource(nativeSrc: Long): Long =
        if (nativeSrc < 0 || nativeSrc >= nativeToBraid.size) FiAddr.NOTAVAIL else nativeToBraid[nativeSrc.toInt()]

    // ## Sends ##

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        dead?.let {
            return -Errno.ECONNRESET
        }
        val len = buffer.capacity()
        if (len > recvSize) return -Errno.EMSGSIZE
        val nd = nativeDest(dest)
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
        val direct = buffer.byteArray() == null && buffer.addressOffset() != 0L
        txAddr[s] =
            if (direct && flags and OpFlags.INJECT == 0L) buffer.addressOffset()
            else {
                val stage = stage(s, len)
                if (len > 0) stage.putBytes(0, buffer, 0, len)
                stage.addressOffset()
            }
        if (mrLocal && len > 0)
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
            KIND_WRITE -> return fnWriteMsg!!.arg(0, ep).arg(1, message(s, desc, ctx, false)).arg(2, DELIVERED).call()
            KIND_READ ->
                return fnRead!!
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, txLen[s])
                    .arg(3, desc)
                    .arg(4, txDest[s])
                    .arg(5, txRemote[s])
                    .arg(6, txKey[s])
                    .arg(7, ctx)
                    .call()
            else -> return postAtomic(s, desc, ctx)
        }
        val flags = txFlags[s]
        val tagged = flags and OpFlags.TAGGED != 0L
        val withData = flags and OpFlags.REMOTE_CQ_DATA != 0L
        if (flags and OpFlags.DELIVERY_COMPLETE != 0L) return postDelivered(s, desc, ctx, tagged, withData)
        return when {
            tagged && withData ->
                fnTSendData
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, txLen[s])
                    .arg(3, desc)
                    .arg(4, txData[s])
                    .arg(5, txDest[s])
                    .arg(6, txTag[s])
                    .arg(7, ctx)
                    .call()
            tagged ->
                fnTSend
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, txLen[s])
                    .arg(3, desc)
                    .arg(4, txDest[s])
                    .arg(5, txTag[s])
                    .arg(6, ctx)
                    .call()
            withData ->
                fnSendData
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, txLen[s])
                    .arg(3, desc)
                    .arg(4, txData[s])
                    .arg(5, txDest[s])
                    .arg(6, ctx)
                    .call()
            else ->
                fnSend.arg(0, ep).arg(1, txAddr[s]).arg(2, txLen[s]).arg(3, desc).arg(4, txDest[s]).arg(5, ctx).call()
        }
    }

    /**
     * A send asked for FI_DELIVERY_COMPLETE goes as `fi_sendmsg`/`fi_tsendmsg` with that flag, so the native provider
     * completes it once the message has landed in the peer's native receive buffer (rxm and shm honour it; a provider
     * that cannot refuses the call, and the send fails naming it).
     *
     * ```
     *  fi_msg:        msg_iov@0 desc@8 iov_count@16 addr@24 context@32 data@40
     *  fi_msg_tagged: msg_iov@0 desc@8 iov_count@16 addr@24 tag@32 ignore@40 context@48 data@56
     *  then at 72 the iovec {base, len}, at 112 the one-entry desc array.
     * ```
     */
    private fun postDelivered(s: Int, desc: Long, ctx: Long, tagged: Boolean, withData: Boolean): Long {
        val m = msgBase + s.toLong() * MSG_AREA
        OfiOps.putLong(m + 72, txAddr[s])
        OfiOps.putLong(m + 80, txLen[s])
        OfiOps.putLong(m + 112, desc)
        OfiOps.putLong(m, m + 72)
        OfiOps.putLong(m + 8, m + 112)
        OfiOps.putLong(m + 16, 1)
        OfiOps.putLong(m + 24, txDest[s])
        val nativeFlags = DELIVERED or (if (withData) OpFlags.REMOTE_CQ_DATA else 0L)
        return if (tagged) {
            OfiOps.putLong(m + 32, txTag[s])
            OfiOps.putLong(m + 40, 0)
            OfiOps.putLong(m + 48, ctx)
            OfiOps.putLong(m + 56, txData[s])
            fnTSendMsg.arg(0, ep).arg(1, m).arg(2, nativeFlags).call()
        } else {
            OfiOps.putLong(m + 32, ctx)
            OfiOps.putLong(m + 40, txData[s])
            fnSendMsg.arg(0, ep).arg(1, m).arg(2, nativeFlags).call()
        }
    }

    private fun postAtomic(s: Int, desc: Long, ctx: Long): Long {
        val type = txAtomic[s] ushr 8
        val op = txAtomic[s] and 0xff
        val n = txCount[s].toLong()
        return when (txKind[s]) {
            KIND_ATOMIC -> fnAtomicMsg!!.arg(0, ep).arg(1, message(s, desc, ctx, true)).arg(2, DELIVERED).call()
            KIND_FETCH ->
                fnFetch!!
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, n)
                    .arg(3, desc)
                    .arg(4, txRes[s])
                    .arg(5, desc)
                    .arg(6, txDest[s])
                    .arg(7, txRemote[s])
                    .arg(8, txKey[s])
                    .arg(9, type.toLong())
                    .arg(10, op.toLong())
                    .arg(11, ctx)
                    .call()
            else ->
                fnCompare!!
                    .arg(0, ep)
                    .arg(1, txAddr[s])
                    .arg(2, n)
                    .arg(3, desc)
                    .arg(4, txCmp[s])
                    .arg(5, desc)
                    .arg(6, txRes[s])
                    .arg(7, desc)
                    .arg(8, txDest[s])
                    .arg(9, txRemote[s])
                    .arg(10, txKey[s])
                    .arg(11, type.toLong())
                    .arg(12, op.toLong())
                    .arg(13, ctx)
                    .call()
        }
    }

    /**
     * Fills slot [s]'s `fi_msg_rma` (or, for an [atomic], `fi_msg_atomic`) for a write or an update atomic, posted with
     * FI_DELIVERY_COMPLETE: Braid completes a write once the target holds the bytes, and a provider's default
     * (transmit-complete, tcp's) would complete it when they left. Returns its address.
     *
     * ```
     *  fi_msg_rma:    msg_iov@0 desc@8 iov_count@16 addr@24 rma_iov@32 rma_iov_count@40 context@48 data@56
     *  fi_msg_atomic: msg_iov@0 desc@8 iov_count@16 addr@24 rma_iov@32 rma_iov_count@40 datatype@48 op@52
     *                 context@56 data@64
     *  then at 72 the iovec / fi_ioc {addr, len|count}, at 88 fi_rma_iov / fi_rma_ioc {addr, len|count, key},
     *  at 112 the one-entry desc array.
     * ```
     */
    private fun message(s: Int, desc: Long, ctx: Long, atomic: Boolean): Long {
        val m = msgBase + s.toLong() * MSG_AREA
        val n = if (atomic) txCount[s].toLong() else txLen[s]
        OfiOps.putLong(m + 72, txAddr[s])
        OfiOps.putLong(m + 80, n)
        OfiOps.putLong(m + 88, txRemote[s])
        OfiOps.putLong(m + 96, n)
        OfiOps.putLong(m + 104, txKey[s])
        OfiOps.putLong(m + 112, desc)
        OfiOps.putLong(m, m + 72)
        OfiOps.putLong(m + 8, m + 112)
        OfiOps.putLong(m + 16, 1)
        OfiOps.putLong(m + 24, txDest[s])
        OfiOps.putLong(m + 32, m + 88)
        OfiOps.putLong(m + 40, 1)
        if (atomic) {
            OfiOps.putInt(m + 48, txAtomic[s] ushr 8)
            OfiOps.putInt(m + 52, txAtomic[s] and 0xff)
            OfiOps.putLong(m + 56, ctx)
            OfiOps.putLong(m + 64, 0)
        } else {
            OfiOps.putLong(m + 48, ctx)
            OfiOps.putLong(m + 56, 0)
        }
        return m
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
        return minOf(atomicMax[form.ordinal][type.code], if (form == AtomicForm.COMPARE) braid / 2 else braid)
    }

    /** Why [claim] refused: a negated errno. */
    private var lastRefusal = 0

    /** A free tx slot for an operation to [dest], its native address set; null with [lastRefusal] if none. */
    private fun claim(dest: Long): Int? {
        val nd = nativeDest(dest)
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
            failRma(s, errnoOf(rc), "${describeRma(s)}: $call failed: ${OfiLibrary.strerror(rc)} ($rc)")
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
            errnoOf(rc),
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

    // ## Receives ##

    /** Posts receive buffer [i] natively (untagged below [recvCount], tagged with every tag bit ignored above). */
    private fun postRecv(i: Int): Boolean {
        val ctx = ctxBase + (txSlots + i).toLong() * CONTEXT_SIZE
        val buf = bounceBase + i.toLong() * recvSize
        val rc =
            if (i < recvCount)
                fnRecv
                    .arg(0, ep)
                    .arg(1, buf)
                    .arg(2, recvSize.toLong())
                    .arg(3, bounceDesc)
                    .arg(4, FI_ADDR_UNSPEC)
                    .arg(5, ctx)
                    .call()
            else
                fnTRecv
                    .arg(0, ep)
                    .arg(1, buf)
                    .arg(2, recvSize.toLong())
                    .arg(3, bounceDesc)
                    .arg(4, FI_ADDR_UNSPEC)
                    .arg(5, 0L)
                    .arg(6, -1L)
                    .arg(7, ctx)
                    .call()
        if (rc == 0L) return true
        if (rc != -OfiOps.FI_EAGAIN.toLong())
            host.eventError(
                errnoOf(rc.toInt()),
                "$rail: fi_${if (i < recvCount) "" else "t"}recv failed: ${OfiLibrary.strerror(rc.toInt())} ($rc)",
            )
        rxParked.addInt(i)
        return false
    }

    private fun arrived(i: Int, nativeFlags: Long, len: Long, data: Long, tag: Long, nativeSrc: Long) {
        val tagged = i >= recvCount
        val src = braidSource(nativeSrc)
        counters.received(len)
        val srx = host.srx
        val e = if (tagged) srx.getTag(src, tag, len) else srx.getMsg(src, len)
        if (nativeFlags and OpFlags.REMOTE_CQ_DATA != 0L) {
            e.data = data
            e.flags = e.flags or OpFlags.REMOTE_CQ_DATA
        }
        val at = bounceBase + i.toLong() * recvSize
        if (srx.isMatched(e)) {
            val n = minOf(len, e.buffer.capacity().toLong()).toInt()
            if (n > 0) {
                bounceView.wrap(at, n)
                e.buffer.putBytes(0, bounceView, 0, n)
            }
            host.rxComplete(e, len)
        } else {
            val bytes = UnsafeBuffer(ByteArray(len.toInt()))
            if (len > 0) {
                bounceView.wrap(at, len.toInt())
                bytes.putBytes(0, bounceView, 0, len.toInt())
            }
            e.peerContext = bytes
            e.peerSource = nativeSrc
            account.held(len, 1)
            if (tagged) srx.queueTag(e, this) else srx.queueMsg(e, this)
        }
        if (account.mustPushBack(0)) rxParked.addInt(i) else postRecv(i)
    }

    override fun startMsg(entry: RxEntry) = start(entry)

    override fun startTag(entry: RxEntry) = start(entry)

    override fun discardMsg(entry: RxEntry) = discard(entry)

    override fun discardTag(entry: RxEntry) = discard(entry)

    private fun start(e: RxEntry) {
        val bytes = e.peerContext as UnsafeBuffer
        e.peerContext = null
        account.held(-bytes.capacity().toLong(), -1)
        val n = minOf(e.size, e.buffer.capacity().toLong()).toInt()
        if (n > 0) e.buffer.putBytes(0, bytes, 0, n)
        host.rxComplete(e, e.size)
    }

    private fun discard(e: RxEntry) {
        val bytes = e.peerContext as UnsafeBuffer
        e.peerContext = null
        account.held(-bytes.capacity().toLong(), -1)
        host.srx.freeEntry(e)
    }

    private fun repostParked(): Int {
        var n = 0
        while (rxParked.isNotEmpty() && !account.mustPushBack(0)) {
            val i = rxParked.removeAt(rxParked.size - 1)
            if (!postRecv(i)) break
            n++
        }
        return n
    }

    // ## The duty cycle ##

    override fun progress(): Int {
        if (closed) return 0
        sweep()
        var work = retryPending() + repostParked()
        if (txTimeout > 0) work += checkLiveness()
        work += domain.work.poll()
        while (emptyRma.isNotEmpty()) {
            rmaDone(emptyRma.removeAt(emptyRma.size - 1))
            work++
        }
        while (true) {
            val n = fnReadFrom.call()
            if (n > 0) {
                for (k in 0 until n.toInt()) completion(cqBuf + k * CQ_ENTRY, OfiOps.getLong(srcBuf + k * 8L))
                work += n.toInt()
                if (n < CQ_BATCH) break
            } else if (n == -OfiOps.FI_EAVAIL.toLong()) {
                readError()
                work++
            } else {
                if (n != -OfiOps.FI_EAGAIN.toLong())
                    host.eventError(
                        errnoOf(n.toInt()),
                        "$rail: fi_cq_readfrom failed: ${OfiLibrary.strerror(n.toInt())} ($n)",
                    )
                break
            }
        }
        return work
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
                "no completion from native peer ${braidSource(txDest[s]).let { if (it == FiAddr.NOTAVAIL) "?" else it }} " +
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
            arrived(
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
        arena.setMemory(errBuf - base, ERR_ENTRY.toLong(), 0)
        val rc = fnReadErr.invokeLong(arrayOf(cq, errBuf, 0L))
        if (rc <= 0) return
        val s = slotOf(OfiOps.getLong(errBuf))
        val err = OfiOps.getInt(errBuf + 56)
        val provErrno = OfiOps.getInt(errBuf + 60)
        val len = OfiOps.getLong(errBuf + 16)
        val olen = OfiOps.getLong(errBuf + 48)
        val text = describe(err, provErrno, OfiOps.getLong(errBuf + 64))
        if (s < 0) {
            // Not this rail's slot: a native deferred request issued on this endpoint (its fi_deferred_work is its
            // context), or else nothing Braid knows, which is reported as an event.
            if (!domain.work.nativeError(OfiOps.getLong(errBuf), errnoOf(-err), text))
                host.eventError(errnoOf(-err), "$rail: $text")
        } else if (s < txSlots && txZombie[s]) {
            releaseTx(s)
        } else if (s < txSlots && txKind[s] != KIND_SEND) {
            failRma(s, errnoOf(-err), "${describeRma(s)} failed: $text")
        } else if (s < txSlots) {
            val ctx = txContext[s]
            val flags = txFlags[s]
            val tag = txTag[s]
            val n = txLen[s]
            releaseTx(s)
            host.txError(ctx, flags, n, tag, errnoOf(-err), "$rail: send of $n bytes failed: $text")
        } else {
            val i = s - txSlots
            if (err != Errno.ECANCELED && !closed)
                host.eventError(
                    errnoOf(-err),
                    "$rail: a message of ${len + olen} bytes could not be received into a $recvSize-byte native " +
                        "receive: $text; raise ofi.recv_size (BRAID_OFI_RECV_SIZE)",
                )
            if (!closed) postRecv(i)
        }
    }

    private fun describe(err: Int, provErrno: Int, errData: Long): String {
        val base = "${OfiLibrary.strerror(err)} (err $err"
        val f = fnStrError ?: return "$base, prov_errno $provErrno)"
        val p = f.invokeLong(arrayOf(cq, provErrno, errData, 0L, 0L))
        val prov = OfiOps.string(p) ?: ""
        return "$base, prov_errno $provErrno: $prov)"
    }

    // ## Failure and close ##

    override fun abort(err: Int, why: String) {
        dead = why
        host.eventError(err, "$rail endpoint ${host.name}: $why")
        emptyRma.clear() // their slots fail below with the rest
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
        // A native deferred request still queued on this endpoint would be issued on it after fi_close (sockets keeps
        // no reference): the native objects, and this rail's receive buffers, stay until the domain is gone.
        if (ep != 0L && domain.work.holds(ep, this)) return
        OfiOps.close(ep)
        OfiOps.close(cq)
        OfiOps.close(nav)
        bounceMr?.close()
        bounceMr = null
        for (c in calls) c.close()
        calls.clear()
        ep = 0
        cq = 0
        nav = 0
    }

    private fun errnoOf(rc: Int): Int = if (rc < 0) -rc else if (rc == 0) Errno.EIO else rc

    private companion object {
        const val CONTEXT_SIZE = 64L
        const val CQ_BATCH = 16
        const val CQ_ENTRY = 48L
        const val ERR_ENTRY = 80
        const val NAME_MAX = 256
        const val ATTR_SIZE = 64
        const val SCRATCH = CQ_BATCH * 48 + CQ_BATCH * 8 + ERR_ENTRY + 8 + 8 + NAME_MAX + ATTR_SIZE
        const val STAGE_MIN = 256
        const val SWEEP_SLACK = 1024L
        /** [txSince] of an operation the liveness check has not looked at yet. */
        const val NOT_SEEN = Long.MIN_VALUE
        /** Duty cycles between two readings of the clock by the liveness check while operations are in flight. */
        const val LIVENESS_POLLS = 64
        const val FI_CQ_FORMAT_TAGGED = 4
        const val FI_WAIT_NONE = 0
        const val FI_ADDR_UNSPEC = -1L
        const val KIND_SEND = 0
        const val MSG_AREA = 128L
        /** FI_COMPLETION | FI_DELIVERY_COMPLETE: the flags of a write and an update atomic. */
        const val DELIVERED = (1L shl 24) or (1L shl 28)
        const val KIND_WRITE = 1
        const val KIND_READ = 2
        const val KIND_ATOMIC = 3
        const val KIND_FETCH = 4
        const val KIND_COMPARE = 5
    }
}
