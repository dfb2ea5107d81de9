package braid.provider.tcp

import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.util.zip.CRC32C
import org.agrona.DirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * One peer's outbound frames: a direct buffer of frames between [head] and [tail], and at most one chunk written to the
 * socket straight from the sender's memory ([putDirect]), after the frames before it. Frames are appended in place (a
 * header, then its payload), so nothing is allocated per frame. Not thread-safe: the transport calls in under the
 * domain lock.
 */
internal class TcpOutbound(bufferSize: Int) {
    private var out: ByteBuffer = ByteBuffer.allocateDirect(bufferSize)

    /** The buffer, as Agrona sees it: frames and records are written into it at [tail]. */
    val view = UnsafeBuffer(out)
    private var crcView = out.duplicate()
    private val crc = CRC32C()
    var head = 0
        private set

    var tail = 0
        private set

    /** A chunk written to the socket straight from the sender's memory, after out[head, directMark). */
    private var direct: ByteBuffer? = null
    private var directMark = 0
    private val gather = arrayOf(out, out)

    /** The socket took less than offered: wait for OP_WRITE before trying again. */
    var blocked = false
    var bytesSent = 0L
        private set

    val capacity: Int
        get() = out.capacity()

    val unflushed: Boolean
        get() = tail > head || direct != null

    /** Whether a direct chunk is still waiting to be written. */
    val directPending: Boolean
        get() = direct != null

    /** Frame bytes written and not yet flushed. */
    val pendingBytes: Int
        get() = tail - head

    /** Whether [n] more bytes fit, compacting the buffer if that makes room. */
    fun ensureRoom(n: Int): Boolean {
        if (out.capacity() - tail >= n) return true
        if (head == 0) return false
        val live = tail - head
        if (live > 0) view.putBytes(0, view, head, live)
        if (direct != null) directMark -= head
        tail = live
        head = 0
        return out.capacity() - tail >= n
    }

    /** Appends a frame header (the caller made room) returning [credit] to the peer. */
    fun putHeader(
        type: Int,
        flags: Int,
        payloadLength: Int,
        credit: Long,
        msgId: Long,
        tag: Long,
        data: Long,
        value: Long,
        seq: Long = 0,
        stripe: Long = 0,
    ) {
        tail +=
            TcpFrameDescriptor.putHeader(
                view,
                crcView,
                crc,
                tail,
                type,
                flags,
                payloadLength,
                credit,
                msgId,
                tag,
                data,
                value,
                seq,
                stripe,
            )
    }

    /** Appends [length] bytes of [src] from [offset] (the caller made room). */
    fun append(src: DirectBuffer, offset: Int, length: Int) {
        if (length <= 0) return
        view.putBytes(tail, src, offset, length)
        tail += length
    }

    /** [length] bytes were written in place at [tail] (through [view]). */
    fun commit(length: Int) {
        tail += length
    }

    /** Queues [chunk] (position to limit) to be written straight from its memory after the frames written so far. */
    fun putDirect(chunk: ByteBuffer) {
        directMark = tail
        direct = chunk
    }

    /**
     * Writes what is pending to [channel]: the buffered frames, then a direct chunk, then the frames written behind it.
     * Returns true when everything went; false when the socket is full ([blocked]). Throws what the channel throws.
     */
    @Throws(IOException::class)
    fun flush(channel: SocketChannel): Boolean {
        while (true) {
            val d = direct
            if (d != null && head < directMark) {
                // The DATA header and its payload in one system call (and one segment, not a 48-byte one first).
                out.limit(directMark).position(head)
                gather[0] = out
                gather[1] = d
                val n = channel.write(gather, 0, 2)
                bytesSent += n
                head = out.position()
                if (head < directMark || d.hasRemaining()) {
                    blocked = true
                    return false
                }
                direct = null
                continue
            }
            val limit = if (d != null) directMark else tail
            if (head < limit) {
                out.limit(limit).position(head)
                val n = channel.write(out)
                head += n
                bytesSent += n
                if (head < limit) {
                    blocked = true
                    return false
                }
            }
            if (d != null) {
                val n = channel.write(d)
                bytesSent += n
                if (d.hasRemaining()) {
                    blocked = true
                    return false
                }
                direct = null
                continue
            }
            head = 0
            tail = 0
            blocked = false
            return true
        }
    }

    /** Drops every frame not yet written and the buffer itself (the peer is gone; nothing more is written to it). */
    fun discard() {
        head = 0
        tail = 0
        direct = null
        directMark = 0
        out = EMPTY
        view.wrap(out)
        crcView = out.duplicate()
    }

    private companion object {
        val EMPTY: ByteBuffer = ByteBuffer.allocateDirect(0)
    }
}
