package braid.mpi

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * MPI's error classes (`MPI_ERR_*`, values as MPICH numbers them) and the user-defined classes
 * and codes of `MPI_Add_error_class`, `MPI_Add_error_code` and `MPI_Add_error_string`.
 * A built-in error's code equals its class.
 */
public object ErrorClass {
    public const val SUCCESS: Int = 0
    public const val ERR_BUFFER: Int = 1
    public const val ERR_COUNT: Int = 2
    public const val ERR_TYPE: Int = 3
    public const val ERR_TAG: Int = 4
    public const val ERR_COMM: Int = 5
    public const val ERR_RANK: Int = 6
    public const val ERR_ROOT: Int = 7
    public const val ERR_GROUP: Int = 8
    public const val ERR_OP: Int = 9
    public const val ERR_TOPOLOGY: Int = 10
    public const val ERR_DIMS: Int = 11
    public const val ERR_ARG: Int = 12
    public const val ERR_UNKNOWN: Int = 13
    public const val ERR_TRUNCATE: Int = 14
    public const val ERR_OTHER: Int = 15
    public const val ERR_INTERN: Int = 16
    public const val ERR_IN_STATUS: Int = 17
    public const val ERR_PENDING: Int = 18
    public const val ERR_REQUEST: Int = 19
    public const val ERR_NAME: Int = 33
    public const val ERR_NO_MEM: Int = 34
    public const val ERR_NOT_SAME: Int = 35
    public const val ERR_PORT: Int = 38
    public const val ERR_SERVICE: Int = 41
    public const val ERR_UNSUPPORTED_OPERATION: Int = 52
    /** A process this operation needed has failed (MPI 4's ULFM `MPIX_ERR_PROC_FAILED`). */
    public const val ERR_PROC_FAILED: Int = 101
    public const val ERR_LASTCODE: Int = 0x3fffffff

    private val names = mapOf(
        SUCCESS to "MPI_SUCCESS", ERR_BUFFER to "MPI_ERR_BUFFER", ERR_COUNT to "MPI_ERR_COUNT",
        ERR_TYPE to "MPI_ERR_TYPE", ERR_TAG to "MPI_ERR_TAG", ERR_COMM to "MPI_ERR_COMM",
        ERR_RANK to "MPI_ERR_RANK", ERR_ROOT to "MPI_ERR_ROOT", ERR_GROUP to "MPI_ERR_GROUP",
        ERR_OP to "MPI_ERR_OP", ERR_TOPOLOGY to "MPI_ERR_TOPOLOGY", ERR_DIMS to "MPI_ERR_DIMS",
        ERR_ARG to "MPI_ERR_ARG", ERR_UNKNOWN to "MPI_ERR_UNKNOWN", ERR_TRUNCATE to "MPI_ERR_TRUNCATE",
        ERR_OTHER to "MPI_ERR_OTHER", ERR_INTERN to "MPI_ERR_INTERN", ERR_IN_STATUS to "MPI_ERR_IN_STATUS",
        ERR_PENDING to "MPI_ERR_PENDING", ERR_REQUEST to "MPI_ERR_REQUEST", ERR_NAME to "MPI_ERR_NAME",
        ERR_NO_MEM to "MPI_ERR_NO_MEM", ERR_NOT_SAME to "MPI_ERR_NOT_SAME", ERR_PORT to "MPI_ERR_PORT",
        ERR_SERVICE to "MPI_ERR_SERVICE", ERR_UNSUPPORTED_OPERATION to "MPI_ERR_UNSUPPORTED_OPERATION",
        ERR_PROC_FAILED to "MPIX_ERR_PROC_FAILED",
    )
    private val strings = mapOf(
        SUCCESS to "no error", ERR_BUFFER to "invalid buffer pointer", ERR_COUNT to "invalid count argument",
        ERR_TYPE to "invalid datatype", ERR_TAG to "invalid tag", ERR_COMM to "invalid communicator",
        ERR_RANK to "invalid rank", ERR_ROOT to "invalid root", ERR_GROUP to "invalid group",
        ERR_OP to "invalid operation", ERR_TOPOLOGY to "invalid topology", ERR_DIMS to "invalid dimension argument",
        ERR_ARG to "invalid argument", ERR_UNKNOWN to "unknown error", ERR_TRUNCATE to "message truncated",
        ERR_OTHER to "other error", ERR_INTERN to "internal error", ERR_IN_STATUS to "error code is in status",
        ERR_PENDING to "pending request", ERR_REQUEST to "invalid request", ERR_NAME to "invalid service name",
        ERR_NO_MEM to "out of memory", ERR_NOT_SAME to "collective arguments not identical",
        ERR_PORT to "invalid port", ERR_SERVICE to "invalid service", ERR_UNSUPPORTED_OPERATION to "unsupported operation",
        ERR_PROC_FAILED to "process failed",
    )

    // User-defined classes and codes: code → class, code → string. Codes start above the built-ins.
    private val next = AtomicInteger(1000)
    private val userClassOf = ConcurrentHashMap<Int, Int>()
    private val userStrings = ConcurrentHashMap<Int, String>()

    /** `MPI_ERR_RANK` for [ERR_RANK]; `MPI_ERR_<code>` for a user-defined one. */
    @JvmStatic
    public fun name(errorClass: Int): String = names[errorClass] ?: "MPI_ERR_$errorClass"

    /** The class of [code] (`MPI_Error_class`): the code itself for built-ins and user classes. */
    @JvmStatic
    public fun classOf(code: Int): Int = userClassOf[code] ?: code

    /** `MPI_Error_string`: the string set for [code], else its class's. */
    @JvmStatic
    public fun errorString(code: Int): String =
        userStrings[code] ?: strings[code] ?: userStrings[classOf(code)] ?: strings[classOf(code)] ?: "unknown error code $code"

    /** `MPI_Add_error_class`: a new class, which is also its own code. */
    @JvmStatic
    public fun addErrorClass(): Int = next.getAndIncrement().also { userClassOf[it] = it }

    /** `MPI_Add_error_code`: a new code of [errorClass], which must be a user-defined class. */
    @JvmStatic
    public fun addErrorCode(errorClass: Int): Int {
        if (userClassOf[errorClass] != errorClass) {
            throw MPIException.of(ERR_ARG, "MPI_Add_error_code", "error class $errorClass was not created by MPI_Add_error_class")
        }
        return next.getAndIncrement().also { userClassOf[it] = errorClass }
    }

    /** `MPI_Add_error_string`: the string [errorString] returns for a user-defined [code]. */
    @JvmStatic
    public fun addErrorString(code: Int, string: String) {
        if (!userClassOf.containsKey(code)) {
            throw MPIException.of(ERR_ARG, "MPI_Add_error_string", "error code $code is built in or was never added; only added codes take a string")
        }
        userStrings[code] = string
    }
}
