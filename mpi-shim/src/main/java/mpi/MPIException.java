package mpi;

/**
 * The checked exception every MPI call of the {@code mpi} package may throw (Open MPI's Java bindings' {@code
 * MPIException}): an error class numbered as Open MPI numbers them ({@link MPI#ERR_RANK} …), an error code, and a
 * message naming the call and the argument.
 */
public final class MPIException extends Exception {
    private static final long serialVersionUID = 1L;

    private int errorCode, errorClass;

    protected MPIException(int code, int clazz, String message) {
        super(message);
        errorCode = code;
        errorClass = clazz;
    }

    public MPIException(String message) {
        super(message);
    }

    public MPIException(Throwable cause) {
        super(cause);
        setStackTrace(cause.getStackTrace());
    }

    /** The error code: the class itself for built-in errors, or a code added with {@code MPI_Add_error_code}. */
    public int getErrorCode() {
        return errorCode;
    }

    /** The error class, numbered as Open MPI numbers them ({@link MPI#ERR_TRUNCATE} …). */
    public int getErrorClass() {
        return errorClass;
    }
}
