package braid.provider.shm

import braid.core.Errno
import braid.core.FiAddr
import braid.core.RxEntry
import braid.core.shm.ProcessWatch
import braid.core.shm.ShmSegment
import braid.provider.ControlOutlet
import braid.provider.PeerName
import braid.provider.RecvPath
import braid.provider.RmaPath
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
import org.agrona.concurrent.ControlledMessageHandler
import org.agrona.concurrent.MessageHandler
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * A channel [sender] announced to this endpoint: the shm rail's inbound adapter. It decodes the data ring (message
 * heads) and the bulk ring (fragments, RMA requests) into the engine, and is the [ControlOutlet] of its [recvPath]:
 * control records go back through the control ring, and it pulls rendezvous bytes straight from the sender's memory
 * where `process_vm_readv` works, large ones together with the sender ([ShmSplitCopy]).
 */
internal class ShmInChannel(
    private val t: ShmTransport,
    val sender: String,
    private val file: ShmSegment,
    capacity: Int,
) : ControlOutlet, ControlledMessageHandler {
    val data =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.DATA_RING_OFFSET,
                capacity + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    val bulk =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.bulkRingOffset(capacity),
                capacity + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    val ctrl =
        OneToOneRingBuffer(
            UnsafeBuffer(
                file.buffer,
                ChannelFileDescriptor.ctrlRingOffset(capacity),
                ChannelFileDescriptor.CTRL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
            )
        )
    private val owner: ProcessWatch? = ShmDirectory.owner(sender)?.let { ProcessWatch.watch(it) }
    private val senderPid = ShmDirectory.pidOf(sender).toIntOrNull() ?: 0
    /** Whether single-copy pulls from this sender work; cleared on the first that fails. */
    private var pullable = t.cma && owner != null
    val recvPath = RecvPath(this, PeerName { sender })
    val rmaPath = RmaPath(ShmRingOutlet(ctrl, MSG_RMA_REPLY), PeerName { sender })
    private val engine = t.engine
    private val fragHandler = MessageHandler { type, b, index, length ->
        if (type == MSG_FRAG) onFrag(b, index, length) else if (type == MSG_RMA) t.rma.serve(rmaPath, b, index, length)
    }
    private var avGeneration = -1L
    private val ctrlScratch = UnsafeBuffer(ByteArray(CTRL_LENGTH))
    /** This channel's split slot, receiver side. */
    val split = ShmSplitCopy(file.buffer)
    /** The sender closed or died; whatever is still in the ring is delivered first. */
    var senderGone: String? = null
    val fiAddr: Long
        get() = recvPath.fiAddr

    val dead: Boolean
        get() = recvPath.dead

    fun poll(): Int {
        if (recvPath.controlPending) engine.flushControl(recvPath)
        val generation = t.av.generation
        if (generation != avGeneration) resolve(generation)
        if (dead) return 0
        var work = data.controlledRead(this, READ_LIMIT)
        // The bulk ring carries fragments and RMA requests; neither is ever pushed back.
        work += bulk.read(fragHandler, READ_LIMIT)
        if (!rmaPath.idle) work += t.rma.pump(rmaPath)
        return work
    }

    fun describe(): String =
        "data ring ${data.size()} B, bulk ring ${bulk.size()} B, control ring ${ctrl.size()} B, in flight ${recvPath.inflight.size}, " +
            "address $fiAddr, ${split.describe()}, sender gone ${senderGone}, dead $dead"

    /** Whether the sender left nothing unread. */
    fun drained(): Boolean = data.size() == 0 && bulk.size() == 0

    /**
     * Whether a ring's next record was claimed and never committed (Agrona marks a claim with a negative length until
     * the commit): a sender that died there left nothing readable behind it, so there is nothing more to deliver from
     * that ring.
     */
    fun stuck(): Boolean = claimedAtHead(data) || claimedAtHead(bulk)

    private fun claimedAtHead(ring: OneToOneRingBuffer): Boolean {
        val index = (ring.consumerPosition() and (ring.capacity() - 1).toLong()).toInt()
        return ring.buffer().getIntVolatile(index) < 0
    }

    private fun resolve(generation: Long) {
        avGeneration = generation
        val before = recvPath.fiAddr
        val now = t.av.epAddr(sender)
        if (before == FiAddr.NOTAVAIL && now != FiAddr.NOTAVAIL) engine.resolved(recvPath, now)
        else recvPath.fiAddr = now
    }

    override fun onMessage(
        type: Int,
        b: MutableDirectBuffer,
        index: Int,
        length: Int,
    ): ControlledMessageHandler.Action =
        when (type) {
            MSG_EAGER,
            MSG_RTS -> onMessageHead(type == MSG_RTS, b, index)
            else -> ControlledMessageHandler.Action.CONTINUE // a record type from a newer version: skip it
        }

    /** The id of the message head left in the data ring last time (pushed back), or 0. */
    private var pushedBack = 0L

    private fun onMessageHead(
        rendezvous: Boolean,
        b: MutableDirectBuffer,
        index: Int,
    ): ControlledMessageHandler.Action {
        val wire = b.getInt(index + FLAGS_OFFSET)
        val id = b.getLong(index + MSG_ID_OFFSET)
        val length = b.getLong(index + LENGTH_OFFSET)
        // A record pushed back before is offered again: counted once.
        val again = id == pushedBack
        pushedBack = 0
        val e =
            engine.arrived(
                recvPath,
                wire and FLAG_TAGGED != 0,
                b.getLong(index + TAG_OFFSET),
                length,
                wire and FLAG_DATA != 0,
                b.getLong(index + DATA_OFFSET),
                count = !again,
            )
        val wantAck = wire and FLAG_ACK != 0
        val srcAddress = b.getLong(index + SRC_ADDRESS_OFFSET)
        if (engine.isMatched(e)) {
            if (rendezvous) engine.startRendezvous(recvPath, e, id, wantAck, srcAddress)
            else engine.deliver(recvPath, e, b, index + HEADER_LENGTH, wantAck, id, 0)
            return ControlledMessageHandler.Action.CONTINUE
        }
        if (engine.mustPushBack(if (rendezvous) 0 else length)) {
            // Push this sender back: the record stays in its ring until a receive takes it.
            t.ep.srx.freeEntry(e)
            pushedBack = id
            return ControlledMessageHandler.Action.ABORT
        }
        val bytes =
            if (rendezvous) null
            else engine.payload(length.toInt()).also { it.putBytes(0, b, index + HEADER_LENGTH, length.toInt()) }
        engine.hold(recvPath, e, bytes, id, rendezvous, wantAck, 0, srcAddress)
        return ControlledMessageHandler.Action.CONTINUE
    }

    override fun pull(e: RxEntry, msgId: Long, srcAddress: Long, length: Long): Boolean {
        // Below the pull size the two copies of streaming, made at once on both sides, beat one.
        if (!pullable || length < t.pullSize || e.buffer.byteArray() != null) return false
        val dst = e.buffer.addressOffset()
        // From the share size on, the sender copies part of it at the same time (a split copy).
        val done =
            if (t.shareSize > 0 && length >= t.shareSize) {
                split.receive(
                    msgId,
                    dst,
                    srcAddress,
                    length,
                    ShmSplitCopy.chunkFor(length, t.shareChunk),
                    senderPid,
                    t.cmaIov,
                    ctrl,
                    ctrlScratch,
                    owner,
                )
            } else {
                CrossMemoryAttach.read(t.cmaIov, senderPid, dst, srcAddress, length) == length
            }
        if (done) return true
        pullable = false // not permitted here (or the sender is gone): stream from now on
        return false
    }

    private fun onFrag(b: DirectBuffer, index: Int, length: Int) {
        val id = b.getLong(index + FRAG_MSG_ID_OFFSET)
        val inbound = engine.inbound(recvPath, id) ?: return
        val offset = b.getLong(index + FRAG_OFFSET_OFFSET)
        val n = length - FRAG_HEADER_LENGTH
        if (offset < 0 || offset + n > inbound.expected) return // not what we asked for: ignore it
        inbound.entry!!.buffer.putBytes(offset.toInt(), b, index + FRAG_HEADER_LENGTH, n)
        engine.fragment(recvPath, id, inbound, n)
    }

    override fun writeControl(type: Int, msgId: Long, value: Long): Boolean {
        val record =
            when (type) {
                ControlOutlet.CTS -> MSG_CTS
                ControlOutlet.ACK -> MSG_ACK
                ControlOutlet.DISCARDED -> MSG_DISCARDED
                else -> MSG_PULLED
            }
        ctrlScratch.putLong(CTRL_MSG_ID_OFFSET, msgId)
        ctrlScratch.putLong(CTRL_VALUE_OFFSET, value)
        return ctrl.write(record, ctrlScratch, 0, CTRL_LENGTH)
    }

    fun checkSender(): String? {
        if (file.buffer.getIntVolatile(ChannelFileDescriptor.SENDER_STATE_OFFSET) != EndpointFileDescriptor.STATE_OPEN)
            return "closed its endpoint"
        if (owner?.alive() != true) return "(process ${ShmDirectory.pidOf(sender)}) died"
        return null
    }

    /** The sender is gone: the receives that can only complete with its data fail, and PEER_DOWN is reported. */
    fun fail() {
        val gone = senderGone ?: "is gone"
        val why = "shm: peer $sender $gone"
        engine.failRecv(recvPath, Errno.EIO, gone, why)
        t.rma.failPath(rmaPath, Errno.EIO, why)
        engine.failDirected(fiAddr, why)
        engine.peerDown(fiAddr, why)
    }

    fun close() {
        file.buffer.putIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET, EndpointFileDescriptor.STATE_CLOSED)
        file.delete()
        file.unmap()
        owner?.close()
    }

    private companion object {
        const val READ_LIMIT = 64
    }
}
