package braid.mpi

/**
 * What happens when a call on a communicator fails (`MPI_Errhandler`):
 * - [ERRORS_ARE_FATAL] (every communicator's default, as the standard says): the whole job ends through the launcher
 *   (`Bootstrap.abort`) with the error class as exit code;
 * - [ERRORS_RETURN]: the call throws [MPIException] (Java's form of returning the code);
 * - a user handler ([create]): its function is called with the communicator and the code, then the call throws
 *   [MPIException] as under [ERRORS_RETURN].
 */
public class ErrorHandler
private constructor(private val name: String, @get:JvmSynthetic internal val function: Function?) {
    /** A user error handler's body (`MPI_Comm_errhandler_function`). */
    public fun interface Function {
        public fun handle(comm: Comm, errorCode: Int, message: String)
    }

    override fun toString(): String = name

    public companion object {
        @JvmField public val ERRORS_ARE_FATAL: ErrorHandler = ErrorHandler("MPI_ERRORS_ARE_FATAL", null)
        @JvmField public val ERRORS_RETURN: ErrorHandler = ErrorHandler("MPI_ERRORS_RETURN", null)

        /** `MPI_Comm_create_errhandler`. */
        @JvmStatic public fun create(function: Function): ErrorHandler = ErrorHandler("user error handler", function)
    }

    /** Applies this handler to [e] raised by a call on [comm]: aborts, or returns the exception to throw. */
    @JvmSynthetic
    internal fun handle(comm: Comm, e: MPIException): MPIException {
        if (e.handled) return e
        e.handled = true
        when {
            this === ERRORS_ARE_FATAL ->
                comm.mpi.abortJob(e.errorClass.coerceIn(1, 255), "fatal error on ${comm.getName()}: ${e.message}")
            function != null -> function.handle(comm, e.errorCode, e.message ?: "")
        }
        return e
    }
}
