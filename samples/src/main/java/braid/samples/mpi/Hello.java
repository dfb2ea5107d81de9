package braid.samples.mpi;

import mpi.MPI;
import mpi.MPIException;

/**
 * Hello from every rank, written against Open MPI's Java API (package {@code mpi}) and run on Braid:
 * {@code bin/braid run -n 4 java -cp samples/target/braid.jar braid.samples.mpi.Hello}.
 */
public class Hello {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        System.out.println("Hello from rank " + rank + " of " + size + " on " + MPI.getProcessorName());
        MPI.Finalize();
    }
}
