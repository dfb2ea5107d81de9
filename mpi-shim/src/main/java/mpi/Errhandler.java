package mpi;

import braid.mpi.ErrorHandler;

/**
 * An error handler ({@code MPI_Errhandler}): {@link MPI#ERRORS_ARE_FATAL} ends the whole job with the error's code,
 * {@link MPI#ERRORS_RETURN} (and {@link MPI#ERRORS_ABORT}'s local form) turns the error into an {@link MPIException}.
 */
public final class Errhandler {
    final ErrorHandler handler;

    Errhandler(ErrorHandler handler) {
        this.handler = handler;
    }
}
