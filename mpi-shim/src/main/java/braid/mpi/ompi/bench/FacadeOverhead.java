package braid.mpi.ompi.bench;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import mpi.MPI;
import mpi.MPIException;
import mpi.Request;

/**
 * The CPU cost the {@code mpi} package adds to braid.mpi, measured so that a loaded machine does not swamp it: a
 * singleton (no launcher) sends an eager message to itself and receives it, one thread, and prints the thread's CPU ns
 * per send + receive, the least of three timed runs after two warm-up runs. {@code FacadeOverhead KIND [SIZE]
 * [ROUNDS]}, KIND one of {@code braid} (braid.mpi's {@code send}/{@code recv(…, status)} on a direct buffer), {@code
 * mpi} (the same through package mpi), {@code mpi-array} (package mpi with {@code byte[]}) and {@code mpi-nonblocking}
 * ({@code iSend}/{@code iRecv} + {@code waitFor}); prints {@code overhead KIND SIZE NS}. Run each kind in its own JVM
 * (package mpi and braid.mpi cannot both initialise one process); after the README's build: {@code java -cp
 * samples/target/braid.jar braid.mpi.ompi.bench.FacadeOverhead mpi 64 300000}.
 */
public final class FacadeOverhead {
    private static final java.lang.management.ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private interface Loop {
        void run(int n) throws MPIException;
    }

    public static void main(String[] args) throws MPIException {
        String kind = args[0];
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
        ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(size, 1)).order(java.nio.ByteOrder.nativeOrder());
        long ns;
        if (kind.equals("braid")) {
            braid.mpi.Mpi m = braid.mpi.Mpi.init();
            braid.mpi.Intracomm w = m.getWorld();
            braid.mpi.Status st = new braid.mpi.Status();
            ns = measure(rounds, n -> {
                for (int i = 0; i < n; i++) {
                    w.send(buf, size, braid.mpi.Datatype.BYTE, 0, 1);
                    w.recv(buf, size, braid.mpi.Datatype.BYTE, 0, 1, st);
                }
            });
            m.finalizeMpi();
        } else {
            MPI.Init(args);
            byte[] arr = new byte[Math.max(size, 1)];
            Object b = kind.equals("mpi-array") ? arr : buf;
            ns = measure(rounds, kind.equals("mpi-nonblocking")
                    ? n -> {
                        for (int i = 0; i < n; i++) {
                            Request s = MPI.COMM_WORLD.iSend(buf, size, MPI.BYTE, 0, 1);
                            Request r = MPI.COMM_WORLD.iRecv(buf, size, MPI.BYTE, 0, 1);
                            s.waitFor();
                            r.waitFor();
                        }
                    }
                    : n -> {
                        for (int i = 0; i < n; i++) {
                            MPI.COMM_WORLD.send(b, size, MPI.BYTE, 0, 1);
                            MPI.COMM_WORLD.recv(b, size, MPI.BYTE, 0, 1);
                        }
                    });
            MPI.Finalize();
        }
        System.out.println("overhead " + kind + " " + size + " " + ns);
    }

    private static long measure(int rounds, Loop body) throws MPIException {
        body.run(rounds);
        body.run(rounds);
        long least = Long.MAX_VALUE;
        for (int k = 0; k < 3; k++) {
            long t0 = CPU.getCurrentThreadCpuTime();
            body.run(rounds);
            least = Math.min(least, (CPU.getCurrentThreadCpuTime() - t0) / rounds);
        }
        return least;
    }
}
