package braid.core

import braid.core.telemetry.Telemetry
import braid.provider.RailHost
import braid.provider.UnexpectedBounds
import org.agrona.collections.LongHashSet

/**
 * The internal half of an [Endpoint]: where what its rails report lands. It holds the CQs, counters and event queue the
 * application bound, and is the endpoint's [RailHost], the one upward seam the providers see. Completions of operations
 * that deferred work posted go back to the deferred-work queue instead of the CQ.
 *
 * Every method but [cycle] runs with the domain lock held.
 */
internal class EndpointSink(private val domain: Domain, info: Info) : RailHost {
    /** The endpoint this is the internal half of: set once it is built over this ([Endpoint.open]); events name it. */
    var endpoint: Endpoint? = null

    /** The shared receive context: the endpoint's own, or the owner's it imported. */
    override var srx: SharedReceiveContext = SharedReceiveContext(info.rxAttr.unexpectedLimit, domain.lock)

    override var av: AddressVector? = null
    var txCq: CompletionQueue? = null
    var rxCq: CompletionQueue? = null
    var txSelective = false
    var rxSelective = false
    var eq: EventQueue? = null
    var sendCounter: Counter? = null
    var recvCounter: Counter? = null
    var readCounter: Counter? = null
    var writeCounter: Counter? = null
    var remoteReadCounter: Counter? = null
    var remoteWriteCounter: Counter? = null

    override val name: String
        get() = "endpoint on '${domain.name}'"

    /** The endpoint's copy overrides, over its domain's ([Endpoint.setOp]). */
    override val hmemOps: HmemOverrides = HmemOverrides(domain.hmemOps)

    /**
     * Device memory in flight, staged through bounce buffers; a completion whose context is an [HmemStage] ends here.
     */
    val staging: HmemStaging = HmemStaging(hmemOps, domain.info.settings.overlay(info.settings)[CoreParams.HMEM_CHUNK])

    override val bounds: UnexpectedBounds =
        domain.info.settings.overlay(info.settings).let { settings ->
            UnexpectedBounds(unexpectedBytesLimit(settings), { srx }, settings[CoreParams.UNEXPECTED_RAIL_FLOOR])
        }

    /** Bytes of unexpected messages held now by all rails, the most ever held at once, and the bound. */
    val heldBytes: Long
        get() = bounds.heldBytes

    val heldBytesMax: Long
        get() = bounds.heldBytesMax

    val unexpectedBytesLimit: Long
        get() = bounds.bytesLimit

    override fun txComplete(staged: Any?, flags: Long, len: Long, tag: Long) {
        // A chunk-staged send whose later window failed to copy went on (its peer's stream stays intact); it failed.
        if (staged is HmemStage && staged.err != 0) return txError(staged, flags, len, tag, staged.err, staged.why)
        val context = if (staged is HmemStage) staging.release(staged) else staged
        if (context is DeferredWork) {
            domain.deferredWork.succeeded(context, DeferredOp.Kind.TX, flags, len, 0, tag, FiAddr.NOTAVAIL)
            return
        }
        if (flags and OpFlags.INJECT == 0L && (!txSelective || flags and OpFlags.COMPLETION != 0L)) {
            txCq!!.write(context, sendFlags(flags), len, 0, tag, FiAddr.NOTAVAIL)
        }
        sendCounter?.add(1)
    }

    override fun txError(staged: Any?, flags: Long, len: Long, tag: Long, err: Int, message: String) {
        val context = if (staged is HmemStage) staging.release(staged) else staged
        if (context is DeferredWork) {
            domain.deferredWork.failed(
                context,
                DeferredOp.Kind.TX,
                sendFlags(flags),
                len,
                tag,
                0,
                err,
                FiAddr.NOTAVAIL,
                message,
            )
            return
        }
        txCq!!.writeErr(context, sendFlags(flags), len, 0, tag, 0, err, FiAddr.NOTAVAIL, message)
        sendCounter?.addErr(1)
    }

    override fun rxComplete(e: RxEntry, msgSize: Long) {
        val capacity = e.buffer.capacity().toLong()
        val flags = recvFlags(e.tagged, e.flags) or (e.flags and OpFlags.REMOTE_CQ_DATA)
        val data = e.data
        var context = e.context
        if (context is HmemStage) { // a device buffer's bytes landed in its bounce buffer: copy them over
            val s = context
            val rc = staging.drain(s, minOf(msgSize, capacity).toInt())
            val why = if (rc < 0) staging.explain(s, HmemOp.COPY_TO_HMEM_IOV, rc) else ""
            context = staging.release(s)
            if (rc < 0) {
                rxError(context, flags, 0, data, e.tag, 0, (-rc).toInt(), e.addr, why)
                srx.freeEntry(e)
                return
            }
        }
        if (msgSize > capacity) {
            rxError(
                context,
                flags,
                capacity,
                data,
                e.tag,
                msgSize - capacity,
                Errno.ETRUNC,
                e.addr,
                "message of $msgSize bytes from ${e.addr} truncated to the posted buffer of $capacity bytes",
            )
        } else {
            rxSuccess(context, flags, msgSize, data, e.tag, e.addr, e.flags)
        }
        srx.freeEntry(e)
    }

    fun rxSuccess(context: Any?, flags: Long, len: Long, data: Long, tag: Long, source: Long, opFlags: Long) {
        if (context is DeferredWork) {
            domain.deferredWork.succeeded(context, DeferredOp.Kind.RX, flags, len, data, tag, source)
            return
        }
        if (!rxSelective || opFlags and OpFlags.COMPLETION != 0L) rxCq!!.write(context, flags, len, data, tag, source)
        recvCounter?.add(1)
    }

    override fun rxError(
        staged: Any?,
        flags: Long,
        len: Long,
        data: Long,
        tag: Long,
        olen: Long,
        err: Int,
        source: Long,
        message: String,
    ) {
        val context = if (staged is HmemStage) staging.release(staged) else staged
        if (context is DeferredWork) {
            domain.deferredWork.failed(
                context,
                DeferredOp.Kind.RX,
                flags or OpFlags.RECV,
                len,
                tag,
                olen,
                err,
                source,
                message,
            )
            return
        }
        rxCq!!.writeErr(context, flags or OpFlags.RECV, len, data, tag, olen, err, source, message)
        recvCounter?.addErr(1)
    }

    override fun rmaComplete(staged: Any?, flags: Long, len: Long) {
        var context = staged
        if (staged is HmemStage) { // a read's bytes or an atomic's result landed in the bounce buffer; a write's done
            val rc = staging.drainRma(staged, flags)
            val why = if (rc < 0) staging.explain(staged, HmemOp.COPY_TO_HMEM_IOV, rc) else ""
            context = staging.release(staged)
            if (rc < 0) return rmaError(context, flags, len, (-rc).toInt(), why)
        }
        if (context is DeferredWork) {
            domain.deferredWork.succeeded(context, DeferredOp.Kind.RMA, flags and RMA_FLAGS, len, 0, 0, FiAddr.NOTAVAIL)
            return
        }
        if (!txSelective || flags and OpFlags.COMPLETION != 0L)
            txCq!!.write(context, flags and RMA_FLAGS, len, 0, 0, FiAddr.NOTAVAIL)
        (if (flags and OpFlags.READ != 0L) readCounter else writeCounter)?.add(1)
    }

    override fun rmaError(staged: Any?, flags: Long, len: Long, err: Int, message: String) {
        val context = if (staged is HmemStage) staging.release(staged) else staged
        if (context is DeferredWork) {
            domain.deferredWork.failed(
                context,
                DeferredOp.Kind.RMA,
                flags and RMA_FLAGS,
                len,
                0,
                0,
                err,
                FiAddr.NOTAVAIL,
                message,
            )
            return
        }
        txCq!!.writeErr(context, flags and RMA_FLAGS, len, 0, 0, 0, err, FiAddr.NOTAVAIL, message)
        (if (flags and OpFlags.READ != 0L) readCounter else writeCounter)?.addErr(1)
    }

    override fun remoteAccess(which: Long) {
        (if (which == OpFlags.REMOTE_READ) remoteReadCounter else remoteWriteCounter)?.add(1)
    }

    override fun region(key: Long): MemoryRegion? = domain.region(key)

    /** Peers already reported down: a link's rails each find a dead peer, and it is reported once. */
    private val reportedDown = LongHashSet()

    override fun peerDown(addr: Long, message: String) {
        if (addr >= 0 && !reportedDown.add(addr)) return
        eq?.write(EventType.PEER_DOWN, endpoint, addr, message)
        endpoint?.let { Telemetry.peerDown(it, addr, message) }
    }

    override fun failover(addr: Long, fromRail: String, toRail: String, resent: Long) {
        endpoint?.let { Telemetry.failover(it, addr, fromRail, toRail, resent) }
    }

    override fun eventError(err: Int, message: String) {
        eq?.writeErr(endpoint, err, message)
    }

    override fun otherThreadsDrive(): Unit = domain.lock.share()

    override fun <T> cycle(body: () -> T): T {
        val result = synchronized(domain.lock) { domain.deferredWork.holding(body) }
        domain.hub.dispatchReady()
        return result
    }

    companion object {
        /**
         * The bound on unexpected bytes an endpoint holds ([CoreParams.UNEXPECTED_BYTES]), else an eighth of the heap,
         * at most 64 MiB.
         */
        fun unexpectedBytesLimit(settings: Settings): Long =
            settings[CoreParams.UNEXPECTED_BYTES].takeIf { it > 0 }
                ?: minOf(64L shl 20, Runtime.getRuntime().maxMemory() / 8)

        const val RMA_FLAGS: Long = OpFlags.RMA or OpFlags.ATOMIC or OpFlags.READ or OpFlags.WRITE

        fun sendFlags(flags: Long): Long = OpFlags.SEND or (flags and (OpFlags.MSG or OpFlags.TAGGED))

        fun recvFlags(tagged: Boolean, flags: Long): Long =
            OpFlags.RECV or
                (if (tagged) OpFlags.TAGGED else OpFlags.MSG) or
                (flags and (OpFlags.PEEK or OpFlags.CLAIM or OpFlags.DISCARD))
    }
}
