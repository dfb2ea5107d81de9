package braid.core

/**
 * Fabric error numbers, with the values of libfabric's `rdma/fi_errno.h` so that a code printed by Braid reads the same
 * as one printed by `fi_strerror`. Data operations return them negated (`-Errno.EAGAIN`); error completions carry them
 * positive in [CompletionError.err].
 */
public object Errno {
    public const val SUCCESS: Int = 0
    public const val EPERM: Int = 1
    public const val ENOENT: Int = 2
    public const val EIO: Int = 5
    public const val E2BIG: Int = 7
    public const val EAGAIN: Int = 11
    public const val ENOMEM: Int = 12
    public const val EACCES: Int = 13
    public const val EBUSY: Int = 16
    public const val ENODEV: Int = 19
    public const val EINVAL: Int = 22
    public const val ENOSPC: Int = 28
    public const val ENOSYS: Int = 38
    public const val ENOMSG: Int = 42
    public const val ENODATA: Int = 61
    public const val EOVERFLOW: Int = 75
    public const val EMSGSIZE: Int = 90
    public const val EOPNOTSUPP: Int = 95
    public const val EADDRNOTAVAIL: Int = 99
    public const val ECONNRESET: Int = 104
    public const val ENOTCONN: Int = 107
    public const val ESHUTDOWN: Int = 108
    public const val ETIMEDOUT: Int = 110
    public const val ECONNREFUSED: Int = 111
    public const val EHOSTDOWN: Int = 112
    public const val EHOSTUNREACH: Int = 113
    public const val EALREADY: Int = 114
    public const val ECANCELED: Int = 125

    public const val EOTHER: Int = 256
    public const val ETOOSMALL: Int = 257
    public const val EOPBADSTATE: Int = 258
    public const val EAVAIL: Int = 259
    public const val EBADFLAGS: Int = 260
    public const val ENOEQ: Int = 261
    public const val EDOMAIN: Int = 262
    public const val ENOCQ: Int = 263
    public const val ECRC: Int = 264
    public const val ETRUNC: Int = 265
    public const val ENOKEY: Int = 266
    public const val ENOAV: Int = 267
    public const val EOVERRUN: Int = 268
    public const val ENORX: Int = 269

    /** The symbolic name of [code] (positive or negated), as `fi_strerror` would print it. */
    @JvmStatic
    public fun name(code: Int): String =
        when (kotlin.math.abs(code)) {
            SUCCESS -> "SUCCESS"
            EPERM -> "EPERM"
            ENOENT -> "ENOENT"
            EIO -> "EIO"
            E2BIG -> "E2BIG"
            EAGAIN -> "EAGAIN"
            ENOMEM -> "ENOMEM"
            EACCES -> "EACCES"
            EBUSY -> "EBUSY"
            ENODEV -> "ENODEV"
            EINVAL -> "EINVAL"
            ENOSPC -> "ENOSPC"
            ENOSYS -> "ENOSYS"
            ENOMSG -> "ENOMSG"
            ENODATA -> "ENODATA"
            EOVERFLOW -> "EOVERFLOW"
            EMSGSIZE -> "EMSGSIZE"
            EOPNOTSUPP -> "EOPNOTSUPP"
            EADDRNOTAVAIL -> "EADDRNOTAVAIL"
            ECONNRESET -> "ECONNRESET"
            ENOTCONN -> "ENOTCONN"
            ESHUTDOWN -> "ESHUTDOWN"
            ETIMEDOUT -> "ETIMEDOUT"
            ECONNREFUSED -> "ECONNREFUSED"
            EHOSTDOWN -> "EHOSTDOWN"
            EHOSTUNREACH -> "EHOSTUNREACH"
            EALREADY -> "EALREADY"
            ECANCELED -> "ECANCELED"
            EOTHER -> "EOTHER"
            ETOOSMALL -> "ETOOSMALL"
            EOPBADSTATE -> "EOPBADSTATE"
            EAVAIL -> "EAVAIL"
            EBADFLAGS -> "EBADFLAGS"
            ENOEQ -> "ENOEQ"
            EDOMAIN -> "EDOMAIN"
            ENOCQ -> "ENOCQ"
            ECRC -> "ECRC"
            ETRUNC -> "ETRUNC"
            ENOKEY -> "ENOKEY"
            ENOAV -> "ENOAV"
            EOVERRUN -> "EOVERRUN"
            ENORX -> "ENORX"
            else -> "E$code"
        }
}

/**
 * The one exception family of Braid's control plane: misuse by the caller (a missing binding, a bad attribute, a size
 * over a limit). [code] is an [Errno] value; the message names the object, the value and the fix. Operations already in
 * flight never throw: they complete in error.
 */
public open class FabricException
@JvmOverloads
constructor(public val code: Int, message: String, cause: Throwable? = null) :
    RuntimeException("$message [${Errno.name(code)}]", cause) {

    public companion object {
        @JvmStatic public fun invalid(message: String): FabricException = FabricException(Errno.EINVAL, message)

        @JvmStatic public fun unsupported(message: String): FabricException = FabricException(Errno.EOPNOTSUPP, message)

        @JvmStatic public fun noData(message: String): FabricException = FabricException(Errno.ENODATA, message)

        @JvmStatic
        public fun io(message: String, cause: Throwable? = null): FabricException =
            FabricException(Errno.EIO, message, cause)
    }
}
