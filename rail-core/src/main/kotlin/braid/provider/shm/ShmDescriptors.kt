package braid.provider.shm

import braid.core.FabricException
import braid.core.shm.JobKeyProof
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import java.nio.ByteOrder
import java.nio.charset.StandardCharsets
import java.nio.file.Path
import org.agrona.DirectBuffer
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * The address blob of an shm endpoint. Versioned; every node can parse it, and a malformed one is refused with the
 * offset and field that are wrong.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |  version = 1  |  kind = 1 shm |
 * +-------------------------------+---------------+---------------+
 * |                        host id (64 bits)                      |
 * |                                                               |
 * +-------------------------------+-------------------------------+
 * |        name length (16)       |  name bytes, UTF-8 ...        |
 * +-------------------------------+-------------------------------+
 * ```
 *
 * All fields little-endian. The name is the endpoint's file name stem (see [ShmDirectory]).
 */
internal object ShmAddressDescriptor {
    const val MAGIC: Int = AddressHeader.MAGIC
    const val VERSION: Int = 1
    const val KIND_SHM: Int = AddressHeader.KIND_SHM
    const val HOST_OFFSET = AddressHeader.LENGTH
    const val NAME_LENGTH_OFFSET = 12
    const val NAME_OFFSET = 14
    const val MAX_NAME = 128

    fun encode(hostId: Long, name: String): ByteArray {
        val bytes = name.toByteArray(StandardCharsets.UTF_8)
        val out = ByteArray(NAME_OFFSET + bytes.size)
        val b = UnsafeBuffer(out)
        AddressHeader.write(b, VERSION, KIND_SHM)
        b.putLong(HOST_OFFSET, hostId, ByteOrder.LITTLE_ENDIAN)
        b.putShort(NAME_LENGTH_OFFSET, bytes.size.toShort(), ByteOrder.LITTLE_ENDIAN)
        b.putBytes(NAME_OFFSET, bytes)
        return out
    }

    fun parse(raw: ByteArray): ShmAddress {
        fun bad(what: String): Nothing = throw FabricException.invalid("shm address (${raw.size} bytes): $what")
        val b = AddressHeader.check(raw, KIND_SHM, NAME_OFFSET, "the header alone is $NAME_OFFSET")
        val nameLength = b.getShort(NAME_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
        if (nameLength == 0 || nameLength > MAX_NAME)
            bad("name length $nameLength at offset $NAME_LENGTH_OFFSET must be 1..$MAX_NAME")
        if (raw.size < NAME_OFFSET + nameLength)
            bad("name of $nameLength bytes runs past the end (${raw.size - NAME_OFFSET} left)")
        // A newer version may append fields after the name: read what this version knows.
        val name = String(raw, NAME_OFFSET, nameLength, StandardCharsets.UTF_8)
        if (!name.startsWith(ShmDirectory.PREFIX) || name.any { it == '/' || it == '~' || it.isWhitespace() }) {
            bad("name '$name' is not an shm endpoint name")
        }
        return ShmAddress(b.getLong(HOST_OFFSET, ByteOrder.LITTLE_ENDIAN), name, raw.copyOf(NAME_OFFSET + nameLength))
    }
}

internal class ShmAddress(val hostId: Long, val name: String, override val raw: ByteArray) : PeerAddress {
    override val key: String
        get() = name

    override fun render(): String = "fi_shm://${java.lang.Long.toHexString(hostId)}/$name"

    override fun toString(): String = render()
}

/**
 * The start of every shm file: a magic naming the kind of file, then its format version, 32 bits each, in the byte
 * order of the host (see [EndpointFileDescriptor], [ChannelFileDescriptor]). A process maps a file of another version
 * only to refuse it: behind the header it may be laid out otherwise.
 */
internal object ShmFileHeader {
    const val MAGIC_OFFSET = 0
    const val VERSION_OFFSET = 4
    const val LENGTH = 8

    /**
     * Checks that [buffer], mapped from [path], starts with [magic] and [version]; else throws [FabricException]
     * (EINVAL) naming the file, what it holds and what this build expects. [kind] names the kind of file in the
     * message.
     */
    fun check(buffer: DirectBuffer, path: Path, kind: String, magic: Int, version: Int) {
        if (buffer.capacity() < LENGTH) refuse(path, "${buffer.capacity()} bytes, too short for the header of a $kind")
        val foundMagic = buffer.getInt(MAGIC_OFFSET)
        if (foundMagic != magic)
            refuse(path, "not a $kind: magic ${hex(foundMagic)}, expected ${hex(magic)} (\"${text(magic)}\")")
        val found = buffer.getInt(VERSION_OFFSET)
        if (found != version) {
            refuse(
                path,
                "$kind format version $found, but this build reads version $version only; every process sharing shm files must run the same Braid version",
            )
        }
    }

    fun refuse(path: Path, why: String): Nothing = throw FabricException.invalid("shm: $path: $why")

    private fun hex(v: Int): String = "0x%08x".format(v)

    /** A magic as the four letters it spells, most significant byte first. */
    private fun text(v: Int): String = String(CharArray(4) { i -> ((v ushr (24 - 8 * i)) and 0xff).toChar() })
}

/**
 * An endpoint's file: who owns it, whether it is open, and its doorbell — a many-to-one ring where senders announce the
 * channel files they create for it.
 *
 * The job key ([braid.core.CoreParams.JOB_KEY]) is proven both ways through these files, with the shared-memory kit's
 * [JobKeyProof], before any message is written or read, as the tcp handshake does on the wire
 * ([braid.provider.tcp.TcpHandshake]):
 * ```
 * receiver, at enable:   nonce_r (32 random bytes) and
 *                        endpoint proof = HMAC(K, "braid-shm endpoint" ‖ 0 ‖ receiver name ‖ 0 ‖ nonce_r)
 *                        -> its endpoint file
 * sender, at connect:    reads nonce_r and checks the endpoint proof; then writes
 *                        channel proof = HMAC(K, "braid-shm channel" ‖ 0 ‖ receiver ‖ 0 ‖ sender ‖ 0 ‖ nonce_r)
 *                        into the channel file's header ([ChannelFileDescriptor]) and announces it.
 *                        If the endpoint proof failed, the channel is refused before anything is
 *                        written to it: every send to that receiver ends in EACCES
 * receiver, at attach:   recomputes the channel proof; a mismatch marks the channel refused
 *                        (receiver state 3), logs, reports EACCES on its event queue, and reads
 *                        nothing from it
 * ```
 *
 * So a sender with another key never has a send completed that the receiver then drops, and the receiver still learns
 * who knocked. The nonce is fresh to each endpoint and the proofs name their ends, so a proof copied from another file
 * does not check out.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                      magic "BRDE" (32)                        |
 * +---------------------------------------------------------------+
 * |                      version = 3 (32)                         |
 * +---------------------------------------------------------------+
 * |                      owner pid (64)                           |
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                      state (32): 1 open, 2 closed             |
 * +---------------------------------------------------------------+
 * |                      doorbell capacity (32)                   |
 * +---------------------------------------------------------------+
 * |                      key nonce (256): random, fresh to this   |
 * |                      endpoint; senders prove the job key over |
 * |                      it                                       |
 * +---------------------------------------------------------------+
 * |                      endpoint key proof (256): the receiver's |
 * |                      proof over its name and nonce, checked   |
 * |                      by senders before they write             |
 * +---------------------------------------------------------------+
 * |                 ... padding to offset 128 ...                 |
 * +---------------------------------------------------------------+
 * |     doorbell: Agrona ManyToOneRingBuffer (capacity + trailer) |
 * +---------------------------------------------------------------+
 * ```
 */
internal object EndpointFileDescriptor {
    const val MAGIC: Int = 0x42524445 // "BRDE"
    /** Version 2 added the key nonce; 3 the endpoint key proof (senders check the key before they write). */
    const val VERSION: Int = 3
    const val MAGIC_OFFSET = ShmFileHeader.MAGIC_OFFSET
    const val VERSION_OFFSET = ShmFileHeader.VERSION_OFFSET
    const val PID_OFFSET = 8
    const val STATE_OFFSET = 16
    const val DOORBELL_CAPACITY_OFFSET = 20
    const val NONCE_OFFSET = 24
    const val NONCE_LENGTH = JobKeyProof.NONCE_LENGTH
    const val KEY_PROOF_OFFSET = 56
    const val KEY_PROOF_LENGTH = JobKeyProof.PROOF_LENGTH
    /** What the endpoint key proof proves ([JobKeyProof.proof]'s label); its one name is the endpoint's. */
    const val KEY_LABEL = "braid-shm endpoint"
    const val DOORBELL_OFFSET = 128
    const val DOORBELL_CAPACITY = 64 * 1024
    const val STATE_OPEN = 1
    const val STATE_CLOSED = 2

    /** Doorbell record type: payload is the channel file's name. */
    const val MSG_CONNECT = 1

    fun length(): Int = DOORBELL_OFFSET + DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH

    /**
     * Checks an endpoint file mapped from [path]: header and length; throws [FabricException] naming the file and the
     * fault.
     */
    fun check(buffer: DirectBuffer, path: Path) {
        ShmFileHeader.check(buffer, path, "endpoint file", MAGIC, VERSION)
        if (buffer.capacity() < length())
            ShmFileHeader.refuse(
                path,
                "endpoint file of ${buffer.capacity()} bytes, shorter than the ${length()} of version $VERSION",
            )
    }
}

/**
 * A channel file: the data ring from one sender to one receiver and the control ring back.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                      magic "BRDC" (32)                        |
 * +---------------------------------------------------------------+
 * |                      version = 5 (32)                         |
 * +---------------------------------------------------------------+
 * |                      data (and bulk) ring capacity (32)       |
 * +---------------------------------------------------------------+
 * |                      control ring capacity (32)               |
 * +---------------------------------------------------------------+
 * |                      sender state (32): 1 open, 2 closed      |
 * +---------------------------------------------------------------+
 * |                      receiver state (32): 0, 1 open, 2 closed,|
 * |                      3 refused (the key proof failed)         |
 * +---------------------------------------------------------------+
 * |                      reserved (64)                            |
 * +---------------------------------------------------------------+
 * |                      key proof (256): HMAC-SHA-256 over the   |
 * |                      receiver's nonce and both names          |
 * |                      ([JobKeyProof], [EndpointFileDescriptor])|
 * +---------------------------------------------------------------+
 * |                 ... padding to offset 128 ...                 |
 * +---------------------------------------------------------------+
 * |  split slot (offset 128; [ShmSplitCopy]), claimed words first: |
 * |  claim word (64): generation << 32 | next chunk to claim      |
 * +---------------------------------------------------------------+
 * |  done (64): chunks copied, by either side (a failed one too)  |
 * +---------------------------------------------------------------+
 * |  failed (64): the chunk the sender could not push, or -1      |
 * +---------------------------------------------------------------+
 * |                 ... padding to offset 192 ...                 |
 * +---------------------------------------------------------------+
 * |  message id (64) of the split's rendezvous message            |
 * +---------------------------------------------------------------+
 * |  receiver's destination address (64)                          |
 * +---------------------------------------------------------------+
 * |  sender's source address (64)                                 |
 * +---------------------------------------------------------------+
 * |  length (64)                                                  |
 * +---------------------------------------------------------------+
 * |  chunk size (32)              |  chunk count (32)             |
 * +---------------------------------------------------------------+
 * |                 ... padding to offset 256 ...                 |
 * +---------------------------------------------------------------+
 * |  data ring: OneToOneRingBuffer, sender -> receiver            |
 * |  (message heads: EAGER and RTS records)                       |
 * +---------------------------------------------------------------+
 * |  bulk ring: OneToOneRingBuffer, sender -> receiver            |
 * |  (FRAG records of rendezvous messages already matched,        |
 * |  RMA requests)                                                |
 * +---------------------------------------------------------------+
 * |  control ring: OneToOneRingBuffer, receiver -> sender         |
 * |  (CTS, ACK, …; RMA replies)                                   |
 * +---------------------------------------------------------------+
 * ```
 *
 * Version 3 added the RMA records (see [FrameDescriptor]); version 4 the key proof: a receiver reads nothing from a
 * channel before the proof checks out (see [EndpointFileDescriptor]); version 5 the split slot, where the receiver of a
 * large rendezvous message and its sender claim its chunks and copy them at once (one split at a time per channel: the
 * receiver makes it synchronously). Fragments have a ring of their own because a receiver may leave an unexpected
 * message head in the data ring to push its sender back; fragments of a message already matched must still flow past
 * it, or the receive waiting for them would never complete.
 */
internal object ChannelFileDescriptor {
    const val MAGIC: Int = 0x42524443 // "BRDC"
    const val VERSION: Int = 5
    const val MAGIC_OFFSET = ShmFileHeader.MAGIC_OFFSET
    const val VERSION_OFFSET = ShmFileHeader.VERSION_OFFSET
    const val DATA_CAPACITY_OFFSET = 8
    const val CTRL_CAPACITY_OFFSET = 12
    const val SENDER_STATE_OFFSET = 16
    const val RECEIVER_STATE_OFFSET = 20
    const val PROOF_OFFSET = 32
    const val PROOF_LENGTH = JobKeyProof.PROOF_LENGTH
    /**
     * What the channel key proof proves ([JobKeyProof.proof]'s label); its names are the receiver's and the sender's.
     */
    const val KEY_LABEL = "braid-shm channel"
    /** Receiver state: the sender's key proof failed; nothing in the channel is read. */
    const val RECEIVER_REFUSED = 3
    const val SPLIT_OFFSET = 128
    const val SPLIT_CLAIM_OFFSET = SPLIT_OFFSET
    const val SPLIT_DONE_OFFSET = SPLIT_OFFSET + 8
    const val SPLIT_FAILED_OFFSET = SPLIT_OFFSET + 16
    const val SPLIT_MSG_ID_OFFSET = SPLIT_OFFSET + 64
    const val SPLIT_DST_OFFSET = SPLIT_OFFSET + 72
    const val SPLIT_SRC_OFFSET = SPLIT_OFFSET + 80
    const val SPLIT_LENGTH_OFFSET = SPLIT_OFFSET + 88
    const val SPLIT_CHUNK_OFFSET = SPLIT_OFFSET + 96
    const val SPLIT_CHUNKS_OFFSET = SPLIT_OFFSET + 100
    const val DATA_RING_OFFSET = 256
    const val CTRL_CAPACITY = 64 * 1024

    fun bulkRingOffset(dataCapacity: Int): Int = DATA_RING_OFFSET + dataCapacity + RingBufferDescriptor.TRAILER_LENGTH

    fun ctrlRingOffset(dataCapacity: Int): Int =
        bulkRingOffset(dataCapacity) + dataCapacity + RingBufferDescriptor.TRAILER_LENGTH

    fun length(dataCapacity: Int): Int =
        ctrlRingOffset(dataCapacity) + CTRL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH

    /**
     * Checks a channel file mapped from [path]: header, ring capacity and length. Returns the data ring capacity;
     * throws [FabricException] naming the file and the fault.
     */
    fun check(buffer: DirectBuffer, path: Path): Int {
        ShmFileHeader.check(buffer, path, "channel file", MAGIC, VERSION)
        if (buffer.capacity() < DATA_RING_OFFSET)
            ShmFileHeader.refuse(
                path,
                "channel file of ${buffer.capacity()} bytes, shorter than its $DATA_RING_OFFSET-byte header",
            )
        val capacity = buffer.getInt(DATA_CAPACITY_OFFSET)
        // Up to 2^29 the length below fits an Int; no endpoint makes rings that large.
        if (capacity < 1024 || capacity > (1 shl 29) || Integer.bitCount(capacity) != 1) {
            ShmFileHeader.refuse(path, "channel file ring capacity $capacity is not a power of two in 1 KiB..512 MiB")
        }
        if (buffer.capacity() < length(capacity)) {
            ShmFileHeader.refuse(
                path,
                "channel file of ${buffer.capacity()} bytes, shorter than the ${length(capacity)} its $capacity-byte rings take",
            )
        }
        return capacity
    }
}

/**
 * Records in a channel's rings (the ring's own 8-byte record header precedes each; its type field holds the MSG_*
 * value). Offsets are from the record's payload start, which Agrona aligns to 8, so every long below is aligned.
 *
 * Data ring (EAGER, RTS) and bulk ring (FRAG), sender -> receiver:
 * ```
 * EAGER (1) and RTS (2):
 * +---------------------------------------------------------------+
 * |  flags (32): 1 tagged, 2 remote CQ data, 4 ack on delivery    |
 * +---------------------------------------------------------------+
 * |  reserved (32)                                                |
 * +---------------------------------------------------------------+
 * |  tag (64)                                                     |
 * +---------------------------------------------------------------+
 * |  remote CQ data (64)                                          |
 * +---------------------------------------------------------------+
 * |  message id (64): per channel, from 1                         |
 * +---------------------------------------------------------------+
 * |  message length (64)                                          |
 * +---------------------------------------------------------------+
 * |  RTS: the sender's buffer address for a single-copy pull, or  |
 * |  0 (64); EAGER: 0                                             |
 * +---------------------------------------------------------------+
 * |  EAGER: the payload (message length bytes); RTS: nothing      |
 * +---------------------------------------------------------------+
 *
 * FRAG (3), one piece of a rendezvous message the receiver asked for:
 * +---------------------------------------------------------------+
 * |  message id (64)                                              |
 * +---------------------------------------------------------------+
 * |  offset in the message (64)                                   |
 * +---------------------------------------------------------------+
 * |  payload ...                                                  |
 * +---------------------------------------------------------------+
 *
 * RMA (4), bulk ring: an RMA or atomic request, laid out as braid.provider.RmaDescriptor's
 * request (48-byte header, then a write's bytes or an atomic's operands):
 * +---------------------------------------------------------------+
 * |  kind, datatype, atomic op, flags (8 each) | element count (32)|
 * +---------------------------------------------------------------+
 * |  request id (64) | key (64) | remote offset (64) |             |
 * |  request length (64) | piece offset (64)                       |
 * +---------------------------------------------------------------+
 * |  payload ...                                                  |
 * +---------------------------------------------------------------+
 * ```
 *
 * Control ring, receiver -> sender: CTS (10: message id, bytes accepted), ACK (11: message id, delivered), DISCARDED
 * (12: message id, dropped by the receiving application), PULLED (13: message id, bytes the receiver copied itself with
 * cross-memory attach), SHARE (15: message id, generation of the split slot's copy the sender may help with), 16 bytes
 * each; and RMA_REPLY (14): braid.provider.RmaDescriptor's reply (32-byte header with status and request id, then a
 * read's bytes or a fetching atomic's old values).
 */
internal object FrameDescriptor {
    const val MSG_EAGER = 1
    const val MSG_RTS = 2
    const val MSG_FRAG = 3
    const val MSG_RMA = 4
    const val MSG_CTS = 10
    const val MSG_ACK = 11
    const val MSG_DISCARDED = 12
    const val MSG_PULLED = 13
    const val MSG_RMA_REPLY = 14
    const val MSG_SHARE = 15

    const val FLAG_TAGGED = 1
    const val FLAG_DATA = 2
    const val FLAG_ACK = 4

    const val FLAGS_OFFSET = 0
    const val TAG_OFFSET = 8
    const val DATA_OFFSET = 16
    const val MSG_ID_OFFSET = 24
    const val LENGTH_OFFSET = 32
    const val SRC_ADDRESS_OFFSET = 40
    const val HEADER_LENGTH = 48

    const val FRAG_MSG_ID_OFFSET = 0
    const val FRAG_OFFSET_OFFSET = 8
    const val FRAG_HEADER_LENGTH = 16

    const val CTRL_MSG_ID_OFFSET = 0
    const val CTRL_VALUE_OFFSET = 8
    const val CTRL_LENGTH = 16
}
