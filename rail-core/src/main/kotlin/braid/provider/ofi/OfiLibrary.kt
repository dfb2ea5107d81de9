package braid.provider.ofi

import braid.core.FabricException
import com.sun.jna.Native
import com.sun.jna.NativeLibrary

/**
 * libfabric itself, loaded once and lazily: the symbols it exports (`fi_getinfo`, `fi_freeinfo`, `fi_dupinfo`,
 * `fi_fabric`, `fi_strerror`, `fi_tostr`, `fi_version`), bound by JNA direct mapping. Everything else libfabric offers
 * is a header `static inline` that calls through an object's ops table; [OfiOps] reads those tables.
 *
 * The signal guard: Debian's libfabric pulls in `libinfinipath.so.4` (through `libpsm_infinipath.so.1`), whose
 * constructor installs its own SIGSEGV, SIGBUS and SIGILL handlers. The JVM uses SIGSEGV for implicit null checks and
 * safepoints in JIT-compiled code, so with those handlers in place compiled code dies at random ("terminated with
 * signal 11"). The constructor leaves the handlers alone when `IPATH_NO_BACKTRACE` is set, so [load] sets it in the
 * process environment (libc `setenv`, not Java's copy of it) before the library is opened. The library is opened, and
 * its native domains and endpoints are, under [OfiSignals.keep] too, which puts back any handler of the JVM's that a
 * native call replaced (libfabric's shm provider installs its own when this process opens its first shm endpoint).
 *
 * A machine without libfabric gets [failure] naming the package to install; nothing else in Braid loads this class.
 */
internal object OfiLibrary {
    /** The API version Braid asks for and whose struct layouts it reads ([OfiInfoDescriptor]). */
    const val API_VERSION: Int = (1 shl 16) or 17

    /** The package that provides the library on Debian and Ubuntu. */
    const val PACKAGE = "libfabric1"

    /**
     * The names tried, in order: [OfiParams.LIBRARY] if set, else the development link first, then the runtime soname
     * Debian ships alone.
     */
    private fun names(): List<String> =
        braid.core.Settings.DEFAULT[OfiParams.LIBRARY].trim().let {
            if (it.isEmpty()) listOf("fabric", "libfabric.so.1") else listOf(it)
        }

    private val loaded: Result<Int> by lazy { open() }

    /** Whether libfabric is loaded (loading it on the first call). */
    val available: Boolean
        get() = loaded.isSuccess

    /** Why libfabric could not be loaded, or null if it is. */
    val failure: String?
        get() = loaded.exceptionOrNull()?.message

    /** The library's own version (`fi_version()`), as `FI_VERSION(major, minor)`. */
    val version: Int
        get() = require()

    /** Loads libfabric if it is not yet, or throws [FabricException] with ENODATA naming the package to install. */
    fun require(): Int =
        loaded.getOrElse { throw FabricException.noData(it.message ?: "ofi: libfabric could not be loaded") }

    fun versionString(v: Int): String = "${v ushr 16}.${v and 0xffff}"

    private fun open(): Result<Int> {
        try {
            Native.register(Libc::class.java, "c")
            Libc.setenv("IPATH_NO_BACKTRACE", "1", 0)
        } catch (t: Throwable) {
            return Result.failure(
                IllegalStateException("ofi: cannot set the signal guard before loading libfabric: $t")
            )
        }
        val problems = ArrayList<String>()
        for (name in names()) {
            val lib =
                try {
                    OfiSignals.keep { NativeLibrary.getInstance(name) }
                } catch (t: UnsatisfiedLinkError) {
                    problems += t.message?.lineSequence()?.firstOrNull() ?: name
                    continue
                }
            return try {
                Native.register(Fi::class.java, lib)
                val v = Fi.fi_version()
                if (v < API_VERSION) {
                    Result.failure(
                        IllegalStateException(
                            "ofi: libfabric ${versionString(v)} is older than ${versionString(API_VERSION)}, the API " +
                                "Braid's native rail is written for; install $PACKAGE ${versionString(API_VERSION)} or newer"
                        )
                    )
                } else Result.success(v)
            } catch (t: Throwable) {
                Result.failure(IllegalStateException("ofi: ${lib.file ?: name} is not a usable libfabric: $t"))
            }
        }
        return Result.failure(
            IllegalStateException(
                "ofi: libfabric is not installed (${problems.joinToString("; ")}); install $PACKAGE " +
                    "(apt-get install $PACKAGE libfabric-bin) to use native providers"
            )
        )
    }

    /** The error text libfabric gives for [errnum] (positive or negated). */
    fun strerror(errnum: Int): String = Fi.fi_strerror(if (errnum < 0) -errnum else errnum) ?: "error $errnum"

    /**
     * libfabric's exported functions, bound by direct mapping. Pointers are passed as `long` (x86-64 and aarch64 LP64),
     * so no JNA `Pointer` is built per call.
     */
    @Suppress("FunctionName")
    internal object Fi {
        @JvmStatic external fun fi_version(): Int

        @JvmStatic
        external fun fi_getinfo(
            version: Int,
            node: String?,
            service: String?,
            flags: Long,
            hints: Long,
            info: Long,
        ): Int

        @JvmStatic external fun fi_freeinfo(info: Long)

        @JvmStatic external fun fi_dupinfo(info: Long): Long

        @JvmStatic external fun fi_fabric(attr: Long, fabric: Long, context: Long): Int

        @JvmStatic external fun fi_strerror(errnum: Int): String?

        @JvmStatic external fun fi_tostr(data: Long, datatype: Int): String?
    }

    /**
     * The libc calls libfabric's structs need: the guard's `setenv` and `sigaction` ([OfiSignals]), and `strdup` for
     * strings `fi_freeinfo` frees.
     */
    @Suppress("FunctionName")
    internal object Libc {
        @JvmStatic external fun setenv(name: String, value: String, overwrite: Int): Int

        @JvmStatic external fun strdup(s: String): Long

        @JvmStatic external fun free(p: Long)

        /** `sigaction(signum, act, oldact)`, the structs kept opaque ([OfiSignals]). */
        @JvmStatic external fun sigaction(signum: Int, act: Long, oldact: Long): Int
    }

    /** `fi_tostr` data types ([Fi.fi_tostr]). */
    const val FI_TYPE_INFO = 0
}
