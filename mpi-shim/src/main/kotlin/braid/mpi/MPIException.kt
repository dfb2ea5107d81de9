package braid.mpi

/**
 * An MPI error raised to the caller: [errorClass] is one of [ErrorClass]'s values (or a class added with
 * [ErrorClass.addErrorClass]), [errorCode] the code (equal to the class for every built-in error), and the message
 * names the call, the bad argument and its value: "MPI_Send: rank 7 is out of range for a communicator of size 4
 * (MPI_ERR_RANK)".
 *
 * Java has no return codes, so MPI's `MPI_ERRORS_RETURN` means: the call throws this exception (as in Open MPI's Java
 * bindings).
 */
public class MPIException
@JvmOverloads
public constructor(public val errorCode: Int, message: String, cause: Throwable? = null) :
    RuntimeException(message, cause) {
    /** Set once the communicator's error handler has seen this exception, so it is not handled twice. */
    @get:JvmSynthetic @set:JvmSynthetic internal var handled: Boolean = false

    /** The error class of [errorCode] (`MPI_Error_class`). */
    public val errorClass: Int
        get() = ErrorClass.classOf(errorCode)

    /** The MPI error string of [errorCode] (`MPI_Error_string`), not this exception's message. */
    public val errorString: String
        get() = ErrorClass.errorString(errorCode)

    internal companion object {
        /** An error of class [errorClass] in [call]: "MPI_Send: what (MPI_ERR_X)". */
        @JvmSynthetic
        fun of(errorClass: Int, call: String, what: String): MPIException =
            MPIException(errorClass, "$call: $what (${ErrorClass.name(errorClass)})")
    }
}
