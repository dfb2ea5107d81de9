package braid.it

import braid.core.CudaRuntime
import braid.core.HmemIface
import braid.core.MrAccess
import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.file.Files
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * GPU memory between two processes: the sender ([CudaSendMain]) sends from `cudaMalloc`ed memory, this JVM receives
 * into its own, over shm and over tcp, with Braid's built-in CUDA copies and with a user override. Every byte is
 * checked (copied back to the host afterwards) and the receive throughput printed. Skipped, with the reason printed,
 * where `libcudart` or a CUDA device is missing.
 */
class CudaHmemIT :
    FunSpec({
        val skip =
            when {
                !CudaRuntime.available -> CudaRuntime.missing
                CudaRuntime.deviceCount() == 0 -> "libcudart (${CudaRuntime.library}) sees no CUDA device"
                else -> null
            }
        val sizes = listOf(64, 64 shl 10, 1 shl 20, 16 shl 20)
        val rounds = 5

        for (provider in listOf("shm", "tcp")) for (mode in listOf("builtin", "override")) {
            test("$provider, $mode copies: GPU-to-GPU messages between two processes arrive intact") {
                if (skip != null) {
                    println("CudaHmemIT: skipped: $skip")
                    return@test
                }
                val dir = Files.createTempDirectory("braid-cuda")
                PeerMain.Node(provider, dir, "rx").use { node ->
                    val copied = CudaHmem.override(node.domain, mode)
                    val kid =
                        ChildProcess.jvm(
                                CudaSendMain::class.java.name,
                                listOf("$dir", provider, mode, "$rounds") + sizes.map { "$it" },
                            )
                            .output(dir.resolve("tx.log"))
                            .start()
                    try {
                        val tx = node.peer("tx")
                        val max = sizes.max()
                        val gpu = CudaRuntime.malloc(max.toLong())
                        val mr = node.domain.registerMemory(HmemIface.CUDA, 0, gpu, max, MrAccess.RECV)
                        val host = UnsafeBuffer(ByteBuffer.allocateDirect(max))
                        val nanos = LongArray(sizes.size)
                        var seq = 0
                        for (round in 0 until rounds) for ((k, size) in sizes.withIndex()) {
                            val start = System.nanoTime()
                            node.ep.tryTrecv(mr, 0, size, tx, seq.toLong(), 0, "r$seq") shouldBe 0
                            val deadline = braid.testsupport.Deadline.of("message $seq", Duration.ofSeconds(60))
                            while (node.poll() == null) deadline.check()
                            if (round > 0) nanos[k] += System.nanoTime() - start
                            node.c.len shouldBe size.toLong()
                            CudaHmem.fromGpu(gpu, host, size)
                            withClue("message $seq of $size bytes") { CudaHmem.check(host, seq, size) shouldBe -1 }
                            seq++
                        }
                        node.mark()
                        val out = kid.awaitOk(Duration.ofSeconds(120))
                        for ((k, size) in sizes.withIndex()) {
                            val per = nanos[k] / (rounds - 1)
                            println(
                                "CudaHmemIT $provider $mode: $size B in ${per / 1000} µs per message " +
                                    "(sender posts after the receive), %.2f GB/s".format(size.toDouble() / per)
                            )
                        }
                        if (mode == "override") {
                            copied.get() shouldBeGreaterThan 0L
                            Regex("COPIED (\\d+)").find(out)!!.groupValues[1].toLong() shouldBeGreaterThan 0L
                        }
                        mr.close()
                        CudaRuntime.free(gpu)
                    } finally {
                        kid.close()
                    }
                }
            }
        }
    })
