package braid.provider.tcp

import braid.core.Errno
import braid.core.FabricException
import java.io.IOException
import java.net.InetSocketAddress
import java.net.StandardSocketOptions
import java.nio.channels.SelectableChannel
import java.nio.channels.SelectionKey
import java.nio.channels.Selector
import java.nio.channels.ServerSocketChannel
import java.nio.channels.SocketChannel
import java.util.function.Consumer

/**
 * One tcp endpoint's sockets at the system's level: its listening socket and the [Selector] every connection registers
 * with, polled without blocking ([select]). What is ready is [TcpConnections]'s to handle. Not thread-safe: the
 * transport calls in under the domain lock.
 */
internal class TcpListener(endpoint: String, bind: InetSocketAddress) {
    private val selector: Selector = Selector.open()
    private val server: ServerSocketChannel = ServerSocketChannel.open()

    init {
        try {
            server.configureBlocking(false)
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true)
            server.bind(bind, BACKLOG)
        } catch (e: IOException) {
            runCatching { server.close() }
            runCatching { selector.close() }
            throw FabricException(
                Errno.EADDRNOTAVAIL,
                "tcp $endpoint: cannot listen on $bind (${e.message}); set BRAID_TCP_ADDR to a free address and port, or port 0",
                e,
            )
        }
    }

    /** The port it listens on (the one asked for, or the one the system chose for port 0). */
    val port: Int = (server.localAddress as InetSocketAddress).port

    /** Whether it accepts connections yet ([enable]). */
    var enabled = false
        private set

    /** Starts accepting connections; false if it already had. */
    fun enable(): Boolean {
        if (enabled) return false
        server.register(selector, SelectionKey.OP_ACCEPT, SERVER)
        enabled = true
        return true
    }

    /**
     * Hands every key ready now to [action] (the listening socket's has [SERVER] attached); throws what the selector
     * throws.
     */
    @Throws(IOException::class) fun select(action: Consumer<SelectionKey>): Int = selector.selectNow(action)

    /** A connection waiting to be accepted, or null; throws what accepting throws. */
    @Throws(IOException::class) fun accept(): SocketChannel? = server.accept()

    /** Registers [ch] for [ops], with [attachment] on its key. */
    fun register(ch: SelectableChannel, ops: Int, attachment: Any): SelectionKey =
        ch.register(selector, ops, attachment)

    fun close() {
        runCatching { server.close() }
        runCatching { selector.close() }
    }

    companion object {
        /** What the listening socket's key carries, to tell it from a connection's. */
        val SERVER = Any()
        private const val BACKLOG = 256
    }
}
