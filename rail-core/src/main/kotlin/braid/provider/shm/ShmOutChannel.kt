package braid.provider.shm

import braid.core.Errno
import braid.core.OpFlags
import braid.core.shm.ProcessWatch
import braid.core.shm.ShmSegment
import braid.provider.MsgTxOp
import braid.provider.PeerName
import braid.provider.RmaPath
import braid.provider.SendOutlet
import braid.provider.SendOutlet.Companion.HEAD_EAGER
import braid.provider.SendOutlet.Companion.HEAD_NONE
import braid.provider.SendOutlet.Companion.HEAD_RTS
import braid.provider.SendPath
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
import braid.provider.shm.FrameDescriptor.MSG_SHARE
import braid.provider.shm.FrameDescriptor.SRC_ADDRESS_OFFSET
import braid.provider.shm.FrameDescriptor.TAG_OFFSET
import java.nio.charset.StandardCharsets
import org.agrona.DirectBuffer
import org.agrona.concurrent.MessageHandler
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * This endpoint's channel to receiver [dst], as the [SendOutlet] of its [sendPath]: message heads go into the data
 * ring, rendezvous fragments and RMA requests into the bulk ring, and CTS/ACK/DISCARDED/PULLED, SHARE (help with a
 * split copy: [ShmSplitCopy]) and RMA replies come back through the control ring.
 */
internal class ShmOutChannel(
    private val t: ShmTransport,
    val dst: String,
    private val owner: ProcessWatch,
    private val epFile: ShmSegment,
    private val file: ShmSegment,
) : SendOutlet, ShmReach {
    private val ringCapacity = t.ringCapacity
    val data =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.DATA_RING_OFFSET,
                ringCapacity + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    val bulk =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.bulkRingOffset(ringCapacity),
                ringCapacity + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    val ctrl =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.ctrlRingOffset(ringCapacity),
                ChannelFileDescriptor.CTRL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    val sendPath = SendPath(this, PeerName { dst })
    val rmaPath = RmaPath(ShmRingOutlet(bulk, MSG_RMA), PeerName { dst })
    private var announced = false
    val dead: Boolean
        get() = sendPath.dead

    /** The receiver refused our key proof: sends to it fail with EACCES. */
    var refused = false
    /** What a send or RMA to this channel returns once it is dead. */
    val deadErrno: Int
        get() = if (refused) -Errno.EACCES else -Errno.EHOSTDOWN

    /** This channel's split slot, sender side. */
    val split = ShmSplitCopy(file.buffer)
    private val receiverPid = owner.pid.toInt()
    private val ctrlHandler = MessageHandler { type, buffer, index, length ->
        if (type == MSG_RMA_REPLY) t.rma.onReply(rmaPath, buffer, index, length) else onCtrl(type, buffer, index)
    }

    fun announce() {
        val msg = file.path.fileName.toString().toByteArray(StandardCharsets.UTF_8)
        val bell =
            ManyToOneRingBuffer(
                UnsafeBuffer(
                    epFile.buffer,
                    EndpointFileDescriptor.DOORBELL_OFFSET,
                    EndpointFileDescriptor.DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
                )
            )
        announced = bell.write(EndpointFileDescriptor.MSG_CONNECT, UnsafeBuffer(msg), 0, msg.size)
    }

    fun poll(): Int {
        if (dead) return 0
        if (!announced) announce()
        var work = ctrl.read(ctrlHandler)
        if (!rmaPath.idle) work += t.rma.pump(rmaPath)
        if (!sendPath.idle) work += t.engine.pumpSend(sendPath)
        return work
    }

    /** shm carries no link sequence: a link never spreads a same-host peer's messages over several rails. */
    override fun writeHead(
        buffer: DirectBuffer,
        length: Int,
        tag: Long,
        data: Long,
        flags: Long,
        msgId: Long,
        seq: Long,
        stripe: Long,
    ): Int {
        val wire =
            (if (flags and OpFlags.TAGGED != 0L) FLAG_TAGGED else 0) or
                (if (flags and OpFlags.REMOTE_CQ_DATA != 0L) FLAG_DATA else 0) or
                (if (flags and OpFlags.DELIVERY_COMPLETE != 0L) FLAG_ACK else 0)
        if (length <= t.eagerSize) {
            val index = this.data.tryClaim(MSG_EAGER, HEADER_LENGTH + length)
            if (index < 0) return HEAD_NONE
            if (STALL_AFTER_CLAIM) stallAfterClaim()
            val b = this.data.buffer()
            putHeader(b, index, wire, tag, data, msgId, length.toLong())
            b.putLong(index + SRC_ADDRESS_OFFSET, 0)
            if (length > 0) b.putBytes(index + HEADER_LENGTH, buffer, 0, length)
            this.data.commit(index)
            return HEAD_EAGER
        }
        if (flags and OpFlags.INJECT != 0L) return HEAD_NONE
        val index = this.data.tryClaim(MSG_RTS, HEADER_LENGTH)
        if (index < 0) return HEAD_NONE
        if (STALL_AFTER_CLAIM) stallAfterClaim()
        val b = this.data.buffer()
        putHeader(b, index, wire, tag, data, msgId, length.toLong())
        // Off-heap memory has a stable address the receiver may read directly.
        val pullable = t.cma && buffer.byteArray() == null
        b.putLong(index + SRC_ADDRESS_OFFSET, if (pullable) buffer.addressOffset() else 0L)
        this.data.commit(index)
        return HEAD_RTS
    }

    private fun putHeader(
        b: org.agrona.MutableDirectBuffer,
        index: Int,
        wire: Int,
        tag: Long,
        data: Long,
        id: Long,
        length: Long,
    ) {
        b.putInt(index + FLAGS_OFFSET, wire)
        b.putLong(index + TAG_OFFSET, tag)
        b.putLong(index + DATA_OFFSET, data)
        b.putLong(index + MSG_ID_OFFSET, id)
        b.putLong(index + LENGTH_OFFSET, length)
    }

    /** Streams as much of [op] as the bulk ring takes; true once all accepted bytes are in it. */
    override fun stream(op: MsgTxOp): Boolean {
        val b = bulk.buffer()
        while (op.sent < op.accepted) {
            val n = minOf(t.fragSize.toLong(), op.accepted - op.sent).toInt()
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

    private fun onCtrl(type: Int, b: DirectBuffer, index: Int) {
        val id = b.getLong(index + CTRL_MSG_ID_OFFSET)
        val e = t.engine
        when (type) {
            MSG_CTS -> e.onCts(sendPath, id, b.getLong(index + CTRL_VALUE_OFFSET))
            MSG_ACK -> e.onAck(sendPath, id)
            MSG_PULLED -> e.onPulled(sendPath, id) // delivered: the receiver copied it
            MSG_DISCARDED -> e.onDiscarded(sendPath, id)
            MSG_SHARE -> share(id, b.getLong(index + CTRL_VALUE_OFFSET))
        }
    }

    /**
     * The receiver offers this sender a share of its split copy of message [id]: push chunks of the send waiting for it
     * (and only of that send's buffer) while any is left.
     */
    private fun share(id: Long, generation: Long) {
        val op = sendPath.waitingCts.get(id) ?: return
        split.push(id, generation, op.buffer.addressOffset(), op.length.toLong(), receiverPid, t.cmaIov)
    }

    /** Reads every control record the receiver wrote; returns how many. */
    fun drainControl(): Int = ctrl.read(ctrlHandler, Int.MAX_VALUE)

    /** The receiver is gone: every send and RMA still waiting on it completes in error. */
    fun fail(err: Int, why: String) {
        if (dead) return
        val msg = "shm: peer $dst $why"
        t.engine.failSend(sendPath, err, msg)
        t.rma.failPath(rmaPath, err, msg)
        t.engine.peerDown(t.av.epAddr(dst), msg)
    }

    fun describe(): String =
        "data ring ${data.size()} B, bulk ring ${bulk.size()} B, control ring ${ctrl.size()} B, ${sendPath.describe()}, next id ${sendPath.nextMsgId}, ${split.describe()}, dead $dead"

    fun receiverGone(): String? {
        if (
            file.buffer.getIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET) ==
                ChannelFileDescriptor.RECEIVER_REFUSED
        ) {
            refused = true
            return "refused this endpoint: it does not hold the receiver's job key (BRAID_JOB_KEY differs); nothing it sent was used"
        }
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

    private companion object {
        /**
         * Test hook (`-Dbraid.shm.testStallAfterClaim=true`): stop for ever between claiming a message head's record
         * and committing it, as a sender killed there would.
         */
        val STALL_AFTER_CLAIM: Boolean = java.lang.Boolean.getBoolean("braid.shm.testStallAfterClaim")

        fun stallAfterClaim(): Nothing {
            println("CLAIMED")
            System.out.flush()
            while (true) Thread.sleep(60_000)
        }
    }
}
