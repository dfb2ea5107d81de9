package mpi;

import java.nio.Buffer;

/** A message taken off the queue by a matched probe ({@code MPI_Message}), received later with {@link #mRecv}. */
public final class Message {
    private braid.mpi.Message m;
    private Comm comm;

    /** An empty message ({@code MPI_MESSAGE_NULL}) for {@link #mProbe} or {@link #imProbe} to fill. */
    public Message() {}

    public boolean isNull() {
        return m == null;
    }

    public boolean isNoProc() {
        return m != null && m.isNoProc();
    }

    /** {@code MPI_Mprobe}: blocks until a message from [source] with [tag] can be taken, takes it, and says which. */
    public Status mProbe(int source, int tag, Comm comm) throws MPIException {
        MPI.check();
        try {
            m = comm.braid().mprobe(source, tag);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        this.comm = comm;
        return Status.of(m.getStatus());
    }

    /** {@code MPI_Improbe}: takes such a message if there is one (and says which), else returns null. */
    public Status imProbe(int source, int tag, Comm comm) throws MPIException {
        MPI.check();
        braid.mpi.Message found;
        try {
            found = comm.braid().improbe(source, tag);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        if (found == null) return null;
        m = found;
        this.comm = comm;
        return Status.of(m.getStatus());
    }

    private braid.mpi.Message taken(String call) throws MPIException {
        if (m == null) throw Err.of(MPI.ERR_REQUEST, call + ": the message is MPI_MESSAGE_NULL; probe for one first");
        braid.mpi.Message t = m;
        m = null;
        return t;
    }

    public Status mRecv(Object buf, int count, Datatype type) throws MPIException {
        MPI.check();
        braid.mpi.Message t = taken("MPI_Mrecv");
        Buf.Staged s = Buf.stage(buf, type.spanBytes(count), true, 1);
        try {
            return Status.of(t.mrecv(s.bytes, count, type.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
    }

    public Request imRecv(Buffer buf, int count, Datatype type) throws MPIException {
        MPI.check();
        braid.mpi.Message t = taken("MPI_Imrecv");
        try {
            return Request.of(t.imrecv(Buf.directOrNull(buf), count, type.braid()), null, buf);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }
}
