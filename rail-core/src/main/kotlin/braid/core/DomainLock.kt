package braid.core

/**
 * A domain's lock, and whether its per-message path takes it.
 *
 * Under [Threading.SAFE] (and every level but [Threading.DOMAIN]) the data path — posts, completion-queue reads,
 * progress rounds — runs inside `synchronized` on this object: uncontended, a compare-and-swap to enter and another to
 * leave. On x86 each of those is a locked instruction, and a locked instruction waits for the stores before it (the
 * ring copy of the message just posted) to leave the store buffer: two per inject, measured, are most of what a small
 * message costs the sender.
 *
 * Under [Threading.DOMAIN] with [ProgressModel.MANUAL] the application promises `FI_THREAD_DOMAIN`: one thread at a
 * time calls into the domain and its objects, so the domain starts *solo* and [guard] runs its body without the
 * monitor. Threads Braid starts itself would break that promise, so the domain leaves solo mode, for good, on the
 * application's own thread, before the first such thread can run ([share]): a progress engine attached, the futures' or
 * suspended calls' progress driver launched, a rail that schedules work on the timer's servant (tcp's keepalive), a
 * [java.util.concurrent.Flow.Publisher] of a completion queue, a one-sided window's servant in `braid.mpi`. Every later
 * [guard] takes the monitor; one taken before [share] ran on that same thread, so no two threads ever meet unguarded.
 * Sites that are not on the per-message path keep a plain `synchronized(lock)`: while solo only one thread writes, so
 * the monitor they take guards nothing and costs nothing that matters. The exception is telemetry's JMX views, which
 * only read counters (`Endpoint.stats`): they stay read-only observers, and on a solo domain two counters of one view
 * may be a message apart.
 *
 * Peer domains ([Fabric.domain] with an owner) share their owner's lock, and with it its mode.
 */
internal class DomainLock(solo: Boolean) {
    /**
     * Whether [guard] takes the monitor. Written once (true) by [share], on the thread that drives the domain before
     * any other may; read on every guarded call (a plain load on x86).
     */
    @Volatile @JvmField var shared: Boolean = !solo

    /** Whether the domain is still solo: no lock on its per-message path. */
    val solo: Boolean
        get() = !shared

    /** Leaves solo mode for good: another thread is about to drive the domain. Call before starting that thread. */
    fun share() {
        if (!shared) shared = true
    }
}

/** Runs [block] under the domain lock, or bare while the domain is solo ([DomainLock]). */
internal inline fun <T> DomainLock.guard(block: () -> T): T = if (shared) synchronized(this) { block() } else block()
