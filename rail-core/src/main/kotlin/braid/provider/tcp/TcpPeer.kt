package braid.provider.tcp

import braid.core.RxEntry
import braid.provider.MsgInbound
import braid.provider.PeerName
import braid.provider.RecvPath
import braid.provider.SendPath
import braid.provider.tcp.TcpFrameDescriptor.MIN_WINDOW
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Everything one tcp endpoint keeps about one peer endpoint, in both directions: the frames waiting to go out ([out]:
 * one buffer, so frames written before the connection is up survive a simultaneous-connect tie-break and keep their
 * order), the credit it lent us, what we lend it ([lender], the rules of [TcpCredit]), the frame being read ([rx]), and
 * the message engine's paths each way (sends waiting for credit, a CTS or an ACK; rendezvous receives being filled).
 *
 * A peer has one data connection at a time ([conn] once established); when that connection fails the peer is dead for
 * this endpoint, as a process that died stays dead — unless the endpoint is a rail of a link of several, which
 * reconnects it ([TcpPeers.revive]) and re-admits the rail when the new connection is up.
 *
 * Built by [TcpPeers], which attaches the parts that need the peer itself ([attach]).
 */
internal class TcpPeer(val id: Long, val index: Int, bufferSize: Int) : PeerName {
    var address: TcpAddress? = null
    val key: String = TcpAddress.keyOf(id)

    /** The connection carrying this peer's frames: pending (handshake) or established. */
    var conn: TcpConnection? = null
    val established: Boolean
        get() = conn?.state == TcpConnection.State.ESTABLISHED

    var dead = false
        private set

    var deadErr = 0
        private set

    var deadWhy = ""
        private set

    /** The message engine's state for this peer, each way, with this peer's [TcpPeerOutlet]. */
    lateinit var sendPath: SendPath
        private set

    lateinit var recvPath: RecvPath
        private set

    /** What this endpoint lends the peer. */
    lateinit var lender: TcpCredit.Account
        private set

    val fiAddr: Long
        get() = recvPath.fiAddr

    /** The AV generation [fiAddr] and [address] were last resolved at. */
    var avGeneration = -1L

    /** After a simultaneous-connect tie-break went the peer's way: wait for its connection until then. */
    var awaitIncomingUntil = 0L

    /** In the transport's list of peers with frames to write ([TcpBusy]). */
    var busy = false

    /** The frames waiting to go to this peer's socket. */
    val out = TcpOutbound(bufferSize)

    /** The frame being read from this peer ([TcpInbound]'s). */
    val rx = Rx()

    // ## Credit this peer lent us ##

    /** Credit left to send message heads to this peer: none until it grants some (see [TcpCredit]). */
    var credit = 0L
        private set

    var theirWindow = MIN_WINDOW.toLong()
        private set

    /** Credit this peer asked back (RECLAIM) that we gave up, to be written in a GIVEBACK frame; -1: none due. */
    private var giveBack = -1L

    fun attach(sendPath: SendPath, recvPath: RecvPath, lender: TcpCredit.Account) {
        this.sendPath = sendPath
        this.recvPath = recvPath
        this.lender = lender
    }

    /**
     * How many connections to this peer have been established, the one up now included: a link that recorded it when
     * the rail lost the peer knows a connection made since from the one it lost ([TcpTransport.connectionGeneration]).
     */
    var generation = 0L
        private set

    /** [c] is this peer's connection now, lending us up to [window] bytes of credit. */
    fun established(c: TcpConnection, window: Long) {
        conn = c
        generation++
        awaitIncomingUntil = 0
        theirWindow = window
    }

    /**
     * A dead peer comes back (a link reconnecting a rail, [TcpPeers.revive]): the next connection starts as the first
     * did, with no credit and message ids from 1 both ways.
     */
    fun revive() {
        dead = false
        deadErr = 0
        deadWhy = ""
        credit = 0
        theirWindow = MIN_WINDOW.toLong()
        giveBack = -1
        awaitIncomingUntil = 0
        rx.nextId = 1
        rx.directPending = 0
    }

    /** Marks the peer dead, with the errno and words every later failure names. */
    fun died(err: Int, why: String) {
        dead = true
        deadErr = err
        deadWhy = why
    }

    /** Spends [cost] of the credit for a head just written. */
    fun spend(cost: Long) {
        credit -= cost
    }

    /**
     * The peer returned [n] bytes of credit; false if that is more than it ever lent (its window, and the eager message
     * a link's rail lends beside it for resent messages, at most half a window, [TcpCredit]).
     */
    fun lent(n: Long): Boolean {
        credit += n
        return credit <= theirWindow + theirWindow / 2
    }

    /** The peer asks back up to [value] bytes of the credit it lent us (RECLAIM): we give up what we have not spent. */
    fun reclaimed(value: Long) {
        val g = minOf(maxOf(0L, value), credit)
        credit -= g
        giveBack = maxOf(0L, giveBack) + g
    }

    val giveBackDue: Boolean
        get() = giveBack >= 0

    /** Takes the credit to write in a GIVEBACK frame (after [giveBackDue]). */
    fun takeGiveBack(): Long {
        val n = giveBack
        giveBack = -1
        return n
    }

    // ## Outbound frames ##

    val unflushed: Boolean
        get() = out.unflushed

    /** Whether [n] more bytes fit in the outbound buffer, compacting it if that makes room. */
    fun ensureRoom(n: Int): Boolean = out.ensureRoom(n)

    /** Appends a frame header (the caller made room) carrying the credit we owe the peer. */
    fun putHeader(
        type: Int,
        flags: Int,
        payloadLength: Int,
        msgId: Long,
        tag: Long,
        data: Long,
        value: Long,
        seq: Long = 0,
        stripe: Long = 0,
    ) = out.putHeader(type, flags, payloadLength, lender.takeReturn(), msgId, tag, data, value, seq, stripe)

    /** The frame being read from this peer: the next message id, and the EAGER or DATA frame in progress. */
    class Rx {
        var nextId = 1L

        /** Rendezvous receives whose payload is read straight into application memory. */
        var directPending = 0

        /** The EAGER frame being read: its matched receive, or the bytes held for it. */
        var entry: RxEntry? = null
        var bytes: UnsafeBuffer? = null

        /** The DATA frame being read, and whether it goes straight into the receive's memory through [view]. */
        var inbound: MsgInbound? = null
        var direct = false

        /** A view of the receive buffer's direct memory for reading from the socket, cached per buffer. */
        var view: ByteBuffer? = null
        private var viewSource: ByteBuffer? = null
        var viewBase = 0

        /**
         * Points [view] at [bb] (the receive's memory, [base] its address adjustment), duplicating it only for a new
         * buffer.
         */
        fun viewOf(bb: ByteBuffer, base: Int) {
            if (viewSource !== bb) {
                view = bb.duplicate()
                viewSource = bb
            }
            viewBase = base
        }
    }

    override fun render(): String = toString()

    override fun toString(): String =
        address?.render() ?: "fi_tcp://${conn?.remote?.removePrefix("/") ?: "?"}/${TcpAddress.idString(id)}"
}
