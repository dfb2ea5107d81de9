package braid.mpi.testing

import braid.bootstrap.Bootstrap
import braid.bootstrap.BootstrapException
import java.util.concurrent.BrokenBarrierException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * A job of [size] ranks inside this JVM: the key-value store is a shared map, the fence a barrier with a deadline. Each
 * rank takes its [Bootstrap] with [rank]. Abort throws [Aborted] carrying the exit code (a test cannot end its own
 * JVM).
 */
class MemoryJob(val size: Int) {
    private val store = ConcurrentHashMap<String, ByteArray>()
    private val barrier = CyclicBarrier(size)

    fun rank(r: Int): Bootstrap =
        object : Bootstrap {
            override val rank = r
            override val size = this@MemoryJob.size
            override val kind = "memory"
            override val appnum = 3
            override val universeSize = this@MemoryJob.size + 2

            override fun put(key: String, value: ByteArray) {
                store["$r/$key"] = value.copyOf()
            }

            override fun fence() {
                try {
                    barrier.await(30, TimeUnit.SECONDS)
                } catch (e: TimeoutException) {
                    throw BootstrapException(
                        "rank $r: fence timed out after 30 s waiting for the other ${size - 1} ranks",
                        e,
                    )
                } catch (e: BrokenBarrierException) {
                    throw BootstrapException("rank $r: fence broken (another rank failed)", e)
                }
            }

            override fun get(rank: Int, key: String): ByteArray =
                store["$rank/$key"] ?: throw BootstrapException("rank $r: rank $rank put nothing under '$key'")

            override fun abort(exitCode: Int, message: String): Nothing = throw Aborted(exitCode, message)

            override fun close() {}
        }

    class Aborted(val exitCode: Int, message: String) : RuntimeException("abort($exitCode): $message")
}
