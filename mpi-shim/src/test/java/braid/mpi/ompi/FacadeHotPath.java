package braid.mpi.ompi;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.Status;

/**
 * What the {@code mpi} package allocates per message once warm, for 2 ranks under a launcher ({@code
 * OmpiHotPathAllocationTest} runs it under {@code braid run}): a ping-pong through blocking {@code send}/{@code recv}
 * with {@code byte[]}, {@code int[]} and direct buffers, and through {@code iSend}/{@code iRecv} + {@code waitFor}, at
 * 64 B, 64 KiB (the eager limit) and 256 KiB (rendezvous). Each mode runs warm-up rounds, then three counted windows
 * with the JVM's per-thread allocation counter (bytes, not time); the least window is reported as {@code alloc MODE
 * SIZE BYTES_PER_ROUND} by each rank. Every round checks the data and the status, so a ping-pong that moved nothing
 * fails.
 */
public final class FacadeHotPath {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private interface Round {
        void run(int i) throws MPIException;
    }

    private static int rank, peer;

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        rank = MPI.COMM_WORLD.getRank();
        peer = 1 - rank;
        int[][] sizes = {{64, 10_000}, {65_536, 1_000}, {256 * 1024, 300}};
        for (int[] sn : sizes) {
            int size = sn[0], n = sn[1];
            byte[] outArr = new byte[size], inArr = new byte[size];
            int[] outInts = new int[size / 4], inInts = new int[size / 4];
            ByteBuffer out = MPI.newByteBuffer(size), in = MPI.newByteBuffer(size);
            report("blocking-byte[]", size, n, i -> {
                outArr[0] = (byte) i;
                Status st = pingPong(outArr, inArr, size, i);
                check(inArr[0] == (byte) i && st.getCount(MPI.BYTE) == size, i, st);
            });
            report("blocking-int[]", size, n, i -> {
                outInts[size / 4 - 1] = i;
                Status st = pingPongInts(outInts, inInts, size / 4, i);
                check(inInts[size / 4 - 1] == i && st.getCount(MPI.INT) == size / 4, i, st);
            });
            report("blocking-direct", size, n, i -> {
                out.putInt(0, i);
                Status st = pingPong(out, in, size, i);
                check(in.getInt(0) == i && st.getCount(MPI.BYTE) == size, i, st);
            });
            report("nonblocking-direct", size, n, i -> {
                out.putInt(0, i);
                Request r = MPI.COMM_WORLD.iRecv(in, size, MPI.BYTE, peer, 1);
                if (rank == 1) r.waitFor();
                Request s = MPI.COMM_WORLD.iSend(out, size, MPI.BYTE, peer, 1);
                s.waitFor();
                if (rank == 0) r.waitFor();
                check(in.getInt(0) == i && r.isNull() && s.isNull(), i, null);
            });
        }
        MPI.COMM_WORLD.barrier();
        MPI.Finalize();
    }

    private static Status pingPong(Object out, Object in, int size, int i) throws MPIException {
        if (rank == 0) {
            MPI.COMM_WORLD.send(out, size, MPI.BYTE, peer, 1);
            return MPI.COMM_WORLD.recv(in, size, MPI.BYTE, peer, 1);
        }
        Status st = MPI.COMM_WORLD.recv(in, size, MPI.BYTE, peer, 1);
        MPI.COMM_WORLD.send(out, size, MPI.BYTE, peer, 1);
        return st;
    }

    private static Status pingPongInts(int[] out, int[] in, int count, int i) throws MPIException {
        if (rank == 0) {
            MPI.COMM_WORLD.send(out, count, MPI.INT, peer, 1);
            return MPI.COMM_WORLD.recv(in, count, MPI.INT, peer, 1);
        }
        Status st = MPI.COMM_WORLD.recv(in, count, MPI.INT, peer, 1);
        MPI.COMM_WORLD.send(out, count, MPI.INT, peer, 1);
        return st;
    }

    private static void check(boolean ok, int i, Status st) {
        if (!ok) throw new IllegalStateException("round " + i + ": wrong data or status " + st);
        if (st != null && (st.getSource() != peer || st.getTag() != 1))
            throw new IllegalStateException("round " + i + ": status " + st);
    }

    /** [n] warm-up rounds, then three counted windows of [n]; prints the least window's bytes per round. */
    private static void report(String mode, int size, int n, Round round) throws MPIException {
        for (int i = 0; i < n; i++) round.run(i);
        long least = Long.MAX_VALUE;
        long tid = Thread.currentThread().getId();
        for (int w = 1; w <= 3; w++) {
            MPI.COMM_WORLD.barrier();
            long before = THREADS.getThreadAllocatedBytes(tid);
            for (int i = 0; i < n; i++) round.run(w * n + i);
            least = Math.min(least, THREADS.getThreadAllocatedBytes(tid) - before);
        }
        System.out.printf("alloc %s %d %.1f rank %d%n", mode, size, (double) least / n, rank);
    }
}
