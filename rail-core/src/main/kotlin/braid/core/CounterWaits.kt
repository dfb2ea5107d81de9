@file:JvmName("CounterWaits")

package braid.core

import java.util.concurrent.CompletableFuture
import kotlinx.coroutines.future.await

/**
 * The futures of [Counter.waitAsync], linked to their counter. Each is a [Ready]: when an update meets its threshold
 * (or moves the error count) it is queued on the domain's ready list under the lock and completed after the lock is
 * released, so no dependent stage runs under it. While one is outstanding under manual progress it is counted in
 * [ProgressHub.asyncWaiters], so the domain's driver runs and it completes with nobody calling `get()`.
 */
internal class CounterWait(private val counter: Counter, private val threshold: Long, private val errorsBefore: Long) :
    Ready() {
    /** Guarded by the domain lock: whether this wait is still in its counter's list. */
    @JvmField var listed: Boolean = false
    private var failed = false
    private var closedErr = 0

    /** Ends this wait with [err] instead of a count (the domain closed). Caller holds the lock. */
    fun fail(err: Int) {
        closedErr = err
    }

    val future: CompletableFuture<Long> =
        object : CompletableFuture<Long>() {
            override fun cancel(mayInterruptIfRunning: Boolean): Boolean {
                withdraw()
                return super.cancel(mayInterruptIfRunning)
            }

            override fun toString(): String = "waitAsync($threshold) on $counter"
        }

    /** Whether the counter's state ends this wait. Caller holds the lock. */
    fun due(success: Long, errors: Long): Boolean {
        if (errors != errorsBefore) failed = true
        return failed || success >= threshold
    }

    override fun fire() {
        if (closedErr != 0) {
            future.completeExceptionally(
                FabricException(
                    closedErr,
                    "$counter: the domain was closed while waiting for the success count to reach $threshold",
                )
            )
        } else if (failed) {
            future.completeExceptionally(
                FabricException(
                    Errno.EIO,
                    "$counter: the error count moved from $errorsBefore while waiting for the success count to reach $threshold",
                )
            )
        } else {
            future.complete(counter.value)
        }
    }

    private fun withdraw() {
        val hub = counter.domain.hub
        synchronized(counter.domain.lock) {
            if (!listed) return
            counter.removeWait(this)
            hub.asyncWaiterDoneLocked()
        }
    }
}

/**
 * Suspends until this counter's success count reaches [threshold] and returns it (`fi_cntr_wait` as a `suspend` call);
 * throws [FabricException] with [Errno.EIO] if the error count moves first. Cancelling the caller withdraws the wait.
 * Works under either progress model, as [Counter.waitAsync] does.
 */
public suspend fun Counter.awaitValue(threshold: Long): Long = waitAsync(threshold).await()
