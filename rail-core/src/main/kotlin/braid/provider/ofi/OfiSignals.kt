package braid.provider.ofi

import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * Keeps the JVM's own handlers of the signals HotSpot uses as control flow across the native calls that may replace
 * them: SIGSEGV (implicit null checks, safepoint and handshake polls in compiled code), SIGBUS, SIGFPE and SIGILL.
 *
 * libfabric 1.17's shm provider installs its own SIGSEGV, SIGBUS, SIGINT and SIGTERM handlers the first time this
 * process opens an shm endpoint (`smr_endpoint` → `smr_init_sig_handlers`). On the first such signal the handler
 * `shm_unlink`s the shared-memory file of every shm endpoint this process has open, puts the previous handler back and
 * calls it: meant for a dying process, it fires instead on the JVM's first ordinary SIGSEGV, which the JVM handles and
 * carries on. The process's endpoints keep working among themselves, but no other process can map them any more: a peer
 * that inserts one's address gets no region (`shm_open` ENOENT), and when it then takes a connection request it follows
 * a null region pointer (`smr_progress_connreq`, SIGSEGV at `libfabric.so.1+0xd01f7` in Debian's 1.17), or its sends
 * answer `-FI_EAGAIN` for ever. The JIT's warm-up of `braid pingpong -p ofi:shm`, seconds of compiled code before the
 * peer connects, made that one run in a few.
 *
 * [keep] snapshots the guarded signals' dispositions before a native call and puts back any the call replaced. shm
 * installs its handlers once per process, from inside `fi_endpoint`, before that endpoint has a shared region, so no
 * file of this process is at risk in the instant between its install and the put-back. SIGINT and SIGTERM stay shm's:
 * its handler cleans up, then hands the signal to the JVM's, and the JVM does not take them in normal running.
 */
internal object OfiSignals {
    /** SIGILL, SIGBUS, SIGFPE, SIGSEGV: the same numbers on Linux x86-64 and aarch64. */
    private val GUARDED = intArrayOf(4, 7, 8, 11)

    /** Room for one glibc `struct sigaction` (152 bytes on LP64 Linux), kept opaque: only its handler is read. */
    private const val SIGACTION_BYTES = 256L

    private val saved = Memory(SIGACTION_BYTES * GUARDED.size)
    private val now = Memory(SIGACTION_BYTES)

    /** How many handlers [keep] has put back in this process (`OfiEndpointChurnIT` prints it). */
    @Volatile
    var restored = 0
        private set

    /** Runs [call], then puts back the JVM's handler of each guarded signal [call] replaced. */
    fun <T> keep(call: () -> T): T =
        synchronized(this) {
            val have = snapshot()
            try {
                call()
            } finally {
                if (have) putBack()
            }
        }

    private fun snapshot(): Boolean {
        val at = Pointer.nativeValue(saved)
        for ((i, s) in GUARDED.withIndex()) if (OfiLibrary.Libc.sigaction(s, 0L, at + i * SIGACTION_BYTES) != 0)
            return false
        return true
    }

    private fun putBack() {
        for ((i, s) in GUARDED.withIndex()) {
            val mine = Pointer.nativeValue(saved) + i * SIGACTION_BYTES
            if (OfiLibrary.Libc.sigaction(s, 0L, Pointer.nativeValue(now)) != 0) continue
            if (now.getLong(0) == saved.getLong(i * SIGACTION_BYTES)) continue
            if (OfiLibrary.Libc.sigaction(s, mine, 0L) == 0) restored++
        }
    }
}
