package braid.provider.shm

import java.io.IOException
import java.io.RandomAccessFile

/**
 * The process behind a peer endpoint, watched for death.
 *
 * `ProcessHandle.isAlive` alone is not enough: a process that crashed stays a zombie, "alive",
 * until its parent reaps it, which a launcher may not do at once. So the check reads the state
 * letter in `/proc/PID/stat` through a file kept open from the start: it is re-read in place
 * (no allocation, one system call), a zombie (`Z`) or dead (`X`) state counts as dead, and once
 * the process is gone the read fails, even if its pid has been reused since. Where /proc is
 * missing, [ProcessHandle.isAlive] is the fallback.
 */
internal class PeerProcess private constructor(private val handle: ProcessHandle, private var stat: RandomAccessFile?) : AutoCloseable {
    private val scratch = ByteArray(512)
    private var dead = false

    val pid: Long get() = handle.pid()

    /** Whether the process still runs (not exited, not a zombie). */
    fun alive(): Boolean {
        if (dead) return false
        val file = stat ?: return handle.isAlive.also { if (!it) dead = true }
        val alive = try {
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

    override fun close() {
        runCatching { stat?.close() }
        stat = null
    }

    companion object {
        /** Watches [handle], or returns null if the process is already gone. */
        fun watch(handle: ProcessHandle): PeerProcess? {
            val stat = try {
                RandomAccessFile("/proc/${handle.pid()}/stat", "r")
            } catch (e: IOException) {
                null
            }
            val p = PeerProcess(handle, stat)
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
