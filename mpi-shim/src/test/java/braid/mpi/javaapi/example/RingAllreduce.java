package braid.mpi.javaapi.example;

import braid.mpi.Datatype;
import braid.mpi.Intracomm;
import braid.mpi.Mpi;
import braid.mpi.Op;
import braid.mpi.Status;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A ring, an allreduce and a derived datatype: run it under braid run, mpiexec or mpirun. */
public final class RingAllreduce {
    public static void main(String[] args) throws Exception {
        Mpi mpi = Mpi.init(args);                                   // the launcher's world
        Intracomm world = mpi.getWorld();
        int rank = world.getRank(), size = world.getSize();

        ByteBuffer token = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, rank);
        ByteBuffer got = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        Status s = world.sendRecv(token, 1, Datatype.INT, (rank + 1) % size, 0, got, 1, Datatype.INT, (rank + size - 1) % size, 0);

        ByteBuffer sum = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putDouble(0, rank + 1);
        world.allreduce(Mpi.IN_PLACE, sum, 1, Datatype.DOUBLE, Op.SUM);

        // Every other int of 8 (a strided vector), from rank 0 to everyone.
        Datatype everyOther = Datatype.vector(4, 1, 2, Datatype.INT).commit();
        ByteBuffer row = ByteBuffer.allocate(32).order(ByteOrder.nativeOrder());
        if (rank == 0) for (int i = 0; i < 8; i++) row.putInt(i * 4, i);
        world.bcast(row, 1, everyOther, 0);

        System.out.println("rank " + rank + " of " + size + ": got " + got.getInt(0) + " from " + s.getSource()
            + ", sum " + sum.getDouble(0) + ", strided " + row.getInt(8) + " " + row.getInt(12));
        mpi.finalizeMpi();
    }
}
