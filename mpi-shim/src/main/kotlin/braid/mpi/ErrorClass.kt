package braid.mpi

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * MPI's error classes (`MPI_ERR_*`, values as MPICH numbers them) and the user-defined classes and codes of
 * `MPI_Add_error_class`, `MPI_Add_error_code` and `MPI_Add_error_string`. A built-in error's code equals its class.
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
    public const val ERR_ACCESS: Int = 20
    public const val ERR_AMODE: Int = 21
    public const val ERR_BAD_FILE: Int = 22
    public const val ERR_FILE_EXISTS: Int = 25
    public const val ERR_FILE: Int = 27
    public const val ERR_INFO: Int = 28
    public const val ERR_INFO_KEY: Int = 29
    public const val ERR_INFO_VALUE: Int = 30
    public const val ERR_INFO_NOKEY: Int = 31
    public const val ERR_IO: Int = 32
    public const val ERR_NAME: Int = 33
    public const val ERR_NO_SUCH_FILE: Int = 37
    public const val ERR_READ_ONLY: Int = 40
    /** An invalid or freed attribute keyval (`MPI_ERR_KEYVAL`). */
    public const val ERR_KEYVAL: Int = 48
    public const val ERR_NO_MEM: Int = 34
    public const val ERR_NOT_SAME: Int = 35
    public const val ERR_PORT: Int = 38
    public const val ERR_SERVICE: Int = 41
    /** `MPI_ERR_SPAWN`: [Intracomm.spawn] could not start the processes. */
    public const val ERR_SPAWN: Int = 42
    public const val ERR_UNSUPPORTED_OPERATION: Int = 44
    // One-sided communication.
    public const val ERR_WIN: Int = 45
    public const val ERR_BASE: Int = 46
    public const val ERR_LOCKTYPE: Int = 47
    public const val ERR_RMA_CONFLICT: Int = 49
    public const val ERR_RMA_SYNC: Int = 50
    public const val ERR_SIZE: Int = 51
    public const val ERR_ASSERT: Int = 53
    public const val ERR_RMA_RANGE: Int = 55
    public const val ERR_RMA_ATTACH: Int = 56
    public const val ERR_RMA_SHARED: Int = 57
    public const val ERR_RMA_FLAVOR: Int = 58
    public const val ERR_DISP: Int = 52
    /** A process this operation needed has failed (MPI 4's ULFM `MPIX_ERR_PROC_FAILED`). */
    public const val ERR_PROC_FAILED: Int = 101
    public const val ERR_LASTCODE: Int = 0x3fffffff

    /** A built-in class's MPI name and its error string. */
    private class Described(val name: String, val string: String)

    private val builtins =
        mapOf(
            SUCCESS to Described("MPI_SUCCESS", "no error"),
            ERR_BUFFER to Described("MPI_ERR_BUFFER", "invalid buffer pointer"),
            ERR_COUNT to Described("MPI_ERR_COUNT", "invalid count argument"),
            ERR_TYPE to Described("MPI_ERR_TYPE", "invalid datatype"),
            ERR_TAG to Described("MPI_ERR_TAG", "invalid tag"),
            ERR_COMM to Described("MPI_ERR_COMM", "invalid communicator"),
            ERR_RANK to Described("MPI_ERR_RANK", "invalid rank"),
            ERR_ROOT to Described("MPI_ERR_ROOT", "invalid root"),
            ERR_GROUP to Described("MPI_ERR_GROUP", "invalid group"),
            ERR_OP to Described("MPI_ERR_OP", "invalid operation"),
            ERR_TOPOLOGY to Described("MPI_ERR_TOPOLOGY", "invalid topology"),
            ERR_DIMS to Described("MPI_ERR_DIMS", "invalid dimension argument"),
            ERR_ARG to Described("MPI_ERR_ARG", "invalid argument"),
            ERR_UNKNOWN to Described("MPI_ERR_UNKNOWN", "unknown error"),
            ERR_TRUNCATE to Described("MPI_ERR_TRUNCATE", "message truncated"),
            ERR_OTHER to Described("MPI_ERR_OTHER", "other error"),
            ERR_INTERN to Described("MPI_ERR_INTERN", "internal error"),
            ERR_IN_STATUS to Described("MPI_ERR_IN_STATUS", "error code is in status"),
            ERR_PENDING to Described("MPI_ERR_PENDING", "pending request"),
            ERR_REQUEST to Described("MPI_ERR_REQUEST", "invalid request"),
            ERR_ACCESS to Described("MPI_ERR_ACCESS", "permission denied"),
            ERR_AMODE to Described("MPI_ERR_AMODE", "invalid access mode"),
            ERR_BAD_FILE to Described("MPI_ERR_BAD_FILE", "invalid file name"),
            ERR_FILE_EXISTS to Described("MPI_ERR_FILE_EXISTS", "file exists"),
            ERR_FILE to Described("MPI_ERR_FILE", "invalid file handle"),
            ERR_INFO to Described("MPI_ERR_INFO", "invalid info object"),
            ERR_INFO_KEY to Described("MPI_ERR_INFO_KEY", "invalid info key"),
            ERR_INFO_VALUE to Described("MPI_ERR_INFO_VALUE", "invalid info value"),
            ERR_INFO_NOKEY to Described("MPI_ERR_INFO_NOKEY", "info key not set"),
            ERR_IO to Described("MPI_ERR_IO", "I/O error"),
            ERR_NAME to Described("MPI_ERR_NAME", "invalid service name"),
            ERR_NO_SUCH_FILE to Described("MPI_ERR_NO_SUCH_FILE", "no such file"),
            ERR_READ_ONLY to Described("MPI_ERR_READ_ONLY", "file is read-only"),
            ERR_KEYVAL to Described("MPI_ERR_KEYVAL", "invalid keyval"),
            ERR_NO_MEM to Described("MPI_ERR_NO_MEM", "out of memory"),
            ERR_NOT_SAME to Described("MPI_ERR_NOT_SAME", "collective arguments not identical"),
            ERR_PORT to Described("MPI_ERR_PORT", "invalid port"),
            ERR_SERVICE to Described("MPI_ERR_SERVICE", "invalid service"),
            ERR_UNSUPPORTED_OPERATION to Described("MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"),
            ERR_SPAWN to Described("MPI_ERR_SPAWN", "error in spawning processes"),
            ERR_WIN to Described("MPI_ERR_WIN", "invalid window"),
            ERR_BASE to Described("MPI_ERR_BASE", "invalid base address"),
            ERR_LOCKTYPE to Described("MPI_ERR_LOCKTYPE", "invalid lock type"),
            ERR_RMA_CONFLICT to Described("MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"),
            ERR_RMA_SYNC to Described("MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"),
            ERR_SIZE to Described("MPI_ERR_SIZE", "invalid size"),
            ERR_ASSERT to Described("MPI_ERR_ASSERT", "invalid assertion"),
            ERR_RMA_RANGE to Described("MPI_ERR_RMA_RANGE", "target memory is not part of the window"),
            ERR_RMA_ATTACH to Described("MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
            ERR_RMA_SHARED to Described("MPI_ERR_RMA_SHARED", "memory cannot be shared"),
            ERR_RMA_FLAVOR to Described("MPI_ERR_RMA_FLAVOR", "wrong window flavor"),
            ERR_DISP to Described("MPI_ERR_DISP", "invalid displacement unit"),
            ERR_PROC_FAILED to Described("MPIX_ERR_PROC_FAILED", "process failed"),
        )

    // User-defined classes and codes: code → class, code → string. Codes start above the built-ins.
    private val next = AtomicInteger(FIRST_USER)
    private const val FIRST_USER = 1000
    private val userClassOf = ConcurrentHashMap<Int, Int>()
    private val userStrings = ConcurrentHashMap<Int, String>()

    /** `MPI_ERR_RANK` for [ERR_RANK]; `MPI_ERR_<code>` for a user-defined one. */
    @JvmStatic public fun name(errorClass: Int): String = builtins[errorClass]?.name ?: "MPI_ERR_$errorClass"

    /** The class of [code] (`MPI_Error_class`): the code itself for built-ins and user classes. */
    @JvmStatic public fun classOf(code: Int): Int = userClassOf[code] ?: code

    /** `MPI_Error_string`: the string set for [code], else its class's. */
    @JvmStatic
    public fun errorString(code: Int): String =
        userStrings[code]
            ?: builtins[code]?.string
            ?: userStrings[classOf(code)]
            ?: builtins[classOf(code)]?.string
            ?: "unknown error code $code"

    /** `MPI_LASTUSEDCODE`: the last error class or code added, or the last built-in class when none was. */
    @JvmStatic public fun lastUsedCode(): Int = (next.get() - 1).let { if (it < FIRST_USER) ERR_LASTCODE else it }

    /** `MPI_Add_error_class`: a new class, which is also its own code. */
    @JvmStatic public fun addErrorClass(): Int = next.getAndIncrement().also { userClassOf[it] = it }

    /** `MPI_Add_error_code`: a new code of [errorClass], which must be a user-defined class. */
    @JvmStatic
    public fun addErrorCode(errorClass: Int): Int {
        if (userClassOf[errorClass] != errorClass) {
            throw MPIException.of(
                ERR_ARG,
                "MPI_Add_error_code",
                "error class $errorClass was not created by MPI_Add_error_class",
            )
        }
        return next.getAndIncrement().also { userClassOf[it] = errorClass }
    }

    /** `MPI_Add_error_string`: the string [errorString] returns for a user-defined [code]. */
    @JvmStatic
    public fun addErrorString(code: Int, string: String) {
        if (!userClassOf.containsKey(code)) {
            throw MPIException.of(
                ERR_ARG,
                "MPI_Add_error_string",
                "error code $code is built in or was never added; only added codes take a string",
            )
        }
        userStrings[code] = string
    }
}
