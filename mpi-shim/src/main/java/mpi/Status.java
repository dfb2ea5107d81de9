package mpi;

/**
 * What a completed receive, probe or request reports ({@code MPI_Status}): source, tag, error class (Open MPI's
 * numbering), whether it was cancelled, how much arrived, and the index in an any/some call.
 */
public final class Status {
    private int source, tag, error, index;
    private boolean cancelled;
    private long bytes;

    protected Status() {
        this(MPI.ANY_SOURCE, MPI.ANY_TAG, MPI.SUCCESS, false, 0, -1);
    }

    private Status(int source, int tag, int error, boolean cancelled, long bytes, int index) {
        this.source = source;
        this.tag = tag;
        this.error = error;
        this.cancelled = cancelled;
        this.bytes = bytes;
        this.index = index;
    }

    static Status of(braid.mpi.Status s) {
        return s == null ? null : filled(s);
    }

    /**
     * [s] (not null) in this package's terms. Small and without a null branch, so that it inlines where it is called
     * and a caller that ignores the result allocates nothing (see {@link Comm#recv}).
     */
    static Status filled(braid.mpi.Status s) {
        int e = s.getError();
        return new Status(s.getSource(), s.getTag(), e == 0 ? MPI.SUCCESS : Err.ompiClass(e), s.isCancelled(),
                s.getBytes(), s.getIndex());
    }

    /** A status of an I/O call that moved [bytes]. */
    static Status ofBytes(long bytes) {
        return new Status(MPI.ANY_SOURCE, MPI.ANY_TAG, MPI.SUCCESS, false, bytes, -1);
    }

    static Status of(braid.mpi.Status s, int index) {
        Status st = of(s);
        if (st != null) st.index = index;
        return st;
    }

    /** The bytes the operation moved. */
    long bytes() {
        return bytes;
    }

    /** The number of [datatype] elements received, or {@link MPI#UNDEFINED} if not a whole number. */
    public int getCount(Datatype datatype) throws MPIException {
        MPI.check();
        long size = datatype.braid().getSize();
        if (size == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
        return bytes % size == 0 ? (int) (bytes / size) : MPI.UNDEFINED;
    }

    public boolean isCancelled() throws MPIException {
        MPI.check();
        return cancelled;
    }

    /** The number of base elements received (of the datatype's base type), or {@link MPI#UNDEFINED}. */
    public int getElements(Datatype datatype) throws MPIException {
        MPI.check();
        long e = elements(datatype);
        return e > Integer.MAX_VALUE ? MPI.UNDEFINED : (int) e;
    }

    public Count getElementsX(Datatype datatype) throws MPIException {
        MPI.check();
        return new Count(elements(datatype));
    }

    private long elements(Datatype datatype) throws MPIException {
        braid.mpi.BasicType b = datatype.braid().getBasic();
        long unit = b != null ? b.getSize() : datatype.baseSize;
        if (unit == 0) return bytes == 0 ? 0 : MPI.UNDEFINED;
        return bytes % unit == 0 ? bytes / unit : MPI.UNDEFINED;
    }

    public void setElements(Datatype datatype, int count) throws MPIException {
        setElementsX(datatype, new Count(count));
    }

    public void setElementsX(Datatype datatype, Count count) throws MPIException {
        MPI.check();
        braid.mpi.BasicType b = datatype.braid().getBasic();
        long unit = b != null ? b.getSize() : datatype.baseSize;
        bytes = count.getCount() * unit;
    }

    public void setCancelled(boolean flag) throws MPIException {
        MPI.check();
        cancelled = flag;
    }

    public int getSource() {
        return source;
    }

    public int getTag() {
        return tag;
    }

    public int getError() {
        return error;
    }

    public int getIndex() {
        return index;
    }

    @Override
    public String toString() {
        return "Status(source=" + source + ", tag=" + tag + ", error=" + error + ", bytes=" + bytes + ")";
    }
}
