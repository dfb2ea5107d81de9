package braid.provider.tcp

import braid.provider.shm.ShmProvider
import java.io.DataInputStream
import java.io.EOFException
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.security.SecureRandom
import java.util.zip.CRC32C
import org.agrona.concurrent.UnsafeBuffer

/**
 * A hand-driven tcp peer over a blocking [Socket]: it speaks the handshake and frames of [TcpFrameDescriptor] byte by
 * byte, so tests can make it misbehave (garbage, truncated frames, a wrong key) where a real endpoint never would. It
 * has an address blob of its own (a listening socket on [bind] that accepts nothing) so an endpoint can put it in its
 * AV.
 */
internal class RawTcpPeer(private val jobKey: String = "", bind: InetAddress = InetAddress.getLoopbackAddress()) :
    AutoCloseable {
    val id: Long = SecureRandom().nextLong() or 1L
    private val listener = ServerSocket(0, 1, bind)
    val address: ByteArray =
        TcpAddressDescriptor.encode(ShmProvider.hostId, id, listener.localSocketAddress as InetSocketAddress)
    private var socket: Socket? = null
    private lateinit var input: DataInputStream
    private val headerMemory = ByteBuffer.allocateDirect(TcpFrameDescriptor.HEADER_LENGTH)
    private val header = UnsafeBuffer(headerMemory)
    private val crc = CRC32C()
    private var nextMsgId = 1L

    /**
     * Connects to the endpoint at [target] (its address blob) and runs the handshake; returns the type of the
     * endpoint's last answer (WELCOME, REJECT), or -1 if it closed the connection. [behindAuth] is written in the same
     * write as AUTH, before any answer.
     */
    fun connect(
        target: ByteArray,
        window: Int = TcpFrameDescriptor.MIN_WINDOW,
        handshake: Boolean = true,
        behindAuth: ByteArray = ByteArray(0),
    ): Int {
        val t = TcpAddressDescriptor.parse(target)
        val s = Socket()
        s.tcpNoDelay = true
        s.soTimeout = 10_000
        s.connect(t.socket, 10_000)
        socket = s
        input = DataInputStream(s.getInputStream())
        if (!handshake) return 0
        val hs = TcpJobKey(jobKey)
        val nonce = hs.nonce()
        val hello = UnsafeBuffer(ByteArray(HandshakeDescriptor.HELLO_LENGTH))
        hello.putLong(HandshakeDescriptor.SENDER_ID_OFFSET, id, ByteOrder.LITTLE_ENDIAN)
        hello.putLong(HandshakeDescriptor.RECEIVER_ID_OFFSET, t.endpointId, ByteOrder.LITTLE_ENDIAN)
        hello.putBytes(HandshakeDescriptor.NONCE_OFFSET, nonce)
        hello.putInt(HandshakeDescriptor.WINDOW_OFFSET, window, ByteOrder.LITTLE_ENDIAN)
        send(frame(TcpFrameDescriptor.HELLO, 0, hello.byteArray()))
        val (type, payload) = readFrame()
        if (type != TcpFrameDescriptor.CHALLENGE) return type
        val p = UnsafeBuffer(payload)
        val theirNonce = ByteArray(16).also { p.getBytes(HandshakeDescriptor.NONCE_OFFSET, it) }
        val theirWindow = p.getInt(HandshakeDescriptor.WINDOW_OFFSET, ByteOrder.LITTLE_ENDIAN)
        send(
            frame(TcpFrameDescriptor.AUTH, 0, hs.connectorMac(id, t.endpointId, theirNonce, nonce, window)) + behindAuth
        )
        check(theirWindow >= TcpFrameDescriptor.MIN_WINDOW)
        return try {
            readFrame().first
        } catch (e: EOFException) {
            -1
        } catch (e: java.net.SocketException) {
            -1
        }
    }

    /** One frame's bytes: a valid header (CRC and all) and [payload]. */
    fun frame(
        type: Int,
        flags: Int,
        payload: ByteArray = ByteArray(0),
        msgId: Long = 0,
        tag: Long = 0,
        value: Long = payload.size.toLong(),
        credit: Long = 0,
    ): ByteArray {
        TcpFrameDescriptor.putHeader(
            header,
            headerMemory,
            crc,
            0,
            type,
            flags,
            payload.size,
            credit,
            msgId,
            tag,
            0,
            value,
        )
        val out = ByteArray(TcpFrameDescriptor.HEADER_LENGTH + payload.size)
        header.getBytes(0, out, 0, TcpFrameDescriptor.HEADER_LENGTH)
        payload.copyInto(out, TcpFrameDescriptor.HEADER_LENGTH)
        return out
    }

    /** A tagged EAGER message frame, numbered in sequence. */
    fun eager(tag: Long, payload: ByteArray): ByteArray =
        frame(TcpFrameDescriptor.EAGER, TcpFrameDescriptor.FLAG_TAGGED, payload, msgId = nextMsgId++, tag = tag)

    /** A tagged RTS frame for a message of [length] bytes, numbered in sequence. */
    fun rts(tag: Long, length: Long): ByteArray =
        frame(TcpFrameDescriptor.RTS, TcpFrameDescriptor.FLAG_TAGGED, msgId = nextMsgId++, tag = tag, value = length)

    fun send(bytes: ByteArray) {
        val out = socket!!.getOutputStream()
        out.write(bytes)
        out.flush()
    }

    /** Reads one frame (blocking, 10 s at most): its type and payload. */
    fun readFrame(): Pair<Int, ByteArray> {
        val h = ByteArray(TcpFrameDescriptor.HEADER_LENGTH)
        input.readFully(h)
        val b = UnsafeBuffer(h)
        val length = b.getInt(TcpFrameDescriptor.PAYLOAD_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN)
        val payload = ByteArray(length)
        input.readFully(payload)
        return (b.getByte(TcpFrameDescriptor.TYPE_OFFSET).toInt() and 0xff) to payload
    }

    /**
     * Whether the endpoint closed the connection: reads (and drops) frames until the end of the stream, at most 10 s.
     */
    fun closedByPeer(): Boolean =
        try {
            while (true) readFrame()
            @Suppress("UNREACHABLE_CODE") false
        } catch (e: EOFException) {
            true
        } catch (e: java.net.SocketException) {
            true // reset
        }

    fun shutdown() {
        socket?.close()
    }

    override fun close() {
        runCatching { socket?.close() }
        runCatching { listener.close() }
    }
}
