package braid.provider.tcp

import braid.provider.RailHost
import braid.provider.RmaDescriptor
import braid.provider.RmaEngine
import braid.provider.RmaOutlet
import braid.provider.RmaPath
import braid.provider.tcp.TcpFrameAdapter.Companion.CONTINUE
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.MAX_RMA_PAYLOAD
import braid.provider.tcp.TcpFrameDescriptor.RMA
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Int2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer

/**
 * The tcp rail's side of RMA and atomics: RMA frames ([TcpFrameDescriptor.RMA]) carry the rail-neutral records of
 * [RmaDescriptor] both ways on a peer's connection, written into the peer's outbound buffer like any frame; [engine]
 * does the rest. A frame's payload lands in a per-peer scratch buffer, then is served (a request) or matched (a reply)
 * whole.
 *
 * Not thread-safe: the transport calls in with the domain lock held.
 */
internal class TcpRma(ep: RailHost, bufferSize: Int, txSize: Int, private val busy: TcpBusy) {
    /** The largest RMA frame payload this endpoint writes: it must fit the peer's outbound buffer with its header. */
    private val maxRecord = minOf(bufferSize / 2, MAX_RMA_PAYLOAD)
    val engine = RmaEngine(ep, "tcp", maxRecord, txSize)
    private val paths = Int2ObjectHashMap<RmaPath>()
    private val scratch = Int2ObjectHashMap<UnsafeBuffer>()

    fun path(p: TcpPeer): RmaPath = paths.get(p.index) ?: RmaPath(PeerOutlet(p), p).also { paths.put(p.index, it) }

    fun idle(p: TcpPeer): Boolean = paths.get(p.index)?.idle ?: true

    fun pump(p: TcpPeer): Int = paths.get(p.index)?.let { engine.pump(it) } ?: 0

    fun peerFailed(p: TcpPeer, err: Int, why: String) {
        paths.get(p.index)?.let { engine.failPath(it, err, why) }
        scratch.remove(p.index)
    }

    fun onHeader(p: TcpPeer, a: TcpFrameAdapter): Int {
        val len = a.payloadLength
        var b = scratch.get(p.index)
        if (b == null || b.capacity() < len) {
            b = UnsafeBuffer(ByteArray(maxOf(len, 4096)))
            scratch.put(p.index, b)
        }
        a.sinkTo(b, 0, len)
        return CONTINUE
    }

    fun onFrame(p: TcpPeer, a: TcpFrameAdapter): Int {
        val b = scratch.get(p.index)!!
        val len = a.payloadLength
        val path = path(p)
        val ok =
            if (len > 0 && RmaDescriptor.kind(b, 0) and RmaDescriptor.REPLY != 0) engine.onReply(path, b, 0, len)
            else engine.serve(path, b, 0, len)
        return if (ok) CONTINUE else a.fail("RMA frame of $len bytes that is not a well-formed request or reply")
    }

    /** [p]'s outbound buffer as an [RmaOutlet]: an RMA frame header, then the record. */
    private inner class PeerOutlet(private val p: TcpPeer) : RmaOutlet {
        override val maxRecord: Int
            get() = this@TcpRma.maxRecord

        override val buffer: MutableDirectBuffer
            get() = p.out.view

        override fun claim(length: Int): Int {
            if (p.dead || !p.ensureRoom(HEADER_LENGTH + length)) return -1
            p.putHeader(RMA, 0, length, 0, 0, 0, 0)
            return p.out.tail
        }

        override fun commit(index: Int, length: Int) {
            p.out.commit(length)
            busy.mark(p)
        }
    }
}
