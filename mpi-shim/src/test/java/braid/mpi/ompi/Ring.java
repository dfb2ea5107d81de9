package braid.mpi.ompi;

import mpi.MPI;
import mpi.MPIException;
import mpi.Status;

/** Open MPI's examples/Ring.java, as its users write it: a counter passed around the ring, decremented at rank 0. */
public class Ring {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int size = MPI.COMM_WORLD.getSize();
        int rank = MPI.COMM_WORLD.getRank();
        int tag = 201;
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        int[] message = new int[1];
        if (rank == 0) {
            message[0] = 10;
            System.out.println("Process 0 sending " + message[0] + " to rank " + next + " (" + size + " processes in ring)");
            MPI.COMM_WORLD.send(message, 1, MPI.INT, next, tag);
        }
        while (true) {
            Status s = MPI.COMM_WORLD.recv(message, 1, MPI.INT, prev, tag);
            if (s.getSource() != prev) throw new AssertionError("message from " + s.getSource() + ", not " + prev);
            if (rank == 0) {
                message[0]--;
                System.out.println("Process 0 decremented value: " + message[0]);
            }
            MPI.COMM_WORLD.send(message, 1, MPI.INT, next, tag);
            if (message[0] == 0) {
                System.out.println("Process " + rank + " exiting");
                break;
            }
        }
        if (rank == 0) MPI.COMM_WORLD.recv(message, 1, MPI.INT, prev, tag);
        MPI.Finalize();
    }
}
