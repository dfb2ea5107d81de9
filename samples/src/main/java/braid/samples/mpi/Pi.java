package braid.samples.mpi;

import mpi.MPI;
import mpi.MPIException;

/** Pi by the midpoint rule over 4/(1+x²): each rank sums its share of the intervals, a reduction adds them up. */
public class Pi {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        int[] n = {rank == 0 ? (args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000) : 0};
        MPI.COMM_WORLD.bcast(n, 1, MPI.INT, 0);
        double h = 1.0 / n[0];
        double[] part = {0};
        for (int i = rank; i < n[0]; i += size) {
            double x = h * (i + 0.5);
            part[0] += 4.0 / (1.0 + x * x);
        }
        part[0] *= h;
        double[] pi = new double[1];
        MPI.COMM_WORLD.reduce(part, pi, 1, MPI.DOUBLE, MPI.SUM, 0);
        if (rank == 0)
            System.out.printf("pi is about %.12f (error %.2e) with %d intervals on %d ranks%n", pi[0],
                    Math.abs(pi[0] - Math.PI), n[0], size);
        MPI.Finalize();
    }
}
