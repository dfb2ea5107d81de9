package braid.collectives.offload

import braid.core.Errno
import braid.core.FabricException
import braid.core.shm.JobKeyProof
import braid.core.shm.ProcessIdentity
import braid.core.shm.ShmSegment
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import org.agrona.concurrent.UnsafeBuffer

/**
 * The layout of the offload provider's one shared-memory segment per host group: a header, one control block per local
 * rank, one data slot per local rank and a result area.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                  magic "BRDCOLL\0" (64 bits)                  |  0
 * +-------------------------------+-------------------------------+
 * |          version = 3          |      local ranks (L)          |  8
 * +-------------------------------+-------------------------------+
 * |          slot bytes           |      attached (count)         | 16
 * +-------------------------------+-------------------------------+
 * |      creator pid (64)  ·  creator start ms (64)               | 24
 * |      group hash (64)                                          | 40
 * +---------------------------------------------------------------+
 * |      nonce (32 bytes)  ·  proof = HMAC(K, name ‖ nonce) (32)  | 48
 * +---------------------------------------------------------------+
 * |      ready (32): written last, 1 once the header is whole     | 112
 * +---------------------------------------------------------------+
 * |  control block of local rank i at 256 + 128·i, two cache lines |
 * |  of 64-bit words. The first holds what the others poll:        |
 * |    posted · reduced · consumed · call word of even epochs ·    |
 * |    call word of odd epochs · tiny data of even epochs ·        |
 * |    tiny data of odd epochs · (unused)                          |
 * |  the second what they read only while checking liveness:       |
 * |    pid · start ms · failed (culprit local rank + 1 << 32 |     |
 * |    errno)                                                      |
 * +---------------------------------------------------------------+
 * |  slot of local rank j at DATA + j·slot bytes (DATA 4 KiB-aligned)
 * |  result area at DATA + L·slot bytes                           |
 * +---------------------------------------------------------------+
 * ```
 *
 * Native byte order (all ranks are on one host). posted / reduced / consumed are epochs ([OffloadEngine]): written with
 * release stores after the data they announce, read with acquire loads before the data is read. A piece of at most
 * [TINY_BYTES] travels in the tiny word of its epoch's parity, in the same cache line as the epoch that announces it: a
 * reader that sees the epoch has the data with it, one line transfer instead of two.
 */
internal object OffloadSegmentDescriptor {
    const val MAGIC: Long = 0x004c4c4f43445242L // "BRDCOLL\0" little-endian
    /**
     * 2: a call word per epoch parity (a rank may post epoch e+1 while a peer still reads its word of e). 3: the polled
     * words and the tiny data words share the control block's first cache line.
     */
    const val VERSION = 3
    const val MAGIC_OFFSET = 0
    const val VERSION_OFFSET = 8
    const val LOCAL_SIZE_OFFSET = 12
    const val SLOT_BYTES_OFFSET = 16
    const val ATTACHED_OFFSET = 20
    const val CREATOR_PID_OFFSET = 24
    const val CREATOR_START_OFFSET = 32
    const val GROUP_HASH_OFFSET = 40
    const val NONCE_OFFSET = 48
    const val PROOF_OFFSET = 80
    const val READY_OFFSET = 112
    const val CONTROL_BASE = 256
    const val CONTROL_BYTES = 128

    const val POSTED = 0
    const val REDUCED = 8
    const val CONSUMED = 16
    const val CALL = 24
    const val CALL_ODD = 32
    const val TINY = 40
    const val TINY_ODD = 48
    const val PID = 64
    const val START = 72
    const val FAILED = 80

    /** The largest piece carried in a control block's tiny word instead of a slot. */
    const val TINY_BYTES = 8

    /** Where a rank's call word for epoch [e] is: one word per parity. */
    fun call(e: Long): Int = if (e and 1L == 0L) CALL else CALL_ODD

    /** Where a rank's tiny data for epoch [e] is: one word per parity, like the call word. */
    fun tiny(e: Long): Int = if (e and 1L == 0L) TINY else TINY_ODD

    fun control(local: Int): Int = CONTROL_BASE + local * CONTROL_BYTES

    fun dataBase(localSize: Int): Int = (control(localSize) + 4095) and 4095.inv()

    fun slot(localSize: Int, slotBytes: Int, local: Int): Int = dataBase(localSize) + local * slotBytes

    fun result(localSize: Int, slotBytes: Int): Int = slot(localSize, slotBytes, localSize)

    fun length(localSize: Int, slotBytes: Int): Long = result(localSize, slotBytes).toLong() + slotBytes
}

/**
 * One host group's mapped segment ([OffloadSegmentDescriptor]). Local rank 0 creates it under a temporary name and
 * renames it into place once whole, so others never map half a header; the others attach by polling for the name
 * ([tryAttach] returns null until it is there). Once every local rank has attached, rank 0 removes the name (the
 * mappings stay), so a crash later leaves no file behind.
 *
 * The file, its directory and the job key are rail-core's shared-memory kit's ([ShmSegment],
 * [braid.core.shm.SharedMemoryDir], [JobKeyProof]), as the shm rail's files are. The name is not secret, but a process
 * that does not hold the job's key is refused: rank 0 writes a fresh nonce and the proof over [KEY_LABEL] and the
 * segment's name, and an attaching rank recomputes it and refuses (EACCES) a segment whose proof does not check out,
 * before it writes anything there. As on the shm rail this separates jobs run with different keys; it cannot keep out a
 * hostile process of the same user, which can map the file whatever the header says.
 */
internal class OffloadSegment
private constructor(private val file: ShmSegment, val localSize: Int, val slotBytes: Int) : AutoCloseable {
    val path: Path
        get() = file.path

    val buffer: UnsafeBuffer
        get() = file.buffer

    private var closed = false

    fun control(local: Int): Int = OffloadSegmentDescriptor.control(local)

    fun slot(local: Int): Int = OffloadSegmentDescriptor.slot(localSize, slotBytes, local)

    val result: Int
        get() = OffloadSegmentDescriptor.result(localSize, slotBytes)

    fun attachedCount(): Int = buffer.getIntVolatile(OffloadSegmentDescriptor.ATTACHED_OFFSET)

    /** Removes the name once everyone has mapped it (rank 0's duty). */
    fun unlink() = file.delete()

    override fun close() {
        if (closed) return
        closed = true
        file.delete()
        file.unmap()
    }

    companion object {
        /** What the segment's key proof proves ([JobKeyProof.proof]'s label); its one name is the segment file's. */
        const val KEY_LABEL = "braid-coll segment"

        /** Creates, fills and publishes the segment (local rank 0). */
        fun create(
            path: Path,
            localSize: Int,
            slotBytes: Int,
            groupHash: Long,
            jobKey: JobKeyProof,
            self: ProcessIdentity,
        ): OffloadSegment {
            val length = OffloadSegmentDescriptor.length(localSize, slotBytes)
            if (length > Int.MAX_VALUE)
                throw FabricException.invalid(
                    "offload segment: $localSize local ranks × slot of $slotBytes bytes is $length bytes; set a smaller slot size"
                )
            val tmp = path.resolveSibling("${path.fileName}.${self.pid}.tmp")
            try {
                Files.deleteIfExists(tmp)
                val file = ShmSegment.create(tmp, length)
                val seg = OffloadSegment(file, localSize, slotBytes)
                val b = seg.buffer
                val nonce = JobKeyProof.nonce()
                b.putLong(OffloadSegmentDescriptor.MAGIC_OFFSET, OffloadSegmentDescriptor.MAGIC)
                b.putInt(OffloadSegmentDescriptor.VERSION_OFFSET, OffloadSegmentDescriptor.VERSION)
                b.putInt(OffloadSegmentDescriptor.LOCAL_SIZE_OFFSET, localSize)
                b.putInt(OffloadSegmentDescriptor.SLOT_BYTES_OFFSET, slotBytes)
                b.putLong(OffloadSegmentDescriptor.CREATOR_PID_OFFSET, self.pid)
                b.putLong(OffloadSegmentDescriptor.CREATOR_START_OFFSET, self.startMillis)
                b.putLong(OffloadSegmentDescriptor.GROUP_HASH_OFFSET, groupHash)
                b.putBytes(OffloadSegmentDescriptor.NONCE_OFFSET, nonce)
                b.putBytes(
                    OffloadSegmentDescriptor.PROOF_OFFSET,
                    jobKey.proof(KEY_LABEL, nonce, path.fileName.toString()),
                )
                b.putIntVolatile(OffloadSegmentDescriptor.READY_OFFSET, 1)
                file.publishAs(path)
                return seg
            } catch (e: IOException) {
                runCatching { Files.deleteIfExists(tmp) }
                throw FabricException.io("offload: cannot create the shared-memory segment $path: $e", e)
            }
        }

        /**
         * Maps the segment at [path] if it is there and whole, else null (try again later). Throws [FabricException] if
         * it is there and wrong for this group: another layout, another group, or another job key (EACCES).
         */
        fun tryAttach(
            path: Path,
            localSize: Int,
            slotBytes: Int,
            groupHash: Long,
            jobKey: JobKeyProof,
        ): OffloadSegment? {
            val file =
                try {
                    ShmSegment.open(path, OffloadSegmentDescriptor.CONTROL_BASE.toLong()) ?: return null
                } catch (e: IOException) {
                    throw FabricException.io("offload: cannot map the shared-memory segment $path: $e", e)
                }
            val b = file.buffer
            fun refuse(code: Int, why: String): Nothing {
                file.unmap()
                throw FabricException(code, "offload segment $path: $why")
            }
            if (b.getIntVolatile(OffloadSegmentDescriptor.READY_OFFSET) != 1) {
                file.unmap()
                return null
            }
            if (b.getLong(OffloadSegmentDescriptor.MAGIC_OFFSET) != OffloadSegmentDescriptor.MAGIC)
                refuse(Errno.EINVAL, "not an offload segment (bad magic)")
            val version = b.getInt(OffloadSegmentDescriptor.VERSION_OFFSET)
            if (version != OffloadSegmentDescriptor.VERSION)
                refuse(Errno.EINVAL, "layout version $version; this build reads ${OffloadSegmentDescriptor.VERSION}")
            if (b.getLong(OffloadSegmentDescriptor.GROUP_HASH_OFFSET) != groupHash) {
                file.unmap()
                return null // a stale segment of another group under a colliding name: wait for ours
            }
            val l = b.getInt(OffloadSegmentDescriptor.LOCAL_SIZE_OFFSET)
            val sb = b.getInt(OffloadSegmentDescriptor.SLOT_BYTES_OFFSET)
            if (l != localSize || sb != slotBytes)
                refuse(
                    Errno.EINVAL,
                    "made for $l local ranks with $sb-byte slots, this rank expects $localSize and $slotBytes (the ranks' offload settings differ)",
                )
            if (file.length < OffloadSegmentDescriptor.length(localSize, slotBytes))
                refuse(Errno.EINVAL, "${file.length} bytes, shorter than its header says")
            val nonce =
                ByteArray(JobKeyProof.NONCE_LENGTH).also { b.getBytes(OffloadSegmentDescriptor.NONCE_OFFSET, it) }
            val theirs =
                ByteArray(JobKeyProof.PROOF_LENGTH).also { b.getBytes(OffloadSegmentDescriptor.PROOF_OFFSET, it) }
            if (!jobKey.verify(KEY_LABEL, nonce, theirs, path.fileName.toString())) {
                refuse(
                    Errno.EACCES,
                    "its creator does not hold this job's key (BRAID_JOB_KEY differs); nothing in it is used",
                )
            }
            return OffloadSegment(file, localSize, slotBytes)
        }
    }
}
