package braid.provider.ofi

import braid.core.Errno
import braid.core.FiAddr
import braid.core.Info
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RxEntry
import braid.provider.HostIdentity
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import braid.provider.UnexpectedBounds
import com.sun.jna.Function
import com.sun.jna.Memory
import com.sun.jna.Pointer
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
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
    private val slots = txSlots + 2 * recvCount

    override val counters: RailCounters = RailCounters(rail)
    private val account: UnexpectedBounds.Account = host.bounds.account(rail)

    // ## Native memory: one arena for contexts and call arguments, one for receive buffers ##
    private val arena = Memory((slots * CONTEXT_SIZE + SCRATCH).toLong()).also { it.clear() }
    private val base = Pointer.nativeValue(arena)
    private val ctxBase = base
    private val cqBuf = base + slots * CONTEXT_SIZE
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
    private lateinit var fnSend: Function
    private lateinit var fnSendData: Function
    private lateinit var fnRecv: Function
    private lateinit var fnTSend: Function
    private lateinit var fnTSendData: Function
    private lateinit var fnTRecv: Function
    private lateinit var fnReadFrom: Function
    private lateinit var fnReadErr: Function
    private var fnStrError: Function? = null
    private lateinit var fnAvInsert: Function

    // ## Operation slots: tx slots first, then the receive buffers (untagged, then tagged) ##
    private val txContext = arrayOfNulls<Any>(txSlots)
    private val txFlags = LongArray(txSlots)
    private val txTag = LongArray(txSlots)
    private val txData = LongArray(txSlots)
    private val txLen = LongArray(txSlots)
    private val txAddr = LongArray(txSlots)
    private val txDest = LongArray(txSlots)
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
        fnSend = need(ep, OfiOps.EP_MSG, OfiOps.XFER_SEND, "fi_send")
        fnSendData = need(ep, OfiOps.EP_MSG, OfiOps.XFER_SENDDATA, "fi_senddata")
        fnRecv = need(ep, OfiOps.EP_MSG, OfiOps.XFER_RECV, "fi_recv")
        fnTSend = need(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SEND, "fi_tsend")
        fnTSendData = need(ep, OfiOps.EP_TAGGED, OfiOps.XFER_SENDDATA, "fi_tsenddata")
        fnTRecv = need(ep, OfiOps.EP_TAGGED, OfiOps.XFER_RECV, "fi_trecv")
        fnReadFrom = need(cq, OfiOps.CQ_OPS, OfiOps.CQ_READFROM, "fi_cq_readfrom")
        fnReadErr = need(cq, OfiOps.CQ_OPS, OfiOps.CQ_READERR, "fi_cq_readerr")
        fnStrError = OfiOps.function(cq, OfiOps.CQ_OPS, OfiOps.CQ_STRERROR)
        fnAvInsert = need(nav, OfiOps.AV_OPS, OfiOps.AV_INSERT, "fi_av_insert")
    }

    /** Opens a domain child through the domain ops slot [slot] (`fi_av_open`, `fi_cq_open`, `fi_endpoint`). */
    private fun open(d: Long, slot: Int, call: String, attr: Long): Long {
        val f = need(d, OfiOps.DOMAIN_OPS, slot, call)
        OfiOps.putLong(outPtr, 0)
        check(call, f.invokeInt(arrayOf(d, attr, outPtr, 0L)))
        return OfiOps.getLong(outPtr)
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
        val flags = txFlags[s]
        val tagged = flags and OpFlags.TAGGED != 0L
        val withData = flags and OpFlags.REMOTE_CQ_DATA != 0L
        return when {
            tagged && withData ->
                fnTSendData.invokeLong(arrayOf(ep, txAddr[s], txLen[s], 0L, txData[s], txDest[s], txTag[s], ctx))
            tagged -> fnTSend.invokeLong(arrayOf(ep, txAddr[s], txLen[s], 0L, txDest[s], txTag[s], ctx))
            withData -> fnSendData.invokeLong(arrayOf(ep, txAddr[s], txLen[s], 0L, txData[s], txDest[s], ctx))
            else -> fnSend.invokeLong(arrayOf(ep, txAddr[s], txLen[s], 0L, txDest[s], ctx))
        }
    }

    private fun fail(s: Int, rc: Int, call: String) {
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

    private fun releaseTx(s: Int) {
        txContext[s] = null
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
            if (i < recvCount) fnRecv.invokeLong(arrayOf(ep, buf, recvSize.toLong(), 0L, FI_ADDR_UNSPEC, ctx))
            else fnTRecv.invokeLong(arrayOf(ep, buf, recvSize.toLong(), 0L, FI_ADDR_UNSPEC, 0L, -1L, ctx))
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
        while (true) {
            val n = fnReadFrom.invokeLong(arrayOf(cq, cqBuf, CQ_BATCH.toLong(), srcBuf))
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
            host.eventError(errnoOf(-err), "$rail: $text")
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
        for (s in 0 until txSlots) if (txContext[s] != null) failNow(s, err, why)
        txPending.clear()
    }

    private fun failNow(s: Int, err: Int, why: String) {
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
        OfiOps.close(ep)
        OfiOps.close(cq)
        OfiOps.close(nav)
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
        const val FI_CQ_FORMAT_TAGGED = 4
        const val FI_WAIT_NONE = 0
        const val FI_ADDR_UNSPEC = -1L
    }
}
