package braid.bootstrap

import java.io.File
import kotlin.system.exitProcess

/**
 * A bootstrap for ranks in separate processes on one host, through a shared directory: a put becomes a file at the next
 * fence, the fence is one marker file per rank and round. Abort writes `abort` (code and message) and exits; every rank
 * watches for that file and exits with the same code, as a launcher ends the whole job. For tests and the benchmark
 * programs that start their ranks themselves (`braid.mpi.bench`); real jobs use a launcher ([Bootstrap.detect]).
 */
public class FileBootstrap(private val dir: File, override val rank: Int, override val size: Int) : Bootstrap {
    override val kind: String = "file"
    private val pending = LinkedHashMap<String, ByteArray>()
    private var round = 0
    private val abortFile = File(dir, "abort")

    init {
        File(dir, "kv").mkdirs()
        File(dir, "fence").mkdirs()
        Thread(
                {
                    while (true) {
                        if (abortFile.exists()) {
                            val code = abortFile.readText().substringBefore(' ').toIntOrNull() ?: 1
                            System.err.println("rank $rank: the job was aborted: ${abortFile.readText()}")
                            Runtime.getRuntime().halt(code)
                        }
                        Thread.sleep(20)
                    }
                },
                "file-bootstrap-abort-watch",
            )
            .apply {
                isDaemon = true
                start()
            }
    }

    private fun keyFile(rank: Int, key: String) =
        File(dir, "kv/$rank.${key.toByteArray().joinToString("") { "%02x".format(it) }}")

    override fun put(key: String, value: ByteArray) {
        pending[key] = value.copyOf()
    }

    override fun fence() {
        for ((k, v) in pending) {
            val f = keyFile(rank, k)
            val tmp = File(f.path + ".tmp")
            tmp.writeBytes(v)
            check(tmp.renameTo(f)) { "cannot publish $f" }
        }
        pending.clear()
        round++
        File(dir, "fence/$round.$rank").createNewFile()
        val deadline = System.nanoTime() + FENCE_NANOS
        while ((0 until size).any { !File(dir, "fence/$round.$it").exists() }) {
            if (System.nanoTime() > deadline)
                throw BootstrapException(
                    "rank $rank: fence $round timed out after 60 s; missing ranks ${(0 until size).filter { !File(dir, "fence/$round.$it").exists() }}"
                )
            Thread.sleep(2)
        }
    }

    override fun get(rank: Int, key: String): ByteArray {
        val f = keyFile(rank, key)
        if (!f.exists())
            throw BootstrapException("rank ${this.rank}: rank $rank put nothing under '$key' before the last fence")
        return f.readBytes()
    }

    override fun abort(exitCode: Int, message: String): Nothing {
        val tmp = File(dir, "abort.$rank")
        tmp.writeText("$exitCode rank $rank: $message")
        tmp.renameTo(abortFile)
        System.err.println("rank $rank aborts the job with code $exitCode: $message")
        exitProcess(exitCode)
    }

    override fun close() {}

    private companion object {
        const val FENCE_NANOS = 60_000_000_000L
    }
}
