package braid.provider.tcp

import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.SelectionKey
import java.nio.channels.SocketChannel
import java.util.zip.CRC32C
import org.agrona.concurrent.UnsafeBuffer

/**
 * One socket between two tcp endpoints: its handshake state, its inbound buffer and frame decoder, and the handshake
 * frames it still has to write. Once [State.ESTABLISHED] it carries its [peer]'s frames, from the peer's outbound
 * buffer.
 *
 * The inbound buffer starts small (an unauthenticated connection costs little) and grows to the endpoint's buffer size
 * once the handshake is done.
 */
internal class TcpConnection(
    val channel: SocketChannel,
    /** Whether this endpoint opened it (the connector) or accepted it. */
    val outgoing: Boolean,
    /** Known from the start for an outgoing connection; for an incoming one, once the handshake proves who it is. */
    var peer: TcpPeer?,
    val openedAt: Long,
    limits: (TcpConnection) -> TcpFrameAdapter.Limits,
) {
    enum class State {
        CONNECTING,
        AWAIT_HELLO,
        AWAIT_CHALLENGE,
        AWAIT_AUTH,
        AWAIT_WELCOME,
        ESTABLISHED,
        CLOSED,
    }

    var state: State = if (outgoing) State.CONNECTING else State.AWAIT_HELLO
    lateinit var key: SelectionKey
    val adapter = TcpFrameAdapter(limits(this))
    var inbound: ByteBuffer = ByteBuffer.allocateDirect(HANDSHAKE_BUFFER)
    /** The decoder's callbacks (the transport's, bound to this connection). */
    lateinit var handler: TcpFrameAdapter.Handler

    /** Handshake frames waiting to be written; they precede any data frame. */
    val hs: ByteBuffer = ByteBuffer.allocateDirect(HANDSHAKE_BUFFER)
    private val hsView = UnsafeBuffer(hs)
    private val hsCrc = CRC32C()
    private val hsCrcView = hs.duplicate()
    /** The handshake frame payload being read. */
    val hsPayload = UnsafeBuffer(ByteArray(HandshakeDescriptor.MAX_PAYLOAD))

    var myNonce: ByteArray = ByteArray(0)
    var theirNonce: ByteArray = ByteArray(0)
    var theirId = 0L
    var theirWindow = 0L
    var theirHost = 0L

    /** Bytes read so far, and when the keepalive last saw that count move. */
    var bytesReceived = 0L
    var rxSeenBytes = -1L
    var rxSeenAt = openedAt
    /** The peer's bytes sent, as the keepalive last saw them, and when. */
    var txSeenBytes = -1L
    var txSeenAt = openedAt

    /** Where the other end is, for messages. */
    var remote: String = runCatching { channel.remoteAddress?.toString() }.getOrNull() ?: "(unconnected)"

    val established: Boolean
        get() = state == State.ESTABLISHED

    /** Appends a handshake frame with [payloadLength] bytes of [payload] (from offset 0). */
    fun putHandshake(type: Int, payload: UnsafeBuffer?, payloadLength: Int) {
        val at = hs.position()
        hs.position(
            at + TcpFrameDescriptor.putHeader(hsView, hsCrcView, hsCrc, at, type, 0, payloadLength, 0, 0, 0, 0, 0)
        )
        if (payloadLength > 0) {
            hsView.putBytes(hs.position(), payload!!, 0, payloadLength)
            hs.position(hs.position() + payloadLength)
        }
    }

    /** Writes pending handshake frames; true when none are left. */
    @Throws(IOException::class)
    fun flushHandshake(): Boolean {
        if (hs.position() == 0) return true
        hs.flip()
        channel.write(hs)
        hs.compact()
        return hs.position() == 0
    }

    /** Replaces the small handshake buffer with one of [size] bytes, keeping unread bytes. */
    fun growInbound(size: Int) {
        if (inbound.capacity() >= size) return
        val big = ByteBuffer.allocateDirect(size)
        inbound.flip()
        big.put(inbound)
        inbound = big
    }

    fun close() {
        if (state == State.CLOSED) return
        state = State.CLOSED
        runCatching { if (this::key.isInitialized) key.cancel() }
        runCatching { channel.close() }
    }

    override fun toString(): String = "${if (outgoing) "to" else "from"} $remote ($state)"

    companion object {
        const val HANDSHAKE_BUFFER = 1024
    }
}
