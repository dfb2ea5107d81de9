package braid.mpi.bench

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Request
import braid.mpi.ThreadLevel
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.nio.file.Files
import java.util.concurrent.CompletableFuture

/**
 * The CPU cost of braid.mpi's windowed message path (a program that prints numbers, not a test): two ranks of this JVM,
 * each on its own shm endpoint, driven by ONE thread. Per window rank 1 posts 64 irecvs, rank 0 posts 64 isends, waits
 * for all, and the requests are recycled: `MpiPingPong bw`'s window without its acknowledgement and without a second
 * core. Nothing waits for another process, so the thread's CPU time per message is the per-message cost of both sides
 * together, which a loaded machine measures far more steadily than a rate. Prints `cpu SIZE NS_PER_MSG
 * BYTES_ALLOCATED_PER_MSG` (the least of 5 batches). The two ranks are two threads of this process on a [FileBootstrap]
 * in a temporary directory. After the README's build: `java -cp samples/target/braid.jar braid.mpi.bench.MpiWindowCpu
 * [SIZES] [ITERS]` (sizes up to 8 KiB, comma-separated; 1,64,1024 and 4000 by default).
 */
public object MpiWindowCpu {
    private const val WINDOW = 64

    @JvmStatic
    public fun main(args: Array<String>) {
        val sizes =
            args.getOrNull(0)?.split(',')?.map { it.trim().toInt() }?.filter { it <= 8192 } ?: listOf(1, 64, 1024)
        val iters = args.getOrNull(1)?.toInt() ?: 4000
        val dir = Files.createTempDirectory("braid-window-cpu").toFile()
        // Each rank's init waits in the bootstrap's fence for the other's: two threads.
        val opened =
            List(2) { r ->
                CompletableFuture.supplyAsync {
                    Mpi.init(FileBootstrap(dir, r, 2), ThreadLevel.SINGLE, MpiOptions().provider("shm"))
                }
            }
        val mpis = opened.map { it.join() }
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        val me = Thread.currentThread().id
        try {
            val w0 = mpis[0].world
            val w1 = mpis[1].world
            val bufs = Array(WINDOW) { ByteBuffer.allocateDirect(8192) }
            val rbufs = Array(WINDOW) { ByteBuffer.allocateDirect(8192) }
            val sends = arrayOfNulls<Request>(WINDOW)
            val recvs = arrayOfNulls<Request>(WINDOW)
            fun windows(size: Int, n: Int) {
                for (i in 0 until n) {
                    for (k in 0 until WINDOW) recvs[k] = w1.irecv(rbufs[k], size, Datatype.BYTE, 0, 2)
                    for (k in 0 until WINDOW) sends[k] = w0.isend(bufs[k], size, Datatype.BYTE, 1, 2)
                    // The sends first: a window up to 8 KiB fits the 4 MiB ring, so each completes on its post.
                    Request.waitAll(sends, null)
                    Request.waitAll(recvs, null)
                    Request.recycleAll(sends)
                    Request.recycleAll(recvs)
                }
            }
            for (size in sizes) {
                windows(size, iters * 3) // the JIT's warm-up
                var bestNs = Long.MAX_VALUE
                var bestBytes = Long.MAX_VALUE
                for (b in 0 until 5) {
                    val cpu0 = threads.currentThreadCpuTime
                    val mem0 = threads.getThreadAllocatedBytes(me)
                    windows(size, iters)
                    bestNs = minOf(bestNs, threads.currentThreadCpuTime - cpu0)
                    bestBytes = minOf(bestBytes, threads.getThreadAllocatedBytes(me) - mem0)
                }
                val msgs = iters.toDouble() * WINDOW
                println("cpu $size ${"%.1f".format(bestNs / msgs)} ${"%.2f".format(bestBytes / msgs)}")
            }
        } finally {
            // Closed together: each close says goodbye to the other rank.
            mpis.map { m -> CompletableFuture.runAsync { m.close() } }.forEach { it.join() }
            dir.deleteRecursively()
        }
    }
}
