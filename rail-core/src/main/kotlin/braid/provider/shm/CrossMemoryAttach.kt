package braid.provider.shm

import com.sun.jna.Native
import com.sun.jna.Pointer

/**
 * Single-copy transfers between processes with Linux's cross-memory attach
 * (`process_vm_readv(2)`), the mechanism libfabric's shm provider uses for large messages: the
 * receiver copies straight from the sender's buffer into its own, with no staging through a
 * ring. Needs both buffers off-heap (a heap array can move) and permission to read the sender
 * (same user, and Yama's ptrace_scope allowing it); where either is missing, callers fall back
 * to streaming fragments through the bulk ring.
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

    // Two iovecs, local then remote, in native memory reused for every call (callers hold the domain lock).
    private val iov: Pointer by lazy { Pointer(Native.malloc(32)) }
    private val iovAddress: Long by lazy { Pointer.nativeValue(iov) }

    /**
     * Copies [length] bytes from [remoteAddress] in process [pid] to [localAddress]. Returns the
     * bytes copied (all of them), or a negative errno-style value if the call failed.
     */
    fun read(pid: Int, localAddress: Long, remoteAddress: Long, length: Long): Long {
        var done = 0L
        while (done < length) {
            iov.setLong(0, localAddress + done)
            iov.setLong(8, length - done)
            iov.setLong(16, remoteAddress + done)
            iov.setLong(24, length - done)
            val n = Libc.process_vm_readv(pid, iovAddress, 1, iovAddress + 16, 1, 0)
            if (n <= 0) return if (n == 0L) -1 else n
            done += n
        }
        return done
    }

    private object Libc {
        @JvmStatic
        external fun process_vm_readv(pid: Int, localIov: Long, localCount: Long, remoteIov: Long, remoteCount: Long, flags: Long): Long
    }
}
