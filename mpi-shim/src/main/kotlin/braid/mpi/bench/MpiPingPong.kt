package braid.mpi.bench

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import braid.mpi.Request
import braid.mpi.Status
import java.io.File
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The OSU-style loops bench/mpi-vs-mpich.sh runs against MPICH's C (bench/mpi-pingpong.c, the same loops, plus a JIT
 * warm-up before the latency rows that the C needs none of): `MpiPingPong DIR RANK` for two ranks. Latency: half the
 * round trip of a send/recv pingpong, 0 B to 1 MiB. Bandwidth: rank 0 posts a window of 64 isends, rank 1 64 irecvs,
 * then a 4-byte ack; MB/s = bytes × 64 × iterations / time, after 1,000 windows of warm-up up to 16 KiB (20 above) and
 * then more until neither rank's JIT compiled anything for 250 ms. Message rate (`osu_mbw_mr`'s shape, one pair): the
 * same windows from 1 B to 8 KiB, in messages/s. Rank 0 prints `lat SIZE USEC`, `bw SIZE MBPS` and `mr SIZE MSGS_PER_S`
 * lines. The loops use the allocation-free forms (a reused status, as C passes MPI_STATUS_IGNORE; waitAll into no
 * statuses, then the requests recycled). Optional third and fourth arguments pick the part (`lat`, `bw`, `mr` or `all`)
 * and the sizes (comma-separated), for profiling one row: `MpiPingPong DIR RANK bw 64,1048576`.
 */
public object MpiPingPong {
    private const val WINDOW = 64

    @JvmStatic
    public fun main(args: Array<String>) {
        // The provider is MpiOptions' own: BRAID_MPI_PROVIDER through the settings registry, else auto (shm on one
        // host).
        Mpi.init(FileBootstrap(File(args[0]), args[1].toInt(), 2), options = MpiOptions()).use { mpi ->
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
            fun roundTrips(size: Int, n: Int) {
                for (i in 0 until n) roundTrip(size)
            }
            // The JIT's warm-up before the first row: 1,000,000 round trips of 0 B to 32 KiB with a
            // barrier every 25,000, the shapes the rows run. With only each row's own warm-up the
            // first rows measured C2 recompiling the progress loop after the row's barrier (on 2
            // cores the compiler threads share the cores with two spinning ranks): 0-16 B read 1-6 µs.
            // 32 KiB is past the inject size: the first send completed through the completion queue
            // otherwise came inside a row (the 8 KiB one while the inject size was 4 KiB: 4.6 µs
            // against 1.3 µs for MPICH), and its new receiver of the completion recompiled the loop.
            if (sizes.isNotEmpty())
                for (j in 0 until 40) {
                    val warmSize = intArrayOf(0, 8, 64, 1024, 32768)[j % 5]
                    roundTrips(warmSize, 25_000)
                    w.barrier()
                }
            for (size in sizes) {
                val iters = if (size <= 8192) 20_000 else if (size <= 131072) 2_000 else 500
                // Warm-up and timed round trips as two calls of one loop: an `i == warm` test inside it, never taken
                // while the JIT compiled the loop, would throw the compiled loop away when the timing starts.
                roundTrips(size, iters / 10)
                w.barrier()
                val t0 = Mpi.wtime()
                roundTrips(size, iters)
                val t = Mpi.wtime() - t0
                if (w.rank == 0) println("lat $size ${"%.2f".format(t * 1e6 / (2 * iters))}")
            }
            val ack = ByteBuffer.allocate(4)
            val bufs = Array(WINDOW) { ByteBuffer.allocateDirect(1 shl 20) }
            val reqs = arrayOfNulls<Request>(WINDOW)
            /**
             * [n] windows of [size] bytes: rank 0 posts 64 isends, rank 1 64 irecvs, both wait for all of them, then
             * rank 1 acknowledges with 4 bytes.
             */
            fun windowLoop(size: Int, n: Int) {
                for (i in 0 until n) {
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
            }
            val jit = ManagementFactory.getCompilationMXBean()
            val busy = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder())
            val busyAny = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder())
            /**
             * More windows of [size] bytes, 100 at a time, until neither rank's JIT compiled anything during the last
             * 250 ms of them (at most 20 s). A fixed warm-up of 1,000 windows (20–60 ms) ends long before C2 has
             * compiled the window loop on the cores both ranks spin on (JFR jdk.Compilation: seconds of compile time in
             * the first row, almost none after), so the first row's timed windows ran beside those compilations.
             */
            fun warmUntilCompiled(size: Int) {
                val start = System.nanoTime()
                var quietSince = start
                var compiled = jit.totalCompilationTime
                while (true) {
                    windowLoop(size, 100)
                    val now = System.nanoTime()
                    val total = jit.totalCompilationTime
                    if (total != compiled) {
                        compiled = total
                        quietSince = now
                    }
                    // Both ranks run the same windows: they agree on going on (MAX of "still warming").
                    busy.putInt(0, if (now - quietSince < 250_000_000L && now - start < 20_000_000_000L) 1 else 0)
                    w.allreduce(busy, busyAny, 1, Datatype.INT, Op.MAX)
                    if (busyAny.getInt(0) == 0) return
                }
            }
            /** [iters] timed windows of [size] bytes after [warm] untimed; returns the seconds of the timed ones. */
            fun windows(size: Int, iters: Int, warm: Int): Double {
                // The warm-up and the timed windows are two calls of one loop with no branch between them: a
                // `warm == i` test inside it, never taken while the JIT compiled the loop, threw the compiled loop
                // away at the first timed window of the first row (JFR: jdk.Deoptimization, unstable_if).
                windowLoop(size, warm)
                warmUntilCompiled(size)
                w.barrier()
                val t0 = Mpi.wtime()
                windowLoop(size, iters)
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
