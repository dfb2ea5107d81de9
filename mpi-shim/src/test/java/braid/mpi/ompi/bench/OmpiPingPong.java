package braid.mpi.ompi.bench;

import java.nio.ByteBuffer;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;

/**
 * bench/mpi-vs-mpich.sh's loops (braid.mpi.bench.MpiPingPong, bench/mpi-pingpong.c) written against package mpi, as
 * an Open MPI Java program is written, for 2 ranks under a launcher: {@code mpiexec.mpich -n 2 java … OmpiPingPong
 * [direct|array] [bw]}. Latency: half the round trip of send/recv, 0 B to 1 MiB, after the same JIT warm-up. Bandwidth: a
 * window of 64 iSends against 64 iRecvs and a 4-byte ack. Rank 0 prints {@code lat SIZE USEC} and {@code bw SIZE
 * MBPS} lines. {@code direct} (the default) passes direct buffers, as nonblocking calls need; {@code array} runs the
 * latency loop with {@code byte[]}s (the facade copies them through a staging buffer).
 */
public final class OmpiPingPong {
    private static final int WINDOW = 64;

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        boolean arrays = args.length > 0 && args[0].equals("array");
        boolean bwOnly = args.length > 1 && args[1].equals("bw");
        int rank = MPI.COMM_WORLD.getRank(), peer = 1 - rank;
        ByteBuffer buf = MPI.newByteBuffer(1 << 20);
        byte[] arr = new byte[1 << 20];
        Object b = arrays ? arr : buf;
        int[] warmSizes = {0, 8, 64, 1024};
        for (int j = 0; j < (bwOnly ? 0 : 40); j++) {
            for (int i = 0; i < 25_000; i++) roundTrip(b, warmSizes[j % 4], rank, peer);
            MPI.COMM_WORLD.barrier();
        }
        int[] sizes = new int[bwOnly ? 0 : 22];
        for (int i = 1; i < sizes.length; i++) sizes[i] = 1 << (i - 1);
        for (int size : sizes) {
            int iters = size <= 8192 ? 20_000 : size <= 131072 ? 2_000 : 500, warm = iters / 10;
            double t0 = 0;
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm) {
                    MPI.COMM_WORLD.barrier();
                    t0 = MPI.wtime();
                }
                roundTrip(b, size, rank, peer);
            }
            double t = MPI.wtime() - t0;
            if (rank == 0) System.out.printf("lat %d %.2f%n", size, t * 1e6 / (2 * iters));
        }
        ByteBuffer[] bufs = new ByteBuffer[WINDOW];
        for (int k = 0; k < WINDOW; k++) bufs[k] = MPI.newByteBuffer(1 << 20);
        Request[] reqs = new Request[WINDOW];
        int[] ack = new int[1];
        for (int size : new int[] {1, 64, 1024, 4096, 16384, 65536, 262144, 1 << 20}) {
            int iters = size <= 16384 ? 2000 : 100, warm = size <= 16384 ? 1000 : 20;
            double t0 = 0;
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm) {
                    MPI.COMM_WORLD.barrier();
                    t0 = MPI.wtime();
                }
                if (rank == 0) {
                    for (int k = 0; k < WINDOW; k++) reqs[k] = MPI.COMM_WORLD.iSend(bufs[k], size, MPI.BYTE, peer, 2);
                    Request.waitAll(reqs);
                    MPI.COMM_WORLD.recv(ack, 1, MPI.INT, peer, 3);
                } else {
                    for (int k = 0; k < WINDOW; k++) reqs[k] = MPI.COMM_WORLD.iRecv(bufs[k], size, MPI.BYTE, peer, 2);
                    Request.waitAll(reqs);
                    MPI.COMM_WORLD.send(ack, 1, MPI.INT, peer, 3);
                }
            }
            double t = MPI.wtime() - t0;
            if (rank == 0) System.out.printf("bw %d %.1f%n", size, (double) size * WINDOW * iters / t / 1e6);
        }
        MPI.Finalize();
    }

    private static void roundTrip(Object b, int size, int rank, int peer) throws MPIException {
        if (rank == 0) {
            MPI.COMM_WORLD.send(b, size, MPI.BYTE, peer, 1);
            MPI.COMM_WORLD.recv(b, size, MPI.BYTE, peer, 1);
        } else {
            MPI.COMM_WORLD.recv(b, size, MPI.BYTE, peer, 1);
            MPI.COMM_WORLD.send(b, size, MPI.BYTE, peer, 1);
        }
    }
}
