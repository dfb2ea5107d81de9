@file:JvmName("EndpointFutures")

package braid.core

import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException

// The Java forms of an endpoint's data operations, beside the `suspend` forms of
// EndpointCoroutines: `…Async` returns a CompletableFuture, `…Blocking` waits with a time-out.
// From Java: `EndpointFutures.tsendAsync(ep, buffer, 0, 64, dest, tag)`.
//
// Futures. Under automatic progress (a ProgressEngine) a future completes on its own, on the
// engine's thread — keep its dependent stages short, or add them with an executor. Under manual
// progress it completes when something drives progress: a blocking get() or join() on it (which
// drives progress while it waits, as a blocking read does), a read of the CQ, Domain.progress(),
// or another waiting call. An error completion completes the future exceptionally with a
// FabricException carrying the errno code. cancel() follows the cancellation rule of the
// suspend forms: it withdraws a receive that has not matched (and returns true) and returns
// false for an operation that has taken effect, which then completes normally.
//
// Blocking forms. They drive progress while they wait under manual progress, and park under
// automatic progress; see IdlePolicy for what waiting costs. On time-out an unmatched receive is
// withdrawn and TimeoutException thrown (the message stays for a later receive); a receive that
// matched is waited for and returned; a send the rail has taken cannot be withdrawn, so the
// TimeoutException says so, and its buffer must stay untouched. An interrupt is treated like a
// time-out and throws InterruptedException.

/** [send] as a future. */
public fun Endpoint.sendAsync(buffer: DirectBuffer, offset: Int, length: Int, dest: Long): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.SEND, buffer, offset, length, dest, 0, 0))

/** [tsend] as a future. */
public fun Endpoint.tsendAsync(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.TSEND, buffer, offset, length, dest, tag, 0))

/** [recv] as a future. */
public fun Endpoint.recvAsync(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.RECV, buffer, offset, length, src, 0, 0))

/** [trecv] as a future. */
@JvmOverloads
public fun Endpoint.trecvAsync(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, tag: Long, ignore: Long = 0): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.TRECV, buffer, offset, length, src, tag, ignore))

/** [inject] as a future: completes once the rail has copied the message (at once, unless it has no room). */
public fun Endpoint.injectAsync(buffer: DirectBuffer, offset: Int, length: Int, dest: Long): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.INJECT, buffer, offset, length, dest, 0, 0))

/** [tinject] as a future. */
public fun Endpoint.tinjectAsync(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long): CompletableFuture<Completion> =
    Waiting.runAsync(PendingOp(this, PendingOp.TINJECT, buffer, offset, length, dest, tag, 0))

/** [send], blocking up to [timeoutMillis] (negative: for ever). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.sendBlocking(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(PendingOp(this, PendingOp.SEND, buffer, offset, length, dest, 0, 0), timeoutMillis)

/** [tsend], blocking up to [timeoutMillis] (negative: for ever). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsendBlocking(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(PendingOp(this, PendingOp.TSEND, buffer, offset, length, dest, tag, 0), timeoutMillis)

/** [recv], blocking up to [timeoutMillis] (negative: for ever). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.recvBlocking(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(PendingOp(this, PendingOp.RECV, buffer, offset, length, src, 0, 0), timeoutMillis)

/** [trecv], blocking up to [timeoutMillis] (negative: for ever). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(buffer: MutableDirectBuffer, offset: Int, length: Int, src: Long, tag: Long, ignore: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(PendingOp(this, PendingOp.TRECV, buffer, offset, length, src, tag, ignore), timeoutMillis)

/** [inject], blocking up to [timeoutMillis] while the rail has no room. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.injectBlocking(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, timeoutMillis: Long) {
    Waiting.runBlocking(PendingOp(this, PendingOp.INJECT, buffer, offset, length, dest, 0, 0), timeoutMillis)
}

/** [tinject], blocking up to [timeoutMillis] while the rail has no room. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tinjectBlocking(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long, timeoutMillis: Long) {
    Waiting.runBlocking(PendingOp(this, PendingOp.TINJECT, buffer, offset, length, dest, tag, 0), timeoutMillis)
}
