package mpi;

import braid.mpi.ErrorClass;

/** Errors of {@code braid.mpi} (MPICH's class numbers, unchecked) as this package's {@link MPIException}. */
final class Err {
    private Err() {}

    /** Open MPI's number for braid.mpi's error class [braidClass] (MPICH's numbering); user classes as they are. */
    static int ompiClass(int braidClass) {
        switch (braidClass) {
            case ErrorClass.SUCCESS: return MPI.SUCCESS;
            case ErrorClass.ERR_BUFFER: return MPI.ERR_BUFFER;
            case ErrorClass.ERR_COUNT: return MPI.ERR_COUNT;
            case ErrorClass.ERR_TYPE: return MPI.ERR_TYPE;
            case ErrorClass.ERR_TAG: return MPI.ERR_TAG;
            case ErrorClass.ERR_COMM: return MPI.ERR_COMM;
            case ErrorClass.ERR_RANK: return MPI.ERR_RANK;
            case ErrorClass.ERR_ROOT: return MPI.ERR_ROOT;
            case ErrorClass.ERR_GROUP: return MPI.ERR_GROUP;
            case ErrorClass.ERR_OP: return MPI.ERR_OP;
            case ErrorClass.ERR_TOPOLOGY: return MPI.ERR_TOPOLOGY;
            case ErrorClass.ERR_DIMS: return MPI.ERR_DIMS;
            case ErrorClass.ERR_ARG: return MPI.ERR_ARG;
            case ErrorClass.ERR_UNKNOWN: return MPI.ERR_UNKNOWN;
            case ErrorClass.ERR_TRUNCATE: return MPI.ERR_TRUNCATE;
            case ErrorClass.ERR_OTHER: return MPI.ERR_OTHER;
            case ErrorClass.ERR_INTERN: return MPI.ERR_INTERN;
            case ErrorClass.ERR_IN_STATUS: return MPI.ERR_IN_STATUS;
            case ErrorClass.ERR_PENDING: return MPI.ERR_PENDING;
            case ErrorClass.ERR_REQUEST: return MPI.ERR_REQUEST;
            case ErrorClass.ERR_ACCESS: return MPI.ERR_ACCESS;
            case ErrorClass.ERR_AMODE: return MPI.ERR_AMODE;
            case ErrorClass.ERR_BAD_FILE: return MPI.ERR_BAD_FILE;
            case ErrorClass.ERR_FILE_EXISTS: return MPI.ERR_FILE_EXISTS;
            case ErrorClass.ERR_FILE: return MPI.ERR_FILE;
            case ErrorClass.ERR_INFO: return MPI.ERR_INFO;
            case ErrorClass.ERR_INFO_KEY: return MPI.ERR_INFO_KEY;
            case ErrorClass.ERR_INFO_VALUE: return MPI.ERR_INFO_VALUE;
            case ErrorClass.ERR_INFO_NOKEY: return MPI.ERR_INFO_NOKEY;
            case ErrorClass.ERR_IO: return MPI.ERR_IO;
            case ErrorClass.ERR_NAME: return MPI.ERR_NAME;
            case ErrorClass.ERR_NO_SUCH_FILE: return MPI.ERR_NO_SUCH_FILE;
            case ErrorClass.ERR_READ_ONLY: return MPI.ERR_READ_ONLY;
            case ErrorClass.ERR_KEYVAL: return MPI.ERR_KEYVAL;
            case ErrorClass.ERR_NO_MEM: return MPI.ERR_NO_MEM;
            case ErrorClass.ERR_NOT_SAME: return MPI.ERR_NOT_SAME;
            case ErrorClass.ERR_PORT: return MPI.ERR_PORT;
            case ErrorClass.ERR_SERVICE: return MPI.ERR_SERVICE;
            case ErrorClass.ERR_SPAWN: return MPI.ERR_SPAWN;
            case ErrorClass.ERR_UNSUPPORTED_OPERATION: return MPI.ERR_UNSUPPORTED_OPERATION;
            case ErrorClass.ERR_PROC_FAILED: return 75; // MPI_ERR_PROC_FAILED
            case ErrorClass.ERR_WIN: return MPI.ERR_WIN;
            case ErrorClass.ERR_BASE: return MPI.ERR_BASE;
            case ErrorClass.ERR_LOCKTYPE: return MPI.ERR_LOCKTYPE;
            case ErrorClass.ERR_RMA_CONFLICT: return MPI.ERR_RMA_CONFLICT;
            case ErrorClass.ERR_RMA_SYNC: return MPI.ERR_RMA_SYNC;
            case ErrorClass.ERR_SIZE: return MPI.ERR_SIZE;
            case ErrorClass.ERR_ASSERT: return MPI.ERR_ASSERT;
            case ErrorClass.ERR_DISP: return MPI.ERR_DISP;
            // Open MPI's mpi.h numbers (ompi/include/mpi.h.in; MPICH's differ); its Java API names no constant for them.
            case ErrorClass.ERR_RMA_RANGE: return 68; // MPI_ERR_RMA_RANGE
            case ErrorClass.ERR_RMA_ATTACH: return 69; // MPI_ERR_RMA_ATTACH
            case ErrorClass.ERR_RMA_FLAVOR: return 70; // MPI_ERR_RMA_FLAVOR
            case ErrorClass.ERR_RMA_SHARED: return 71; // MPI_ERR_RMA_SHARED
            default: return braidClass;
        }
    }

    /** [e] as a checked exception: its class in Open MPI's numbering, its message and its stack. */
    static MPIException of(braid.mpi.MPIException e) {
        int clazz = ompiClass(e.getErrorClass());
        int code = e.getErrorCode() == e.getErrorClass() ? clazz : e.getErrorCode();
        MPIException m = new MPIException(code, clazz, e.getMessage());
        m.initCause(e);
        return m;
    }

    /** An error of Open MPI class [clazz] raised by this package itself. */
    static MPIException of(int clazz, String message) {
        return new MPIException(clazz, clazz, message + " (" + name(clazz) + ")");
    }

    static String name(int clazz) {
        return clazz == MPI.ERR_UNSUPPORTED_OPERATION ? "MPI_ERR_UNSUPPORTED_OPERATION" : "error class " + clazz;
    }

    /** An operation of Open MPI's API this package does not carry out (yet). */
    static MPIException unsupported(String call) {
        return of(MPI.ERR_UNSUPPORTED_OPERATION, call + " is not supported by Braid's mpi package");
    }

    private static int[] toBraid;

    /** braid.mpi's number (MPICH's) for Open MPI's error class [ompi]; user classes as they are. */
    static synchronized int braidClass(int ompi) {
        if (toBraid == null) {
            toBraid = new int[128];
            java.util.Arrays.fill(toBraid, -1);
            for (int b = 0; b < 128; b++) {
                int o = ompiClass(b);
                if (o >= 0 && o < 128 && toBraid[o] < 0 && o != b || (o == b && o < 128 && toBraid[o] < 0))
                    toBraid[o] = b;
            }
        }
        return ompi >= 0 && ompi < 128 && toBraid[ompi] >= 0 ? toBraid[ompi] : ompi;
    }
}
