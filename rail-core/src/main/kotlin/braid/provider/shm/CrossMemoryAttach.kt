package braid.provider.shm

import com.sun.jna.Native
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Single-copy transfers between processes with Linux's cross-memory attach (`process_vm_readv(2)`,
 * `process_vm_writev(2)`), the mechanism libfabric's shm provider uses for large messages: the receiver copies straight
 * from the sender's buffer into its own, with no staging through a ring (and, for a split copy, the sender pushes part
 * of it at once). Needs both buffers off-heap (a heap array can move) and permission to read the sender (same user, and
 * Yama's ptrace_scope allowing it); where either is missing, callers fall back to streaming fragments through the bulk
 * ring.
 */
internal object CrossMemoryAttach {
    /** Whether the call is available at all (JNA loaded, libc found); an endpoint also asks [ShmParams.CMA]. */
    val available: Boolean by lazy {
        try {
            Native.register(Libc::class.java, "c")
            true
        } catch (t: Throwable) {
            false
        }
    }

    /**
     * Copies [length] bytes from [remoteAddress] in process [pid] to [localAddress], building the call's two iovecs in
     * [iov]. Returns the bytes copied (all of them), or a negative errno-style value if the call failed.
     */
    fun read(iov: Iovecs, pid: Int, localAddress: Long, remoteAddress: Long, length: Long): Long =
        transfer(iov, pid, localAddress, remoteAddress, length, write = false)

    /**
     * Copies [length] bytes from [localAddress] to [remoteAddress] in process [pid] (`process_vm_writev(2)`: a sender
     * pushing its part of a split copy, see [ShmSplitCopy]). Returns the bytes copied (all of them), or a negative
     * errno-style value if the call failed.
     */
    fun write(iov: Iovecs, pid: Int, localAddress: Long, remoteAddress: Long, length: Long): Long =
        transfer(iov, pid, localAddress, remoteAddress, length, write = true)

    /** One direction's loop: the kernel may copy less than asked (a partial transfer), so it goes on from there. */
    private fun transfer(
        iov: Iovecs,
        pid: Int,
        localAddress: Long,
        remoteAddress: Long,
        length: Long,
        write: Boolean,
    ): Long {
        val m = iov.memory
        var done = 0L
        while (done < length) {
            m.putLong(0, localAddress + done)
            m.putLong(8, length - done)
            m.putLong(16, remoteAddress + done)
            m.putLong(24, length - done)
            val n =
                if (write) Libc.process_vm_writev(pid, iov.address, 1, iov.address + 16, 1, 0)
                else Libc.process_vm_readv(pid, iov.address, 1, iov.address + 16, 1, 0)
            if (n <= 0) return if (n == 0L) -1 else n
            done += n
        }
        return done
    }

    /**
     * The native memory of one call's two iovecs (local, then remote). Each shm endpoint owns one and uses it under its
     * domain's lock. It must not be shared between endpoints: the domains of one process run on their own threads under
     * their own locks, and a process-wide pair let two concurrent pulls overwrite each other's addresses, so one
     * receiver copied another message's bytes, or another receiver's buffer got them.
     */
    internal class Iovecs {
        val memory = UnsafeBuffer(ByteBuffer.allocateDirect(32))
        val address: Long
            get() = memory.addressOffset()
    }

    private object Libc {
        @JvmStatic
        external fun process_vm_readv(
            pid: Int,
            localIov: Long,
            localCount: Long,
            remoteIov: Long,
            remoteCount: Long,
            flags: Long,
        ): Long

        @JvmStatic
        external fun process_vm_writev(
            pid: Int,
            localIov: Long,
            localCount: Long,
            remoteIov: Long,
            remoteCount: Long,
            flags: Long,
        ): Long
    }
}
