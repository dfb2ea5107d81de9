package braid.mpi

/**
 * An info object (`MPI_Info`): an ordered set of string keys with string values, the hints MPI calls accept. Braid
 * reads no hint today; an info is kept and returned as given (`MPI_Comm_get_info` answers what was set).
 */
public class Info() {
    private val entries = LinkedHashMap<String, String>()
    @Volatile private var freed = false

    /** `MPI_Info_set`: [value] under [key], replacing one there. */
    public fun set(key: String, value: String) {
        check("MPI_Info_set")
        if (key.isEmpty() || key.length > MAX_INFO_KEY)
            throw MPIException.of(
                ErrorClass.ERR_INFO_KEY,
                "MPI_Info_set",
                "key '$key' must have 1..$MAX_INFO_KEY characters",
            )
        if (value.length > MAX_INFO_VAL)
            throw MPIException.of(
                ErrorClass.ERR_INFO_VALUE,
                "MPI_Info_set",
                "the value of '$key' has ${value.length} characters; at most $MAX_INFO_VAL",
            )
        synchronized(entries) { entries[key] = value }
    }

    /** `MPI_Info_get`: the value under [key], or null. */
    public fun get(key: String): String? {
        check("MPI_Info_get")
        return synchronized(entries) { entries[key] }
    }

    /** `MPI_Info_delete`: removes [key], which must be there (`MPI_ERR_INFO_NOKEY` otherwise). */
    public fun delete(key: String) {
        check("MPI_Info_delete")
        synchronized(entries) {
            entries.remove(key)
                ?: throw MPIException.of(ErrorClass.ERR_INFO_NOKEY, "MPI_Info_delete", "key '$key' is not set")
        }
    }

    /** `MPI_Info_get_nkeys`. */
    public fun size(): Int {
        check("MPI_Info_get_nkeys")
        return synchronized(entries) { entries.size }
    }

    /** `MPI_Info_get_nthkey`: the [n]th key in the order they were first set. */
    public fun getKey(n: Int): String {
        check("MPI_Info_get_nthkey")
        synchronized(entries) {
            if (n !in 0 until entries.size)
                throw MPIException.of(
                    ErrorClass.ERR_ARG,
                    "MPI_Info_get_nthkey",
                    "index $n is outside 0..${entries.size - 1}",
                )
            return entries.keys.elementAt(n)
        }
    }

    /** `MPI_Info_dup`: a copy with the same keys in the same order. */
    public fun dup(): Info {
        check("MPI_Info_dup")
        val copy = Info()
        synchronized(entries) { copy.entries.putAll(entries) }
        return copy
    }

    /** `MPI_Info_free`: later calls raise `MPI_ERR_INFO`. */
    public fun free() {
        freed = true
    }

    /** Whether [free] was called (the handle is then `MPI_INFO_NULL`). */
    public val isNull: Boolean
        get() = freed

    private fun check(call: String) {
        if (freed) throw MPIException.of(ErrorClass.ERR_INFO, call, "the info object has been freed")
    }

    override fun toString(): String = synchronized(entries) { "Info$entries" }

    public companion object {
        /** `MPI_MAX_INFO_KEY`. */
        public const val MAX_INFO_KEY: Int = 255
        /** `MPI_MAX_INFO_VAL`. */
        public const val MAX_INFO_VAL: Int = 1024

        /**
         * `MPI_INFO_ENV`: how this process was started, with the keys MPI names where they are known here (`command`,
         * `argv` are not: the JVM does not say; `host`, `maxprocs`, `wdir`, `thread_level` are).
         */
        @JvmStatic
        public fun env(mpi: Mpi?): Info {
            val info = Info()
            info.entries["host"] =
                runCatching { java.net.InetAddress.getLocalHost().hostName }.getOrDefault("localhost")
            info.entries["wdir"] = System.getProperty("user.dir") ?: ""
            if (mpi != null) {
                info.entries["maxprocs"] = mpi.bootstrap.size.toString()
                info.entries["thread_level"] = "MPI_THREAD_" + mpi.threadLevel.name
            }
            return info
        }
    }
}
