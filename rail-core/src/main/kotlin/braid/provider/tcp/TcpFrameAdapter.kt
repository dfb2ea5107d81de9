package braid.provider.tcp

import braid.provider.tcp.TcpFrameDescriptor.CRC_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.CREDIT_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.DATA_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.FLAGS_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.KNOWN_FLAGS
import braid.provider.tcp.TcpFrameDescriptor.MAGIC
import braid.provider.tcp.TcpFrameDescriptor.MAGIC_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.MSG_ID_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.PAYLOAD_LENGTH_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.SEQ_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.STRIPE_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.TAG_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.TYPE_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.VALUE_OFFSET
import braid.provider.tcp.TcpFrameDescriptor.VERSION
import braid.provider.tcp.TcpFrameDescriptor.VERSION_OFFSET
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.zip.CRC32C
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Decodes the tcp rail's byte stream into frames ([TcpFrameDescriptor]), whatever way the stream was cut into reads.
 * Headers are checked (magic, version, CRC, type, flags, payload length against [maxPayload]) before anything acts on
 * them; a bad one stops the adapter for good with [error] saying what and where. Payloads go where the [Handler] says,
 * when it sees the header: into a receive buffer, a holding buffer, or nowhere.
 *
 * Never throws on any input and allocates nothing; every call consumes at least one byte of its input or returns.
 */
internal class TcpFrameAdapter(
    /** The largest payload a frame of a type may carry, or -1 if the type is not expected here. */
    private val limits: Limits
) {
    /** Payload limits by frame type (a primitive interface, so that asking allocates nothing). */
    fun interface Limits {
        fun maxPayload(type: Int): Int
    }

    /** What a frame's receiver does with it. */
    interface Handler {
        /**
         * A checked header is in the adapter's fields. Choose the payload's destination with [sinkTo] (the default
         * discards it). Returns [CONTINUE], [STOP] (leave the rest of the input for later) or [FAIL] (after [fail]).
         */
        fun onHeader(a: TcpFrameAdapter): Int

        /** The whole payload has arrived. Returns [CONTINUE], [STOP] or [FAIL]. */
        fun onFrame(a: TcpFrameAdapter): Int
    }

    private val headerMemory: ByteBuffer = ByteBuffer.allocateDirect(HEADER_LENGTH)
    private val header = UnsafeBuffer(headerMemory)
    private val crc = CRC32C()

    var type: Int = 0
        private set

    var flags: Int = 0
        private set

    var payloadLength: Int = 0
        private set

    /** The credit field, unsigned. */
    var credit: Long = 0
        private set

    var msgId: Long = 0
        private set

    var tag: Long = 0
        private set

    var data: Long = 0
        private set

    var value: Long = 0
        private set

    /** The link's sequence number and stripe word of a message head (0 when no link sequences it). */
    var seq: Long = 0
        private set

    var stripe: Long = 0

    /** A link acknowledgement an EAGER frame carries in its stripe word (flag 8), or 0. */
    var linkAck: Long = 0
        private set

    /** Bytes of the current payload consumed so far. */
    var payloadDone: Int = 0
        private set

    private var headerFill = 0
    private var inPayload = false
    private var sink: MutableDirectBuffer? = null
    private var sinkOffset = 0
    private var sinkKeep = 0

    /** Bytes of the stream consumed (for messages that say where a problem is). */
    var streamOffset: Long = 0
        private set

    /** Why the stream was refused, once it was; the adapter consumes nothing after that. */
    var error: String? = null
        private set

    /** Whether a frame is partly read (a header or a payload): an end of stream now truncates it. */
    val midFrame: Boolean
        get() = headerFill > 0 || inPayload

    /** What is missing of the current frame, for messages. */
    fun describePosition(): String =
        when {
            inPayload -> "${typeName()} frame with $payloadDone of $payloadLength payload bytes"
            headerFill > 0 -> "frame header with $headerFill of $HEADER_LENGTH bytes"
            else -> "frame boundary"
        }

    fun typeName(): String = TcpFrameDescriptor.typeName(type)

    /** Why a stream that ends now ends badly (in the middle of a frame), or null at a frame boundary. */
    fun truncation(): String? =
        if (midFrame) "closed the connection in the middle of a ${describePosition()}: truncated frame" else null

    /** Sends the first [keep] payload bytes to [buffer] at [offset]; the rest are dropped. */
    fun sinkTo(buffer: MutableDirectBuffer, offset: Int, keep: Int) {
        sink = buffer
        sinkOffset = offset
        sinkKeep = keep.coerceIn(0, payloadLength)
    }

    /** Payload bytes still to come that go to the sink. */
    val sinkRemaining: Int
        get() = if (sink == null) 0 else maxOf(0, sinkKeep - payloadDone)

    /** The sink's index where the next payload byte goes. */
    val sinkPosition: Int
        get() = sinkOffset + payloadDone

    /**
     * Records that [n] payload bytes were placed in the sink by the caller itself (read from the socket straight into
     * it); only while [sinkRemaining] ≥ [n].
     */
    fun advanceDirect(n: Int, h: Handler): Int {
        payloadDone += n
        streamOffset += n
        return if (payloadDone == payloadLength) finishFrame(h) else CONTINUE
    }

    /** Marks the stream refused with [why]; returns [FAIL]. */
    fun fail(why: String): Int {
        if (error == null) error = "$why (at byte $streamOffset of the stream)"
        return FAIL
    }

    /**
     * Consumes [src] from its position to its limit, calling [h] for each header and frame. Returns [CONTINUE] when the
     * input is used up, [STOP] when the handler stopped (the position is just after the frame it stopped on), or
     * [FAIL].
     */
    fun decode(src: ByteBuffer, h: Handler): Int {
        if (error != null) return FAIL
        while (src.hasRemaining()) {
            if (!inPayload) {
                val n = minOf(HEADER_LENGTH - headerFill, src.remaining())
                header.putBytes(headerFill, src, src.position(), n)
                src.position(src.position() + n)
                headerFill += n
                streamOffset += n
                if (headerFill < HEADER_LENGTH) return CONTINUE
                headerFill = 0
                if (!parseHeader()) return FAIL
                val rc = afterHeader(h)
                if (rc != CONTINUE) return rc
            } else {
                val n = minOf(payloadLength - payloadDone, src.remaining())
                val keep = minOf(n, sinkKeep - payloadDone)
                if (keep > 0) sink!!.putBytes(sinkOffset + payloadDone, src, src.position(), keep)
                src.position(src.position() + n)
                payloadDone += n
                streamOffset += n
                if (payloadDone == payloadLength) {
                    val end = finishFrame(h)
                    if (end != CONTINUE) return end
                }
            }
        }
        return CONTINUE
    }

    /** Hands a checked header to [h] and starts its payload (or ends its frame); [CONTINUE] to go on decoding. */
    private fun afterHeader(h: Handler): Int {
        sink = null
        sinkKeep = 0
        payloadDone = 0
        val rc = h.onHeader(this)
        if (rc == FAIL) return fail("frame refused")
        if (payloadLength == 0) {
            val end = h.onFrame(this)
            if (end != CONTINUE) return if (end == FAIL) fail("frame refused") else STOP
        } else {
            inPayload = true
        }
        return if (rc == STOP) STOP else CONTINUE
    }

    private fun finishFrame(h: Handler): Int {
        inPayload = false
        val end = h.onFrame(this)
        sink = null
        return when (end) {
            CONTINUE -> CONTINUE
            STOP -> STOP
            else -> fail("frame refused")
        }
    }

    private fun parseHeader(): Boolean {
        val magic = header.getByte(MAGIC_OFFSET).toInt() and 0xff
        if (magic != MAGIC)
            return fail(
                "bad magic 0x${Integer.toHexString(magic)} (expected 0x${Integer.toHexString(MAGIC)}): not a Braid tcp frame, or the stream lost its place"
            ) == CONTINUE
        val version = header.getByte(VERSION_OFFSET).toInt() and 0xff
        if (version != VERSION) return fail("frame version $version, this build speaks $VERSION") == CONTINUE
        val sent = header.getInt(CRC_OFFSET, ByteOrder.LITTLE_ENDIAN)
        header.putInt(CRC_OFFSET, 0)
        val computed = TcpFrameDescriptor.crc(headerMemory, crc, 0)
        if (sent != computed) {
            return fail(
                "header CRC 0x${Integer.toHexString(sent)} does not match its contents (0x${Integer.toHexString(computed)}): corrupt frame"
            ) == CONTINUE
        }
        type = header.getByte(TYPE_OFFSET).toInt() and 0xff
        flags = header.getByte(FLAGS_OFFSET).toInt() and 0xff
        payloadLength = header.getInt(PAYLOAD_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN)
        credit = header.getInt(CREDIT_OFFSET, ByteOrder.LITTLE_ENDIAN).toLong() and 0xffff_ffffL
        msgId = header.getLong(MSG_ID_OFFSET, ByteOrder.LITTLE_ENDIAN)
        tag = header.getLong(TAG_OFFSET, ByteOrder.LITTLE_ENDIAN)
        data = header.getLong(DATA_OFFSET, ByteOrder.LITTLE_ENDIAN)
        value = header.getLong(VALUE_OFFSET, ByteOrder.LITTLE_ENDIAN)
        seq = header.getLong(SEQ_OFFSET, ByteOrder.LITTLE_ENDIAN)
        stripe = header.getLong(STRIPE_OFFSET, ByteOrder.LITTLE_ENDIAN)
        linkAck = 0L
        if (flags and TcpFrameDescriptor.FLAG_LINK_ACK != 0) {
            linkAck = stripe
            stripe = 0L
        }
        if (!TcpFrameDescriptor.isKnownType(type)) return fail("unknown frame type $type") == CONTINUE
        if (flags and KNOWN_FLAGS.inv() != 0)
            return fail("${typeName()} frame with unknown flags 0x${Integer.toHexString(flags)}") == CONTINUE
        val max = limits.maxPayload(type)
        if (max < 0) return fail("${typeName()} frame not expected here") == CONTINUE
        if (payloadLength < 0 || payloadLength > max)
            return fail(
                "${typeName()} frame with a payload of ${payloadLength.toUInt()} bytes; at most $max allowed here"
            ) == CONTINUE
        return true
    }

    companion object {
        const val CONTINUE: Int = 0
        const val STOP: Int = 1
        const val FAIL: Int = -1
    }
}
