package braid.bootstrap

import java.io.BufferedReader
import java.io.IOException
import java.io.InputStreamReader
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.ConcurrentHashMap

/**
 * The key-value server of `braid run`: PMI-1 in Hydra's port mode (`PMI_PORT`, `PMI_ID`) on a loopback TCP port, so
 * Braid's [Pmi1Bootstrap] and MPICH-built C programs (MPICH's `simple_pmi.c` takes the same route when `PMI_PORT` is
 * set) both run under it. Commands: `initack`, `init` (version 1.1), `get_maxes`, `get_appnum`, `get_universe_size`,
 * `get_my_kvsname`, `put`, `get`, `barrier_in`, `publish_name`/`lookup_name`/`unpublish_name`, `abort`, `finalize`. A
 * value longer than the advertised `vallen_max` is refused, never cut.
 *
 * One thread per connection (a job on one machine has few ranks); [listener] hears aborts.
 */
internal class PmiServer(
    private val size: Int,
    private val kvsname: String,
    /** Each rank's `get_appnum` answer (`MPI_APPNUM`); 0 for ranks beyond it. */
    private val appnums: IntArray = IntArray(0),
    private val listener: Listener,
) : AutoCloseable {
    /** What the launcher must act on. */
    fun interface Listener {
        /** [rank] asked for the job to end with [exitCode]. */
        fun aborted(rank: Int, exitCode: Int)
    }

    private val socket =
        ServerSocket().apply { bind(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), size + 16) }
    private val store = ConcurrentHashMap<String, String>()
    private val names = ConcurrentHashMap<String, String>()
    private val connections = ConcurrentHashMap.newKeySet<Connection>()
    private val barrierLock = Any()
    private val inBarrier = ArrayList<Connection>()
    @Volatile private var closed = false

    /** `PMI_PORT` for the ranks: `127.0.0.1:PORT`. */
    val port: String = "${InetAddress.getLoopbackAddress().hostAddress}:${socket.localPort}"

    private val acceptor =
        Thread({ acceptLoop() }, "braid-run-pmi-accept").apply {
            isDaemon = true
            start()
        }

    private fun acceptLoop() {
        while (!closed) {
            val s =
                try {
                    socket.accept()
                } catch (e: IOException) {
                    if (closed) return
                    System.err.println("braid run: PMI server accept failed: ${e.message}")
                    return
                }
            val c = Connection(s)
            connections += c
            Thread({ c.serve() }, "braid-run-pmi-${s.port}").apply {
                isDaemon = true
                start()
            }
        }
    }

    private inner class Connection(private val socket: Socket) {
        private val out: OutputStream = socket.getOutputStream()
        var rank: Int = -1

        fun send(line: PmiLine) =
            synchronized(out) {
                try {
                    out.write(line.encode().toByteArray(Charsets.UTF_8))
                    out.flush()
                } catch (_: IOException) {
                    // The rank is gone; the launcher learns that from its exit.
                }
            }

        fun shut() {
            runCatching { socket.close() }
        }

        fun serve() {
            socket.tcpNoDelay = true
            try {
                val input = BufferedReader(InputStreamReader(socket.getInputStream(), Charsets.UTF_8))
                while (true) {
                    val text = input.readLine() ?: break
                    if (!handle(PmiLine.parse(text))) break
                }
            } catch (_: IOException) {} finally {
                connections -= this
                synchronized(barrierLock) { inBarrier.remove(this) }
                socket.close()
            }
        }

        /** Answers one request; false once the rank has finalized. */
        private fun handle(m: PmiLine): Boolean {
            when (m.command) {
                "initack" -> {
                    val id = m["pmiid"]?.toIntOrNull()
                    if (id == null || id !in 0 until size) {
                        send(
                            PmiLine.of(
                                "cmd" to "initack",
                                "rc" to -1,
                                "msg" to "pmiid_${m["pmiid"]}_not_in_0..${size - 1}",
                            )
                        )
                        return false
                    }
                    rank = id
                    send(PmiLine.of("cmd" to "initack"))
                    send(PmiLine.of("cmd" to "set", "size" to size))
                    send(PmiLine.of("cmd" to "set", "rank" to id))
                    send(PmiLine.of("cmd" to "set", "debug" to 0))
                }
                "init" ->
                    if (m["pmi_version"] == "1") {
                        send(
                            PmiLine.of(
                                "cmd" to "response_to_init",
                                "pmi_version" to 1,
                                "pmi_subversion" to 1,
                                "rc" to 0,
                            )
                        )
                    } else {
                        send(
                            PmiLine.of(
                                "cmd" to "response_to_init",
                                "pmi_version" to 1,
                                "pmi_subversion" to 1,
                                "rc" to -1,
                            )
                        )
                    }
                "get_maxes" ->
                    send(
                        PmiLine.of(
                            "cmd" to "maxes",
                            "kvsname_max" to 256,
                            "keylen_max" to MAX_KEY,
                            "vallen_max" to MAX_VALUE,
                        )
                    )
                "get_appnum" -> send(PmiLine.of("cmd" to "appnum", "appnum" to (appnums.getOrNull(rank) ?: 0)))
                "get_universe_size" -> send(PmiLine.of("cmd" to "universe_size", "size" to size))
                "get_my_kvsname" -> send(PmiLine.of("cmd" to "my_kvsname", "kvsname" to kvsname))
                "put" -> put(m)
                "get" -> {
                    val key = m["key"] ?: ""
                    val value = store[key]
                    if (value == null) {
                        send(
                            PmiLine.of(
                                "cmd" to "get_result",
                                "rc" to -1,
                                "msg" to "key_${key}_not_found",
                                "value" to "unknown",
                            )
                        )
                    } else {
                        send(PmiLine.of("cmd" to "get_result", "rc" to 0, "msg" to "success", "value" to value))
                    }
                }
                "barrier_in" -> barrier(this)
                "publish_name" -> {
                    val service = m["service"] ?: ""
                    val fresh = names.putIfAbsent(service, m["port"] ?: "") == null
                    send(
                        PmiLine.of(
                            "cmd" to "publish_result",
                            "rc" to if (fresh) 0 else -1,
                            "msg" to if (fresh) "success" else "service_${service}_already_published",
                        )
                    )
                }
                "unpublish_name" -> {
                    val found = names.remove(m["service"] ?: "") != null
                    send(
                        PmiLine.of(
                            "cmd" to "unpublish_result",
                            "rc" to if (found) 0 else -1,
                            "msg" to if (found) "success" else "service_not_found",
                        )
                    )
                }
                "lookup_name" -> {
                    val port = names[m["service"] ?: ""]
                    if (port == null) {
                        send(PmiLine.of("cmd" to "lookup_result", "rc" to -1, "msg" to "service_not_found"))
                    } else {
                        send(PmiLine.of("cmd" to "lookup_result", "rc" to 0, "msg" to "success", "port" to port))
                    }
                }
                "abort" -> listener.aborted(rank, m["exitcode"]?.toIntOrNull() ?: 1)
                "finalize" -> {
                    send(PmiLine.of("cmd" to "finalize_ack"))
                    return false
                }
                else -> {
                    System.err.println("braid run: rank $rank sent a PMI command braid run does not serve: $m")
                    send(PmiLine.of("cmd" to "${m.command}_result", "rc" to -1, "msg" to "unknown_command"))
                }
            }
            return true
        }

        private fun put(m: PmiLine) {
            val key = m["key"]
            val value = m["value"] ?: ""
            when {
                key.isNullOrEmpty() -> send(PmiLine.of("cmd" to "put_result", "rc" to -1, "msg" to "no_key"))
                key.length > MAX_KEY ->
                    send(PmiLine.of("cmd" to "put_result", "rc" to -1, "msg" to "key_longer_than_$MAX_KEY"))
                // Hydra keeps 1023 characters of a longer value without a word; this server refuses it.
                value.length >= MAX_VALUE ->
                    send(PmiLine.of("cmd" to "put_result", "rc" to -1, "msg" to "value_longer_than_${MAX_VALUE - 1}"))
                else -> {
                    store[key] = value
                    send(PmiLine.of("cmd" to "put_result", "rc" to 0, "msg" to "success"))
                }
            }
        }
    }

    private fun barrier(c: Connection) {
        val release: List<Connection>
        synchronized(barrierLock) {
            inBarrier += c
            if (inBarrier.size < size) return
            release = ArrayList(inBarrier)
            inBarrier.clear()
        }
        val out = PmiLine.of("cmd" to "barrier_out")
        release.forEach { it.send(out) }
    }

    override fun close() {
        closed = true
        socket.close()
        connections.forEach { it.shut() }
        acceptor.join(1_000)
    }

    companion object {
        const val MAX_KEY: Int = 64
        const val MAX_VALUE: Int = 1024
    }
}
