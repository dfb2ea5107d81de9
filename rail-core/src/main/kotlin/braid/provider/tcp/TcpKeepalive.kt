package braid.provider.tcp

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
