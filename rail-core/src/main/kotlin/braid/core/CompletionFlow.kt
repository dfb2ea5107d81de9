@file:JvmName("CompletionFlow")

package braid.core

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * The completions of this queue as a cold [Flow]: collecting it reads the queue (driving progress under manual
 * progress, as every read does) and emits each completion as a fresh [Completion] with its source filled in
 * (`fi_cq_readfrom`), for as long as the collector runs.
 *
 * Between completions the collector idles by the domain's [IdlePolicy]: it yields while the policy spins, then suspends
 * until a thread of this process writes to the queue — a completion written by a raw post or another thread's progress
 * resumes it at once — or, under manual progress, until the policy's longest park has passed and it drives progress
 * again. Under automatic progress it does not poll at all.
 *
 * The flow ends when the queue is closed. An error completion is passed to [onError]; the default throws it as a
 * [FabricException], which ends the flow. Give a handler that returns to keep collecting past errors. Only one
 * collector should read a queue at a time, as with [CompletionQueue.read].
 *
 * Completions of operations started through the suspend and future forms go to their callers and never appear here.
 */
@JvmSynthetic // Java: CompletionQueue.publisher()
public fun CompletionQueue.completions(
    onError: (CompletionError) -> Unit = {
        throw FabricException(it.err, "completion queue on domain '${domain.name}': $it")
    }
): Flow<Completion> = flow { pump(onError, {}) { emit(it) } }

/**
 * Reads this queue until it is closed: before each read waits for [ready] (a subscriber's demand), passes each
 * completion, as a fresh [Completion] with its source, to [deliver] and each error completion to [onError]; between
 * completions idles as [completions] describes.
 */
internal suspend fun CompletionQueue.pump(
    onError: (CompletionError) -> Unit,
    ready: suspend () -> Unit,
    deliver: suspend (Completion) -> Unit,
) {
    val c = Completion()
    val e = CompletionError()
    val idle = CoroutineIdle(domain.idlePolicy)
    while (true) {
        ready()
        when (readFrom(c)) {
            1 -> {
                idle.reset()
                deliver(
                    Completion().also {
                        it.context = c.context
                        it.flags = c.flags
                        it.len = c.len
                        it.data = c.data
                        it.tag = c.tag
                        it.source = c.source
                    }
                )
            }
            -Errno.EAVAIL -> {
                idle.reset()
                if (readErr(e) == 1) onError(e.copy())
            }
            else -> if (isClosed) return else idleForWrite(idle)
        }
    }
}

private fun CompletionError.copy(): CompletionError =
    CompletionError().also {
        it.context = context
        it.flags = flags
        it.len = len
        it.data = data
        it.tag = tag
        it.olen = olen
        it.err = err
        it.provErrno = provErrno
        it.source = source
        it.message = message
    }
