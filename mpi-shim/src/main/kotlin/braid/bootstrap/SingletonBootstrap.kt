package braid.bootstrap

import kotlin.system.exitProcess

/** The job of a process no launcher started: rank 0 of 1, its own puts the only values. */
internal class SingletonBootstrap : Bootstrap {
    private val values = HashMap<String, ByteArray>()
    override val rank: Int
        get() = 0

    override val size: Int
        get() = 1

    override val kind: String
        get() = "singleton"

    @Synchronized
    override fun put(key: String, value: ByteArray) {
        if (key.isEmpty()) throw BootstrapException("an empty key")
        values[key] = value.copyOf()
    }

    override fun fence() {}

    @Synchronized
    override fun get(rank: Int, key: String): ByteArray {
        if (rank != 0)
            throw BootstrapException(
                "rank $rank is not in this job of 1 (key '$key'); no launcher started this process"
            )
        return values[key]?.copyOf() ?: throw BootstrapException("rank 0 put nothing under key '$key'")
    }

    override fun abort(exitCode: Int, message: String): Nothing {
        System.err.println("rank 0: abort ($exitCode): $message")
        System.err.flush()
        exitProcess(exitCode)
    }

    override fun close() {}

    override fun toString(): String = "singleton bootstrap: rank 0 of 1"
}
