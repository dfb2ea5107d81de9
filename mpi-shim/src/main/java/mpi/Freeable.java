package mpi;

/** An MPI handle whose resources {@link #free} releases. */
public interface Freeable {
    /** Releases the handle's resources. */
    void free() throws MPIException;
}
