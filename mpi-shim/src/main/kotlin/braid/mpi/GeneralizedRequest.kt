package braid.mpi

/**
 * A request for an operation its caller carries out itself (`MPI_Grequest_start`/`MPI_Grequest_complete` in Braid's
 * shape), made by [Mpi.startGeneralizedRequest]: file I/O, a library's own work. It is in flight until [complete] is
 * called (from any thread); then [waitFor], [test] and the any/all/some calls return its status as any other request's.
 */
public class GeneralizedRequest internal constructor(mpi: Mpi) : Request(mpi, null) {
    /**
     * `MPI_Grequest_complete`: the operation is done, having moved [bytes] (its status's [Status.bytes]); [error] is
     * [ErrorClass.SUCCESS] or the class it failed with, which a wait then raises with [message]. Completing twice
     * raises `MPI_ERR_REQUEST`.
     */
    @JvmOverloads
    public fun complete(bytes: Long, error: Int = ErrorClass.SUCCESS, message: String = "") {
        if (isComplete)
            throw MPIException.of(ErrorClass.ERR_REQUEST, "MPI_Grequest_complete", "the request is already complete")
        complete(Mpi.ANY_SOURCE, Mpi.ANY_TAG, bytes, error, message = message)
    }
}
