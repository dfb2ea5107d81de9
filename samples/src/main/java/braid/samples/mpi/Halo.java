package braid.samples.mpi;

import java.nio.DoubleBuffer;
import mpi.CartComm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;
import mpi.ShiftParms;

/**
 * A halo exchange on a periodic 2-D Cartesian grid of ranks: each rank owns an N×N block of a field with a
 * one-cell halo, and swaps its edge rows and columns with its four neighbours (nonblocking, direct buffers), then
 * checks that every halo cell holds what the neighbour owns. Columns travel as a vector datatype.
 */
public class Halo {
    static final int N = 6, W = N + 2; // interior and width with the halo

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int size = MPI.COMM_WORLD.getSize();
        int[] dims = new int[2];
        CartComm.createDims(size, dims);
        CartComm grid = MPI.COMM_WORLD.createCart(dims, new boolean[] {true, true}, false);
        int rank = grid.getRank();
        DoubleBuffer field = MPI.newDoubleBuffer(W * W);
        for (int i = 1; i <= N; i++) for (int j = 1; j <= N; j++) field.put(i * W + j, rank * 1000 + i * 10 + j);

        mpi.Datatype column = mpi.Datatype.createVector(N, 1, W, MPI.DOUBLE);
        column.commit();
        ShiftParms ud = grid.shift(0, 1), lr = grid.shift(1, 1);
        Request[] r = {
            // rows: my first interior row goes up, the row from below lands in my bottom halo; and back
            grid.iRecv(MPI.slice(field, (N + 1) * W + 1), N, MPI.DOUBLE, ud.getRankDest(), 0),
            grid.iRecv(MPI.slice(field, 1), N, MPI.DOUBLE, ud.getRankSource(), 1),
            grid.iSend(MPI.slice(field, W + 1), N, MPI.DOUBLE, ud.getRankSource(), 0),
            grid.iSend(MPI.slice(field, N * W + 1), N, MPI.DOUBLE, ud.getRankDest(), 1),
            // columns, as one vector each
            grid.iRecv(MPI.slice(field, W + N + 1), 1, column, lr.getRankDest(), 2),
            grid.iRecv(MPI.slice(field, W), 1, column, lr.getRankSource(), 3),
            grid.iSend(MPI.slice(field, W + 1), 1, column, lr.getRankSource(), 2),
            grid.iSend(MPI.slice(field, W + N), 1, column, lr.getRankDest(), 3),
        };
        Request.waitAll(r);

        int bad = 0;
        for (int k = 1; k <= N; k++) {
            bad += field.get(k) == ud.getRankSource() * 1000 + N * 10 + k ? 0 : 1; // top halo: row N above
            bad += field.get((N + 1) * W + k) == ud.getRankDest() * 1000 + 10 + k ? 0 : 1;
            bad += field.get(k * W) == lr.getRankSource() * 1000 + k * 10 + N ? 0 : 1;
            bad += field.get(k * W + N + 1) == lr.getRankDest() * 1000 + k * 10 + 1 ? 0 : 1;
        }
        int[] total = new int[1];
        grid.allReduce(new int[] {bad}, total, 1, MPI.INT, MPI.SUM);
        if (rank == 0)
            System.out.println("halo exchange on a " + dims[0] + "x" + dims[1] + " periodic grid: "
                    + (total[0] == 0 ? "every halo cell is right" : total[0] + " halo cells are wrong"));
        MPI.Finalize();
        if (total[0] != 0) System.exit(1);
    }
}
