package braid.provider.shm

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.Endpoint
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Info
import braid.core.RailCounters
import braid.core.OpFlags
import braid.core.RxEntry
import braid.provider.RailAv
import braid.provider.RmaEngine
import braid.provider.RmaPath
import braid.provider.Transport
import braid.provider.shm.FrameDescriptor.CTRL_LENGTH
import braid.provider.shm.FrameDescriptor.CTRL_MSG_ID_OFFSET
import braid.provider.shm.FrameDescriptor.CTRL_VALUE_OFFSET
import braid.provider.shm.FrameDescriptor.DATA_OFFSET
import braid.provider.shm.FrameDescriptor.FLAGS_OFFSET
import braid.provider.shm.FrameDescriptor.FLAG_ACK
import braid.provider.shm.FrameDescriptor.FLAG_DATA
import braid.provider.shm.FrameDescriptor.FLAG_TAGGED
import braid.provider.shm.FrameDescriptor.FRAG_HEADER_LENGTH
import braid.provider.shm.FrameDescriptor.FRAG_MSG_ID_OFFSET
import braid.provider.shm.FrameDescriptor.FRAG_OFFSET_OFFSET
import braid.provider.shm.FrameDescriptor.HEADER_LENGTH
import braid.provider.shm.FrameDescriptor.LENGTH_OFFSET
import braid.provider.shm.FrameDescriptor.MSG_ACK
import braid.provider.shm.FrameDescriptor.MSG_CTS
import braid.provider.shm.FrameDescriptor.MSG_DISCARDED
import braid.provider.shm.FrameDescriptor.MSG_EAGER
import braid.provider.shm.FrameDescriptor.MSG_FRAG
import braid.provider.shm.FrameDescriptor.MSG_ID_OFFSET
import braid.provider.shm.FrameDescriptor.MSG_PULLED
import braid.provider.shm.FrameDescriptor.MSG_RMA
import braid.provider.shm.FrameDescriptor.MSG_RMA_REPLY
import braid.provider.shm.FrameDescriptor.MSG_RTS
import braid.provider.shm.FrameDescriptor.SRC_ADDRESS_OFFSET
import braid.provider.shm.FrameDescriptor.TAG_OFFSET
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.ControlledMessageHandler
import org.agrona.concurrent.MessageHandler
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor
import java.nio.charset.StandardCharsets

/**
 * The shm rail's part of one endpoint.
 *
 * Every sender-receiver pair has its own channel file (created by the sender, announced through
 * the receiver's doorbell) holding a data ring one way and a control ring the other. One
 * producer per ring keeps the rings single-producer (no CAS), lets a receiver push back one
 * sender without stalling the others (a record it cannot take stays in that sender's ring), and
 * lets each side tell cleanly which peer died.
 *
 * Protocol: a message up to the eager size is one EAGER record. A larger one is an RTS record;
 * when the receiver has matched it (at once, or later when the receive is posted) it answers
 * CTS with the number of bytes its buffer accepts, and the sender streams that many bytes as
 * FRAG records. Data moves sender buffer -> ring -> receiver buffer: two copies, no system call.
 *
 * Not thread-safe: the endpoint calls in with its domain's lock held.
 */
internal class ShmTransport(
    private val ep: Endpoint,
    private val info: Info,
    private val av: RailAv,
    private val hostId: Long,
) : Transport {
    private val name = ShmDirectory.newEndpointName()
    override val address: ByteArray = ShmAddressDescriptor.encode(hostId, name)

    private val ringCapacity = info.settings[ShmParams.RING_SIZE]
    private val maxRecord = ringCapacity / 8
    private val eagerSize = minOf(info.endpointAttr.eagerSize, maxRecord - HEADER_LENGTH)
    private val fragSize = (maxRecord - FRAG_HEADER_LENGTH) and 7.inv()
    private val livenessNanos = info.settings[ShmParams.LIVENESS_MS] * 1_000_000
    private val cma = info.settings[ShmParams.CMA] && CrossMemoryAttach.available

    private var file: MappedFile? = null
    private lateinit var doorbell: ManyToOneRingBuffer
    private val outs = ArrayList<OutChannel>()
    private val outByName = HashMap<String, OutChannel>()
    private val outByAddr = Long2ObjectHashMap<OutChannel>()
    private var outAvGeneration = -1L
    private val ins = ArrayList<InChannel>()
    private var nextLiveness = 0L
    private var cycles = 0
    private val txPool = ArrayDeque<TxOp>()
    private val heldPool = ArrayDeque<Held>()
    private val inboundPool = ArrayDeque<Inbound>()
    private val payloads = PayloadPool()
    private val rma = RmaEngine(ep, "shm", maxRecord, info.txAttr.size)
    private val doorbellHandler = MessageHandler { _, buffer, index, length -> attach(buffer.getStringWithoutLengthUtf8(index, length)) }

    override fun enable() {
        if (ringCapacity < 1024 || Integer.bitCount(ringCapacity) != 1) {
            throw FabricException.invalid("shm endpoint: ring capacity $ringCapacity must be a power of two ≥ 1024; set ShmParams.RING_SIZE (BRAID_SHM_RING_SIZE)")
        }
        if (eagerSize < 0) throw FabricException.invalid("shm endpoint: eager size ${info.endpointAttr.eagerSize} must be ≥ 0")
        val f = ShmDirectory.createAndMap(ShmDirectory.endpointFile(name), EndpointFileDescriptor.length())
        val b = f.buffer
        b.putInt(EndpointFileDescriptor.MAGIC_OFFSET, EndpointFileDescriptor.MAGIC)
        b.putInt(EndpointFileDescriptor.VERSION_OFFSET, EndpointFileDescriptor.VERSION)
        b.putLong(EndpointFileDescriptor.PID_OFFSET, ShmDirectory.self.pid())
        b.putInt(EndpointFileDescriptor.DOORBELL_CAPACITY_OFFSET, EndpointFileDescriptor.DOORBELL_CAPACITY)
        doorbell = ManyToOneRingBuffer(UnsafeBuffer(b, EndpointFileDescriptor.DOORBELL_OFFSET, EndpointFileDescriptor.DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH))
        b.putIntVolatile(EndpointFileDescriptor.STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        file = f
    }

    // ## Duty cycle ##

    override fun progress(): Int {
        var work = 0
        if (doorbell.size() > 0) work += doorbell.read(doorbellHandler)
        for (i in 0 until ins.size) work += ins[i].poll()
        for (i in 0 until outs.size) work += outs[i].poll()
        // Reading the clock costs about as much as an idle duty cycle: look at it every 16 cycles.
        if (++cycles and 0xf == 0) {
            val now = System.nanoTime()
            if (now - nextLiveness >= 0) {
                nextLiveness = now + livenessNanos
                checkPeers()
            }
        }
        return work
    }

    // ## Send side ##

    override val counters: RailCounters = RailCounters("shm")

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val rc = startSend(buffer, dest, tag, data, flags, context)
        if (rc == 0) counters.sent(buffer.capacity())
        return rc
    }

    private fun startSend(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val out = outFor(dest)
        if (out == null) return lastResolveError
        if (out.dead) return -Errno.EHOSTDOWN
        val length = buffer.capacity()
        val inject = flags and OpFlags.INJECT != 0L
        // Inject copies into the ring at once, so it is bounded by what one ring record holds.
        if (inject && length > eagerSize) return -Errno.EMSGSIZE
        val wireFlags = wireFlags(flags)
        if (out.backlog.isEmpty()) {
            if (length <= eagerSize) {
                val id = out.nextMsgId++
                if (out.writeEager(buffer, length, tag, data, id, wireFlags)) {
                    if (wireFlags and FLAG_ACK != 0 && !inject) out.waitingAck.put(id, txOp(buffer, length, tag, data, flags, context, id))
                    else ep.txComplete(context, flags, length.toLong(), tag)
                    return 0
                }
                out.nextMsgId--
            } else if (!inject) {
                val op = txOp(buffer, length, tag, data, flags, context, out.nextMsgId++)
                if (out.writeRts(op)) return 0
                out.nextMsgId--
                releaseOp(op)
            }
        }
        if (inject) return -Errno.EAGAIN
        if (out.backlog.size >= info.txAttr.size) return -Errno.EAGAIN
        out.backlog.addLast(txOp(buffer, length, tag, data, flags, context, 0))
        return 0
    }

    private var lastResolveError = 0

    private fun outFor(dest: Long): OutChannel? {
        if (av.generation != outAvGeneration) {
            outByAddr.clear()
            outAvGeneration = av.generation
        }
        val cached = outByAddr.get(dest)
        if (cached != null) return cached
        val peer = av.query(dest) as? ShmAddress
        if (peer == null) { lastResolveError = -Errno.EINVAL; return null }
        if (peer.hostId != hostId) { lastResolveError = -Errno.EHOSTUNREACH; return null }
        val out = outByName[peer.name] ?: connect(peer.name) ?: return null
        outByAddr.put(dest, out)
        return out
    }

    private fun connect(dst: String): OutChannel? {
        val epPath = ShmDirectory.endpointFile(dst)
        val epFile = ShmDirectory.mapExisting(epPath)
        val refused = if (epFile == null) "no endpoint file $epPath (not on this host, or closed)" else try {
            EndpointFileDescriptor.check(epFile.buffer, epPath)
            null
        } catch (e: FabricException) {
            e.message
        }
        if (epFile == null || refused != null) {
            epFile?.unmap()
            lastResolveError = -Errno.EHOSTUNREACH
            ep.eq?.writeErr(ep, Errno.EHOSTUNREACH, "shm: peer $dst: $refused")
            return null
        }
        val owner = ShmDirectory.owner(dst)?.let { PeerProcess.watch(it) }
        if (epFile.buffer.getIntVolatile(EndpointFileDescriptor.STATE_OFFSET) != EndpointFileDescriptor.STATE_OPEN || owner == null) {
            epFile.unmap()
            owner?.close()
            lastResolveError = -Errno.ECONNREFUSED
            ep.eq?.writeErr(ep, Errno.ECONNREFUSED, "shm: peer $dst ${if (owner == null) "(process ${ShmDirectory.pidOf(dst)}) is not running" else "closed its endpoint"}; sends to it are refused")
            return null
        }
        val path = ShmDirectory.channelFile(dst, name)
        val ch = ShmDirectory.createAndMap(path, ChannelFileDescriptor.length(ringCapacity))
        val b = ch.buffer
        b.putInt(ChannelFileDescriptor.MAGIC_OFFSET, ChannelFileDescriptor.MAGIC)
        b.putInt(ChannelFileDescriptor.VERSION_OFFSET, ChannelFileDescriptor.VERSION)
        b.putInt(ChannelFileDescriptor.DATA_CAPACITY_OFFSET, ringCapacity)
        b.putInt(ChannelFileDescriptor.CTRL_CAPACITY_OFFSET, ChannelFileDescriptor.CTRL_CAPACITY)
        b.putIntVolatile(ChannelFileDescriptor.SENDER_STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        val out = OutChannel(dst, owner, epFile, ch)
        outs += out
        outByName[dst] = out
        out.announce()
        return out
    }

    private fun txOp(buffer: DirectBuffer, length: Int, tag: Long, data: Long, flags: Long, context: Any?, id: Long): TxOp {
        val op = txPool.removeLastOrNull() ?: TxOp()
        op.buffer.wrap(buffer, 0, length)
        op.length = length; op.tag = tag; op.data = data; op.flags = flags; op.context = context; op.msgId = id
        op.accepted = 0; op.sent = 0
        return op
    }

    private fun releaseOp(op: TxOp) {
        op.context = null
        op.buffer.wrap(0L, 0)
        txPool.addLast(op)
    }

    private fun completeOp(op: TxOp) {
        ep.txComplete(op.context, op.flags, op.length.toLong(), op.tag)
        releaseOp(op)
    }

    private fun wireFlags(flags: Long): Int =
        (if (flags and OpFlags.TAGGED != 0L) FLAG_TAGGED else 0) or
            (if (flags and OpFlags.REMOTE_CQ_DATA != 0L) FLAG_DATA else 0) or
            (if (flags and OpFlags.DELIVERY_COMPLETE != 0L) FLAG_ACK else 0)

    /** A pending send: queued for ring space, waiting for CTS, streaming, or waiting for an ACK. */
    private class TxOp {
        val buffer = UnsafeBuffer(0L, 0)
        var length = 0
        var tag = 0L
        var data = 0L
        var flags = 0L
        var context: Any? = null
        var msgId = 0L
        var accepted = 0L
        var sent = 0L
    }

    private inner class OutChannel(val dst: String, private val owner: PeerProcess, val epFile: MappedFile, val file: MappedFile) {
        val data = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.DATA_RING_OFFSET, ringCapacity + RingBufferDescriptor.TRAILER_LENGTH))
        val bulk = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.bulkRingOffset(ringCapacity), ringCapacity + RingBufferDescriptor.TRAILER_LENGTH))
        val ctrl = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.ctrlRingOffset(ringCapacity), ChannelFileDescriptor.CTRL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH))
        val backlog = ArrayDeque<TxOp>()
        val waitingCts = Long2ObjectHashMap<TxOp>()
        val streaming = ArrayDeque<TxOp>()
        val waitingAck = Long2ObjectHashMap<TxOp>()
        var nextMsgId = 1L
        var announced = false
        var dead = false
        val rmaPath = RmaPath(ShmRingOutlet(bulk, MSG_RMA), dst)
        private val ctrlHandler = MessageHandler { type, buffer, index, length ->
            if (type == MSG_RMA_REPLY) rma.onReply(rmaPath, buffer, index, length) else onCtrl(type, buffer, index)
        }

        fun announce() {
            val msg = file.path.fileName.toString().toByteArray(StandardCharsets.UTF_8)
            val bell = ManyToOneRingBuffer(UnsafeBuffer(epFile.buffer, EndpointFileDescriptor.DOORBELL_OFFSET, EndpointFileDescriptor.DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH))
            announced = bell.write(EndpointFileDescriptor.MSG_CONNECT, UnsafeBuffer(msg), 0, msg.size)
        }

        fun poll(): Int {
            if (dead) return 0
            if (!announced) announce()
            var work = ctrl.read(ctrlHandler)
            if (!rmaPath.idle) work += rma.pump(rmaPath)
            while (backlog.isNotEmpty()) {
                val op = backlog.first()
                if (!writeHead(op)) break
                backlog.removeFirst()
                work++
            }
            while (streaming.isNotEmpty()) {
                val op = streaming.first()
                if (!stream(op)) break
                streaming.removeFirst()
                finishStream(op)
                work++
            }
            return work
        }

        fun writeEager(src: DirectBuffer, length: Int, tag: Long, data: Long, id: Long, wire: Int): Boolean {
            val index = this.data.tryClaim(MSG_EAGER, HEADER_LENGTH + length)
            if (index < 0) return false
            val b = this.data.buffer()
            putHeader(b, index, wire, tag, data, id, length.toLong())
            b.putLong(index + SRC_ADDRESS_OFFSET, 0)
            if (length > 0) b.putBytes(index + HEADER_LENGTH, src, 0, length)
            this.data.commit(index)
            return true
        }

        fun writeRts(op: TxOp): Boolean {
            val index = data.tryClaim(MSG_RTS, HEADER_LENGTH)
            if (index < 0) return false
            val b = data.buffer()
            putHeader(b, index, wireFlags(op.flags), op.tag, op.data, op.msgId, op.length.toLong())
            // Off-heap memory has a stable address the receiver may read directly.
            val pullable = cma && op.buffer.byteArray() == null
            b.putLong(index + SRC_ADDRESS_OFFSET, if (pullable) op.buffer.addressOffset() else 0L)
            data.commit(index)
            waitingCts.put(op.msgId, op)
            return true
        }

        private fun putHeader(b: MutableDirectBuffer, index: Int, wire: Int, tag: Long, data: Long, id: Long, length: Long) {
            b.putInt(index + FLAGS_OFFSET, wire)
            b.putLong(index + TAG_OFFSET, tag)
            b.putLong(index + DATA_OFFSET, data)
            b.putLong(index + MSG_ID_OFFSET, id)
            b.putLong(index + LENGTH_OFFSET, length)
        }

        /** Writes a queued send's first record; false if the ring has no room yet. */
        private fun writeHead(op: TxOp): Boolean {
            op.msgId = nextMsgId
            if (op.length <= eagerSize) {
                val wire = wireFlags(op.flags)
                if (!writeEager(op.buffer, op.length, op.tag, op.data, op.msgId, wire)) return false
                nextMsgId++
                if (wire and FLAG_ACK != 0) waitingAck.put(op.msgId, op) else completeOp(op)
                return true
            }
            if (!writeRts(op)) return false
            nextMsgId++
            return true
        }

        /** Streams as much of [op] as the ring takes; true once all accepted bytes are in the ring. */
        private fun stream(op: TxOp): Boolean {
            val b = bulk.buffer()
            while (op.sent < op.accepted) {
                val n = minOf(fragSize.toLong(), op.accepted - op.sent).toInt()
                val index = bulk.tryClaim(MSG_FRAG, FRAG_HEADER_LENGTH + n)
                if (index < 0) return false
                b.putLong(index + FRAG_MSG_ID_OFFSET, op.msgId)
                b.putLong(index + FRAG_OFFSET_OFFSET, op.sent)
                b.putBytes(index + FRAG_HEADER_LENGTH, op.buffer, op.sent.toInt(), n)
                bulk.commit(index)
                op.sent += n
            }
            return true
        }

        private fun finishStream(op: TxOp) {
            if (op.flags and OpFlags.DELIVERY_COMPLETE != 0L) waitingAck.put(op.msgId, op) else completeOp(op)
        }

        private fun onCtrl(type: Int, b: DirectBuffer, index: Int) {
            val id = b.getLong(index + CTRL_MSG_ID_OFFSET)
            when (type) {
                MSG_CTS -> {
                    val op = waitingCts.remove(id) ?: return
                    op.accepted = b.getLong(index + CTRL_VALUE_OFFSET)
                    if (op.accepted == 0L) finishStream(op) else streaming.addLast(op)
                }
                MSG_ACK -> waitingAck.remove(id)?.let { completeOp(it) }
                MSG_PULLED -> waitingCts.remove(id)?.let { completeOp(it) } // delivered: the receiver copied it
                MSG_DISCARDED -> (waitingCts.remove(id) ?: waitingAck.remove(id))?.let { completeOp(it) }
            }
        }

        /** The receiver is gone: every send still waiting on it completes in error. */
        fun fail(err: Int, why: String) {
            if (dead) return
            dead = true
            val msg = "shm: peer $dst $why"
            for (op in backlog) failOp(op, err, msg)
            for (op in streaming) failOp(op, err, msg)
            waitingCts.values.forEach { failOp(it, err, msg) }
            waitingAck.values.forEach { failOp(it, err, msg) }
            backlog.clear(); streaming.clear(); waitingCts.clear(); waitingAck.clear()
            rma.failPath(rmaPath, err, msg)
            ep.peerDown(av.epAddr(dst), msg)
        }

        private fun failOp(op: TxOp, err: Int, msg: String) {
            ep.txError(op.context, op.flags, op.length.toLong(), op.tag, err, "$msg; send of ${op.length} bytes (tag 0x${java.lang.Long.toHexString(op.tag)}) not delivered")
            releaseOp(op)
        }

        fun describe(): String =
            "data ring ${data.size()} B, bulk ring ${bulk.size()} B, control ring ${ctrl.size()} B, backlog ${backlog.size}, " +
                "waiting CTS ${waitingCts.size}, streaming ${streaming.size}, waiting ACK ${waitingAck.size}, next id $nextMsgId, dead $dead"

        fun receiverGone(): String? {
            val state = epFile.buffer.getIntVolatile(EndpointFileDescriptor.STATE_OFFSET)
            if (state != EndpointFileDescriptor.STATE_OPEN) return "closed its endpoint"
            if (!owner.alive()) return "(process ${ShmDirectory.pidOf(dst)}) died"
            return null
        }

        fun close() {
            file.buffer.putIntVolatile(ChannelFileDescriptor.SENDER_STATE_OFFSET, EndpointFileDescriptor.STATE_CLOSED)
            // The receiver drains and removes an attached channel; remove it ourselves if it never will.
            val attached = file.buffer.getIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET) != 0
            if (attached || dead || receiverGone() != null) file.delete()
            file.unmap()
            epFile.unmap()
            owner.close()
        }
    }

    // ## RMA and atomics: the protocol is RmaEngine's; requests ride the bulk ring, replies the control ring ##

    override val rmaCaps: Long get() = Caps.RMA_ALL

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = rma.maxAtomicCount(type, form)

    override fun write(buffer: DirectBuffer, dest: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int {
        val path = rmaPath(dest) ?: return lastResolveError
        return rma.write(path, dest, buffer, remoteOffset, key, flags, context)
    }

    override fun read(buffer: MutableDirectBuffer, src: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int {
        val path = rmaPath(src) ?: return lastResolveError
        return rma.read(path, src, buffer, remoteOffset, key, flags, context)
    }

    override fun atomic(
        operand: DirectBuffer, compare: DirectBuffer?, result: MutableDirectBuffer?, dest: Long, remoteOffset: Long, key: Long,
        type: AtomicDatatype, op: AtomicOp, count: Int, flags: Long, context: Any?,
    ): Int {
        val path = rmaPath(dest) ?: return lastResolveError
        return rma.atomic(path, dest, operand, compare, result, remoteOffset, key, type, op, count, flags, context)
    }

    private fun rmaPath(dest: Long): RmaPath? {
        val out = outFor(dest) ?: return null
        if (out.dead) { lastResolveError = -Errno.EHOSTDOWN; return null }
        return out.rmaPath
    }

    // ## Receive side ##

    /** Maps a channel a sender announced through our doorbell. */
    private fun attach(fileName: String) {
        if (!fileName.startsWith("$name~") || !fileName.endsWith(".ch")) return
        val sender = fileName.removePrefix("$name~").removeSuffix(".ch")
        val f = ShmDirectory.mapExisting(ShmDirectory.root.resolve(fileName)) ?: return
        // A file this build cannot read is left alone (not even marked) and reported: the sender
        // runs another Braid version, or the file is not a channel at all.
        val capacity = try {
            ChannelFileDescriptor.check(f.buffer, f.path)
        } catch (e: FabricException) {
            f.unmap()
            ep.eq?.writeErr(ep, e.code, "shm endpoint $name refused the channel from $sender: ${e.message}")
            return
        }
        f.buffer.putIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        ins += InChannel(ins.size, sender, f, capacity)
    }

    private inner class InChannel(val index: Int, val sender: String, val file: MappedFile, capacity: Int) : ControlledMessageHandler {
        val data = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.DATA_RING_OFFSET, capacity + RingBufferDescriptor.TRAILER_LENGTH))
        val bulk = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.bulkRingOffset(capacity), capacity + RingBufferDescriptor.TRAILER_LENGTH))
        val ctrl = OneToOneRingBuffer(UnsafeBuffer(file.buffer, ChannelFileDescriptor.ctrlRingOffset(capacity), ChannelFileDescriptor.CTRL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH))
        private val owner: PeerProcess? = ShmDirectory.owner(sender)?.let { PeerProcess.watch(it) }
        private val senderPid = ShmDirectory.pidOf(sender).toIntOrNull() ?: 0
        /** Whether single-copy pulls from this sender work; cleared on the first that fails. */
        private var pullable = cma && owner != null
        val rmaPath = RmaPath(ShmRingOutlet(ctrl, MSG_RMA_REPLY), sender)
        private val fragHandler = MessageHandler { type, b, index, length ->
            if (type == MSG_FRAG) onFrag(b, index, length) else if (type == MSG_RMA) rma.serve(rmaPath, b, index, length)
        }
        var fiAddr = FiAddr.NOTAVAIL
        private var avGeneration = -1L
        val inflight = Long2ObjectHashMap<Inbound>()
        private val pendingCtrl = TripleQueue()
        private val ctrlScratch = UnsafeBuffer(ByteArray(CTRL_LENGTH))
        /** The sender closed or died; whatever is still in the ring is delivered first. */
        var senderGone: String? = null
        var dead = false

        fun poll(): Int {
            if (!pendingCtrl.isEmpty()) flushCtrl()
            if (av.generation != avGeneration) resolve(av.generation)
            if (dead) return 0
            var work = data.controlledRead(this, READ_LIMIT)
            // The bulk ring carries fragments and RMA requests; neither is ever pushed back.
            work += bulk.read(fragHandler, READ_LIMIT)
            if (!rmaPath.idle) work += rma.pump(rmaPath)
            return work
        }

        fun describe(): String =
            "data ring ${data.size()} B, bulk ring ${bulk.size()} B, control ring ${ctrl.size()} B, in flight ${inflight.size}, " +
                "address $fiAddr, sender gone ${senderGone}, dead $dead"

        /** Whether the sender left nothing unread. */
        fun drained(): Boolean = data.size() == 0 && bulk.size() == 0

        private fun resolve(generation: Long) {
            avGeneration = generation
            val before = fiAddr
            fiAddr = av.epAddr(sender)
            if (before == FiAddr.NOTAVAIL && fiAddr != FiAddr.NOTAVAIL) {
                ep.srx.foreachUnspecAddr { e -> if (e.peer === this@ShmTransport && e.peerSource == index.toLong()) fiAddr else FiAddr.NOTAVAIL }
            }
        }

        override fun onMessage(type: Int, b: MutableDirectBuffer, index: Int, length: Int): ControlledMessageHandler.Action = when (type) {
            MSG_EAGER, MSG_RTS -> onMessageHead(type == MSG_RTS, b, index)
            else -> ControlledMessageHandler.Action.CONTINUE // a record type from a newer version: skip it
        }

        private fun onMessageHead(rendezvous: Boolean, b: MutableDirectBuffer, index: Int): ControlledMessageHandler.Action {
            val wire = b.getInt(index + FLAGS_OFFSET)
            val tag = b.getLong(index + TAG_OFFSET)
            val cqData = b.getLong(index + DATA_OFFSET)
            val id = b.getLong(index + MSG_ID_OFFSET)
            val length = b.getLong(index + LENGTH_OFFSET)
            val srx = ep.srx
            counters.received(length)
            val e = if (wire and FLAG_TAGGED != 0) srx.getTag(fiAddr, tag, length) else srx.getMsg(fiAddr, length)
            if (wire and FLAG_DATA != 0) { e.data = cqData; e.flags = e.flags or OpFlags.REMOTE_CQ_DATA }
            val wantAck = wire and FLAG_ACK != 0
            val srcAddress = b.getLong(index + SRC_ADDRESS_OFFSET)
            if (srx.isMatched(e)) {
                if (rendezvous) startRendezvous(e, id, wantAck, srcAddress) else deliver(e, b, index + HEADER_LENGTH, wantAck, id)
                return ControlledMessageHandler.Action.CONTINUE
            }
            if (srx.unexpectedFull) {
                // Push this sender back: the record stays in its ring until a receive takes it.
                srx.freeEntry(e)
                return ControlledMessageHandler.Action.ABORT
            }
            val held = heldPool.removeLastOrNull() ?: Held()
            held.channel = this; held.msgId = id; held.rendezvous = rendezvous; held.wantAck = wantAck; held.srcAddress = srcAddress
            if (!rendezvous) {
                val bytes = payloads.acquire(length.toInt())
                bytes.putBytes(0, b, index + HEADER_LENGTH, length.toInt())
                held.bytes = bytes
            }
            e.peerContext = held
            e.peerSource = this.index.toLong()
            if (e.tagged) srx.queueTag(e, this@ShmTransport) else srx.queueMsg(e, this@ShmTransport)
            return ControlledMessageHandler.Action.CONTINUE
        }

        fun deliver(e: RxEntry, src: DirectBuffer, offset: Int, wantAck: Boolean, id: Long) {
            val n = minOf(e.size, e.buffer.capacity().toLong()).toInt()
            if (n > 0) e.buffer.putBytes(0, src, offset, n)
            if (wantAck) sendCtrl(MSG_ACK, id, 0)
            ep.rxComplete(e, e.size)
        }

        fun startRendezvous(e: RxEntry, id: Long, wantAck: Boolean, srcAddress: Long) {
            val accept = minOf(e.size, e.buffer.capacity().toLong())
            if (srcAddress != 0L && pullable && accept > 0 && e.buffer.byteArray() == null) {
                val n = CrossMemoryAttach.read(senderPid, e.buffer.addressOffset(), srcAddress, accept)
                if (n == accept) {
                    sendCtrl(MSG_PULLED, id, accept)
                    ep.rxComplete(e, e.size)
                    return
                }
                pullable = false // not permitted here (or the sender is gone): stream from now on
            }
            sendCtrl(MSG_CTS, id, accept)
            if (accept == 0L) {
                ep.rxComplete(e, e.size)
                return
            }
            val inbound = inboundPool.removeLastOrNull() ?: Inbound()
            inbound.entry = e; inbound.expected = accept; inbound.received = 0; inbound.wantAck = wantAck
            inflight.put(id, inbound)
        }

        private fun onFrag(b: DirectBuffer, index: Int, length: Int) {
            val id = b.getLong(index + FRAG_MSG_ID_OFFSET)
            val inbound = inflight.get(id) ?: return
            val offset = b.getLong(index + FRAG_OFFSET_OFFSET)
            val n = length - FRAG_HEADER_LENGTH
            if (offset < 0 || offset + n > inbound.expected) return // not what we asked for: ignore it
            inbound.entry!!.buffer.putBytes(offset.toInt(), b, index + FRAG_HEADER_LENGTH, n)
            inbound.received += n
            if (inbound.received >= inbound.expected) {
                inflight.remove(id)
                if (inbound.wantAck) sendCtrl(MSG_ACK, id, 0)
                ep.rxComplete(inbound.entry!!, inbound.entry!!.size)
                inbound.entry = null
                inboundPool.addLast(inbound)
            }
        }

        fun sendCtrl(type: Int, id: Long, value: Long) {
            if (pendingCtrl.isEmpty() && writeCtrl(type, id, value)) return
            pendingCtrl.add(type.toLong(), id, value)
        }

        private fun flushCtrl() {
            while (!pendingCtrl.isEmpty()) {
                if (!writeCtrl(pendingCtrl.first(0).toInt(), pendingCtrl.first(1), pendingCtrl.first(2))) return
                pendingCtrl.removeFirst()
            }
        }

        private fun writeCtrl(type: Int, id: Long, value: Long): Boolean {
            ctrlScratch.putLong(CTRL_MSG_ID_OFFSET, id)
            ctrlScratch.putLong(CTRL_VALUE_OFFSET, value)
            return ctrl.write(type, ctrlScratch, 0, CTRL_LENGTH)
        }

        fun checkSender(): String? {
            if (file.buffer.getIntVolatile(ChannelFileDescriptor.SENDER_STATE_OFFSET) != EndpointFileDescriptor.STATE_OPEN) return "closed its endpoint"
            if (owner?.alive() != true) return "(process ${ShmDirectory.pidOf(sender)}) died"
            return null
        }

        /** Fails the receives that can only complete with this sender's data. */
        fun fail() {
            dead = true
            val why = "shm: peer $sender ${senderGone ?: "is gone"}"
            for (inbound in inflight.values) {
                val e = inbound.entry!!
                ep.rxError(e.context, recvFlags(e), inbound.received, 0, e.tag, 0, Errno.EIO, e.addr,
                    "$why mid-transfer: ${inbound.received} of ${inbound.expected} bytes received")
                ep.srx.freeEntry(e)
            }
            inflight.clear()
            rma.failPath(rmaPath, Errno.EIO, why)
            failDirected(why)
            ep.peerDown(fiAddr, why)
        }

        fun failDirected(why: String) {
            if (fiAddr == FiAddr.NOTAVAIL) return
            ep.srx.drainDirected(fiAddr) { e ->
                ep.rxError(e.context, recvFlags(e), 0, 0, e.tag, 0, Errno.EHOSTDOWN, fiAddr, "$why; no message can arrive for this receive")
                ep.srx.freeEntry(e)
            }
        }

        fun close() {
            file.buffer.putIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET, EndpointFileDescriptor.STATE_CLOSED)
            file.delete()
            file.unmap()
            owner?.close()
        }
    }

    /** A matched rendezvous receive whose fragments are arriving. */
    private class Inbound {
        var entry: RxEntry? = null
        var expected = 0L
        var received = 0L
        var wantAck = false
    }

    /** What the rail keeps for an unexpected message: its bytes (eager) or where to fetch them (rendezvous). */
    private class Held {
        var channel: InChannel? = null
        var bytes: UnsafeBuffer? = null
        var msgId = 0L
        var rendezvous = false
        var wantAck = false
        var srcAddress = 0L
    }

    // ## Peer operations of the shared receive context ##

    override fun startMsg(entry: RxEntry) = start(entry)
    override fun startTag(entry: RxEntry) = start(entry)
    override fun discardMsg(entry: RxEntry) = discard(entry)
    override fun discardTag(entry: RxEntry) = discard(entry)

    private fun start(e: RxEntry) {
        val held = e.peerContext as Held
        val channel = held.channel!!
        e.peerContext = null
        if (!held.rendezvous) {
            val bytes = held.bytes!!
            channel.deliver(e, bytes, 0, held.wantAck, held.msgId)
            payloads.release(bytes)
        } else if (channel.dead) {
            ep.rxError(e.context, recvFlags(e), 0, e.data, e.tag, 0, Errno.EIO, e.addr,
                "shm: peer ${channel.sender} ${channel.senderGone ?: "is gone"} before sending the ${e.size} bytes of this message")
            ep.srx.freeEntry(e)
        } else {
            channel.startRendezvous(e, held.msgId, held.wantAck, held.srcAddress)
        }
        releaseHeld(held)
    }

    private fun discard(e: RxEntry) {
        val held = e.peerContext as Held
        e.peerContext = null
        held.bytes?.let { payloads.release(it) }
        if (held.rendezvous) held.channel!!.sendCtrl(MSG_DISCARDED, held.msgId, 0)
        else if (held.wantAck) held.channel!!.sendCtrl(MSG_ACK, held.msgId, 0)
        ep.srx.freeEntry(e)
        releaseHeld(held)
    }

    private fun releaseHeld(held: Held) {
        held.channel = null; held.bytes = null
        heldPool.addLast(held)
    }

    /** The state of every channel, in words, for diagnostics. */
    override fun toString(): String = buildString {
        append("shm endpoint $name")
        for (o in outs) append("\n  to ${o.dst}: ${o.describe()}")
        for (i in ins) append("\n  from ${i.sender}: ${i.describe()}")
    }

    // ## Liveness and close ##

    private fun checkPeers() {
        for (i in 0 until outs.size) {
            val out = outs[i]
            if (out.dead) continue
            val why = out.receiverGone() ?: continue
            out.fail(if (why.startsWith("closed")) Errno.ECONNRESET else Errno.EHOSTDOWN, why)
        }
        for (i in 0 until ins.size) {
            val ch = ins[i]
            if (ch.dead) { ch.failDirected("shm: peer ${ch.sender} ${ch.senderGone}"); continue }
            if (ch.senderGone == null) ch.senderGone = ch.checkSender()
            // Everything the sender put in the ring before it went is delivered first.
            if (ch.senderGone != null && (ch.drained() || ch.inflight.size == 0 && ch.data.size() == 0)) ch.fail()
        }
        if (ep.srx.postedCount > 0) ep.srx.forEachDirectedSource { addr -> checkSilentPeer(addr) }
    }

    /**
     * A receive waits for a peer that has never sent to us, so no channel watches it: watch its
     * process directly, and fail the receives once it is gone.
     */
    private fun checkSilentPeer(addr: Long) {
        for (i in 0 until ins.size) if (ins[i].fiAddr == addr) return
        val peer = av.query(addr) as? ShmAddress ?: return
        if (peer.hostId != hostId) return
        val watcher = silentPeers.getOrPut(peer.name) { ShmDirectory.owner(peer.name)?.let { PeerProcess.watch(it) } }
        if (watcher != null && watcher.alive()) return
        // Its channel may have been announced just now: read the doorbell before deciding.
        if (doorbell.size() > 0) return
        val why = "shm: peer ${peer.name} (process ${ShmDirectory.pidOf(peer.name)}) is not running"
        ep.srx.drainDirected(addr) { e ->
            ep.rxError(e.context, recvFlags(e), 0, 0, e.tag, 0, Errno.EHOSTDOWN, addr, "$why; no message can arrive for this receive")
            ep.srx.freeEntry(e)
        }
        ep.peerDown(addr, why)
    }

    private val silentPeers = HashMap<String, PeerProcess?>()

    override fun close() {
        val f = file ?: return
        file = null
        f.buffer.putIntVolatile(EndpointFileDescriptor.STATE_OFFSET, EndpointFileDescriptor.STATE_CLOSED)
        for (out in outs) out.close()
        for (ch in ins) ch.close()
        outs.clear(); ins.clear(); outByName.clear(); outByAddr.clear()
        silentPeers.values.forEach { it?.close() }
        silentPeers.clear()
        f.delete()
        f.unmap()
    }

    private companion object {
        const val READ_LIMIT = 64

        fun recvFlags(e: RxEntry): Long = if (e.tagged) OpFlags.TAGGED else OpFlags.MSG
    }
}

/**
 * Buffers for unexpected eager payloads, pooled by power-of-two size class. After a burst of
 * unexpected messages the pool keeps at most [budget] bytes for reuse and lets the rest go to the
 * collector, so a burst does not pin its peak in the heap for ever.
 */
internal class PayloadPool(private val budget: Long = 8L shl 20) {
    private val classes = Array(32) { ArrayDeque<UnsafeBuffer>() }
    private var retained = 0L

    fun acquire(length: Int): UnsafeBuffer {
        val c = sizeClass(length)
        val pooled = classes[c].removeLastOrNull()
        if (pooled != null) retained -= pooled.byteArray().size
        val b = pooled ?: UnsafeBuffer(ByteArray(1 shl c))
        b.wrap(b.byteArray(), 0, length)
        return b
    }

    fun release(b: UnsafeBuffer) {
        val size = b.byteArray().size
        if (retained + size > budget) return
        classes[sizeClass(size)].addLast(b)
        retained += size
    }

    private fun sizeClass(length: Int): Int = maxOf(6, 32 - Integer.numberOfLeadingZeros(maxOf(length, 1) - 1))
}

/** A FIFO of (long, long, long) triples in one growable array: control records waiting for ring space. */
internal class TripleQueue {
    private var items = LongArray(3 * 16)
    private var head = 0
    private var tail = 0

    fun isEmpty(): Boolean = head == tail

    fun add(a: Long, b: Long, c: Long) {
        if (tail + 3 > items.size) {
            val live = tail - head
            val grown = if (live + 3 > items.size / 2) items.size * 2 else items.size
            val moved = LongArray(grown)
            System.arraycopy(items, head, moved, 0, live)
            items = moved; head = 0; tail = live
        }
        items[tail] = a; items[tail + 1] = b; items[tail + 2] = c
        tail += 3
    }

    fun first(i: Int): Long = items[head + i]

    fun removeFirst() {
        head += 3
        if (head == tail) { head = 0; tail = 0 }
    }
}
