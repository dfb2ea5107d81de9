package braid.samples.mpi;

import mpi.MPI;
import mpi.MPIException;

/** A token passed around the ring of ranks, each adding its rank: point-to-point with Java arrays. */
public class Ring {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int[] token = new int[1];
        if (rank == 0) {
            MPI.COMM_WORLD.send(token, 1, MPI.INT, next, 0);
            MPI.COMM_WORLD.recv(token, 1, MPI.INT, prev, 0);
            System.out.println("ring of " + size + ": the token came back as " + token[0]);
        } else {
            MPI.COMM_WORLD.recv(token, 1, MPI.INT, prev, 0);
            token[0] += rank;
            MPI.COMM_WORLD.send(token, 1, MPI.INT, next, 0);
        }
        MPI.Finalize();
    }
}
