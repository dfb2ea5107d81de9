package braid.mpi.ompi.example;

import java.nio.IntBuffer;
import mpi.*;

public class Ring {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args); // every other call before it throws MPIException
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int[] got = new int[1]; // blocking calls take Java arrays
        MPI.COMM_WORLD.sendRecv(new int[] {rank}, 1, MPI.INT, next, 0, got, 1, MPI.INT, prev, 0);
        IntBuffer in = MPI.newIntBuffer(4), out = MPI.newIntBuffer(2); // direct: for nonblocking calls
        out.put(0, 10 * rank).put(1, -rank);
        Request r = MPI.COMM_WORLD.iRecv(MPI.slice(in, 2), 2, MPI.INT, prev, 1); // into in[2], in[3]
        Request s = MPI.COMM_WORLD.iSend(out, 2, MPI.INT, next, 1);
        Request.waitAll(new Request[] {r, s});
        int[] sum = new int[1];
        MPI.COMM_WORLD.allReduce(got, sum, 1, MPI.INT, MPI.SUM);
        System.out.println("rank " + rank + " of " + size + ": got " + got[0] + " and " + in.get(2) + ", sum " + sum[0]);
        MPI.Finalize();
    }
}
