package braid.mpi.bench

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import braid.mpi.Window
import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The one-sided loops bench/rma-vs-mpich.sh runs against MPICH's C (bench/mpi-rma.c, the same loops in the shapes of
 * osu_put_latency, osu_get_latency, osu_put_bw, osu_acc_latency and osu_fop_latency): `MpiRmaBench DIR RANK` for two
 * ranks. Rank 0 holds a shared lock on rank 1's window and times put, get and accumulate (MPI_INT SUM) of 8 B to 1 MiB,
 * each followed by a flush; a window of 64 puts then one flush (bandwidth); and fetchAndOp (one long, SUM) + flush.
 * Rank 1 waits in a barrier meanwhile. Rank 0 prints `put SIZE USEC`, `get SIZE USEC`, `acc SIZE USEC`, `putbw SIZE
 * MBPS` and `fop 8 USEC` lines. Each row has the C's warm-up; the whole run is first done once unrecorded for the JIT.
 * A third argument N divides every row's iterations by N (a quick look).
 */
public object MpiRmaBench {
    private const val MAX = 1 shl 20
    private const val WINDOW = 64

    @JvmStatic
    public fun main(args: Array<String>) {
        val provider = System.getenv("BRAID_MPI_PROVIDER") ?: "shm"
        Mpi.init(FileBootstrap(File(args[0]), args[1].toInt(), 2), options = MpiOptions().provider(provider)).use { mpi
            ->
            val w = mpi.world
            val win = Window.allocate(MAX.toLong(), 1, w)
            val buf = ByteBuffer.allocateDirect(MAX).order(ByteOrder.nativeOrder())
            for (i in 0 until MAX) buf.put(i, 1)
            val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
            val old = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder())

            fun iters(size: Int) = if (size <= 8192) 10_000 else if (size <= 131072) 1_000 else 200

            fun latency(kind: String, size: Int, report: Boolean, scale: Int) {
                val iters = maxOf(1, iters(size) / scale)
                val warm = iters / 10
                w.barrier()
                if (w.rank == 0) {
                    win.lock(Window.LOCK_SHARED, 1, 0)
                    var t0 = 0L
                    for (i in 0 until warm + iters) {
                        if (i == warm) t0 = System.nanoTime()
                        when (kind) {
                            "put" -> win.put(buf, size, Datatype.BYTE, 1, 0, size, Datatype.BYTE)
                            "get" -> win.get(buf, size, Datatype.BYTE, 1, 0, size, Datatype.BYTE)
                            "acc" -> win.accumulate(buf, size / 4, Datatype.INT, 1, 0, size / 4, Datatype.INT, Op.SUM)
                            else -> win.fetchAndOp(one, old, Datatype.LONG, 1, 0, Op.SUM)
                        }
                        win.flush(1)
                    }
                    val t = System.nanoTime() - t0
                    win.unlock(1)
                    if (report) println("$kind $size ${"%.2f".format(t / 1e3 / iters)}")
                }
                w.barrier()
            }

            fun bandwidth(size: Int, report: Boolean, scale: Int) {
                val iters = maxOf(1, (if (size <= 16384) 1000 else 50) / scale)
                val warm = iters / 10
                w.barrier()
                if (w.rank == 0) {
                    win.lock(Window.LOCK_SHARED, 1, 0)
                    var t0 = 0L
                    for (i in 0 until warm + iters) {
                        if (i == warm) t0 = System.nanoTime()
                        repeat(WINDOW) { win.put(buf, size, Datatype.BYTE, 1, 0, size, Datatype.BYTE) }
                        win.flush(1)
                    }
                    val t = System.nanoTime() - t0
                    win.unlock(1)
                    if (report)
                        println("putbw $size ${"%.2f".format(size.toDouble() * WINDOW * iters / (t / 1e9) / 1e6)}")
                }
                w.barrier()
            }

            val sizes = generateSequence(8) { it * 2 }.takeWhile { it <= MAX }.toList()
            // A first pass unrecorded (a tenth of the iterations), for the JIT; then the measured one. An optional
            // third
            // argument divides every row's iterations, for a quick look: `MpiRmaBench DIR RANK 100`.
            val divide = args.getOrNull(2)?.toInt() ?: 1
            // A fourth picks the rows: `MpiRmaBench DIR RANK 10 acc,fop`.
            val kinds = args.getOrNull(3)?.split(',') ?: listOf("put", "get", "acc", "putbw", "fop")
            for ((report, scale) in listOf(false to 10 * divide, true to divide)) {
                for (kind in listOf("put", "get", "acc")) if (kind in kinds)
                    for (s in sizes) latency(kind, s, report, scale)
                if ("putbw" in kinds) for (s in sizes) bandwidth(s, report, scale)
                if ("fop" in kinds) latency("fop", 8, report, scale)
            }
            win.free()
        }
    }
}
