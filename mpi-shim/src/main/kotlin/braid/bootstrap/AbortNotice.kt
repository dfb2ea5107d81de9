package braid.bootstrap

import java.nio.file.Files
import java.nio.file.Paths

/**
 * The line a rank prints when it aborts, made to reach the user. A launcher forwards a rank's stderr through a pipe
 * and, told of the abort, kills every rank and exits; if it handles the abort request before it has read the pipe, the
 * line is lost (seen with Hydra under load). So after printing, the rank waits until the launcher has read the pipe
 * empty (`FIONREAD` on the write end counts the bytes still in it), for at most [drainMillis], and only then asks for
 * the abort. When stderr is not a pipe nothing is waited for.
 */
internal object AbortNotice {
    private const val drainMillis = 2_000L

    fun print(rank: Int, exitCode: Int, message: String) {
        System.err.println("rank $rank: abort ($exitCode): $message")
        System.err.flush()
        awaitStderrRead()
    }

    private fun awaitStderrRead() {
        val target =
            try {
                Files.readSymbolicLink(Paths.get("/proc/self/fd/2")).toString()
            } catch (_: Exception) {
                return
            }
        if (!target.startsWith("pipe:")) return
        try {
            Libc.ensureRegistered("wait for stderr to drain")
        } catch (_: BootstrapException) {
            return
        }
        val unread = IntArray(1)
        val deadline = System.nanoTime() + drainMillis * 1_000_000
        while (System.nanoTime() < deadline) {
            if (Libc.ioctl(2, Libc.FIONREAD, unread) != 0 || unread[0] == 0) return
            Thread.sleep(1)
        }
    }
}
