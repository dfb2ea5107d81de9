package braid.mpi.ompi.example;

import java.nio.DoubleBuffer;
import java.nio.LongBuffer;
import mpi.*;

public class Counter {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();

        // A counter on rank 0 that every rank takes tickets from, under a shared lock.
        LongBuffer count = MPI.newLongBuffer(1), one = MPI.newLongBuffer(1).put(0, 1), ticket = MPI.newLongBuffer(1);
        Win counter = new Win(count, 8, 8, MPI.INFO_NULL, MPI.COMM_WORLD); // bytes, displacement unit
        counter.lock(MPI.LOCK_SHARED, 0, 0);
        counter.fetchAndOp(one, ticket, MPI.LONG, 0, 0, MPI.SUM); // the old value comes back
        counter.unlock(0);
        MPI.COMM_WORLD.barrier();
        if (rank == 0) System.out.println("counter " + count.get(0));
        counter.free();

        // Halo exchange: cells 1..4 between two ghost cells; each rank puts its edge cells into its
        // neighbours' ghosts. Displacements count doubles (the displacement unit is 8).
        int n = 4, left = (rank + size - 1) % size, right = (rank + 1) % size;
        DoubleBuffer cells = MPI.newDoubleBuffer(n + 2);
        for (int i = 1; i <= n; i++) cells.put(i, rank * 10 + i);
        Win halo = new Win(cells, (n + 2) * 8, 8, MPI.INFO_NULL, MPI.COMM_WORLD);
        halo.fence(MPI.MODE_NOPRECEDE);
        halo.put(MPI.slice(cells, 1), 1, MPI.DOUBLE, left, n + 1, 1, MPI.DOUBLE); // into left's right ghost
        halo.put(MPI.slice(cells, n), 1, MPI.DOUBLE, right, 0, 1, MPI.DOUBLE);    // into right's left ghost
        halo.fence(MPI.MODE_NOSUCCEED);
        System.out.println("rank " + rank + " of " + size + ": ticket " + ticket.get(0) + ", ghosts "
                + cells.get(0) + " " + cells.get(n + 1));
        halo.free();
        MPI.Finalize();
    }
}
