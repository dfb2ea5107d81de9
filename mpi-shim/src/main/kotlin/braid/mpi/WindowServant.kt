package braid.mpi

import java.util.IdentityHashMap
import org.agrona.concurrent.BackoffIdleStrategy

/**
 * What carries passive-target epochs while the target computes outside MPI: rail-core runs the target side of RMA and
 * atomics inside its domain's progress, so while a process has a window, this daemon thread drives that progress
 * (`Domain.progress`, which is thread-safe: it takes the domain lock) whenever the application has not driven it since
 * the servant's last look (so the two do not contend for the domain lock while the application is in MPI). It drives
 * only the rails: completions of this process's own operations stay in its completion queue for the application's next
 * MPI call, so the thread level the application asked for is kept.
 *
 * Cost to the target: one thread per process with windows, parked between [MIN_PARK_NANOS] and [MAX_PARK_NANOS] when
 * idle (so a request that arrives while the target computes waits at most about [MAX_PARK_NANOS] before it is served),
 * and the domain lock for each request served. It stops when the process's last window is freed or MPI is finalized.
 */
internal class WindowServant private constructor(private val mpi: Mpi) : Runnable {
    @Volatile private var running = true
    private var windows = 0
    private val thread = Thread(this, "braid-window-servant-${mpi.bootstrap.rank}").apply { isDaemon = true }

    override fun run() {
        val idle = BackoffIdleStrategy(0, 0, MIN_PARK_NANOS, MAX_PARK_NANOS)
        var seen = mpi.polls
        while (running && !mpi.finalized) {
            val calls = mpi.polls
            val work =
                if (calls != seen) {
                    // The application drove progress since the last look: it serves the peers itself, and a second
                    // driver would only contend for the domain lock (and park the application's thread on it).
                    seen = calls
                    0
                } else
                    try {
                        mpi.domain.progress()
                    } catch (e: RuntimeException) {
                        if (mpi.finalized) break
                        1 // a rail's failure is the domain's to report; keep serving the others
                    }
            idle.idle(work)
        }
    }

    internal companion object {
        const val MIN_PARK_NANOS = 1_000L
        const val MAX_PARK_NANOS = 200_000L
        private val servants = IdentityHashMap<Mpi, WindowServant>()

        /** A window of [mpi] was made: start its servant if it is the first. */
        @Synchronized
        fun acquire(mpi: Mpi) {
            val s =
                servants.getOrPut(mpi) {
                    mpi.domain.shareAcrossThreads() // a solo domain (Threading.DOMAIN) takes its lock from now on
                    WindowServant(mpi).also { it.thread.start() }
                }
            s.windows++
        }

        /** A window of [mpi] was freed: stop its servant after the last. */
        @Synchronized
        fun release(mpi: Mpi) {
            val s = servants[mpi] ?: return
            if (--s.windows > 0) return
            servants.remove(mpi)
            s.running = false
            s.thread.join(1_000)
        }

        /** Whether [mpi] has a servant running (tests). */
        @Synchronized fun running(mpi: Mpi): Boolean = servants[mpi]?.running == true
    }
}
