package mpi;

import java.nio.Buffer;

/** A persistent request ({@code MPI_Send_init} …): {@link #start}ed any number of times, waited for each time. */
public final class Prequest extends Request {
    Prequest(braid.mpi.Prequest r, Buffer send, Buffer recv) {
        super(r);
        sendBuf = send;
        recvBuf = recv;
    }

    public void start() throws MPIException {
        MPI.check();
        try {
            ((braid.mpi.Prequest) r).start();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static void startAll(Prequest[] requests) throws MPIException {
        for (Prequest p : requests) p.start();
    }
}
