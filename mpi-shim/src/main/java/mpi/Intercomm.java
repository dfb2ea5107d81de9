package mpi;

/** An intercommunicator: a local and a remote group; point-to-point ranks name the remote group's processes. */
public final class Intercomm extends Comm {
    Intercomm(braid.mpi.Intercomm c) {
        super(c);
    }

    private braid.mpi.Intercomm inter() throws MPIException {
        return (braid.mpi.Intercomm) braid();
    }

    @Override
    public Intercomm clone() {
        return (Intercomm) super.clone();
    }

    @Override
    public Intercomm dup() throws MPIException {
        braid.mpi.Intercomm b = inter();
        try {
            return new Intercomm(b.dup());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    @Override
    public Intercomm iDup() throws MPIException {
        Intercomm d = dup();
        d.request = new Request(null);
        return d;
    }

    @Override
    public Intercomm dupWithInfo(Info info) throws MPIException {
        Intercomm d = dup();
        d.setInfo(info);
        return d;
    }

    public int getRemoteSize() throws MPIException {
        return inter().getRemoteSize();
    }

    public Group getRemoteGroup() throws MPIException {
        return new Group(inter().getRemoteGroup());
    }

    /** {@code MPI_Intercomm_merge}: both groups as one; [high] orders this group after the other. */
    public Intracomm merge(boolean high) throws MPIException {
        braid.mpi.Intercomm b = inter();
        try {
            return new Intracomm(b.merge(high));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /**
     * {@code MPI_Comm_get_parent}: in processes a {@link Intracomm#spawn} started, the intercommunicator to the
     * processes that spawned them; else a null communicator.
     */
    public static Intercomm getParent() throws MPIException {
        return new Intercomm(MPI.mpi().getParent());
    }
}
