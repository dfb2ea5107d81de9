package braid.samples

import java.io.BufferedInputStream
import java.io.BufferedOutputStream
import java.io.DataInputStream
import java.io.DataOutputStream
import java.io.EOFException
import java.io.IOException
import java.net.BindException
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.net.SocketTimeoutException
import java.net.UnknownHostException
import java.util.concurrent.TimeUnit

/**
 * The out-of-band control connection of a pingpong, as in fi_pingpong: a plain TCP socket on which the two sides
 * exchange their settings and endpoint addresses and synchronise between sizes. No data of the benchmark travels here.
 *
 * Every read has a deadline ([READ_TIMEOUT_SECONDS]); every I/O error becomes a [CommandFailure] saying what the side
 * was doing and what the peer appears to have done.
 */
internal class ControlChannel private constructor(private val socket: Socket) : AutoCloseable {
    private val input = DataInputStream(BufferedInputStream(socket.getInputStream()))
    private val output = DataOutputStream(BufferedOutputStream(socket.getOutputStream()))

    /** The peer, for messages: `127.0.0.1:47592`. */
    val peer: String = socket.remoteSocketAddress.toString().removePrefix("/")

    init {
        socket.tcpNoDelay = true
        socket.soTimeout = TimeUnit.SECONDS.toMillis(READ_TIMEOUT_SECONDS).toInt()
    }

    /** Writes with [block] and flushes; [doing] names the step for error messages. */
    fun send(doing: String, block: DataOutputStream.() -> Unit) {
        try {
            output.block()
            output.flush()
        } catch (e: IOException) {
            throw failure(doing, e)
        }
    }

    /** Reads with [block]; [doing] names the step for error messages. */
    fun <T> receive(doing: String, block: DataInputStream.() -> T): T =
        try {
            input.block()
        } catch (e: IOException) {
            throw failure(doing, e)
        }

    /**
     * fi_pingpong's `pp_ctrl_sync`: the client sends `q` and waits for `a`; the server waits for `q` and answers `a`.
     * Both leave together, give or take one TCP round trip.
     */
    fun sync(client: Boolean, doing: String) {
        if (client) {
            send(doing) { writeByte(SYNC_Q) }
            expect(SYNC_A, doing)
        } else {
            expect(SYNC_Q, doing)
            send(doing) { writeByte(SYNC_A) }
        }
    }

    private fun expect(byte: Int, doing: String) {
        val got = receive(doing) { readUnsignedByte() }
        if (got != byte) {
            throw CommandFailure(
                "control connection to $peer: out of step while $doing: got byte 0x${Integer.toHexString(got)}, expected '${byte.toChar()}'"
            )
        }
    }

    private fun failure(doing: String, e: IOException): CommandFailure =
        when (e) {
            is EOFException ->
                CommandFailure(
                    "the peer $peer closed the control connection while this side was $doing; it stopped or failed (see its output)",
                    e,
                )
            is SocketTimeoutException ->
                CommandFailure(
                    "no word from the peer $peer for $READ_TIMEOUT_SECONDS s while $doing; is it still running?",
                    e,
                )
            else -> CommandFailure("control connection to $peer failed while $doing: ${e.message}", e)
        }

    override fun close() {
        runCatching { socket.close() }
    }

    companion object {
        /** fi_pingpong's control port. */
        const val DEFAULT_PORT: Int = 47592

        /** How long a client keeps trying to reach the server's control port. */
        const val CONNECT_TIMEOUT_SECONDS: Long = 30

        /** How long either side waits for the other on the control connection. */
        const val READ_TIMEOUT_SECONDS: Long = 60

        private const val SYNC_Q = 'q'.code
        private const val SYNC_A = 'a'.code

        /**
         * Server side: listens on [port] (all interfaces, like fi_pingpong) and accepts one client, waiting at most
         * [acceptTimeoutSeconds] (null: for ever). [onListening] runs once the port is bound.
         */
        fun accept(port: Int, acceptTimeoutSeconds: Int?, onListening: () -> Unit = {}): ControlChannel {
            val server = ServerSocket()
            try {
                server.reuseAddress = true
                try {
                    server.bind(InetSocketAddress(port), 1)
                } catch (e: BindException) {
                    throw CommandFailure(
                        "cannot listen on control port $port: ${e.message}; is another pingpong server running? Choose another port with -B",
                        e,
                    )
                }
                onListening()
                server.soTimeout =
                    if (acceptTimeoutSeconds == null) 0
                    else TimeUnit.SECONDS.toMillis(acceptTimeoutSeconds.toLong()).toInt()
                val socket =
                    try {
                        server.accept()
                    } catch (e: SocketTimeoutException) {
                        throw CommandFailure(
                            "no client connected to control port $port within $acceptTimeoutSeconds s",
                            e,
                        )
                    }
                return ControlChannel(socket)
            } catch (e: IOException) {
                throw CommandFailure("control port $port: ${e.message}", e)
            } finally {
                runCatching { server.close() }
            }
        }

        /**
         * Client side: connects to [host]:[port], from local port [localPort] (0: any), retrying while the server is
         * not listening yet, for at most [CONNECT_TIMEOUT_SECONDS]. Before each attempt [abort] may return a reason to
         * give up at once (the server process died).
         */
        fun connect(host: String, port: Int, localPort: Int, abort: () -> String? = { null }): ControlChannel {
            val address =
                try {
                    InetAddress.getByName(host)
                } catch (e: UnknownHostException) {
                    throw CommandFailure("unknown server address '$host'", e)
                }
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONNECT_TIMEOUT_SECONDS)
            var last: IOException? = null
            while (true) {
                abort()?.let { throw CommandFailure(it) }
                val socket = Socket()
                try {
                    if (localPort != 0) {
                        socket.reuseAddress = true
                        try {
                            socket.bind(InetSocketAddress(localPort))
                        } catch (e: BindException) {
                            throw CommandFailure("cannot use local control port $localPort (-B): ${e.message}", e)
                        }
                    }
                    val left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()).coerceIn(1, 1000)
                    socket.connect(InetSocketAddress(address, port), left.toInt())
                    return ControlChannel(socket)
                } catch (e: IOException) {
                    runCatching { socket.close() }
                    last = e
                } catch (e: Throwable) {
                    runCatching { socket.close() }
                    throw e
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw CommandFailure(
                        "could not connect to the pingpong server at $host:$port within $CONNECT_TIMEOUT_SECONDS s " +
                            "(${last.message}); is it running, e.g. 'braid pingpong -B $port'?",
                        last,
                    )
                }
                Thread.sleep(50)
            }
        }
    }
}
