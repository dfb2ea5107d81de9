package braid.provider.tcp

import braid.core.Errno
import braid.provider.RailHost
import braid.provider.RailTimer
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEARTBEAT
import java.util.concurrent.atomic.AtomicInteger

/**
 * The keepalive of one tcp endpoint: a [RailTimer] task, not a thread. Every sixteenth of the time-out the process's
 * one timer raises its flag; the endpoint's duty cycle ([TcpTransport.progress], under the domain lock) sees it
 * ([take]) and runs [timed]: it fails peers silent past the time-out, sends heartbeats on idle connections, and watches
 * peers that directed receives wait for.
 *
 * Why it must also run under manual progress: liveness must not depend on how often the application drives progress. A
 * process computing for a minute without reading a CQ still answers heartbeats; a stopped process (SIGSTOP), a hung
 * host or a pulled cable does not. So when the flag stays up a whole period (nobody drove the duty cycle), the timer's
 * servant runs one duty cycle through [braid.provider.RailHost.cycle] — about every eighth of the time-out, as the
 * thread this replaces did. A domain whose lock a stuck thread holds does not stall the liveness of other endpoints:
 * the timer replaces a servant stuck on a lock.
 */
internal class TcpKeepalive(
    private val ep: RailHost,
    private val name: String,
    private val settings: TcpSettings,
    private val connections: TcpConnections,
    private val peers: TcpPeers,
    private val credit: TcpCredit,
    private val busy: TcpBusy,
) {
    private val timeoutNanos = settings.timeoutMillis * 1_000_000
    private val heartbeatNanos = timeoutNanos / 4
    @Volatile private var task: RailTimer.Task? = null
    private val directedWatcher: (Long) -> Unit = { addr -> watchDirected(addr) }

    /** Schedules the task; [undriven] runs one duty cycle when nobody drove progress for a period. */
    fun start(undriven: Runnable) {
        if (task != null) return
        val period = maxOf(RailTimer.MIN_PERIOD_NANOS, heartbeatNanos / 4)
        task = RailTimer.schedule("tcp keepalive of endpoint $name", period) { undriven.run() }
        running.incrementAndGet()
    }

    /** Cancels the task; an undriven cycle already running finishes and does nothing more. */
    fun stop() {
        val t = task ?: return
        task = null
        t.cancel()
        running.decrementAndGet()
    }

    /** Whether the keepalive's work is due now; clears the flag if so. */
    fun take(): Boolean {
        val t = task
        return t != null && t.due && t.take()
    }

    /**
     * The keepalive's work, inside a duty cycle after this cycle read its sockets (so a peer is not judged silent for
     * what arrived unread): fails peers silent past the time-out, sends heartbeats on idle connections (marked busy, so
     * this cycle writes them), and watches peers that directed receives wait for. Times come from the timer's cached
     * clock.
     */
    fun timed() {
        val now = RailTimer.now()
        var i = connections.size - 1
        while (i >= 0) {
            if (i < connections.size) check(connections[i], now)
            i--
        }
        for (j in 0 until peers.size) {
            val p = peers[j]
            if (p.conn == null && !p.dead && p.awaitIncomingUntil != 0L && now - p.awaitIncomingUntil >= 0) {
                p.awaitIncomingUntil = 0
                if (p.sendPath.backlog.isNotEmpty() || p.unflushed) connections.ensureConnection(p)
            }
        }
        if (ep.srx.postedCount > 0) ep.srx.forEachDirectedSource(directedWatcher)
        credit.idle()
    }

    private fun check(c: TcpConnection, now: Long) {
        if (!c.established) {
            if (now - c.openedAt > timeoutNanos) {
                connections.lost(
                    c,
                    if (c.outgoing) Errno.EHOSTUNREACH else Errno.ETIMEDOUT,
                    "did not complete the connection handshake within ${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS)",
                )
            }
            return
        }
        if (c.bytesReceived != c.rxSeenBytes) {
            c.rxSeenBytes = c.bytesReceived
            c.rxSeenAt = now
        } else if (now - c.rxSeenAt > timeoutNanos) {
            connections.lost(
                c,
                Errno.EHOSTDOWN,
                "sent nothing for ${(now - c.rxSeenAt) / 1_000_000} ms, past the time-out of " +
                    "${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS): stopped, hung or unreachable",
            )
            return
        }
        val p = c.peer ?: return
        if (p.out.bytesSent != c.txSeenBytes) {
            c.txSeenBytes = p.out.bytesSent
            c.txSeenAt = now
        } else if (now - c.txSeenAt >= heartbeatNanos) {
            c.txSeenAt = now
            if (p.ensureRoom(HEADER_LENGTH)) p.putHeader(HEARTBEAT, 0, 0, 0, 0, 0, 0)
            busy.mark(p)
        }
    }

    private fun watchDirected(addr: Long) {
        val p = peers.peerFor(addr) ?: return
        if (p.dead) peers.failDirected(p) else if (p.conn == null) connections.ensureConnection(p)
    }

    companion object {
        /** Keepalives scheduled in this process: one per enabled, open tcp endpoint (tests check closing ends them). */
        val running = AtomicInteger()
    }
}
