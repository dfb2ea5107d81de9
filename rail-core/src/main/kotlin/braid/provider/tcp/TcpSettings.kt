package braid.provider.tcp

import braid.core.FabricException

/**
 * Settings of the tcp rail that are not endpoint attributes, read from the environment when an
 * endpoint opens:
 * - `BRAID_JOB_KEY`: the job's shared secret (any string). Every connection proves it holds the
 *   same key; a peer that does not is closed, logged, and nothing it sent is matched. Unset on
 *   both sides means the empty key, which also matches only itself: a job that sets a key cannot
 *   talk to one that does not.
 * - `BRAID_TCP_TIMEOUT_MS` (default 5000): how long a peer may stay silent (no frame, not even a
 *   heartbeat) before it is declared dead and the operations waiting on it fail; also the limit
 *   for connecting. Heartbeats go out every quarter of it, from a background thread, so a
 *   process that computes for a long time without driving progress is not mistaken for a dead
 *   one, while a stopped or unreachable one is.
 * - `BRAID_TCP_WINDOW` (default 4 MiB): the credit each sender gets for messages this endpoint
 *   holds unexpected (see [TcpFrameDescriptor]); at least [TcpFrameDescriptor.MIN_WINDOW].
 */
internal data class TcpSettings(
    val jobKey: String = "",
    val timeoutMillis: Long = DEFAULT_TIMEOUT_MS,
    val window: Int = DEFAULT_WINDOW,
) {
    init {
        if (timeoutMillis < 10) throw FabricException.invalid("tcp: timeout $timeoutMillis ms is below 10 ms; set BRAID_TCP_TIMEOUT_MS ≥ 10")
        if (window < TcpFrameDescriptor.MIN_WINDOW) {
            throw FabricException.invalid("tcp: window $window bytes is below the minimum ${TcpFrameDescriptor.MIN_WINDOW}; set BRAID_TCP_WINDOW ≥ ${TcpFrameDescriptor.MIN_WINDOW}")
        }
    }

    override fun toString(): String = "TcpSettings(jobKey=${if (jobKey.isEmpty()) "<empty>" else "<set>"}, timeoutMillis=$timeoutMillis, window=$window)"

    companion object {
        const val DEFAULT_TIMEOUT_MS: Long = 5000
        const val DEFAULT_WINDOW: Int = 4 shl 20

        fun fromEnvironment(env: (String) -> String? = System::getenv): TcpSettings = TcpSettings(
            jobKey = env("BRAID_JOB_KEY") ?: "",
            timeoutMillis = long(env, "BRAID_TCP_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
            window = long(env, "BRAID_TCP_WINDOW", DEFAULT_WINDOW.toLong()).coerceAtMost(1L shl 30).toInt(),
        )

        private fun long(env: (String) -> String?, name: String, default: Long): Long {
            val v = env(name) ?: return default
            return v.trim().toLongOrNull() ?: throw FabricException.invalid("environment $name='$v' is not an integer")
        }
    }
}
