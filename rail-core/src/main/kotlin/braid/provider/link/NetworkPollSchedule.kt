package braid.provider.link

/**
 * When a link polls its network rail, whose poll is a system call (`Selector.selectNow`, about 0.4 µs) that would
 * otherwise tax every same-host message: every time while that rail is busy (it had work, or was given a send, within
 * [ACTIVE_NANOS]), else once per [IDLE_POLL_NANOS].
 *
 * Keeping that schedule reads no clock on most polls: the caller counts [countdown] down once per poll and asks [due]
 * with the time only when it reaches zero. [due] then sets how many polls pass before the next clock read (the stride):
 * 1 while the network rail is busy; while it is idle, the stride is kept so that a stride of polls takes an eighth to a
 * quarter of [IDLE_POLL_NANOS] (doubled up to [MAX_STRIDE] when faster, halved when slower), and drops to 1 as soon as
 * one took longer than [IDLE_POLL_NANOS]. So a spinning caller reads the clock once per [MAX_STRIDE] polls and still
 * reaches the network rail within about [IDLE_POLL_NANOS]; a caller that parks between polls polls it every time, once
 * one stride of polls has shown the slowdown (a caller that backs off, spinning, then yielding, then parking, has
 * shrunk its stride while yielding).
 *
 * Not thread-safe: the link calls it under its domain lock.
 */
internal class NetworkPollSchedule(now: Long = System.nanoTime()) {
    /** Polls left before the next clock read: the caller decrements it and calls [due] when it reaches 0. */
    @JvmField var countdown: Int = 1

    /** Polls between clock reads while the network rail is idle. */
    private var stride = 1
    /** The value [countdown] was last set to: how many polls the last window held. */
    private var armed = 1
    private var lastClock = now
    private var lastPoll = now
    /** As a link's network rail starts out: busy, for its first [ACTIVE_NANOS]. */
    private var lastWork = now
    private var kicked = false

    /**
     * The network rail was given work (a send): it counts as busy from now on, and the next poll reads the clock. Not
     * to get the bytes out (tcp writes a send when it is posted) but to read promptly the reply a send to a remote peer
     * is likely to provoke.
     */
    fun kick() {
        kicked = true
        countdown = 1
    }

    /** Called when [countdown] reached 0, with the time: whether to poll the network rail now. */
    fun due(now: Long): Boolean {
        val window = now - lastClock
        lastClock = now
        if (kicked) {
            kicked = false
            lastWork = now
        }
        if (now - lastWork <= ACTIVE_NANOS) {
            arm(1)
            return true
        }
        if (armed == stride) {
            stride =
                when {
                    window > IDLE_POLL_NANOS -> 1
                    window > IDLE_POLL_NANOS / 4 -> maxOf(1, stride / 2)
                    window < IDLE_POLL_NANOS / 8 -> minOf(stride * 2, MAX_STRIDE)
                    else -> stride
                }
        }
        arm(stride)
        return now - lastPoll >= IDLE_POLL_NANOS
    }

    /** The network rail was polled at [now] (the time given to [due]) and did [work]. */
    fun polled(now: Long, work: Int) {
        lastPoll = now
        if (work > 0) {
            lastWork = now
            arm(1)
        }
    }

    private fun arm(polls: Int) {
        armed = polls
        countdown = polls
    }

    /** The current stride (for tests). */
    internal val polls: Int
        get() = armed

    companion object {
        /** How long after its last work the network rail counts as busy and is polled every time. */
        const val ACTIVE_NANOS: Long = 1_000_000L
        /** How often an idle network rail is polled by a spinning caller: the most it delays a message. */
        const val IDLE_POLL_NANOS: Long = 20_000L
        /** The most polls between two clock reads (one read costs about a third of an idle shm poll). */
        const val MAX_STRIDE: Int = 16
    }
}
