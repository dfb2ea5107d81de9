package braid.provider.shm

import braid.core.Completion
import braid.core.Settings
import braid.core.TestFabric
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import org.agrona.concurrent.UnsafeBuffer

/**
 * Single-copy pulls (process_vm_readv) of two endpoint pairs in one process, each pair driven by its own thread under
 * its own domain lock, at the same time. The iovecs of a pull were one process-wide pair: two concurrent pulls
 * overwrote each other's addresses, so a receiver got the other pair's bytes or none (collectives' "stale data"
 * allreduce). Every message here has a byte value of its own, so a message landing in the wrong buffer, or not at all,
 * shows. Before the fix 1,500 messages per pair showed 4 such (one run under load); 2,500 per pair miss a fault that
 * frequent with probability about e^-6.
 */
class ShmConcurrentPullTest :
    FunSpec({
        test("rendezvous messages pulled concurrently by two in-process endpoints land in their own receive buffers") {
            TestFabric(4, eagerSize = 1024, settings = Settings.ofEnvironment(mapOf("BRAID_SHM_PULL_SIZE" to "0")))
                .use { f ->
                    val size = 16 shl 10
                    val pool = Executors.newFixedThreadPool(2)
                    try {
                        val results =
                            (0 until 2)
                                .map { pair ->
                                    pool.submit(
                                        Callable {
                                            val s = f.nodes[2 * pair]
                                            val r = f.nodes[2 * pair + 1]
                                            val src = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                                            val dst = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                                            val bad = ArrayList<String>()
                                            for (i in 0 until 2500) {
                                                val value = (pair * 60 + i % 60 + 1).toByte()
                                                src.setMemory(0, size, value)
                                                r.ep.tryTrecv(
                                                    dst,
                                                    0,
                                                    size,
                                                    f.addrs[2 * pair + 1][2 * pair],
                                                    i.toLong(),
                                                    0L,
                                                    "recv",
                                                ) shouldBe 0
                                                s.ep.tryTsend(
                                                    src,
                                                    0,
                                                    size,
                                                    f.addrs[2 * pair][2 * pair + 1],
                                                    i.toLong(),
                                                    "send",
                                                ) shouldBe 0
                                                (r.await(1, others = listOf(s)).single() as Completion).len shouldBe
                                                    size.toLong()
                                                s.await(1, others = listOf(r))
                                                var wrong = 0
                                                for (k in 0 until size) if (dst.getByte(k) != value) wrong++
                                                if (wrong > 0 && bad.size < 5)
                                                    bad +=
                                                        "pair $pair message $i: $wrong of $size bytes are not $value (byte 0 is ${dst.getByte(0)})"
                                            }
                                            bad
                                        }
                                    )
                                }
                                .flatMap { it.get(120, TimeUnit.SECONDS) }
                        withClue(results.joinToString("\n")) { results.size shouldBe 0 }
                    } finally {
                        pool.shutdownNow()
                    }
                }
        }
    })
