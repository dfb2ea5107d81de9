package braid.mpi.javaapi;

import braid.mpi.Datatype;
import braid.mpi.ErrorHandler;
import braid.mpi.Intracomm;
import braid.mpi.MPIException;
import braid.mpi.Mpi;
import braid.mpi.Request;
import braid.mpi.Status;
import braid.mpi.testing.CollectiveChecks;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * An MPI program as a Java user writes it, started by a real launcher (MpiLaunchersIT):
 * {@code Mpi.init(args)} takes the world from the launcher, then point-to-point traffic and every
 * collective ({@link CollectiveChecks}) checked against a reference, then finalize. Prints
 * {@code OK rank R of N KIND}. With {@code abort CODE}, rank 1 calls {@code MPI_Abort(CODE)} after a
 * barrier while the others wait in a second barrier; the launcher must end the job with CODE.
 */
public final class MpiProgram {
    private MpiProgram() {}

    public static void main(String[] args) {
        try {
            run(args);
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("FAILED: " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < values.length; i++) b.putInt(i * 4, values[i]);
        return b;
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    private static void run(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "all";
        Mpi mpi = Mpi.init(args);
        check(Mpi.isInitialized(), "MPI_Initialized after init");
        Intracomm world = mpi.getWorld();
        world.setErrhandler(ErrorHandler.ERRORS_RETURN);
        int rank = world.getRank();
        int size = world.getSize();

        if (mode.equals("abort")) {
            int code = Integer.parseInt(args[1]);
            world.barrier();
            if (rank == 1) {
                System.out.println("rank 1: MPI_Abort(" + code + ")");
                System.out.flush();
                world.abort(code);
            }
            try {
                world.barrier(); // rank 1 never enters it: the launcher ends this process
            } catch (MPIException e) {
                System.out.println("rank " + rank + ": the barrier failed as the job ended: " + e.getMessage());
            }
            Thread.sleep(120_000);
            System.out.println("FAILED: rank " + rank + " was not ended by the launcher within 120 s of the abort");
            return;
        }

        // Point-to-point: both ways around the ring (standard and synchronous), then ANY_SOURCE to rank 0.
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        ByteBuffer in = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        Status st = world.sendRecv(ints(rank), 1, Datatype.INT, next, 1, in, 1, Datatype.INT, prev, 1);
        check(in.getInt(0) == prev && st.getSource() == prev, "ring: rank " + rank + " got " + in.getInt(0) + " from " + st.getSource());
        Request r = world.irecv(in, 1, Datatype.INT, next, 2);
        world.ssend(ints(rank * 10), 1, Datatype.INT, prev, 2);
        r.waitFor();
        check(in.getInt(0) == next * 10, "reverse ring: got " + in.getInt(0));
        if (rank == 0) {
            int sum = 0;
            for (int i = 1; i < size; i++) {
                Status s = world.recv(in, 1, Datatype.INT, Mpi.ANY_SOURCE, 3);
                check(in.getInt(0) == s.getSource() * 7, "any-source: " + in.getInt(0) + " from " + s.getSource());
                sum += s.getSource();
            }
            check(sum == size * (size - 1) / 2, "any-source: every rank once");
        } else {
            world.send(ints(rank * 7), 1, Datatype.INT, 0, 3);
        }

        int checks = CollectiveChecks.runEverything(world);
        System.out.println("OK rank " + rank + " of " + size + " " + mpi.getBootstrap().getKind() + ": point-to-point and " + checks + " collective checks passed via " + mpi);
        mpi.finalizeMpi();
        check(mpi.getFinalized(), "finalized");
    }
}
