package braid.mpi.bench

import braid.bench.SegmentDevice
import braid.bootstrap.FileBootstrap
import braid.core.HmemOp
import braid.core.MrAccess
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import java.io.File
import java.nio.ByteBuffer

/**
 * braid.mpi on device memory against host memory, two ranks (`MpiHmemBench DIR RANK [ROUNDS]`, as bench/hmem-bench.sh
 * `mpi` starts them): each rank's device is a [SegmentDevice] reached only through the copy functions it sets with
 * [Mpi.setOp]. Rank 0 prints `pingpong SIZE host|device USEC` (half a send/recv round trip), `stream 64MiB host|device
 * MBPS` (rank 0 sends, rank 1 receives, then an ack) and `allreduce SIZE host|device USEC`, where device means both
 * sides in device memory through the region forms ([braid.mpi.CommRegions]).
 */
public object MpiHmemBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val rounds = args.getOrNull(2)?.toInt() ?: 2000
        Mpi.init(FileBootstrap(File(args[0]), args[1].toInt(), 2), options = MpiOptions()).use { mpi ->
            val w = mpi.world
            val peer = 1 - w.rank
            val big = 64 shl 20
            val dev = SegmentDevice(2 * big + 4096, "mpi-bench-device")
            val copies = dev.copies()
            check(mpi.setOp(HmemOp.COPY_TO_HMEM_IOV, copies.toHmem) == 0) { "the rail refused the override" }
            check(mpi.setOp(HmemOp.COPY_FROM_HMEM_IOV, copies.fromHmem) == 0) { "the rail refused the override" }
            val access = MrAccess.SEND or MrAccess.RECV
            val dA = mpi.registerMemory(dev.iface, 0, dev.alloc(big), big, access)
            val dB = mpi.registerMemory(dev.iface, 0, dev.alloc(big), big, access)
            val hA = ByteBuffer.allocateDirect(big)
            val hB = ByteBuffer.allocateDirect(big)
            val ack = ByteBuffer.allocate(4)

            fun pingpong(size: Int, device: Boolean, n: Int) {
                for (i in 0 until n) {
                    if (w.rank == 0) {
                        if (device) w.send(dA, 0, size, Datatype.BYTE, peer, 1)
                        else w.send(hA, size, Datatype.BYTE, peer, 1)
                        if (device) w.recv(dB, 0, size, Datatype.BYTE, peer, 1)
                        else w.recv(hB, size, Datatype.BYTE, peer, 1)
                    } else {
                        if (device) w.recv(dB, 0, size, Datatype.BYTE, peer, 1)
                        else w.recv(hB, size, Datatype.BYTE, peer, 1)
                        if (device) w.send(dA, 0, size, Datatype.BYTE, peer, 1)
                        else w.send(hA, size, Datatype.BYTE, peer, 1)
                    }
                }
            }

            fun stream(device: Boolean, n: Int) {
                for (i in 0 until n) {
                    if (w.rank == 0) {
                        if (device) w.send(dA, 0, big, Datatype.BYTE, peer, 2)
                        else w.send(hA, big, Datatype.BYTE, peer, 2)
                        w.recv(ack, 1, Datatype.INT, peer, 3)
                    } else {
                        if (device) w.recv(dB, 0, big, Datatype.BYTE, peer, 2)
                        else w.recv(hB, big, Datatype.BYTE, peer, 2)
                        w.send(ack, 1, Datatype.INT, peer, 3)
                    }
                }
            }

            fun allreduce(size: Int, device: Boolean, n: Int) {
                val count = size / 8
                val send = hA.slice(0, size).order(java.nio.ByteOrder.nativeOrder())
                val recv = hB.slice(0, size).order(java.nio.ByteOrder.nativeOrder())
                for (i in 0 until n) {
                    if (device) w.allreduce(dA, 0, dB, 0, count, Datatype.DOUBLE, Op.SUM)
                    else w.allreduce(send, recv, count, Datatype.DOUBLE, Op.SUM)
                }
            }

            fun timed(label: String, scale: (Double) -> String, body: (Int) -> Unit, n: Int) {
                body(maxOf(1, n / 10))
                w.barrier()
                val t0 = Mpi.wtime()
                body(n)
                val t = Mpi.wtime() - t0
                if (w.rank == 0) println("$label ${scale(t)}")
            }

            for (size in intArrayOf(64, 1 shl 20)) {
                val n = if (size <= 4096) rounds else maxOf(10, rounds / 20)
                for (device in listOf(false, true)) {
                    val kind = if (device) "device" else "host"
                    timed(
                        "pingpong $size $kind",
                        { "%.2f".format(it * 1e6 / (2 * n)) },
                        { pingpong(size, device, it) },
                        n,
                    )
                }
            }
            val s = maxOf(3, rounds / 400)
            for (device in listOf(false, true)) {
                val kind = if (device) "device" else "host"
                timed("stream 64MiB $kind", { "%.0f".format(big.toDouble() * s / it / 1e6) }, { stream(device, it) }, s)
            }
            for (size in intArrayOf(64, 1 shl 20)) {
                val n = if (size <= 4096) rounds else maxOf(10, rounds / 20)
                for (device in listOf(false, true)) {
                    val kind = if (device) "device" else "host"
                    timed("allreduce $size $kind", { "%.2f".format(it * 1e6 / n) }, { allreduce(size, device, it) }, n)
                }
            }
            if (w.rank == 0) println("copies on rank 0: $copies")
            dA.close()
            dB.close()
        }
    }
}
