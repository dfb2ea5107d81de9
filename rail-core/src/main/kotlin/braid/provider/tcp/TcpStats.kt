package braid.provider.tcp

/**
 * What a [TcpTransport] counts, as a read-only view over its parts: connections opened and accepted, payload read
 * straight into application memory, credit, bytes in flight and not yet flushed, and each peer's state in words. For
 * diagnostics and tests; nothing here is on the hot path.
 */
internal class TcpStats(
    private val connections: TcpConnections,
    private val inbound: TcpInbound,
    private val credit: TcpCredit,
    private val peers: TcpPeers,
) {
    val connectionsOpened: Int
        get() = connections.opened

    val connectionsAccepted: Int
        get() = connections.accepted

    /** Payload bytes read from sockets straight into application memory. */
    val bytesReadDirect: Long
        get() = inbound.bytesReadDirect

    /** Credit committed to senders now, one sender's fair share, and what a sender is first granted. */
    val committedTotal: Long
        get() = credit.committedTotal

    fun creditShare(): Long = credit.share()

    fun firstGrant(): Long = credit.firstGrant()

    /** Bytes received so far into rendezvous receives not yet complete. */
    fun inflightBytes(): Long = peers.inflightBytes()

    /** Frame bytes written into peers' outbound buffers and not yet to a socket. */
    fun unflushedBytes(): Long = peers.unflushedBytes()

    /** Live connections (any state), and established ones. */
    fun connectionCount(): Int = connections.size

    fun establishedCount(): Int = connections.establishedCount()

    /** One line per peer: its connection, whether it is dead and why, credit, paths and buffers. */
    fun describePeers(): String = buildString {
        for (j in 0 until peers.size) {
            val p = peers[j]
            append(
                "\n  peer $p: ${p.conn ?: "no connection"}, dead ${p.dead}${if (p.dead) " (${p.deadWhy})" else ""}, "
            )
            append("credit ${p.credit}/${p.theirWindow}, ${p.sendPath.describe()}, ")
            append("unflushed ${p.out.pendingBytes} B, in flight ${p.recvPath.inflight.size}, ${p.lender}")
        }
    }
}
