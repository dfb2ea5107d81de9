package braid.mpi.javaapi.example;

import braid.mpi.Datatype;
import braid.mpi.Intracomm;
import braid.mpi.Mpi;
import braid.mpi.Op;
import braid.mpi.Window;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A distributed counter (fetchAndOp) and a halo exchange (put + fence): run it under braid run, mpiexec or mpirun. */
public final class OneSided {
    public static void main(String[] args) throws Exception {
        Mpi mpi = Mpi.init(args);
        Intracomm world = mpi.getWorld();
        int rank = world.getRank(), size = world.getSize();

        // A counter on rank 0 that every rank takes tickets from: no rank waits for another.
        Window counter = Window.allocate(8, 8, world);
        ByteBuffer one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1);
        ByteBuffer ticket = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        StringBuilder tickets = new StringBuilder();
        counter.lockAll(0);
        for (int i = 0; i < 3; i++) {
            counter.fetchAndOp(one, ticket, Datatype.LONG, 0, 0, Op.SUM);   // the old value comes back
            counter.flush(0);
            tickets.append(' ').append(ticket.getLong(0));
        }
        counter.unlockAll();
        world.barrier();
        if (rank == 0) System.out.println("counter " + counter.getBase().getLong(0));
        counter.free();

        // Halo exchange: 4 cells per rank between two ghost cells; each rank puts its edge cells
        // into its neighbours' ghosts. Displacements count doubles (the displacement unit is 8).
        int n = 4, left = (rank + size - 1) % size, right = (rank + 1) % size;
        Window halo = Window.allocate((n + 2) * 8, 8, world);
        ByteBuffer cells = halo.getBase();
        for (int i = 1; i <= n; i++) cells.putDouble(i * 8, rank * 10 + i);
        ByteBuffer first = cells.duplicate().position(8).slice(), last = cells.duplicate().position(n * 8).slice();
        halo.fence(Window.MODE_NOPRECEDE);
        halo.put(first, 1, Datatype.DOUBLE, left, n + 1, 1, Datatype.DOUBLE);   // into left's right ghost
        halo.put(last, 1, Datatype.DOUBLE, right, 0, 1, Datatype.DOUBLE);       // into right's left ghost
        halo.fence(Window.MODE_NOSUCCEED);
        System.out.println("rank " + rank + " of " + size + ": tickets" + tickets + ", ghosts "
            + cells.getDouble(0) + " " + cells.getDouble((n + 1) * 8));
        halo.free();
        mpi.finalizeMpi();
    }
}
