package braid.bootstrap

/**
 * The part every launcher-backed [Bootstrap] shares: values of any size and bytes go through [KvCodec] into the
 * launcher's own keys; a subclass supplies raw put and get of one launcher key and its limits.
 */
internal abstract class KvBootstrap : Bootstrap {
    /** Longest value the launcher keeps whole, in characters. */
    protected abstract val maxValueChars: Int

    /** Longest key the launcher takes. */
    protected abstract val maxKeyLength: Int

    protected abstract fun putRaw(key: String, value: String)

    /** The launcher's value under [key], or null when it has none. */
    protected abstract fun getRaw(key: String): String?

    private var closed = false

    protected fun checkOpen() {
        if (closed) throw BootstrapException("$kind bootstrap of rank $rank is closed")
    }

    @Synchronized
    override fun put(key: String, value: ByteArray) {
        checkOpen()
        KvCodec.checkKey(key, maxKeyLength)
        for ((k, v) in KvCodec.encode(key, rank, value, maxValueChars)) putRaw(k, v)
    }

    @Synchronized
    override fun get(rank: Int, key: String): ByteArray {
        checkOpen()
        if (rank !in 0 until size) throw BootstrapException("rank $rank is not in this job of $size (key '$key')")
        KvCodec.checkKey(key, maxKeyLength)
        return KvCodec.decode(key, rank) { getRaw(it) }
    }

    /** Leaves the launcher; idempotent. */
    @Synchronized
    override fun close() {
        if (closed) return
        closed = true
        finish()
    }

    protected abstract fun finish()

    /**
     * After asking the launcher to end the job, waits for it to kill this process; if it has not within [graceMillis],
     * exits with [exitCode] itself so the job still ends with that code.
     */
    protected fun awaitKill(exitCode: Int, graceMillis: Long = 10_000): Nothing {
        try {
            Thread.sleep(graceMillis)
        } catch (_: InterruptedException) {}
        Runtime.getRuntime().halt(exitCode)
        throw IllegalStateException("unreachable")
    }

    override fun toString(): String = "$kind bootstrap: rank $rank of $size"
}
