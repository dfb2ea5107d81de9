package mpi;

/** Hints as string keys and values ({@code MPI_Info}) over {@code braid.mpi.Info}. */
public final class Info implements Freeable, Cloneable {
    braid.mpi.Info info;

    public Info() throws MPIException {
        info = new braid.mpi.Info();
    }

    Info(braid.mpi.Info info) {
        this.info = info;
    }

    private braid.mpi.Info braid() throws MPIException {
        if (info == null) throw Err.of(MPI.ERR_INFO, "the info object is MPI.INFO_NULL or has been freed");
        return info;
    }

    public void set(String key, String value) throws MPIException {
        try {
            braid().set(key, value);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** The value under [key], or null. */
    public String get(String key) throws MPIException {
        try {
            return braid().get(key);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public void delete(String key) throws MPIException {
        try {
            braid().delete(key);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public int size() throws MPIException {
        try {
            return braid().size();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public String getKey(int i) throws MPIException {
        try {
            return braid().getKey(i);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    @Override
    public Info clone() {
        return info == null ? new Info((braid.mpi.Info) null) : new Info(info.dup());
    }

    public Info dup() throws MPIException {
        try {
            return new Info(braid().dup());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    @Override
    public void free() throws MPIException {
        if (info != null) info.free();
        info = null;
    }

    public boolean isNull() {
        return info == null || info.isNull();
    }
}
