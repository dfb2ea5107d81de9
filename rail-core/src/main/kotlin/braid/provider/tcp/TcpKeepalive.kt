package braid.provider.tcp

import braid.core.Errno
import braid.provider.tcp.TcpFrameDescriptor.HEADER_LENGTH
import braid.provider.tcp.TcpFrameDescriptor.HEARTBEAT
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

/**
 * The background thread of one tcp endpoint: it sends heartbeats on idle connections and
 * declares dead the peers that have been silent too long ([TcpTransport.tick]), taking the
 * endpoint's domain lock for that, as any thread posting an operation would.
 *
 * Why a thread under manual progress: liveness must not depend on how often the application
 * drives progress. A process computing for a minute without reading a CQ still answers
 * heartbeats; a stopped process (SIGSTOP), a hung host or a pulled cable does not.
 *
 * One per endpoint, not one for the process: a domain whose lock is held for long (a stuck
 * application thread) must not stall the liveness of the other endpoints. A daemon; it ends
 * when its endpoint closes.
 */
internal class TcpKeepalive(private val transport: TcpTransport, name: String) {
    @Volatile private var stopped = false
    private val thread = Thread(::run, "braid-tcp-keepalive-$name").also { it.isDaemon = true }

    fun start() {
        running.incrementAndGet()
        thread.start()
    }

    /** Asks the thread to end; it does once it is out of the endpoint's lock (never waits for it here). */
    fun stop() {
        stopped = true
        LockSupport.unpark(thread)
    }

    private fun run() {
        try {
            while (!stopped) {
                val pause = transport.tick()
                if (stopped) break
                LockSupport.parkNanos(this, pause.coerceIn(1_000_000L, 100_000_000L))
            }
        } finally {
            running.decrementAndGet()
        }
    }

    companion object {
        /** Keepalive threads alive in this process (tests check closing every endpoint ends them). */
        val running = AtomicInteger()
    }
}

/**
 * The keepalive thread's cycle: reads what arrived (so a peer is not judged silent because
 * the application did not drive progress), fails peers silent past the time-out, sends
 * heartbeats on idle connections, and watches peers that directed receives wait for.
 * Returns the nanoseconds until it wants to run again.
 */
internal fun TcpTransport.tick(): Long {
    // Under the lock, deferred work held until the cycle is over, completions handed out after: the host's rule.
    val ran = ep.cycle { if (closed || !registered) false else { tickLocked(); true } }
    return if (ran) maxOf(1_000_000L, heartbeatNanos / 2) else heartbeatNanos
}

private fun TcpTransport.tickLocked() {
    progress()
    val now = System.nanoTime()
    var i = connections.size - 1
    while (i >= 0) {
        if (i < connections.size) checkConnection(connections[i], now)
        i--
    }
    for (j in 0 until peers.size) {
        val p = peers[j]
        if (p.conn == null && !p.dead && p.awaitIncomingUntil != 0L && now - p.awaitIncomingUntil >= 0) {
            p.awaitIncomingUntil = 0
            if (p.sendPath.backlog.isNotEmpty() || p.unflushed) ensureConnection(p)
        }
    }
    if (ep.srx.postedCount > 0) ep.srx.forEachDirectedSource(directedWatcher)
    progress()
}

internal fun TcpTransport.checkConnection(c: TcpConnection, now: Long) {
    if (!c.established) {
        if (now - c.openedAt > timeoutNanos) {
            lost(c, if (c.outgoing) Errno.EHOSTUNREACH else Errno.ETIMEDOUT,
                "did not complete the connection handshake within ${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS)")
        }
        return
    }
    if (c.bytesReceived != c.rxSeenBytes) {
        c.rxSeenBytes = c.bytesReceived
        c.rxSeenAt = now
    } else if (now - c.rxSeenAt > timeoutNanos) {
        lost(c, Errno.EHOSTDOWN, "sent nothing for ${(now - c.rxSeenAt) / 1_000_000} ms, past the time-out of ${settings.timeoutMillis} ms (BRAID_TCP_TIMEOUT_MS): stopped, hung or unreachable")
        return
    }
    val p = c.peer ?: return
    if (p.bytesSent != c.txSeenBytes) {
        c.txSeenBytes = p.bytesSent
        c.txSeenAt = now
    } else if (now - c.txSeenAt >= heartbeatNanos) {
        c.txSeenAt = now
        if (p.ensureRoom(HEADER_LENGTH)) p.putHeader(HEARTBEAT, 0, 0, 0, 0, 0, 0)
        markBusy(p)
    }
}

internal fun TcpTransport.watchDirected(addr: Long) {
    val p = peerFor(addr) ?: return
    if (p.dead) failDirected(p) else if (p.conn == null) ensureConnection(p)
}
