package braid.provider

import java.lang.System.Logger.Level
import java.util.PriorityQueue
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

/**
 * The process's one timer for every rail: a single daemon thread (`braid-rail-timer`) that keeps a coarse cached clock
 * ([now]) and, at each [Task]'s period, raises the task's [Task.due] flag. It never takes a domain lock and never runs
 * a rail's code: the rail's duty cycle (its `progress`, under the domain lock, inside `Domain.progress` or
 * [RailHost.cycle]) looks at the flag — one plain volatile read per cycle, no clock read — and does the timed work when
 * it is up (tcp's keepalive, shm's liveness checks). So N endpoints cost one thread, not N, and a busy duty cycle pays
 * nothing for its timers.
 *
 * Where nobody drives progress (manual progress, an idle application), a task given an `undriven` action still runs:
 * when its flag is still up one period after it was raised, the timer hands the action to its servant thread
 * (`braid-rail-timer-serve-N`), which runs it (typically `host.cycle { progress() }`, blocking on that endpoint's
 * domain lock). The timer never waits for it. A domain lock is a plain monitor, so it cannot be tried: instead, a
 * servant still inside one action after [STUCK_NANOS] (a domain held by a stuck thread) is retired — it ends once that
 * action returns — and a fresh servant serves everyone else. That task is not handed out again until its action
 * returned, so one stuck domain costs at most one parked thread per endpoint of it and never stalls the liveness of
 * other endpoints.
 *
 * Threads in a process: this timer once any rail endpoint was enabled, plus one servant once an undriven task was
 * served, plus one per stuck action.
 */
internal object RailTimer {
    /** A servant inside one action longer than this is taken to be stuck on a domain lock, and replaced. */
    const val STUCK_NANOS: Long = 200_000_000L
    /** The longest the timer sleeps: also the most the cached clock lags while no task is due. */
    const val MAX_PARK_NANOS: Long = 100_000_000L
    /** The shortest period a task may have. */
    const val MIN_PERIOD_NANOS: Long = 1_000_000L

    @Volatile private var clock: Long = System.nanoTime()

    /**
     * The cached coarse clock (a [System.nanoTime] value) as of the timer's last pass: never older than the shortest
     * period of a live task, nor than [MAX_PARK_NANOS]. Cheap enough for timed work to read instead of the system
     * clock; too coarse for anything finer (the link's microsecond poll schedule reads the system clock on a stride of
     * its own).
     */
    fun now(): Long = clock

    private val incoming = ConcurrentLinkedQueue<Task>()
    private val pending = ConcurrentLinkedQueue<Task>()
    private val started = AtomicBoolean()
    @Volatile private var thread: Thread? = null
    // Owned by the timer thread alone.
    private val heap = PriorityQueue<Task>(compareBy { it.nextAt })
    private var servant: Servant? = null
    private val servants = AtomicInteger()

    /**
     * Schedules a task named [name] (for diagnostics) whose flag is up at once and raised again every [periodNanos] (at
     * least [MIN_PERIOD_NANOS]). [undriven], if given, runs on the servant when the flag stayed up a whole period
     * (nobody drove the duty cycle).
     */
    fun schedule(name: String, periodNanos: Long, undriven: Runnable? = null): Task {
        val t = Task(name, maxOf(MIN_PERIOD_NANOS, periodNanos), undriven)
        t.nextAt = after(System.nanoTime(), t.periodNanos)
        incoming += t
        if (started.compareAndSet(false, true)) {
            val th = Thread(::run, "braid-rail-timer").also { it.isDaemon = true }
            thread = th
            th.start()
        } else {
            LockSupport.unpark(thread)
        }
        return t
    }

    /** Tasks scheduled and not cancelled (diagnostics and tests). */
    val live: Int
        get() = liveCount.get()

    private val liveCount = AtomicInteger()

    /** Servant threads alive now, retired ones included (diagnostics and tests). */
    val servantThreads: Int
        get() = servants.get()

    /** One timed duty of one endpoint's rail; the rail reads and clears [due] in its duty cycle ([take]). */
    class Task internal constructor(val name: String, val periodNanos: Long, internal val undriven: Runnable?) {
        /**
         * Raised by the timer each period; the rail's duty cycle clears it when it does the work ([take]). Up from the
         * start: the first duty cycle does the work once (shm looks at the peers its directed receives wait for at
         * once, as it did when it counted cycles).
         */
        @Volatile @JvmField var due: Boolean = true
        @Volatile internal var cancelled = false
        /** Handed to a servant and not yet returned from it. */
        internal val queued = AtomicBoolean()
        internal var nextAt = 0L

        init {
            liveCount.incrementAndGet()
        }

        /** Whether the work is due; clears the flag if so. Call from the duty cycle: `if (task.due && task.take())`. */
        fun take(): Boolean {
            if (!due) return false
            due = false
            return true
        }

        /** Stops the task: its flag is raised no more and its undriven action is not run again. */
        fun cancel() {
            if (cancelled) return
            cancelled = true
            liveCount.decrementAndGet()
        }

        override fun toString(): String =
            "timer task $name (every ${periodNanos / 1000} µs${if (undriven != null) ", served undriven" else ""})"
    }

    private fun run() {
        while (true) {
            try {
                pass()
            } catch (e: Throwable) {
                log.log(Level.ERROR, "braid rail timer: a pass failed; continuing", e)
                LockSupport.parkNanos(this, MIN_PERIOD_NANOS)
            }
        }
    }

    private fun pass() {
        while (true) heap += incoming.poll() ?: break
        val now = System.nanoTime()
        clock = now
        while (true) {
            val t = heap.peek() ?: break
            if (t.nextAt - now > 0) break
            heap.poll()
            if (t.cancelled) continue
            fire(t)
            t.nextAt = after(now, t.periodNanos)
            heap += t
        }
        val busy = watchServant(now)
        var pause = heap.peek()?.let { it.nextAt - now } ?: MAX_PARK_NANOS
        if (busy) pause = minOf(pause, STUCK_NANOS / 4)
        LockSupport.parkNanos(this, pause.coerceIn(1L, MAX_PARK_NANOS))
    }

    /**
     * The first multiple of [period] after [now]: tasks of one period (every shm endpoint's liveness, every tcp
     * keepalive of one time-out) come due in the same pass, so a hundred endpoints wake the timer no more often than
     * one.
     */
    private fun after(now: Long, period: Long): Long = (Math.floorDiv(now, period) + 1) * period

    /**
     * Raises [t]'s flag; if it is still up from last period, nobody drives the duty cycle: hand the task to a servant.
     */
    private fun fire(t: Task) {
        if (!t.due) {
            t.due = true
        } else if (t.undriven != null && t.queued.compareAndSet(false, true)) {
            pending += t
            val s =
                servant
                    ?: Servant().also {
                        servant = it
                        it.start()
                    }
            LockSupport.unpark(s)
        }
    }

    /** Replaces a servant stuck in one action; returns whether one is busy (so the timer looks again soon). */
    private fun watchServant(now: Long): Boolean {
        val s = servant ?: return false
        if (s.current == null) return pending.isNotEmpty()
        if (now - s.since > STUCK_NANOS) {
            log.log(
                Level.WARNING,
                "braid rail timer: ${s.current} has been waiting ${(now - s.since) / 1_000_000} ms for its domain; serving the others on a new thread",
            )
            s.retired = true
            servant = Servant().also { it.start() }
        }
        return true
    }

    private class Servant : Thread("braid-rail-timer-serve-${serial.incrementAndGet()}") {
        @Volatile var current: Task? = null
        @Volatile var since = 0L
        @Volatile var retired = false

        init {
            isDaemon = true
        }

        override fun run() {
            servants.incrementAndGet()
            try {
                while (!retired) {
                    val t = pending.poll()
                    if (t == null) {
                        LockSupport.parkNanos(this, MAX_PARK_NANOS)
                        continue
                    }
                    since = System.nanoTime()
                    current = t
                    try {
                        if (!t.cancelled) t.undriven!!.run()
                    } catch (e: Throwable) {
                        log.log(Level.ERROR, "braid rail timer: $t failed", e)
                    } finally {
                        current = null
                        t.queued.set(false)
                    }
                }
            } finally {
                servants.decrementAndGet()
            }
        }

        companion object {
            val serial = AtomicInteger()
        }
    }

    private val log: System.Logger = System.getLogger("braid.provider")
}
