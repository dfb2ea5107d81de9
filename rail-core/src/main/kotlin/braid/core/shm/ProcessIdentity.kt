package braid.core.shm

import java.io.IOException
import java.io.RandomAccessFile

/**
 * A process as processes meeting through shared memory name each other: its pid and its start time in milliseconds
 * ([startMillis]). A pid alone can be reused once its process is gone; a pid with its start time cannot, so the pair is
 * written into file names (the shm rail's) and segment words (the collective offload's) and checked later by [alive] or
 * watched by [watch].
 */
public class ProcessIdentity(
    /** The process id. */
    @get:JvmName("pid") public val pid: Long,
    /** Its start time in milliseconds ([startMillis]). */
    @get:JvmName("startMillis") public val startMillis: Long,
) {
    /**
     * The running process this names, or null if it is gone: the pid, checked against the start time, so a reused pid
     * is not mistaken for it.
     */
    public fun handle(): ProcessHandle? {
        if (pid == SELF.pid) return if (startMillis == SELF.startMillis) self else null
        val h = ProcessHandle.of(pid).orElse(null) ?: return null
        return if (h.isAlive && startMillis(h) == startMillis) h else null
    }

    /** Watches the process this names for death, or null if it is already gone (or was never this one). */
    public fun watch(): ProcessWatch? = handle()?.let { ProcessWatch.watch(it) }

    /**
     * Whether the process this names still runs: not exited, not a zombie, not a reused pid. One check; [watch] for
     * many.
     */
    public fun alive(): Boolean = watch()?.use { it.alive() } ?: false

    override fun equals(other: Any?): Boolean =
        other is ProcessIdentity && other.pid == pid && other.startMillis == startMillis

    override fun hashCode(): Int = (pid * 31 + startMillis).hashCode()

    override fun toString(): String = "process $pid (started at $startMillis ms)"

    public companion object {
        private val self: ProcessHandle = ProcessHandle.current()

        /** This process. */
        @JvmField public val SELF: ProcessIdentity = ProcessIdentity(self.pid(), startMillis(self))

        /**
         * [handle]'s start time in milliseconds, rounded down to 10 ms (the JDK reads it from clock ticks and may round
         * the last digit differently from one read to the next). Where the platform does not say, 1: never 0, which
         * shared-memory words keep for "not written yet" (the offload's control blocks read a start of 0 as a rank that
         * has not attached); every process of a host falls back alike, so identities still match.
         */
        @JvmStatic
        public fun startMillis(handle: ProcessHandle): Long =
            handle.info().startInstant().map { maxOf(1L, it.toEpochMilli() / 10 * 10) }.orElse(1L)

        /** The identity of the running process [handle]. */
        @JvmStatic
        public fun of(handle: ProcessHandle): ProcessIdentity = ProcessIdentity(handle.pid(), startMillis(handle))
    }
}

/**
 * A process watched for death, many times over: a peer endpoint's, a segment's attached rank's.
 *
 * `ProcessHandle.isAlive` alone is not enough: a process that crashed stays a zombie, "alive", until its parent reaps
 * it, which a launcher may not do at once. So [alive] reads the state letter in `/proc/PID/stat` through a file kept
 * open from the start: it is re-read in place (no allocation, one system call), a zombie (`Z`) or dead (`X`) state
 * counts as dead, and once the process is gone the read fails, even if its pid has been reused since. Where /proc is
 * missing, [ProcessHandle.isAlive] is the fallback. Not thread-safe.
 */
public class ProcessWatch private constructor(private val handle: ProcessHandle, private var stat: RandomAccessFile?) :
    AutoCloseable {
    private val scratch = ByteArray(512)
    private var dead = false

    /** The watched process's id. */
    public val pid: Long
        get() = handle.pid()

    /** Whether the process still runs (not exited, not a zombie). Once false, always false. */
    public fun alive(): Boolean {
        if (dead) return false
        val file = stat ?: return handle.isAlive.also { if (!it) dead = true }
        val alive =
            try {
                file.seek(0)
                val n = file.read(scratch)
                n > 0 && stateOf(scratch, n).let { it != 'Z' && it != 'X' && it != 'x' }
            } catch (e: IOException) {
                false
            }
        if (!alive) {
            dead = true
            close()
        }
        return alive
    }

    /** Closes the kept-open stat file; [alive] then falls back to [ProcessHandle.isAlive]. */
    override fun close() {
        runCatching { stat?.close() }
        stat = null
    }

    public companion object {
        /** Watches [handle], or returns null if the process is already gone. */
        @JvmStatic
        public fun watch(handle: ProcessHandle): ProcessWatch? {
            val stat =
                try {
                    RandomAccessFile("/proc/${handle.pid()}/stat", "r")
                } catch (e: IOException) {
                    null
                }
            val p = ProcessWatch(handle, stat)
            return if (p.alive()) p else null
        }

        /** The state letter: the field after the command name, which is in parentheses and may hold spaces. */
        private fun stateOf(b: ByteArray, n: Int): Char {
            var i = n - 1
            while (i > 0 && b[i] != ')'.code.toByte()) i--
            return if (i + 2 < n) b[i + 2].toInt().toChar() else '?'
        }
    }
}
