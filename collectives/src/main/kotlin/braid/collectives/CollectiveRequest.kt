package braid.collectives

import braid.core.Domain
import braid.core.Errno
import braid.core.FabricException
import braid.core.ProgressModel
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import kotlin.coroutines.resume
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.suspendCancellableCoroutine

/**
 * A started collective (`MPI_Request` of a nonblocking collective): [test], [waitFor], the `suspend` [await] or a
 * [toFuture]. Once started the collective advances under any progress driver; these only wait for its end. A failure —
 * a step's error completion, a peer found dead, [cancel], a flush of the domain's deferred work — ends it with a
 * [FabricException] carrying the errno of the first failure and a message naming the step.
 *
 * A request belongs to its schedule and is reused: once it has been seen complete (by [test] returning true, [waitFor],
 * [await] or the future), the next call of the same shape may re-arm it. Hold on to it only until then.
 */
public class CollectiveRequest internal constructor(private val schedule: Schedule) {
    @get:JvmSynthetic internal val domain: Domain = schedule.group.endpoint.domain

    @Volatile private var done = true
    @get:JvmSynthetic
    @Volatile
    internal var released: Boolean = true
        private set

    /** 0 while running or after success; the errno of the failure once it failed. */
    @Volatile
    public var errorCode: Int = 0
        private set

    /** What failed, once it failed. */
    @Volatile
    public var errorMessage: String = ""
        private set

    private var waiter: Any? = null

    /** The phase a blocking call carries itself while it waits (see [armInline]); null for a run of the schedule. */
    private var inline: InlineOffloadStep? = null

    /** Whether it has ended (successfully or not), without driving progress. */
    public val isDone: Boolean
        get() = done

    @JvmSynthetic
    internal fun arm() {
        errorCode = 0
        errorMessage = ""
        released = false
        done = false
        inline = null
    }

    /**
     * Arms the request of a blocking call whose one shared-memory [phase] the caller carries itself: nothing is queued,
     * and [waitFor] (called at once by the blocking forms) steps the phase through the offload engine, and the domain's
     * progress every [INLINE_PROGRESS_STEPS] steps for whatever else is in flight. No other thread can take the
     * schedule meanwhile: the request is not released.
     */
    @JvmSynthetic
    internal fun armInline(phase: InlineOffloadStep) {
        arm()
        inline = phase
    }

    /** Up to [spins] steps of the inline phase; completes the request once the phase is through or failed. */
    private fun stepInline(phase: InlineOffloadStep, spins: Int): Boolean {
        val rc = phase.carry(spins)
        if (rc == -Errno.EAGAIN) return false
        inline = null
        complete(-rc, if (rc == 0) "" else "${schedule.name}: $phase")
        return true
    }

    /** A region collective's staging ([RegionStaging]): ended, its output copied back, before the end is seen. */
    @get:JvmSynthetic @set:JvmSynthetic internal var regionJob: RegionJob? = null

    /** Under the domain lock, from the schedule's end or gate (or [cancel]). */
    @JvmSynthetic
    internal fun complete(err: Int, message: String) {
        if (done) return
        val job = synchronized(this) { regionJob.also { regionJob = null } }
        val failed = job?.end(err == 0)
        errorCode = failed?.errno ?: err
        errorMessage = failed?.message ?: message
        val w =
            synchronized(this) {
                done = true
                waiter.also { waiter = null }
            }
        when (w) {
            is CancellableContinuation<*> -> {
                @Suppress("UNCHECKED_CAST") (w as CancellableContinuation<Unit>).resume(Unit)
            }
            is CompletableFuture<*> -> {
                released = true
                @Suppress("UNCHECKED_CAST")
                if (errorCode == 0) (w as CompletableFuture<Void?>).complete(null)
                else w.completeExceptionally(failure())
            }
        }
    }

    private fun failure(): FabricException = FabricException(errorCode, errorMessage)

    private fun finished(): Boolean {
        if (!done && schedule.flushedAway()) {
            schedule.abortLocked(Errno.ECANCELED, "its deferred work was flushed off the queue")
        }
        if (!done) return false
        released = true
        if (errorCode != 0) throw failure()
        return true
    }

    /** Drives progress once; true once the collective has completed. Throws [FabricException] if it failed. */
    public fun test(): Boolean {
        if (done) return finished()
        val phase = inline
        if (phase != null && stepInline(phase, 1)) return finished()
        domain.progress()
        return finished()
    }

    /**
     * Waits for the end, driving progress (the domain's, or the group's [JoinOptions.withProgress]) through the
     * domain's one wait ([Domain.driveUntil]) under its idle policy; throws [FabricException] if it failed, or with
     * ETIMEDOUT after [timeoutMillis] (negative: no limit; the collective keeps running — [cancel] it to stop it).
     */
    @Throws(FabricException::class)
    public fun waitFor(timeoutMillis: Long) {
        if (done) {
            finished()
            return
        }
        val deadline = Domain.deadlineAfter(timeoutMillis)
        val phase = inline
        // A blocking call's own phase: each look tries it INLINE_PROGRESS_STEPS times under one lock
        // of the offload engine, and the wait drives the domain's progress once between looks.
        // A group made for a layer with its own progress (JoinOptions.withProgress) drives that instead.
        val progress = schedule.group.waitProgress
        val ended =
            if (progress != null) {
                if (phase != null) {
                    domain.driveUntil(deadline, { progress.asInt }) { stepInline(phase, INLINE_PROGRESS_STEPS) }
                } else {
                    domain.driveUntil(deadline, { progress.asInt }) { finished() }
                }
            } else if (phase != null) {
                domain.driveUntil(deadline) { stepInline(phase, INLINE_PROGRESS_STEPS) }
            } else {
                domain.driveUntil(deadline) { finished() }
            }
        if (!ended) throw FabricException(Errno.ETIMEDOUT, "${schedule.name}: not complete after $timeoutMillis ms")
        finished()
    }

    /**
     * Suspends until the end; throws [FabricException] if it failed. Under manual progress it drives progress through
     * the domain's suspending wait ([Domain.awaitUntil]); under automatic progress it suspends until the engine's
     * thread completes it.
     */
    public suspend fun await() {
        if (domain.progressModel == ProgressModel.AUTO) {
            if (!done) {
                suspendCancellableCoroutine<Unit> { cont ->
                    val now =
                        synchronized(this) {
                            if (done) true
                            else {
                                waiter = cont
                                false
                            }
                        }
                    if (now) cont.resume(Unit)
                }
            }
            finished()
            return
        }
        domain.awaitUntil { finished() }
    }

    /**
     * The end as a future (for Java): completes normally, or exceptionally with the [FabricException]. Under manual
     * progress it completes when something drives progress; its `get()` and `join()` do.
     */
    public fun toFuture(): CompletableFuture<Void?> {
        val f = DrivingFuture(this)
        val now =
            synchronized(this) {
                if (done) true
                else {
                    waiter = f
                    false
                }
            }
        if (now) {
            released = true
            if (errorCode == 0) f.complete(null) else f.completeExceptionally(failure())
        }
        return f
    }

    /** Fails the collective with ECANCELED, taking back its queued steps and posted receives; false if it had ended. */
    public fun cancel(): Boolean {
        if (done) return false
        schedule.abortLocked(Errno.ECANCELED, "cancelled")
        return true
    }

    @JvmSynthetic
    internal fun drive(): Boolean {
        domain.progress()
        return done
    }

    override fun toString(): String =
        "CollectiveRequest(${schedule.name}, ${if (!done) "running" else if (errorCode == 0) "complete" else Errno.name(errorCode)})"

    internal companion object {
        /** An inline wait tries its phase this many times in a row between drives of the domain's progress. */
        const val INLINE_PROGRESS_STEPS = 32
    }
}

/** A future whose blocking reads drive progress (the domain's one wait), so it completes under manual progress too. */
private class DrivingFuture(private val request: CollectiveRequest) : CompletableFuture<Void?>() {
    private fun driveUntilDone(deadline: Long) {
        request.domain.driveUntil(deadline) { isDone }
    }

    override fun get(): Void? {
        driveUntilDone(Domain.NO_DEADLINE)
        return super.get()
    }

    override fun get(timeout: Long, unit: TimeUnit): Void? {
        val nanos = unit.toNanos(timeout)
        val now = System.nanoTime()
        driveUntilDone(if (now + nanos < now) Domain.NO_DEADLINE else now + nanos)
        return super.get(timeout, unit)
    }

    override fun join(): Void? {
        driveUntilDone(Domain.NO_DEADLINE)
        return super.join()
    }
}
