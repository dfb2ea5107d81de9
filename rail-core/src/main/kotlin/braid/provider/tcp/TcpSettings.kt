package braid.provider.tcp

import braid.core.CoreParams
import braid.core.Settings

/**
 * The tcp rail's settings an endpoint runs with, resolved once from [Settings] when it opens (each is declared, with
 * its rule, in [TcpParams]; the job key is [CoreParams.JOB_KEY]):
 * - [jobKey]: the job's shared secret. Every connection proves it holds the same key; a peer that does not is closed,
 *   logged, and nothing it sent is matched. Unset on both sides means the empty key, which also matches only itself: a
 *   job that sets a key cannot talk to one that does not.
 * - [timeoutMillis]: how long a peer may stay silent (no frame, not even a heartbeat) before it is declared dead and
 *   the operations waiting on it fail; also the limit for connecting. Heartbeats go out every quarter of it, so a
 *   process that computes for a long time without driving progress is not mistaken for a dead one, while a stopped or
 *   unreachable one is.
 * - [window]: the most credit one sender gets for message heads (its fair share of the endpoint's unexpected bounds is
 *   often less; see [TcpFrameDescriptor] and [TcpCredit]); at least [TcpFrameDescriptor.MIN_WINDOW].
 * - [bufferSize]: bytes of each connection's send and receive buffers.
 */
internal data class TcpSettings(
    val jobKey: String = "",
    val timeoutMillis: Long = TcpParams.TIMEOUT_MS.default,
    val window: Int = TcpParams.WINDOW.default,
    val bufferSize: Int = TcpParams.BUFFER_SIZE.default,
) {
    override fun toString(): String =
        "TcpSettings(jobKey=${if (jobKey.isEmpty()) "<empty>" else "<set>"}, timeoutMillis=$timeoutMillis, window=$window, bufferSize=$bufferSize)"

    companion object {
        /** The largest window: credit is counted in an int on the wire. */
        const val MAX_WINDOW: Int = 1 shl 30

        /** [settings] resolved; a malformed or rule-breaking value is a [braid.core.SettingsException] naming it. */
        fun of(settings: Settings): TcpSettings =
            TcpSettings(
                jobKey = settings[CoreParams.JOB_KEY],
                timeoutMillis = settings[TcpParams.TIMEOUT_MS],
                window = settings[TcpParams.WINDOW].coerceAtMost(MAX_WINDOW),
                bufferSize = settings[TcpParams.BUFFER_SIZE],
            )
    }
}
