package braid.provider

import java.nio.ByteOrder
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * The records of RMA and atomic operations, the same on every rail: a rail carries them as the payload of a record type
 * of its own (shm: `MSG_RMA` in a channel's bulk ring, replies in its control ring; tcp: the RMA frame), so the two
 * rails cannot drift apart. Header fields are little-endian; payload elements are in the initiator's native byte order.
 *
 * ```
 * Request, initiator -> target:
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+---------------+---------------+
 * |     kind      |   datatype    |   atomic op   |     flags     |  0
 * +---------------+---------------+---------------+---------------+
 * |                  element count (32), atomics                  |  4
 * +---------------------------------------------------------------+
 * |                  request id (64)                              |  8
 * +---------------------------------------------------------------+
 * |                  memory key (64)                              | 16
 * +---------------------------------------------------------------+
 * |                  offset in the target's region (64)           | 24
 * +---------------------------------------------------------------+
 * |                  bytes of the whole request (64)              | 32
 * +---------------------------------------------------------------+
 * |                  offset of this piece in them (64)            | 40
 * +---------------------------------------------------------------+
 * |  WRITE: this piece's bytes; ATOMIC: operands, then compares   | 48
 * +---------------------------------------------------------------+
 * kind: 1 WRITE, 2 READ, 3 ATOMIC.  flags: 1 fetch (send the old values back).
 * datatype and atomic op: libfabric's codes (AtomicDatatype, AtomicOp).
 *
 * Reply, target -> initiator:
 * +---------------+---------------+-------------------------------+
 * | kind | 0x80   |    reason     |          reserved (16)        |  0
 * +---------------+---------------+-------------------------------+
 * |                  status (32): 0, or an Errno value            |  4
 * +---------------------------------------------------------------+
 * |                  request id (64)                              |  8
 * +---------------------------------------------------------------+
 * |  detail (64): BOUNDS: the region's length; ACCESS: its rights | 16
 * +---------------------------------------------------------------+
 * |                  offset of this piece (64), READ              | 24
 * +---------------------------------------------------------------+
 * |  READ: this piece's bytes; fetching ATOMIC: the old values    | 32
 * +---------------------------------------------------------------+
 * reason (when status ≠ 0): 1 no region under the key, 2 out of the region's bounds,
 * 3 access not granted, 4 operation not supported, 5 malformed request.
 * ```
 *
 * A WRITE travels in pieces that each fit a record; the target checks the whole request's range on every piece and
 * replies once, after the last (or at the first refusal). A READ is one request; the target replies with pieces. An
 * ATOMIC is one request and one reply.
 */
internal object RmaDescriptor {
    const val KIND_WRITE = 1
    const val KIND_READ = 2
    const val KIND_ATOMIC = 3
    const val REPLY = 0x80

    const val FLAG_FETCH = 1

    const val REASON_NO_KEY = 1
    const val REASON_BOUNDS = 2
    const val REASON_ACCESS = 3
    const val REASON_UNSUPPORTED = 4
    const val REASON_MALFORMED = 5
    /** The target's copy into or out of device memory failed; the detail is its errno. */
    const val REASON_COPY = 6

    const val KIND_OFFSET = 0
    const val DATATYPE_OFFSET = 1
    const val OP_OFFSET = 2
    const val FLAGS_OFFSET = 3
    const val COUNT_OFFSET = 4
    const val REQUEST_ID_OFFSET = 8
    const val KEY_OFFSET = 16
    const val REMOTE_OFFSET_OFFSET = 24
    const val LENGTH_OFFSET = 32
    const val PIECE_OFFSET_OFFSET = 40
    const val REQUEST_HEADER = 48

    const val REASON_OFFSET = 1
    const val STATUS_OFFSET = 4
    const val DETAIL_OFFSET = 16
    const val REPLY_PIECE_OFFSET = 24
    const val REPLY_HEADER = 32

    /** The most atomic operand bytes one request carries (compares count separately). */
    const val MAX_ATOMIC_BYTES = 512

    private val LE = ByteOrder.LITTLE_ENDIAN

    fun putRequest(
        b: MutableDirectBuffer,
        i: Int,
        kind: Int,
        datatype: Int,
        op: Int,
        flags: Int,
        count: Int,
        requestId: Long,
        key: Long,
        remoteOffset: Long,
        length: Long,
        pieceOffset: Long,
    ) {
        b.putByte(i + KIND_OFFSET, kind.toByte())
        b.putByte(i + DATATYPE_OFFSET, datatype.toByte())
        b.putByte(i + OP_OFFSET, op.toByte())
        b.putByte(i + FLAGS_OFFSET, flags.toByte())
        b.putInt(i + COUNT_OFFSET, count, LE)
        b.putLong(i + REQUEST_ID_OFFSET, requestId, LE)
        b.putLong(i + KEY_OFFSET, key, LE)
        b.putLong(i + REMOTE_OFFSET_OFFSET, remoteOffset, LE)
        b.putLong(i + LENGTH_OFFSET, length, LE)
        b.putLong(i + PIECE_OFFSET_OFFSET, pieceOffset, LE)
    }

    fun putReply(
        b: MutableDirectBuffer,
        i: Int,
        kind: Int,
        reason: Int,
        status: Int,
        requestId: Long,
        detail: Long,
        pieceOffset: Long,
    ) {
        b.putByte(i + KIND_OFFSET, (kind or REPLY).toByte())
        b.putByte(i + REASON_OFFSET, reason.toByte())
        b.putShort(i + 2, 0)
        b.putInt(i + STATUS_OFFSET, status, LE)
        b.putLong(i + REQUEST_ID_OFFSET, requestId, LE)
        b.putLong(i + DETAIL_OFFSET, detail, LE)
        b.putLong(i + REPLY_PIECE_OFFSET, pieceOffset, LE)
    }

    fun kind(b: DirectBuffer, i: Int): Int = b.getByte(i + KIND_OFFSET).toInt() and 0xff

    fun datatype(b: DirectBuffer, i: Int): Int = b.getByte(i + DATATYPE_OFFSET).toInt() and 0xff

    fun op(b: DirectBuffer, i: Int): Int = b.getByte(i + OP_OFFSET).toInt() and 0xff

    fun flags(b: DirectBuffer, i: Int): Int = b.getByte(i + FLAGS_OFFSET).toInt() and 0xff

    fun reason(b: DirectBuffer, i: Int): Int = b.getByte(i + REASON_OFFSET).toInt() and 0xff

    fun count(b: DirectBuffer, i: Int): Int = b.getInt(i + COUNT_OFFSET, LE)

    fun status(b: DirectBuffer, i: Int): Int = b.getInt(i + STATUS_OFFSET, LE)

    fun requestId(b: DirectBuffer, i: Int): Long = b.getLong(i + REQUEST_ID_OFFSET, LE)

    fun key(b: DirectBuffer, i: Int): Long = b.getLong(i + KEY_OFFSET, LE)

    fun remoteOffset(b: DirectBuffer, i: Int): Long = b.getLong(i + REMOTE_OFFSET_OFFSET, LE)

    fun length(b: DirectBuffer, i: Int): Long = b.getLong(i + LENGTH_OFFSET, LE)

    fun pieceOffset(b: DirectBuffer, i: Int): Long = b.getLong(i + PIECE_OFFSET_OFFSET, LE)

    fun detail(b: DirectBuffer, i: Int): Long = b.getLong(i + DETAIL_OFFSET, LE)

    fun replyPieceOffset(b: DirectBuffer, i: Int): Long = b.getLong(i + REPLY_PIECE_OFFSET, LE)
}
