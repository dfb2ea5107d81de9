package braid.provider.ofi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.FabricException
import braid.core.OpFlags
import com.sun.jna.Function
import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * One native rail's libfabric objects and the calls it makes on them: an RDM endpoint with its own address vector
 * (`FI_AV_TABLE`) and CQ (`FI_CQ_FORMAT_TAGGED`, no wait object, read with `fi_cq_readfrom` for the sender), opened on
 * [native]'s domain. The hot calls (sends, receives, RMA, atomics, `fi_cq_readfrom`) are prepared once ([OfiCall]: no
 * boxing, no argument array); the rest go through [Function]. The rail's own state (its operation slots and their
 * contexts) stays in [OfiTransport]; this is its outlet: arguments in, the native return code out.
 *
 * Native memory: [msgSlots] message areas, one per operation slot, for the `fi_msg*` structs of the `…msg` calls (a
 * provider may read them until the operation completes), then the CQ's read buffers and the call scratch.
 *
 * Every call is made under the domain lock (FI_THREAD_DOMAIN use of the native objects).
 */
internal class OfiNativeEndpoint(
    private val rail: String,
    private val prov: String,
    native: OfiNativeDomain,
    cqSize: Long,
    rmaCaps: Long,
    msgSlots: Int,
) : AutoCloseable {
    private val arena = Memory(msgSlots * MSG_AREA + SCRATCH).also { it.clear() }
    private val base = Pointer.nativeValue(arena)
    /**
     * Per slot: the `fi_msg*` of a delivery-complete send, a write or an update atomic, its iovec, rma iov and desc.
     */
    private val msgBase = base
    private val cqBuf = msgBase + msgSlots * MSG_AREA
    private val srcBuf = cqBuf + CQ_BATCH * CQ_ENTRY
    private val errBuf = srcBuf + CQ_BATCH * 8
    private val outPtr = errBuf + ERR_ENTRY
    private val nameLen = outPtr + 8
    private val nameBuf = nameLen + 8
    private val attrBuf = nameBuf + NAME_MAX

    /** The native objects (`struct fid_ep *`, `struct fid_cq *`, `struct fid_av *`); 0 once closed. */
    var ep = 0L
        private set

    var cq = 0L
        private set

    var nav = 0L
        private set

    private lateinit var fnSend: OfiCall
    private lateinit var fnSendData: OfiCall
    lateinit var fnRecv: OfiCall
        private set

    private lateinit var fnTSend: OfiCall
    private lateinit var fnTSendData: OfiCall
    lateinit var fnTRecv: OfiCall
        private set

    /** `fi_inject`, `fi_injectdata`, `fi_tinject`, `fi_tinjectdata`: all four, or null when any is missing. */
    private var fnInject: OfiCall? = null
    private var fnInjectData: OfiCall? = null
    private var fnTInject: OfiCall? = null
    private var fnTInjectData: OfiCall? = null

    /** The most bytes one native inject carries (`tx_attr->inject_size`); 0 when the provider has no inject calls. */
    var injectSize = 0L
        private set

    private lateinit var fnReadFrom: OfiCall
    private lateinit var fnReadErr: Function
    private var fnStrError: Function? = null
    /** `fi_av_insert` on [nav] ([OfiPeers]). */
    lateinit var avInsert: Function
        private set

    private lateinit var fnSendMsg: OfiCall
    private lateinit var fnTSendMsg: OfiCall
    private var fnRead: OfiCall? = null
    private var fnWriteMsg: OfiCall? = null
    private var fnAtomicMsg: OfiCall? = null
    private var fnFetch: OfiCall? = null
    private var fnCompare: OfiCall? = null
    private val calls = ArrayList<OfiCall>()

    /** The most elements per native atomic, by form and datatype code (`fi_atomicvalid` and its kin, asked once). */
    val atomicMax: Array<IntArray> = Array(3) { IntArray(16) }

    /** The endpoint's raw native address (`fi_getname`). */
    val name: ByteArray

    init {
        try {
            OfiSignals.keep { open(native, cqSize, rmaCaps) }
            name = getname()
        } catch (t: Throwable) {
            close()
            throw t
        }
    }

    private fun open(native: OfiNativeDomain, cqSize: Long, rmaCaps: Long) {
        val d = native.domain
        // fi_av_open(domain, &attr{type=FI_AV_TABLE}, &av, NULL)
        arena.setMemory(attrBuf - base, ATTR_SIZE.toLong(), 0)
        OfiOps.putInt(attrBuf, OfiInfoDescriptor.FI_AV_TABLE)
        nav = open(d, OfiOps.DOMAIN_AV_OPEN, "fi_av_open", attrBuf)
        // fi_cq_open(domain, &attr{size, format=FI_CQ_FORMAT_TAGGED, wait_obj=FI_WAIT_NONE}, &cq, NULL)
        arena.setMemory(attrBuf - base, ATTR_SIZE.toLong(), 0)
        OfiOps.putLong(attrBuf, cqSize)
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
        prepareInject(native)
        fnSendMsg = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_SENDMSG, "fi_sendmsg", "LLLL")
        fnTSendMsg = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SENDMSG, "fi_tsendmsg", "LLLL")
        // fi_cq_readfrom(cq, buf, count, src_addr) always reads into the same place: set once.
        fnReadFrom.arg(0, cq).arg(1, cqBuf).arg(2, CQ_BATCH.toLong()).arg(3, srcBuf)
        fnReadErr = need(cq, OfiOps.CQ_OPS, OfiOps.CQ_READERR, "fi_cq_readerr")
        fnStrError = OfiOps.function(cq, OfiOps.CQ_OPS, OfiOps.CQ_STRERROR)
        avInsert = need(nav, OfiOps.AV_OPS, OfiOps.AV_INSERT, "fi_av_insert")
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
    }

    /** Prepares the four inject calls when the provider has them all and a non-zero inject size. */
    private fun prepareInject(native: OfiNativeDomain) {
        val size =
            OfiOps.getLong(OfiOps.getLong(native.info + OfiInfoDescriptor.TX_ATTR) + OfiInfoDescriptor.TX_INJECT_SIZE)
        val slots =
            listOf(
                OfiOps.EP_MSG to OfiOps.XFER_INJECT,
                OfiOps.EP_MSG to OfiOps.XFER_INJECTDATA,
                OfiOps.EP_TAGGED to OfiOps.XFER_INJECT,
                OfiOps.EP_TAGGED to OfiOps.XFER_INJECTDATA,
            )
        if (size <= 0 || slots.any { (table, slot) -> OfiOps.op(ep, table, slot) == 0L }) return
        // fi_inject(ep, buf, len, dest), fi_injectdata(ep, buf, len, data, dest), and the tagged forms with the tag
        // last.
        fnInject = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_INJECT, "fi_inject", "LLLLL")
        fnInjectData = hot(ep, OfiOps.EP_MSG, OfiOps.XFER_INJECTDATA, "fi_injectdata", "LLLLLL")
        fnTInject = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_INJECT, "fi_tinject", "LLLLLL")
        fnTInjectData = hot(ep, OfiOps.EP_TAGGED, OfiOps.XFER_INJECTDATA, "fi_tinjectdata", "LLLLLLL")
        injectSize = size
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
            ?: throw FabricException.unsupported("$rail: the native provider does not implement $call")

    private fun check(call: String, rc: Int) = OfiNativeDomain.check(prov, call, rc)

    private fun getname(): ByteArray {
        val f = need(ep, OfiOps.EP_CM, OfiOps.CM_GETNAME, "fi_getname")
        OfiOps.putLong(nameLen, NAME_MAX.toLong())
        check("fi_getname", f.invokeInt(arrayOf(ep, nameBuf, nameLen)))
        val n = OfiOps.getLong(nameLen).toInt()
        return arena.getByteArray(nameBuf - base, n)
    }

    // ## Sends ##

    fun send(addr: Long, len: Long, desc: Long, dest: Long, ctx: Long): Long =
        fnSend.arg(0, ep).arg(1, addr).arg(2, len).arg(3, desc).arg(4, dest).arg(5, ctx).call()

    fun sendData(addr: Long, len: Long, desc: Long, data: Long, dest: Long, ctx: Long): Long =
        fnSendData.arg(0, ep).arg(1, addr).arg(2, len).arg(3, desc).arg(4, data).arg(5, dest).arg(6, ctx).call()

    fun tsend(addr: Long, len: Long, desc: Long, dest: Long, tag: Long, ctx: Long): Long =
        fnTSend.arg(0, ep).arg(1, addr).arg(2, len).arg(3, desc).arg(4, dest).arg(5, tag).arg(6, ctx).call()

    fun tsendData(addr: Long, len: Long, desc: Long, data: Long, dest: Long, tag: Long, ctx: Long): Long =
        fnTSendData
            .arg(0, ep)
            .arg(1, addr)
            .arg(2, len)
            .arg(3, desc)
            .arg(4, data)
            .arg(5, dest)
            .arg(6, tag)
            .arg(7, ctx)
            .call()

    /**
     * A native inject of [len] bytes at [addr] (at most [injectSize]): the provider copies them before it returns and
     * writes no completion. Tagged with [tag] when [tagged], with remote CQ data [data] when [withData].
     */
    fun inject(tagged: Boolean, withData: Boolean, addr: Long, len: Long, data: Long, dest: Long, tag: Long): Long =
        when {
            tagged && withData ->
                fnTInjectData!!.arg(0, ep).arg(1, addr).arg(2, len).arg(3, data).arg(4, dest).arg(5, tag).call()
            tagged -> fnTInject!!.arg(0, ep).arg(1, addr).arg(2, len).arg(3, dest).arg(4, tag).call()
            withData -> fnInjectData!!.arg(0, ep).arg(1, addr).arg(2, len).arg(3, data).arg(4, dest).call()
            else -> fnInject!!.arg(0, ep).arg(1, addr).arg(2, len).arg(3, dest).call()
        }

    /**
     * A send asked for FI_DELIVERY_COMPLETE goes as `fi_sendmsg`/`fi_tsendmsg` with that flag, so the native provider
     * completes it once the message has landed in the peer's native receive buffer (rxm and shm honour it; a provider
     * that cannot refuses the call, and the send fails naming it). Its `fi_msg` lives in [slot]'s message area.
     *
     * ```
     *  fi_msg:        msg_iov@0 desc@8 iov_count@16 addr@24 context@32 data@40
     *  fi_msg_tagged: msg_iov@0 desc@8 iov_count@16 addr@24 tag@32 ignore@40 context@48 data@56
     *  then at 72 the iovec {base, len}, at 112 the one-entry desc array.
     * ```
     */
    fun sendDelivered(
        slot: Int,
        tagged: Boolean,
        withData: Boolean,
        addr: Long,
        len: Long,
        desc: Long,
        data: Long,
        dest: Long,
        tag: Long,
        ctx: Long,
    ): Long {
        val m = msgBase + slot.toLong() * MSG_AREA
        OfiOps.putLong(m + 72, addr)
        OfiOps.putLong(m + 80, len)
        OfiOps.putLong(m + 112, desc)
        OfiOps.putLong(m, m + 72)
        OfiOps.putLong(m + 8, m + 112)
        OfiOps.putLong(m + 16, 1)
        OfiOps.putLong(m + 24, dest)
        val nativeFlags = DELIVERED or (if (withData) OpFlags.REMOTE_CQ_DATA else 0L)
        return if (tagged) {
            OfiOps.putLong(m + 32, tag)
            OfiOps.putLong(m + 40, 0)
            OfiOps.putLong(m + 48, ctx)
            OfiOps.putLong(m + 56, data)
            fnTSendMsg.arg(0, ep).arg(1, m).arg(2, nativeFlags).call()
        } else {
            OfiOps.putLong(m + 32, ctx)
            OfiOps.putLong(m + 40, data)
            fnSendMsg.arg(0, ep).arg(1, m).arg(2, nativeFlags).call()
        }
    }

    // ## RMA and atomics ##

    fun read(addr: Long, len: Long, desc: Long, dest: Long, remote: Long, key: Long, ctx: Long): Long =
        fnRead!!
            .arg(0, ep)
            .arg(1, addr)
            .arg(2, len)
            .arg(3, desc)
            .arg(4, dest)
            .arg(5, remote)
            .arg(6, key)
            .arg(7, ctx)
            .call()

    /** `fi_writemsg` with FI_DELIVERY_COMPLETE, its `fi_msg_rma` in [slot]'s message area ([message]). */
    fun writeDelivered(slot: Int, addr: Long, len: Long, desc: Long, dest: Long, remote: Long, key: Long, ctx: Long) =
        fnWriteMsg!!
            .arg(0, ep)
            .arg(1, message(slot, addr, len, desc, dest, remote, key, -1, ctx))
            .arg(2, DELIVERED)
            .call()

    /** `fi_atomicmsg` with FI_DELIVERY_COMPLETE, its `fi_msg_atomic` in [slot]'s message area ([message]). */
    fun atomicDelivered(
        slot: Int,
        addr: Long,
        count: Long,
        desc: Long,
        dest: Long,
        remote: Long,
        key: Long,
        typeAndOp: Int,
        ctx: Long,
    ): Long =
        fnAtomicMsg!!
            .arg(0, ep)
            .arg(1, message(slot, addr, count, desc, dest, remote, key, typeAndOp, ctx))
            .arg(2, DELIVERED)
            .call()

    fun fetchAtomic(
        addr: Long,
        count: Long,
        desc: Long,
        result: Long,
        dest: Long,
        remote: Long,
        key: Long,
        type: Int,
        op: Int,
        ctx: Long,
    ): Long =
        fnFetch!!
            .arg(0, ep)
            .arg(1, addr)
            .arg(2, count)
            .arg(3, desc)
            .arg(4, result)
            .arg(5, desc)
            .arg(6, dest)
            .arg(7, remote)
            .arg(8, key)
            .arg(9, type.toLong())
            .arg(10, op.toLong())
            .arg(11, ctx)
            .call()

    fun compareAtomic(
        addr: Long,
        count: Long,
        desc: Long,
        compare: Long,
        result: Long,
        dest: Long,
        remote: Long,
        key: Long,
        type: Int,
        op: Int,
        ctx: Long,
    ): Long =
        fnCompare!!
            .arg(0, ep)
            .arg(1, addr)
            .arg(2, count)
            .arg(3, desc)
            .arg(4, compare)
            .arg(5, desc)
            .arg(6, result)
            .arg(7, desc)
            .arg(8, dest)
            .arg(9, remote)
            .arg(10, key)
            .arg(11, type.toLong())
            .arg(12, op.toLong())
            .arg(13, ctx)
            .call()

    /**
     * Fills [slot]'s `fi_msg_rma` (or, with a [typeAndOp] (`type shl 8 or op`) of 0 or more, `fi_msg_atomic`) for a
     * write or an update atomic, posted with FI_DELIVERY_COMPLETE: Braid completes a write once the target holds the
     * bytes, and a provider's default (transmit-complete, tcp's) would complete it when they left. [n] is the length,
     * or the element count of an atomic. Returns its address.
     *
     * ```
     *  fi_msg_rma:    msg_iov@0 desc@8 iov_count@16 addr@24 rma_iov@32 rma_iov_count@40 context@48 data@56
     *  fi_msg_atomic: msg_iov@0 desc@8 iov_count@16 addr@24 rma_iov@32 rma_iov_count@40 datatype@48 op@52
     *                 context@56 data@64
     *  then at 72 the iovec / fi_ioc {addr, len|count}, at 88 fi_rma_iov / fi_rma_ioc {addr, len|count, key},
     *  at 112 the one-entry desc array.
     * ```
     */
    private fun message(
        slot: Int,
        addr: Long,
        n: Long,
        desc: Long,
        dest: Long,
        remote: Long,
        key: Long,
        typeAndOp: Int,
        ctx: Long,
    ): Long {
        val m = msgBase + slot.toLong() * MSG_AREA
        OfiOps.putLong(m + 72, addr)
        OfiOps.putLong(m + 80, n)
        OfiOps.putLong(m + 88, remote)
        OfiOps.putLong(m + 96, n)
        OfiOps.putLong(m + 104, key)
        OfiOps.putLong(m + 112, desc)
        OfiOps.putLong(m, m + 72)
        OfiOps.putLong(m + 8, m + 112)
        OfiOps.putLong(m + 16, 1)
        OfiOps.putLong(m + 24, dest)
        OfiOps.putLong(m + 32, m + 88)
        OfiOps.putLong(m + 40, 1)
        if (typeAndOp >= 0) {
            OfiOps.putInt(m + 48, typeAndOp ushr 8)
            OfiOps.putInt(m + 52, typeAndOp and 0xff)
            OfiOps.putLong(m + 56, ctx)
            OfiOps.putLong(m + 64, 0)
        } else {
            OfiOps.putLong(m + 48, ctx)
            OfiOps.putLong(m + 56, 0)
        }
        return m
    }

    // ## The CQ ##

    /**
     * `fi_cq_readfrom` of up to [CQ_BATCH] entries: how many, or the native return code (`-FI_EAGAIN`, `-FI_EAVAIL`).
     * Entry `k` is then at [entry]`(k)` (`fi_cq_tagged_entry`: op_context@0 flags@8 len@16 buf@24 data@32 tag@40), its
     * sender at [source]`(k)`.
     */
    fun readCq(): Long = fnReadFrom.call()

    /** The most entries one [readCq] reads. */
    val batch: Int
        get() = CQ_BATCH

    fun entry(k: Int): Long = cqBuf + k * CQ_ENTRY

    fun source(k: Int): Long = OfiOps.getLong(srcBuf + k * 8L)

    /**
     * `fi_cq_readerr` of one error entry into this endpoint's error buffer; false if there was none. Then [errContext],
     * [errCode], [errProvErrno], [errLen], [errOlen] and [errText] describe it.
     */
    fun readErr(): Boolean {
        arena.setMemory(errBuf - base, ERR_ENTRY.toLong(), 0)
        return fnReadErr.invokeLong(arrayOf(cq, errBuf, 0L)) > 0
    }

    /** The error entry's fields (`fi_cq_err_entry`: op_context@0 len@16 olen@48 err@56 prov_errno@60 err_data@64). */
    val errContext: Long
        get() = OfiOps.getLong(errBuf)

    val errCode: Int
        get() = OfiOps.getInt(errBuf + 56)

    val errProvErrno: Int
        get() = OfiOps.getInt(errBuf + 60)

    val errLen: Long
        get() = OfiOps.getLong(errBuf + 16)

    val errOlen: Long
        get() = OfiOps.getLong(errBuf + 48)

    /** The error entry as text: `fi_strerror` of its err, and `fi_cq_strerror` of its `prov_errno`. */
    fun errText(): String {
        val err = errCode
        val provErrno = errProvErrno
        val base = "${OfiLibrary.strerror(err)} (err $err"
        val f = fnStrError ?: return "$base, prov_errno $provErrno)"
        val p = f.invokeLong(arrayOf(cq, provErrno, OfiOps.getLong(errBuf + 64), 0L, 0L))
        val text = OfiOps.string(p) ?: ""
        return "$base, prov_errno $provErrno: $text)"
    }

    /** Closes the native objects and the prepared calls. */
    override fun close() {
        OfiOps.close(ep)
        OfiOps.close(cq)
        OfiOps.close(nav)
        for (c in calls) c.close()
        calls.clear()
        ep = 0
        cq = 0
        nav = 0
    }

    private companion object {
        const val CQ_BATCH = 16
        const val CQ_ENTRY = 48L
        const val ERR_ENTRY = 80
        const val NAME_MAX = 256
        const val ATTR_SIZE = 64
        const val MSG_AREA = 128L
        const val SCRATCH = CQ_BATCH * CQ_ENTRY + CQ_BATCH * 8 + ERR_ENTRY + 8 + 8 + NAME_MAX + ATTR_SIZE
        const val FI_CQ_FORMAT_TAGGED = 4
        const val FI_WAIT_NONE = 0
        /** FI_COMPLETION | FI_DELIVERY_COMPLETE: the flags of a delivered send, a write and an update atomic. */
        const val DELIVERED = (1L shl 24) or (1L shl 28)
    }
}
