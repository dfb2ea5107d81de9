package braid.bootstrap

import braid.bootstrap.PmixDescriptor as D
import com.sun.jna.Library
import com.sun.jna.Memory
import com.sun.jna.Native
import com.sun.jna.Pointer
import com.sun.jna.ptr.PointerByReference

/**
 * PMIx through `libpmix.so.2`, as Open MPI's `mpirun` (4.1, a PMIx server) and Slurm's `srun --mpi=pmix` serve it:
 * `PMIx_Init`, `PMIx_Put` (PMIX_GLOBAL) of a byte object, `PMIx_Commit` and `PMIx_Fence` collecting the data for
 * [fence], `PMIx_Get` per rank, `PMIx_Abort`, `PMIx_Finalize`. PMIx keeps each process's values apart and takes values
 * of any size, so no splitting is needed. Layouts: [PmixDescriptor].
 */
internal class PmixBootstrap(library: String?) : Bootstrap {
    private val lib: PmixLibrary = load(library)
    private val self: Memory = D.newProc()
    private val nspace: String
    override val rank: Int
    override val size: Int
    override val appnum: Int
    override val universeSize: Int
    override val kind: String
        get() = "pmix"

    private var closed = false

    init {
        check(lib.PMIx_Init(self, null, 0), "PMIx_Init")
        nspace = D.nspace(self)
        rank = D.rank(self)
        val wildcard = D.proc(nspace, D.RANK_WILDCARD)
        size =
            getUint32(wildcard, D.KEY_JOB_SIZE)
                ?: throw BootstrapException(
                    "PMIx: the server gave no job size (${D.KEY_JOB_SIZE}) for namespace $nspace"
                )
        universeSize = getUint32(wildcard, D.KEY_UNIV_SIZE) ?: size
        appnum = getUint32(self, D.KEY_APPNUM) ?: 0
    }

    private fun check(status: Int, call: String) {
        if (status != D.PMIX_SUCCESS)
            throw BootstrapException("PMIx: $call failed: ${lib.PMIx_Error_string(status)} ($status)")
    }

    private fun getUint32(proc: Pointer, key: String): Int? {
        val out = PointerByReference()
        if (lib.PMIx_Get(proc, key, null, 0, out) != D.PMIX_SUCCESS) return null
        val value = out.value ?: return null
        return try {
            if (D.type(value) == D.PMIX_UINT32) D.uint32Of(value) else null
        } finally {
            release(value)
        }
    }

    private fun release(value: Pointer) {
        lib.PMIx_Value_destruct(value)
        Native.free(Pointer.nativeValue(value))
    }

    private fun checkKey(key: String) {
        if (key.isEmpty() || key.toByteArray(Charsets.UTF_8).size >= D.KEY_LENGTH) {
            throw BootstrapException("key '$key': PMIx keys are 1 to ${D.KEY_LENGTH - 1} bytes")
        }
        if (key.startsWith("pmix")) throw BootstrapException("key '$key': keys starting 'pmix' are PMIx's own")
    }

    private fun checkOpen() {
        if (closed) throw BootstrapException("pmix bootstrap of rank $rank is closed")
    }

    @Synchronized
    override fun put(key: String, value: ByteArray) {
        checkOpen()
        checkKey(key)
        val (v, data) = D.byteObject(value)
        check(lib.PMIx_Put(D.PMIX_GLOBAL, key, v), "PMIx_Put of key '$key' (${value.size} bytes)")
        // PMIx_Put copies the value: the native memory may go once it returns.
        data?.close()
        v.close()
    }

    @Synchronized
    override fun fence() {
        checkOpen()
        check(lib.PMIx_Commit(), "PMIx_Commit")
        val collect = D.boolInfo(D.KEY_COLLECT_DATA, true)
        check(lib.PMIx_Fence(null, 0, collect, 1), "PMIx_Fence")
    }

    @Synchronized
    override fun get(rank: Int, key: String): ByteArray {
        checkOpen()
        if (rank !in 0 until size) throw BootstrapException("rank $rank is not in this job of $size (key '$key')")
        checkKey(key)
        val out = PointerByReference()
        val status = lib.PMIx_Get(D.proc(nspace, rank), key, null, 0, out)
        if (status == D.PMIX_ERR_NOT_FOUND)
            throw BootstrapException("rank $rank put nothing under key '$key' (or has not fenced since)")
        check(status, "PMIx_Get of rank $rank's key '$key'")
        val value = out.value ?: throw BootstrapException("PMIx_Get of rank $rank's key '$key' returned no value")
        try {
            if (D.type(value) != D.PMIX_BYTE_OBJECT) {
                throw BootstrapException("rank $rank's key '$key' holds PMIx type ${D.type(value)}, not a byte object")
            }
            return D.bytesOf(value)
        } finally {
            release(value)
        }
    }

    override fun abort(exitCode: Int, message: String): Nothing {
        AbortNotice.print(rank, exitCode, message)
        lib.PMIx_Abort(exitCode, message, null, 0)
        try {
            Thread.sleep(10_000)
        } catch (_: InterruptedException) {}
        Runtime.getRuntime().halt(exitCode)
        throw IllegalStateException("unreachable")
    }

    @Synchronized
    override fun close() {
        if (closed) return
        closed = true
        check(lib.PMIx_Finalize(null, 0), "PMIx_Finalize")
    }

    override fun toString(): String = "pmix bootstrap: rank $rank of $size in $nspace"

    @Suppress("FunctionName")
    private interface PmixLibrary : Library {
        fun PMIx_Init(proc: Pointer, info: Pointer?, ninfo: Long): Int

        fun PMIx_Finalize(info: Pointer?, ninfo: Long): Int

        fun PMIx_Abort(status: Int, msg: String, procs: Pointer?, nprocs: Long): Int

        fun PMIx_Put(scope: Byte, key: String, value: Pointer): Int

        fun PMIx_Commit(): Int

        fun PMIx_Fence(procs: Pointer?, nprocs: Long, info: Pointer?, ninfo: Long): Int

        fun PMIx_Get(proc: Pointer, key: String, info: Pointer?, ninfo: Long, value: PointerByReference): Int

        fun PMIx_Value_destruct(value: Pointer)

        fun PMIx_Error_string(status: Int): String
    }

    private companion object {
        /** libpmix: [library] ([BootstrapParams.PMIX_LIBRARY]) if given, else the usual names. */
        fun load(library: String?): PmixLibrary {
            val names = listOfNotNull(library, "pmix", "libpmix.so.2")
            var last: Throwable? = null
            for (name in names) {
                try {
                    return Native.load(name, PmixLibrary::class.java)
                } catch (t: UnsatisfiedLinkError) {
                    last = t
                }
            }
            throw BootstrapException(
                "PMIx: this process was started by a PMIx launcher but libpmix cannot be loaded " +
                    "(tried ${names.joinToString()}); install libpmix2 or set BRAID_PMIX_LIBRARY",
                last,
            )
        }
    }
}
