package braid.mpi.bench

import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Request
import braid.mpi.Status
import braid.mpi.testing.FileBootstrap
import java.io.File
import java.nio.ByteBuffer

/**
 * The OSU-style loops bench/mpi-vs-mpich.sh runs against MPICH's C (bench/mpi-pingpong.c, the
 * same loops): `MpiPingPong DIR RANK` for two ranks. Latency: half the round trip of a
 * send/recv pingpong, 0 B to 1 MiB. Bandwidth: rank 0 posts a window of 64 isends, rank 1 64
 * irecvs, then a 4-byte ack; MB/s = bytes × 64 × iterations / time. Rank 0 prints
 * `lat SIZE USEC` and `bw SIZE MBPS` lines. The loops use the allocation-free forms (a reused
 * status, as C passes MPI_STATUS_IGNORE; waitAll into no statuses, then the requests recycled).
 */
object MpiPingPong {
    private const val WINDOW = 64

    @JvmStatic
    fun main(args: Array<String>) {
        val provider = System.getenv("BRAID_MPI_PROVIDER") ?: "shm"
        Mpi.init(FileBootstrap(File(args[0]), args[1].toInt(), 2), options = MpiOptions().provider(provider)).use { mpi ->
            val w = mpi.world
            val peer = 1 - w.rank
            val buf = ByteBuffer.allocateDirect(1 shl 20)
            val sizes = listOf(0) + (0..20).map { 1 shl it }
            val st = Status()
            for (size in sizes) {
                val iters = if (size <= 8192) 20_000 else if (size <= 131072) 2_000 else 500
                val warm = iters / 10
                var t0 = 0.0
                for (i in 0 until warm + iters) {
                    if (i == warm) { w.barrier(); t0 = Mpi.wtime() }
                    if (w.rank == 0) {
                        w.send(buf, size, Datatype.BYTE, peer, 1); w.recv(buf, size, Datatype.BYTE, peer, 1, st)
                    } else {
                        w.recv(buf, size, Datatype.BYTE, peer, 1, st); w.send(buf, size, Datatype.BYTE, peer, 1)
                    }
                }
                val t = Mpi.wtime() - t0
                if (w.rank == 0) println("lat $size ${"%.2f".format(t * 1e6 / (2 * iters))}")
            }
            val ack = ByteBuffer.allocate(4)
            val bufs = Array(WINDOW) { ByteBuffer.allocateDirect(1 shl 20) }
            val reqs = arrayOfNulls<Request>(WINDOW)
            for (size in listOf(1, 64, 1024, 4096, 16384, 65536, 262144, 1 shl 20)) {
                val iters = if (size <= 16384) 500 else 50
                val warm = 10
                var t0 = 0.0
                for (i in 0 until warm + iters) {
                    if (i == warm) { w.barrier(); t0 = Mpi.wtime() }
                    if (w.rank == 0) {
                        for (k in 0 until WINDOW) reqs[k] = w.isend(bufs[k], size, Datatype.BYTE, peer, 2)
                        Request.waitAll(reqs, null); Request.recycleAll(reqs)
                        w.recv(ack, 1, Datatype.INT, peer, 3, st)
                    } else {
                        for (k in 0 until WINDOW) reqs[k] = w.irecv(bufs[k], size, Datatype.BYTE, peer, 2)
                        Request.waitAll(reqs, null); Request.recycleAll(reqs)
                        w.send(ack, 1, Datatype.INT, peer, 3)
                    }
                }
                val t = Mpi.wtime() - t0
                if (w.rank == 0) println("bw $size ${"%.1f".format(size.toDouble() * WINDOW * iters / t / 1e6)}")
            }
        }
    }
}
