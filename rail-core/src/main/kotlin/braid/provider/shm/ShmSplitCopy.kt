package braid.provider.shm

import braid.core.shm.ProcessWatch
import braid.provider.shm.ChannelFileDescriptor.SPLIT_CHUNKS_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_CHUNK_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_CLAIM_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_DONE_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_DST_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_FAILED_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_LENGTH_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_MSG_ID_OFFSET
import braid.provider.shm.ChannelFileDescriptor.SPLIT_SRC_OFFSET
import braid.provider.shm.FrameDescriptor.CTRL_LENGTH
import braid.provider.shm.FrameDescriptor.CTRL_MSG_ID_OFFSET
import braid.provider.shm.FrameDescriptor.CTRL_VALUE_OFFSET
import braid.provider.shm.FrameDescriptor.MSG_SHARE
import org.agrona.concurrent.AtomicBuffer
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer

/**
 * A cooperative split copy of one large rendezvous message: the receiver and the sender copy disjoint chunks of it at
 * the same time, the receiver pulling with `process_vm_readv`, the sender pushing with `process_vm_writev`. One copier
 * is the limit of a single-copy pull (about 6–7 GB/s for 1 MiB on the VM it was measured on); two reach 10–12.
 *
 * The protocol lives in the channel file's split slot ([ChannelFileDescriptor]); each side of a channel has one of
 * these views of it. The receiver makes one split at a time, synchronously, inside its pull ([receive]):
 * 1. it writes the message's addresses, length and chunking, zeroes the done count, clears the failed word, and
 *    publishes the split by storing a fresh generation in the claim word (generation << 32 | next chunk 0);
 * 2. it sends SHARE (message id, generation) through the control ring (a full ring: no share);
 * 3. it claims chunks with fetch-and-add and pulls each, then waits until every claimed chunk is done, checking that
 *    the sender still runs.
 *
 * The sender ([push]), on SHARE, claims chunks by compare-and-set against the claim word, so a late SHARE can never
 * claim a chunk of another split: the word holds the generation. It only copies from the send it has waiting for this
 * message id, and only within it. A push that fails records its chunk in the failed word, counts it done, and the
 * sender never pushes to that receiver again; the receiver pulls that chunk itself. A sender that never polls leaves
 * every chunk to the receiver: the receiver waits only for chunks the sender claimed, and the sender copies a chunk as
 * soon as it claims it.
 *
 * Allocates nothing.
 */
internal class ShmSplitCopy(private val slot: AtomicBuffer) {

    /** Receiver side: the generation of the last split made here. */
    private var generation = 0
    /** Receiver side: splits made, and chunks the receiver copied itself. */
    var splits = 0L
        private set

    var pulledChunks = 0L
        private set

    /** Sender side: chunks pushed into the receiver. */
    var pushedChunks = 0L
        private set

    /** Sender side: a push failed; this sender helps this receiver no more. */
    var pushBroken = false
        private set

    /**
     * Receiver: copies [length] bytes from [src] in the sender's process [pid] to [dst], in chunks of [chunk] bytes,
     * offering the sender a share through [ctrl] (the record written from [scratch]). True once every byte is in place;
     * false if they could not be (a read failed, or the sender died holding a chunk), and then no chunk is being copied
     * any more.
     */
    fun receive(
        msgId: Long,
        dst: Long,
        src: Long,
        length: Long,
        chunk: Int,
        pid: Int,
        iov: CrossMemoryAttach.Iovecs,
        ctrl: OneToOneRingBuffer,
        scratch: UnsafeBuffer,
        sender: ProcessWatch?,
    ): Boolean {
        val chunks = ((length + chunk - 1) / chunk).toInt()
        generation = if (generation == MAX_GENERATION) 1 else generation + 1
        val base = generation.toLong() shl 32
        val b = slot
        b.putLong(SPLIT_MSG_ID_OFFSET, msgId)
        b.putLong(SPLIT_DST_OFFSET, dst)
        b.putLong(SPLIT_SRC_OFFSET, src)
        b.putLong(SPLIT_LENGTH_OFFSET, length)
        b.putInt(SPLIT_CHUNK_OFFSET, chunk)
        b.putInt(SPLIT_CHUNKS_OFFSET, chunks)
        b.putLong(SPLIT_DONE_OFFSET, 0)
        b.putLong(SPLIT_FAILED_OFFSET, -1)
        b.putLongVolatile(SPLIT_CLAIM_OFFSET, base) // publishes every field above
        splits++
        scratch.putLong(CTRL_MSG_ID_OFFSET, msgId)
        scratch.putLong(CTRL_VALUE_OFFSET, generation.toLong())
        ctrl.write(MSG_SHARE, scratch, 0, CTRL_LENGTH)

        var ok = true
        var claimed = chunks.toLong()
        var first = true
        while (true) {
            val i = b.getAndAddLong(SPLIT_CLAIM_OFFSET, 1) and CHUNK_MASK
            if (i >= chunks) break
            if (first) {
                first = false
                if (testReceiverAwaitsPush) awaitOnePush(sender)
            }
            ok = pull(iov, pid, dst, src, length, chunk, i)
            b.getAndAddLong(SPLIT_DONE_OFFSET, 1)
            pulledChunks++
            if (!ok) {
                // Close the split: nothing more is claimed; wait only for what the sender holds.
                claimed = minOf(b.getAndSetLong(SPLIT_CLAIM_OFFSET, base or CHUNK_MASK) and CHUNK_MASK, chunks.toLong())
                break
            }
        }
        // Every chunk is claimed now (or the split closed): the generation is over, and a late
        // SHARE for it, or a sender's compare-and-set on it, claims nothing.
        var spins = 0
        while (b.getLongVolatile(SPLIT_DONE_OFFSET) < claimed) {
            Thread.onSpinWait()
            if (++spins and LIVENESS_SPINS == 0 && sender != null && !sender.alive()) {
                b.getAndSetLong(SPLIT_CLAIM_OFFSET, base or CHUNK_MASK)
                return false
            }
        }
        if (!ok) return false
        val failed = b.getLongVolatile(SPLIT_FAILED_OFFSET)
        if (failed >= 0 && failed < chunks) {
            pulledChunks++
            return pull(iov, pid, dst, src, length, chunk, failed)
        }
        return true
    }

    /** Receiver: pulls chunk [i] of a split of [length] bytes in chunks of [chunk]; true if all of it came. */
    private fun pull(
        iov: CrossMemoryAttach.Iovecs,
        pid: Int,
        dst: Long,
        src: Long,
        length: Long,
        chunk: Int,
        i: Long,
    ): Boolean {
        val offset = i * chunk
        val n = minOf(chunk.toLong(), length - offset)
        return CrossMemoryAttach.read(iov, pid, dst + offset, src + offset, n) == n
    }

    /**
     * Sender: helps with split [generation] of message [msgId], whose bytes are the [srcLength] bytes at [srcAddress]
     * of the send waiting for it, by pushing chunks into the receiver's process [pid] until none is left. Returns the
     * chunks pushed. A SHARE of a split already over, or one that does not name this send's buffer, claims nothing.
     */
    fun push(
        msgId: Long,
        generation: Long,
        srcAddress: Long,
        srcLength: Long,
        pid: Int,
        iov: CrossMemoryAttach.Iovecs,
    ): Int {
        if (pushBroken) return 0
        val b = slot
        var word = b.getLongVolatile(SPLIT_CLAIM_OFFSET)
        if (word ushr 32 != generation) return 0
        // Written before the claim word was published; a later split rewrites them only once
        // this one is over, and then the compare-and-set below fails.
        if (b.getLong(SPLIT_MSG_ID_OFFSET) != msgId || b.getLong(SPLIT_SRC_OFFSET) != srcAddress) return 0
        val dst = b.getLong(SPLIT_DST_OFFSET)
        val length = b.getLong(SPLIT_LENGTH_OFFSET)
        val chunk = b.getInt(SPLIT_CHUNK_OFFSET).toLong()
        val chunks = b.getInt(SPLIT_CHUNKS_OFFSET).toLong()
        if (length > srcLength || chunk <= 0 || chunks != (length + chunk - 1) / chunk) return 0
        var pushed = 0
        while (true) {
            if (word ushr 32 != generation) return pushed
            val i = word and CHUNK_MASK
            if (i >= chunks) return pushed
            if (!b.compareAndSetLong(SPLIT_CLAIM_OFFSET, word, word + 1)) {
                word = b.getLongVolatile(SPLIT_CLAIM_OFFSET)
                continue
            }
            if (STALL_IN_PUSH) stallInPush()
            val offset = i * chunk
            val n = minOf(chunk, length - offset)
            if (CrossMemoryAttach.write(iov, pid, srcAddress + offset, dst + offset, n) != n) {
                pushBroken = true
                b.putLongVolatile(SPLIT_FAILED_OFFSET, i)
                b.getAndAddLong(SPLIT_DONE_OFFSET, 1)
                return pushed
            }
            b.getAndAddLong(SPLIT_DONE_OFFSET, 1)
            pushed++
            pushedChunks++
            word = b.getLongVolatile(SPLIT_CLAIM_OFFSET)
        }
    }

    fun describe(): String =
        "split copies $splits (chunks pulled $pulledChunks), chunks pushed $pushedChunks${if (pushBroken) " (pushing failed)" else ""}"

    /**
     * [testReceiverAwaitsPush]: holding its first chunk's claim, waits until a chunk is done (the sender's: this side
     * has finished none), the sender is gone, or [AWAIT_PUSH_NANOS] passed.
     */
    private fun awaitOnePush(sender: ProcessWatch?) {
        val deadline = System.nanoTime() + AWAIT_PUSH_NANOS
        var spins = 0
        while (slot.getLongVolatile(SPLIT_DONE_OFFSET) < 1) {
            Thread.onSpinWait()
            if (++spins and LIVENESS_SPINS == 0) {
                if (sender != null && !sender.alive()) return
                if (System.nanoTime() > deadline) return
            }
        }
    }

    companion object {
        /**
         * Test hook for the receiving side (set in this JVM, off by default): in each split it receives, the receiver
         * claims its first chunk, then waits for the sender to have pushed one before it pulls (at most 30 s), so that
         * a test sees both processes copy whatever the scheduler does. Changes no byte copied, only who copies which.
         */
        @Volatile @JvmSynthetic internal var testReceiverAwaitsPush: Boolean = false

        private const val AWAIT_PUSH_NANOS = 30_000_000_000L

        /**
         * Test hook (`-Dbraid.shm.testStallInPush=true`): a sender stops for ever once it has claimed a chunk, before
         * pushing it, as a sender killed mid-split would.
         */
        private val STALL_IN_PUSH: Boolean = java.lang.Boolean.getBoolean("braid.shm.testStallInPush")

        private fun stallInPush(): Nothing {
            println("CLAIMED CHUNK")
            System.out.flush()
            while (true) Thread.sleep(60_000)
        }

        private const val CHUNK_MASK = 0xffff_ffffL
        private const val MAX_GENERATION = Int.MAX_VALUE
        /** Spins between liveness checks of the sender while waiting for its chunks (a power of two, minus one). */
        private const val LIVENESS_SPINS = 1023

        /**
         * The chunk size for a split of [length] bytes: [shareChunk], but small enough that the message has at least
         * two chunks, rounded up to a page.
         */
        fun chunkFor(length: Long, shareChunk: Int): Int {
            val half = ((length + 1) / 2 + 4095) and 4095L.inv()
            return minOf(shareChunk.toLong(), half).toInt()
        }
    }
}
