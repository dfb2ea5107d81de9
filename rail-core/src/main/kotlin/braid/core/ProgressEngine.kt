package braid.core

import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.LockSupport
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch

/**
 * Automatic progress (`FI_PROGRESS_AUTO`): a duty cycle that drives a domain's providers, re-posts operations the rails
 * refused with `-EAGAIN`, and resumes the coroutines, completes the futures and unparks the threads whose operations
 * finished — so operations complete without the application calling in. Each cycle is `doWork()` feeding the domain's
 * [IdlePolicy].
 *
 * Two forms, chosen by the caller: a daemon [thread] with an Agrona idle strategy, or a [coroutine] on a dispatcher the
 * caller gives (no thread of its own). A domain opened with [DomainAttr.progress] = [ProgressModel.AUTO] starts a
 * thread engine itself. One engine per domain; [close] returns the domain to manual progress. Closing the domain closes
 * its engine.
 *
 * While an engine runs, other waiters do not poll: blocking reads, blocking operations and suspended coroutines park
 * until the engine's completions wake them. The engine itself idles by its policy; under [IdleKind.BACKOFF] it parks at
 * most [IdlePolicy.maxParkNanos] (1 ms by default), which bounds how late it sees work arriving from another process.
 */
public class ProgressEngine
private constructor(
    /** The domain this engine drives. */
    public val domain: Domain,
    private val name: String,
) : AutoCloseable {
    @Volatile private var running = true
    @Volatile private var thread: Thread? = null
    private var job: Job? = null
    private val cycleCount = AtomicLong()
    private val workCount = AtomicLong()
    private val failureCount = AtomicLong()

    /** Duty cycles run so far. */
    public val cycles: Long
        get() = cycleCount.get()

    /** Duty cycles that found work (progress, a retry or a completion to hand out). */
    public val busyCycles: Long
        get() = workCount.get()

    /** Duty cycles that ended in an exception the engine logged and survived. */
    public val failedCycles: Long
        get() = failureCount.get()

    /** Whether the engine is still driving its domain. */
    public val isRunning: Boolean
        get() = running

    /** The engine's thread, for a [thread] engine (diagnostics: its CPU time, its name). */
    public val engineThread: Thread?
        get() = thread

    private fun cycle(): Int {
        val work =
            try {
                domain.progress()
            } catch (e: RuntimeException) {
                // A rail's failure is handled by the domain (its operations fail, an error event is
                // reported); anything else that escapes a cycle is logged, and the engine goes on.
                failureCount.incrementAndGet()
                log.log(System.Logger.Level.ERROR, "progress engine $name: a duty cycle failed; continuing", e)
                1
            }
        cycleCount.lazySet(cycleCount.get() + 1)
        if (work > 0) workCount.lazySet(workCount.get() + 1)
        return work
    }

    private fun runThread() {
        val idle = domain.idlePolicy.newStrategy()
        try {
            while (running) idle.idle(cycle())
        } finally {
            running = false
            domain.hub.detachEngine(this)
        }
    }

    private suspend fun runCoroutine() {
        val idle = CoroutineIdle(domain.idlePolicy)
        while (running) idle.idle(cycle())
    }

    /** Unparks the engine's thread if it is parked. */
    @JvmSynthetic
    internal fun wake() {
        thread?.let { LockSupport.unpark(it) }
    }

    /** Stops the engine; for a thread engine, waits for the thread to finish its cycle. */
    override fun close() {
        running = false
        val t = thread
        if (t != null && t !== Thread.currentThread()) {
            LockSupport.unpark(t)
            t.join(10_000)
        }
        job?.cancel()
        domain.hub.detachEngine(this)
    }

    override fun toString(): String =
        "ProgressEngine($name, ${if (thread != null) "thread" else "coroutine"}, cycles=$cycles)"

    public companion object {
        private val log: System.Logger = System.getLogger("braid.core")

        /**
         * Starts a daemon thread named [name] that drives [domain]. Throws [FabricException] with [Errno.EBUSY] if the
         * domain already has an engine.
         */
        @JvmStatic
        @JvmOverloads
        public fun thread(domain: Domain, name: String = "braid-progress-${domain.name}"): ProgressEngine {
            val e = ProgressEngine(domain, name)
            domain.hub.attachEngine(e)
            val t = Thread(e::runThread, name)
            t.isDaemon = true
            e.thread = t
            t.start()
            return e
        }

        /**
         * Launches a coroutine that drives [domain] on [context] (a dispatcher, and optionally a parent [Job] whose
         * cancellation stops it). The engine yields the dispatcher between cycles and, under [IdleKind.BACKOFF],
         * suspends with `delay` when idle.
         */
        @JvmStatic
        @JvmOverloads
        public fun coroutine(domain: Domain, context: CoroutineContext = Dispatchers.Default): ProgressEngine {
            val e = ProgressEngine(domain, "braid-progress-${domain.name}")
            domain.hub.attachEngine(e)
            val job = CoroutineScope(context).launch { e.runCoroutine() }
            e.job = job
            // However it ends (closed, its parent cancelled, never started), the domain is released.
            job.invokeOnCompletion {
                e.running = false
                domain.hub.detachEngine(e)
            }
            return e
        }
    }
}
