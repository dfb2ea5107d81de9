package braid.provider.tcp

import braid.core.Errno
import braid.provider.tcp.HandshakeDescriptor.MAC_LENGTH
import braid.provider.tcp.TcpFrameAdapter.Companion.CONTINUE
import braid.provider.tcp.TcpFrameAdapter.Companion.STOP
import braid.provider.tcp.TcpFrameDescriptor.AUTH
import braid.provider.tcp.TcpFrameDescriptor.CHALLENGE
import braid.provider.tcp.TcpFrameDescriptor.HELLO
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import braid.provider.tcp.TcpFrameDescriptor.REJECT
import braid.provider.tcp.TcpFrameDescriptor.WELCOME
import java.lang.System.Logger.Level
import java.nio.ByteOrder
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.security.SecureRandom
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * The connection handshake of the tcp rail: who is at each end, the receive windows, and a challenge-response in which
 * each side proves it holds the job key without sending it, over nonces fresh to the connection, so a recorded
 * handshake cannot be replayed.
 *
 * ```
 * connector                                   acceptor
 *   HELLO     (ids, nonce_c, window_c)   ->
 *                                        <-   CHALLENGE (ids, nonce_a, window_a,
 *                                                        mac_a = HMAC(K, "acceptor" ‖ id_c ‖ id_a ‖ nonce_c ‖ nonce_a ‖ window_a))
 *   checks mac_a: a wrong key ends it here
 *   AUTH      (mac_c = HMAC(K, "connector" ‖ id_c ‖ id_a ‖ nonce_a ‖ nonce_c ‖ window_c)) ->
 *                                             checks mac_c: a wrong key ends it here,
 *                                             then keeps the connection or not (simultaneous connect)
 *                                        <-   WELCOME | REJECT (reason, text)
 * ```
 *
 * K = SHA-256("braid-tcp-job-key" ‖ 0 ‖ key in UTF-8), so the empty key (nothing set) is a key like any other. MACs are
 * compared in constant time ([MessageDigest.isEqual]). Until WELCOME, a connection accepts handshake frames only:
 * nothing a peer sends before it has proven the key is ever decoded as a message.
 *
 * The key keeps jobs apart and keeps out anyone who does not hold it; it does not encrypt the traffic that follows. Off
 * the hot path: allocation here is fine.
 */
internal class TcpHandshake(
    jobKey: String,
    private val myId: Long,
    private val window: Long,
    private val hostId: Long,
    private val host: Host,
) {
    /** What the handshake needs from its endpoint. */
    interface Host {
        /** This endpoint, in words, for messages. */
        val name: String

        /** Acceptor: [c] proved the key. Keep it ([welcome]) or refuse it ([reject]); returns [STOP]. */
        fun accepted(c: TcpConnection): Int

        /** Connector: the acceptor kept [c]. */
        fun welcomed(c: TcpConnection)

        /** Connector: the acceptor refused [c] with [reason] ([HandshakeDescriptor] REJECT_*). */
        fun refused(c: TcpConnection, reason: Int, text: String)

        /** [c] failed the handshake: close it, and fail its peer if [c] was the peer's connection. */
        fun failed(c: TcpConnection, err: Int, why: String, level: Level)

        /** Closes [c], which no peer owns. */
        fun close(c: TcpConnection)

        /** Writes [c]'s pending handshake frames, asking for OP_WRITE if the socket takes less. */
        fun flush(c: TcpConnection)
    }

    private val jobKey = TcpJobKey(jobKey)

    /** Connector: the socket is up; say HELLO. */
    fun start(c: TcpConnection) {
        c.myNonce = jobKey.nonce()
        c.state = TcpConnection.State.AWAIT_CHALLENGE
        putHello(c, c.peer!!.id, null)
        host.flush(c)
    }

    /** A frame header on a connection still in its handshake: only the frame its state expects passes. */
    fun onHeader(c: TcpConnection, a: TcpFrameAdapter): Int {
        val t = a.type
        val expected =
            when (c.state) {
                TcpConnection.State.AWAIT_HELLO -> t == HELLO
                TcpConnection.State.AWAIT_CHALLENGE -> t == CHALLENGE || t == REJECT
                TcpConnection.State.AWAIT_AUTH -> t == AUTH
                TcpConnection.State.AWAIT_WELCOME -> t == WELCOME || t == REJECT
                else -> false
            }
        if (!expected) return a.fail("${a.typeName()} frame during the handshake (state ${c.state})")
        val limit = HandshakeDescriptor.payloadLimit(t)
        if (t == REJECT) {
            if (a.payloadLength < HandshakeDescriptor.REJECT_TEXT_OFFSET) return a.fail("REJECT without a reason")
        } else if (a.payloadLength != limit) {
            return a.fail("${a.typeName()} with a ${a.payloadLength}-byte payload; it has $limit")
        }
        a.sinkTo(c.hsPayload, 0, a.payloadLength)
        return CONTINUE
    }

    fun onFrame(c: TcpConnection, a: TcpFrameAdapter): Int =
        when (a.type) {
            HELLO -> onHello(c, a)
            CHALLENGE -> onChallenge(c, a)
            AUTH -> onAuth(c)
            WELCOME -> {
                host.welcomed(c)
                STOP
            }
            REJECT -> onReject(c, a.payloadLength)
            else -> a.fail("${a.typeName()} frame during the handshake")
        }

    /** Acceptor: keeps [c]. */
    fun welcome(c: TcpConnection) {
        c.putHandshake(WELCOME, null, 0)
    }

    /** Acceptor: refuses [c], saying why, and closes it; returns [STOP]. */
    fun reject(c: TcpConnection, reason: Int, text: String): Int {
        val bytes =
            text.toByteArray(StandardCharsets.UTF_8).let {
                if (it.size > HandshakeDescriptor.MAX_REJECT_TEXT) it.copyOf(HandshakeDescriptor.MAX_REJECT_TEXT)
                else it
            }
        val b = c.hsPayload
        b.putInt(HandshakeDescriptor.REJECT_REASON_OFFSET, reason, LE)
        b.putBytes(HandshakeDescriptor.REJECT_TEXT_OFFSET, bytes)
        c.putHandshake(REJECT, b, HandshakeDescriptor.REJECT_TEXT_OFFSET + bytes.size)
        runCatching { c.flushHandshake() }
        log.log(
            if (reason == HandshakeDescriptor.REJECT_DUPLICATE) Level.DEBUG else Level.INFO,
            "tcp endpoint ${host.name}: refusing connection $c: $text",
        )
        host.close(c)
        return STOP
    }

    /** Acceptor: a connector says who it is and whom it wants. */
    private fun onHello(c: TcpConnection, a: TcpFrameAdapter): Int {
        val b = c.hsPayload
        c.theirId = b.getLong(HandshakeDescriptor.SENDER_ID_OFFSET, LE)
        val target = b.getLong(HandshakeDescriptor.RECEIVER_ID_OFFSET, LE)
        c.theirNonce = bytes(HandshakeDescriptor.NONCE_OFFSET, HandshakeDescriptor.NONCE_LENGTH, c)
        c.theirWindow = b.getInt(HandshakeDescriptor.WINDOW_OFFSET, LE).toLong() and 0xffff_ffffL
        c.theirHost = b.getLong(HandshakeDescriptor.HOST_OFFSET, LE)
        if (c.theirId == 0L) return a.fail("HELLO from endpoint id 0")
        if (c.theirWindow < MIN_WINDOW)
            return a.fail("HELLO with a window of ${c.theirWindow} bytes, below the minimum $MIN_WINDOW")
        if (target != myId) {
            return reject(
                c,
                HandshakeDescriptor.REJECT_WRONG_ENDPOINT,
                "no endpoint ${TcpAddress.idString(target)} here: this address is now ${host.name} (the endpoint you want closed)",
            )
        }
        c.myNonce = jobKey.nonce()
        putHello(c, c.theirId, jobKey.acceptorMac(c.theirId, myId, c.theirNonce, c.myNonce, window.toInt()))
        c.state = TcpConnection.State.AWAIT_AUTH
        host.flush(c)
        return CONTINUE
    }

    /** Connector: the acceptor proves it holds the key; prove it back. */
    private fun onChallenge(c: TcpConnection, a: TcpFrameAdapter): Int {
        val p = c.peer!!
        val b = c.hsPayload
        val sender = b.getLong(HandshakeDescriptor.SENDER_ID_OFFSET, LE)
        val receiver = b.getLong(HandshakeDescriptor.RECEIVER_ID_OFFSET, LE)
        if (sender != p.id || receiver != myId) {
            return a.fail(
                "CHALLENGE from endpoint ${TcpAddress.idString(sender)} to ${TcpAddress.idString(receiver)}; expected ${TcpAddress.idString(p.id)} to ${TcpAddress.idString(myId)}"
            )
        }
        c.theirNonce = bytes(HandshakeDescriptor.NONCE_OFFSET, HandshakeDescriptor.NONCE_LENGTH, c)
        c.theirWindow = b.getInt(HandshakeDescriptor.WINDOW_OFFSET, LE).toLong() and 0xffff_ffffL
        val mac = bytes(HandshakeDescriptor.MAC_OFFSET, MAC_LENGTH, c)
        if (!TcpJobKey.same(mac, jobKey.acceptorMac(myId, p.id, c.myNonce, c.theirNonce, c.theirWindow.toInt()))) {
            host.failed(
                c,
                Errno.EACCES,
                "does not hold this job's key (BRAID_JOB_KEY differs); connection refused",
                Level.WARNING,
            )
            return STOP
        }
        if (c.theirWindow < MIN_WINDOW)
            return a.fail("CHALLENGE with a window of ${c.theirWindow} bytes, below the minimum $MIN_WINDOW")
        b.putBytes(0, jobKey.connectorMac(myId, p.id, c.theirNonce, c.myNonce, window.toInt()))
        c.putHandshake(AUTH, b, HandshakeDescriptor.AUTH_LENGTH)
        c.state = TcpConnection.State.AWAIT_WELCOME
        host.flush(c)
        return CONTINUE
    }

    /** Acceptor: the connector proves it holds the key; the endpoint decides whether to keep it. */
    private fun onAuth(c: TcpConnection): Int {
        val mac = bytes(0, MAC_LENGTH, c)
        if (
            !TcpJobKey.same(mac, jobKey.connectorMac(c.theirId, myId, c.myNonce, c.theirNonce, c.theirWindow.toInt()))
        ) {
            log.log(
                Level.WARNING,
                "tcp endpoint ${host.name}: closing the connection from ${c.remote} claiming to be endpoint ${TcpAddress.idString(c.theirId)}: it does not hold this job's key (BRAID_JOB_KEY differs); nothing it sent is used",
            )
            host.close(c)
            return STOP
        }
        return host.accepted(c)
    }

    private fun onReject(c: TcpConnection, length: Int): Int {
        val b = c.hsPayload
        host.refused(
            c,
            b.getInt(HandshakeDescriptor.REJECT_REASON_OFFSET, LE),
            b.getStringWithoutLengthUtf8(
                HandshakeDescriptor.REJECT_TEXT_OFFSET,
                length - HandshakeDescriptor.REJECT_TEXT_OFFSET,
            ),
        )
        return STOP
    }

    private fun putHello(c: TcpConnection, target: Long, mac: ByteArray?) {
        val b = c.hsPayload
        b.putLong(HandshakeDescriptor.SENDER_ID_OFFSET, myId, LE)
        b.putLong(HandshakeDescriptor.RECEIVER_ID_OFFSET, target, LE)
        b.putBytes(HandshakeDescriptor.NONCE_OFFSET, c.myNonce)
        b.putInt(HandshakeDescriptor.WINDOW_OFFSET, window.toInt(), LE)
        b.putInt(HandshakeDescriptor.WINDOW_OFFSET + 4, 0, LE)
        b.putLong(HandshakeDescriptor.HOST_OFFSET, hostId, LE)
        if (mac == null) {
            c.putHandshake(HELLO, b, HandshakeDescriptor.HELLO_LENGTH)
        } else {
            b.putBytes(HandshakeDescriptor.MAC_OFFSET, mac)
            c.putHandshake(CHALLENGE, b, HandshakeDescriptor.CHALLENGE_LENGTH)
        }
    }

    private fun bytes(offset: Int, length: Int, c: TcpConnection): ByteArray =
        ByteArray(length).also { c.hsPayload.getBytes(offset, it) }

    private companion object {
        val log: System.Logger = System.getLogger("braid.provider.tcp")
        val LE: ByteOrder = ByteOrder.LITTLE_ENDIAN
    }
}

/**
 * The job key's cryptography for [TcpHandshake]: the HMAC key derived from `BRAID_JOB_KEY`, fresh nonces, and the two
 * proofs.
 */
internal class TcpJobKey(jobKey: String) {
    private val key =
        SecretKeySpec(
            MessageDigest.getInstance("SHA-256")
                .digest(("braid-tcp-job-key\u0000$jobKey").toByteArray(StandardCharsets.UTF_8)),
            "HmacSHA256",
        )
    private val random = SecureRandom()

    fun nonce(): ByteArray = ByteArray(HandshakeDescriptor.NONCE_LENGTH).also { random.nextBytes(it) }

    /** The acceptor's proof, answering the connector's nonce. */
    fun acceptorMac(
        connectorId: Long,
        acceptorId: Long,
        connectorNonce: ByteArray,
        acceptorNonce: ByteArray,
        acceptorWindow: Int,
    ): ByteArray = mac(ACCEPTOR, connectorId, acceptorId, connectorNonce, acceptorNonce, acceptorWindow)

    /** The connector's proof, answering the acceptor's nonce. */
    fun connectorMac(
        connectorId: Long,
        acceptorId: Long,
        acceptorNonce: ByteArray,
        connectorNonce: ByteArray,
        connectorWindow: Int,
    ): ByteArray = mac(CONNECTOR, connectorId, acceptorId, acceptorNonce, connectorNonce, connectorWindow)

    private fun mac(role: ByteArray, a: Long, b: Long, n1: ByteArray, n2: ByteArray, window: Int): ByteArray {
        val m = Mac.getInstance("HmacSHA256")
        m.init(key)
        m.update(role)
        m.update(longBytes(a))
        m.update(longBytes(b))
        m.update(n1)
        m.update(n2)
        m.update(longBytes(window.toLong()))
        return m.doFinal().also { check(it.size == MAC_LENGTH) }
    }

    private fun longBytes(v: Long): ByteArray = ByteArray(8) { (v ushr (8 * it)).toByte() }

    companion object {
        private val ACCEPTOR = "braid-tcp acceptor".toByteArray(StandardCharsets.UTF_8)
        private val CONNECTOR = "braid-tcp connector".toByteArray(StandardCharsets.UTF_8)

        /** Constant-time comparison of two MACs. */
        fun same(a: ByteArray, b: ByteArray): Boolean = MessageDigest.isEqual(a, b)
    }
}
