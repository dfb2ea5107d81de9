package braid.core

import java.util.concurrent.CancellationException
import java.util.concurrent.Flow
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong
import java.util.function.Consumer
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch

/**
 * The completions of a queue as a `java.util.concurrent.Flow.Publisher` (see [CompletionQueue.publisher]): each
 * subscriber gets a reader that runs on [dispatcher] and reads the queue only while the subscriber has demand, so a
 * completion is taken off the queue only when it can be delivered, and nothing is lost on `cancel()`.
 */
internal class CompletionPublisher(
    private val cq: CompletionQueue,
    private val onErrorCompletion: Consumer<CompletionError>?,
    private val dispatcher: CoroutineDispatcher,
) : Flow.Publisher<Completion> {
    override fun subscribe(subscriber: Flow.Subscriber<in Completion>) {
        val s = Subscription(subscriber)
        subscriber.onSubscribe(s)
        s.start()
    }

    private inner class Subscription(private val subscriber: Flow.Subscriber<in Completion>) : Flow.Subscription {
        private val demand = AtomicLong()
        private val wake = Channel<Unit>(Channel.CONFLATED)
        private val cancelled = AtomicBoolean()
        @Volatile private var job: Job? = null

        override fun request(n: Long) {
            if (n <= 0) {
                // Reactive Streams §3.9: a non-positive request is an error signalled to the subscriber.
                if (cancelled.compareAndSet(false, true)) {
                    job?.cancel()
                    subscriber.onError(
                        IllegalArgumentException("completion publisher of $cq: request($n) must be positive")
                    )
                }
                return
            }
            demand.accumulateAndGet(n) { a, b -> if (a + b < 0) Long.MAX_VALUE else a + b }
            wake.trySend(Unit)
        }

        override fun cancel() {
            if (cancelled.compareAndSet(false, true)) job?.cancel()
        }

        fun start() {
            if (cancelled.get()) return
            job =
                CoroutineScope(dispatcher).launch {
                    try {
                        val onError: (CompletionError) -> Unit =
                            onErrorCompletion?.let { h -> { e -> h.accept(e) } }
                                ?: { e ->
                                    throw FabricException(e.err, "completion queue on domain '${cq.domain.name}': $e")
                                }
                        cq.pump(onError, ::awaitDemand) { c ->
                            if (demand.get() != Long.MAX_VALUE) demand.decrementAndGet()
                            subscriber.onNext(c)
                        }
                        if (cancelled.compareAndSet(false, true)) subscriber.onComplete()
                    } catch (e: CancellationException) {
                        // cancelled: no further signal
                    } catch (t: Throwable) {
                        if (cancelled.compareAndSet(false, true)) subscriber.onError(t)
                    }
                }
            if (cancelled.get()) job?.cancel()
        }

        private suspend fun awaitDemand() {
            while (demand.get() == 0L) {
                if (cancelled.get()) throw CancellationException("cancelled")
                wake.receive()
            }
            if (cancelled.get()) throw CancellationException("cancelled")
        }
    }
}
