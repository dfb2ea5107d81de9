package braid.mpi.bench

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Request
import braid.mpi.Status
import java.io.File
import java.nio.ByteBuffer

/**
 * The OSU-style loops bench/mpi-vs-mpich.sh runs against MPICH's C (bench/mpi-pingpong.c, the same loops, plus a JIT
 * warm-up before the latency rows that the C needs none of): `MpiPingPong DIR RANK` for two ranks. Latency: half the
 * round trip of a send/recv pingpong, 0 B to 1 MiB. Bandwidth: rank 0 posts a window of 64 isends, rank 1 64 irecvs,
 * then a 4-byte ack; MB/s = bytes × 64 × iterations / time, after 1,000 windows of warm-up up to 16 KiB (20 above).
 * Message rate (`osu_mbw_mr`'s shape, one pair): the same windows from 1 B to 8 KiB, in messages/s. Rank 0 prints `lat
 * SIZE USEC`, `bw SIZE MBPS` and `mr SIZE MSGS_PER_S` lines. The loops use the allocation-free forms (a reused status,
 * as C passes MPI_STATUS_IGNORE; waitAll into no statuses, then the requests recycled). Optional third and fourth
 * arguments pick the part (`lat`, `bw`, `mr` or `all`) and the sizes (comma-separated), for profiling one row:
 * `MpiPingPong DIR RANK bw 64,1048576`.
 */
public object MpiPingPong {
    private const val WINDOW = 64

    @JvmStatic
    public fun main(args: Array<String>) {
        val provider = System.getenv("BRAID_MPI_PROVIDER") ?: "shm"
        Mpi.init(FileBootstrap(File(args[0]), args[1].toInt(), 2), options = MpiOptions().provider(provider)).use { mpi
            ->
            val w = mpi.world
            val peer = 1 - w.rank
            val buf = ByteBuffer.allocateDirect(1 shl 20)
            val part = args.getOrElse(2) { "all" }
            val only = args.getOrNull(3)?.split(',')?.map { it.trim().toInt() }
            val sizes =
                if (part == "bw" || part == "mr") emptyList() else only ?: (listOf(0) + (0..20).map { 1 shl it })
            val st = Status()
            /** One ping-pong of [size] bytes: rank 0 sends first. */
            fun roundTrip(size: Int) {
                if (w.rank == 0) {
                    w.send(buf, size, Datatype.BYTE, peer, 1)
                    w.recv(buf, size, Datatype.BYTE, peer, 1, st)
                } else {
                    w.recv(buf, size, Datatype.BYTE, peer, 1, st)
                    w.send(buf, size, Datatype.BYTE, peer, 1)
                }
            }
            // The JIT's warm-up before the first row: 1,000,000 round trips of 0 B to 1 KiB with a
            // barrier every 25,000, the shapes the rows run. With only each row's own warm-up the
            // first rows measured C2 recompiling the progress loop after the row's barrier (on 2
            // cores the compiler threads share the cores with two spinning ranks): 0-16 B read 1-6 µs.
            if (sizes.isNotEmpty())
                for (j in 0 until 40) {
                    val warmSize = intArrayOf(0, 8, 64, 1024)[j % 4]
                    for (i in 0 until 25_000) roundTrip(warmSize)
                    w.barrier()
                }
            for (size in sizes) {
                val iters = if (size <= 8192) 20_000 else if (size <= 131072) 2_000 else 500
                val warm = iters / 10
                var t0 = 0.0
                for (i in 0 until warm + iters) {
                    if (i == warm) {
                        w.barrier()
                        t0 = Mpi.wtime()
                    }
                    roundTrip(size)
                }
                val t = Mpi.wtime() - t0
                if (w.rank == 0) println("lat $size ${"%.2f".format(t * 1e6 / (2 * iters))}")
            }
            val ack = ByteBuffer.allocate(4)
            val bufs = Array(WINDOW) { ByteBuffer.allocateDirect(1 shl 20) }
            val reqs = arrayOfNulls<Request>(WINDOW)
            /**
             * [iters] timed windows of [size] bytes after [warm] untimed: rank 0 posts 64 isends, rank 1 64 irecvs,
             * both wait for all of them, then rank 1 acknowledges with 4 bytes. Returns the seconds of the timed ones.
             */
            fun windows(size: Int, iters: Int, warm: Int): Double {
                var t0 = 0.0
                for (i in 0 until warm + iters) {
                    if (i == warm) {
                        w.barrier()
                        t0 = Mpi.wtime()
                    }
                    if (w.rank == 0) {
                        for (k in 0 until WINDOW) reqs[k] = w.isend(bufs[k], size, Datatype.BYTE, peer, 2)
                        Request.waitAll(reqs, null)
                        Request.recycleAll(reqs)
                        w.recv(ack, 1, Datatype.INT, peer, 3, st)
                    } else {
                        for (k in 0 until WINDOW) reqs[k] = w.irecv(bufs[k], size, Datatype.BYTE, peer, 2)
                        Request.waitAll(reqs, null)
                        Request.recycleAll(reqs)
                        w.send(ack, 1, Datatype.INT, peer, 3)
                    }
                }
                return Mpi.wtime() - t0
            }
            val bwSizes =
                if (part != "bw" && part != "all") emptyList()
                else only ?: listOf(1, 64, 1024, 4096, 16384, 65536, 262144, 1 shl 20)
            for (size in bwSizes) {
                // Warm-up long enough for the JIT: the window loop's first windows run code that the
                // latency loop compiled for another shape, which is deoptimised and compiled again
                // (10 windows, as before, measured that recompilation rather than the transport).
                val iters = if (size <= 16384) 2000 else 100
                val t = windows(size, iters, if (size <= 16384) 1000 else 20)
                if (w.rank == 0) println("bw $size ${"%.1f".format(size.toDouble() * WINDOW * iters / t / 1e6)}")
            }
            // osu_mbw_mr's shape for the one pair two ranks make: the same windows, 1 B to 8 KiB, in messages/s.
            val mrSizes = if (part != "mr" && part != "all") emptyList() else only ?: (0..13).map { 1 shl it }
            for (size in mrSizes) {
                val iters = 2000
                val t = windows(size, iters, 1000)
                if (w.rank == 0) println("mr $size ${"%.0f".format(WINDOW.toDouble() * iters / t)}")
            }
        }
    }
}
