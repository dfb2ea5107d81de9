package braid.provider.tcp

import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.zip.CRC32C
import org.agrona.concurrent.UnsafeBuffer

/**
 * The frames of the tcp rail's byte stream: every frame is a 64-byte header and a payload of `payload length` bytes.
 * All fields little-endian.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+---------------+---------------+
 * |  magic 0x42   |  version = 5  |     type      |     flags     |  0
 * +---------------+---------------+---------------+---------------+
 * |        header CRC-32C (32), computed with this field zero     |  4
 * +---------------------------------------------------------------+
 * |                     payload length (32)                       |  8
 * +---------------------------------------------------------------+
 * |          credit returned to the frame's receiver (32)         | 12
 * +---------------------------------------------------------------+
 * |                     message id (64)                           | 16
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     tag (64)                                  | 24
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                     remote CQ data (64)                       | 32
 * |                                                               |
 * +---------------------------------------------------------------+
 * |  value (64): EAGER, RTS: message length; CTS: bytes accepted; | 40
 * |  DATA: offset of the payload in the message; RECLAIM,         |
 * |  GIVEBACK: bytes of credit; other frames: 0                   |
 * +---------------------------------------------------------------+
 * |  link sequence (64): EAGER and RTS of a link that spreads one  | 48
 * |  peer's messages over several rails; else 0                   |
 * +---------------------------------------------------------------+
 * |  stripe (64): a striped message's part: its offset in the     | 56
 * |  message (high 32) and the message's length (low 32); with    |
 * |  flag 8 (EAGER only): a link acknowledgement, as LACK's; else 0|
 * +---------------------------------------------------------------+
 * |  payload ...                                                  | 64
 * +---------------------------------------------------------------+
 * ```
 *
 * flags: 1 tagged, 2 carries remote CQ data, 4 acknowledge on delivery (DELIVERY_COMPLETE), 8 the stripe word carries a
 * link acknowledgement (LACK's `link sequence`, for the frame's receiver as a sender; EAGER frames only, which are
 * never striped parts): a reply acknowledges what it answers without a frame of its own.
 *
 * Data frames (after the handshake):
 * - EAGER (1): a whole message; payload = its bytes; value = its length.
 * - RTS (2): a message that waits for its receive (rendezvous); no payload; value = its length.
 * - CTS (3): receiver → sender: the receive is posted, send `value` bytes of message `message id`.
 * - DATA (4): a piece of a CTS'd message; value = its offset; payload = the bytes.
 * - ACK (5): the message `message id` was delivered (answer to flag 4).
 * - DISCARDED (6): the receiving application discarded message `message id` (FI_DISCARD).
 * - CREDIT (7): carries only the credit field. HEARTBEAT (8): nothing; proves liveness.
 * - BYE (9): the sender closes its endpoint; nothing follows.
 * - RMA (10): an RMA or atomic request or reply; payload = a braid.provider.RmaDescriptor record (request: 48-byte
 *   header — kind, datatype, op, flags, count, request id, key, remote offset, request length, piece offset — then a
 *   write's bytes or an atomic's operands; reply: 32-byte header — kind|0x80, reason, status, request id, detail, piece
 *   offset — then a read's bytes or a fetching atomic's old values). The header's own id, tag, data and value fields
 *   are 0. Not charged credit: the target carries each request out as it arrives and keeps nothing but a read's
 *   progress. Added in version 2.
 * - RECLAIM (11): receiver → sender: give back up to `value` bytes of the credit lent you.
 * - GIVEBACK (12): sender → receiver: `value` bytes of unspent credit given back (the answer to a RECLAIM; 0 if none
 *   was left). Both added in version 3.
 * - SKIP (13): sender → receiver: the message with link sequence number `link sequence`, sent to this receiver over
 *   another rail of the link, failed there; the receiver's reorder stage stops waiting for it. Not charged credit.
 * - LACK (14): receiver → sender: the receiver's link has every message of this sender up to `link sequence` (over
 *   whichever rail it came): the sender's link may drop the copies it keeps for resending them. Cumulative, sent every
 *   few dozen messages or when the stream pauses, over any rail of the link. Not charged credit.
 * - Version 4 added the link sequence and stripe words (16 bytes more per header), which the rail carries for a link
 *   ([braid.provider.link.ReorderStage]) and does not read itself. Version 5 added flag 8 (an acknowledgement carried
 *   in an EAGER frame's stripe word).
 *
 * Handshake frames (see [TcpHandshake]): HELLO (16), CHALLENGE (17), AUTH (18), WELCOME (19), REJECT (20); their
 * payloads are laid out in [HandshakeDescriptor].
 *
 * Credit: a sender may send message heads (EAGER and RTS frames, each charged [frameCost]) only against credit its
 * receiver granted, in the credit field of any frame going back or in a CREDIT frame; it has none before. The receiver
 * grants it out of its endpoint-wide unexpected bounds (bytes and messages, [TcpCredit]), lazily (a first grant that
 * grows as the sender uses it), at most its window (the handshake's) per sender, and returns what a message cost once
 * the message no longer occupies it (matched and copied, or discarded) — or keeps it, to grant to a sender below its
 * fair share, and asks an idle sender's unspent credit back with RECLAIM. So unexpected messages held never pass the
 * bounds, and the receiver never stops reading the stream: control frames, a CTS'd message's DATA and RMA frames need
 * no credit and always flow. (Version 2 lent a fixed window per sender, before and after the handshake.)
 *
 * The CRC guards the header against a desynchronised or foreign byte stream (a bad length would otherwise desynchronise
 * everything after it); payload integrity is TCP's job.
 */
internal object TcpFrameDescriptor {
    const val MAGIC: Int = 0x42
    const val VERSION: Int = 5

    const val EAGER = 1
    const val RTS = 2
    const val CTS = 3
    const val DATA = 4
    const val ACK = 5
    const val DISCARDED = 6
    const val CREDIT = 7
    const val HEARTBEAT = 8
    const val BYE = 9
    const val RMA = 10
    const val RECLAIM = 11
    const val GIVEBACK = 12
    const val SKIP = 13
    const val LACK = 14
    const val HELLO = 16
    const val CHALLENGE = 17
    const val AUTH = 18
    const val WELCOME = 19
    const val REJECT = 20

    const val FLAG_TAGGED = 1
    const val FLAG_DATA = 2
    const val FLAG_ACK = 4
    const val FLAG_LINK_ACK = 8
    const val KNOWN_FLAGS = FLAG_TAGGED or FLAG_DATA or FLAG_ACK or FLAG_LINK_ACK

    const val MAGIC_OFFSET = 0
    const val VERSION_OFFSET = 1
    const val TYPE_OFFSET = 2
    const val FLAGS_OFFSET = 3
    const val CRC_OFFSET = 4
    const val PAYLOAD_LENGTH_OFFSET = 8
    const val CREDIT_OFFSET = 12
    const val MSG_ID_OFFSET = 16
    const val TAG_OFFSET = 24
    const val DATA_OFFSET = 32
    const val VALUE_OFFSET = 40
    const val SEQ_OFFSET = 48
    const val STRIPE_OFFSET = 56
    const val HEADER_LENGTH = 64

    /** The largest DATA frame payload a receiver accepts (a sender's chunks are smaller). */
    const val MAX_DATA_PAYLOAD = 64 shl 20

    /** The largest RMA frame payload a receiver accepts (a sender's pieces are smaller). */
    const val MAX_RMA_PAYLOAD = 1 shl 20

    /** What one message head costs in credit, beyond its payload. */
    const val HEAD_COST = 128

    /** The smallest window a receiver may grant: senders may use this much before the handshake tells them more. */
    const val MIN_WINDOW = 64 * 1024

    /** Credit charged for an EAGER frame of [payload] bytes, or an RTS (payload 0). */
    fun frameCost(payload: Int): Long = HEAD_COST.toLong() + payload

    fun typeName(type: Int): String =
        when (type) {
            EAGER -> "EAGER"
            RTS -> "RTS"
            CTS -> "CTS"
            DATA -> "DATA"
            ACK -> "ACK"
            DISCARDED -> "DISCARDED"
            CREDIT -> "CREDIT"
            HEARTBEAT -> "HEARTBEAT"
            BYE -> "BYE"
            RMA -> "RMA"
            RECLAIM -> "RECLAIM"
            GIVEBACK -> "GIVEBACK"
            SKIP -> "SKIP"
            LACK -> "LACK"
            HELLO -> "HELLO"
            CHALLENGE -> "CHALLENGE"
            AUTH -> "AUTH"
            WELCOME -> "WELCOME"
            REJECT -> "REJECT"
            else -> "type $type"
        }

    fun isKnownType(type: Int): Boolean = type in EAGER..LACK || type in HELLO..REJECT

    /**
     * The largest payload a frame of [type] may carry after the handshake, to a receiver lending [window]; -1: not
     * expected.
     */
    fun payloadLimit(type: Int, window: Long): Int =
        when (type) {
            EAGER -> (window - HEAD_COST).toInt()
            DATA -> MAX_DATA_PAYLOAD
            RTS,
            CTS,
            ACK,
            DISCARDED,
            CREDIT,
            HEARTBEAT,
            BYE,
            RECLAIM,
            GIVEBACK,
            SKIP,
            LACK -> 0
            RMA -> MAX_RMA_PAYLOAD
            else -> -1
        }

    /**
     * Writes a header at [index] of [b] (whose memory [bb] is, for the CRC) and returns [HEADER_LENGTH]. [crc] is
     * reused; nothing is allocated.
     */
    fun putHeader(
        b: UnsafeBuffer,
        bb: ByteBuffer,
        crc: CRC32C,
        index: Int,
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
    ): Int {
        b.putByte(index + MAGIC_OFFSET, MAGIC.toByte())
        b.putByte(index + VERSION_OFFSET, VERSION.toByte())
        b.putByte(index + TYPE_OFFSET, type.toByte())
        b.putByte(index + FLAGS_OFFSET, flags.toByte())
        b.putInt(index + CRC_OFFSET, 0, ByteOrder.LITTLE_ENDIAN)
        b.putInt(index + PAYLOAD_LENGTH_OFFSET, payloadLength, ByteOrder.LITTLE_ENDIAN)
        b.putInt(index + CREDIT_OFFSET, credit.toInt(), ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + MSG_ID_OFFSET, msgId, ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + TAG_OFFSET, tag, ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + DATA_OFFSET, data, ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + VALUE_OFFSET, value, ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + SEQ_OFFSET, seq, ByteOrder.LITTLE_ENDIAN)
        b.putLong(index + STRIPE_OFFSET, stripe, ByteOrder.LITTLE_ENDIAN)
        b.putInt(index + CRC_OFFSET, crc(bb, crc, b.wrapAdjustment() + index), ByteOrder.LITTLE_ENDIAN)
        return HEADER_LENGTH
    }

    /** CRC-32C of the header at [position] of [bb], with its CRC field read as zero (it must be zero). */
    fun crc(bb: ByteBuffer, crc: CRC32C, position: Int): Int {
        val limit = bb.limit()
        val pos = bb.position()
        crc.reset()
        bb.limit(position + HEADER_LENGTH).position(position)
        crc.update(bb)
        bb.limit(limit).position(pos)
        return crc.value.toInt()
    }

    /** Flags of a send as they travel. */
    fun wireFlags(tagged: Boolean, remoteData: Boolean, ack: Boolean): Int =
        (if (tagged) FLAG_TAGGED else 0) or (if (remoteData) FLAG_DATA else 0) or (if (ack) FLAG_ACK else 0)
}

/**
 * Payloads of the handshake frames (little-endian).
 *
 * ```
 * HELLO (connector → acceptor), 48 bytes; CHALLENGE (acceptor → connector), the same 48 + MAC:
 * +---------------------------------------------------------------+
 * |                 sender's endpoint id (64)                     |  0
 * +---------------------------------------------------------------+
 * |                 receiver's endpoint id, as the sender         |  8
 * |                 expects it (64)                               |
 * +---------------------------------------------------------------+
 * |                 nonce (128), fresh per connection             | 16
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                 sender's receive window, bytes (32)           | 32
 * +---------------------------------------------------------------+
 * |                 reserved (32)                                 | 36
 * +---------------------------------------------------------------+
 * |                 sender's host id (64)                         | 40
 * +---------------------------------------------------------------+
 * |  CHALLENGE only: HMAC-SHA256 (256), see [TcpHandshake]        | 48
 * +---------------------------------------------------------------+
 *
 * AUTH (connector → acceptor): HMAC-SHA256 (256).
 * WELCOME (acceptor → connector): empty.
 * REJECT (acceptor → connector): reason (32), then a UTF-8 explanation (≤ 200 bytes).
 * ```
 */
internal object HandshakeDescriptor {
    const val SENDER_ID_OFFSET = 0
    const val RECEIVER_ID_OFFSET = 8
    const val NONCE_OFFSET = 16
    const val NONCE_LENGTH = 16
    const val WINDOW_OFFSET = 32
    const val HOST_OFFSET = 40
    const val HELLO_LENGTH = 48
    const val MAC_OFFSET = 48
    const val MAC_LENGTH = 32
    const val CHALLENGE_LENGTH = HELLO_LENGTH + MAC_LENGTH
    const val AUTH_LENGTH = MAC_LENGTH
    const val REJECT_REASON_OFFSET = 0
    const val REJECT_TEXT_OFFSET = 4
    const val MAX_REJECT_TEXT = 200
    const val MAX_PAYLOAD = REJECT_TEXT_OFFSET + MAX_REJECT_TEXT

    const val REJECT_DUPLICATE = 1
    const val REJECT_WRONG_ENDPOINT = 2
    const val REJECT_VERSION = 3
    const val REJECT_DEAD = 4
    const val REJECT_CONNECTED = 5

    /** The exact payload length a handshake frame of [type] has, or the maximum for REJECT. */
    fun payloadLimit(type: Int): Int =
        when (type) {
            TcpFrameDescriptor.HELLO -> HELLO_LENGTH
            TcpFrameDescriptor.CHALLENGE -> CHALLENGE_LENGTH
            TcpFrameDescriptor.AUTH -> AUTH_LENGTH
            TcpFrameDescriptor.WELCOME -> 0
            TcpFrameDescriptor.REJECT -> MAX_PAYLOAD
            else -> -1
        }
}
