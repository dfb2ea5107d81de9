@file:JvmName("EndpointFutures")
@file:JvmMultifileClass

package braid.core

import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * Sends `buffer[offset, offset+length)` to [dest] and returns a future of its completion. From Java every future and
 * blocking form is a static method of `EndpointFutures` taking the endpoint first: `EndpointFutures.sendAsync(ep,
 * buffer, 0, 64, dest)`.
 *
 * **A future completes on its own, whatever the progress model.** Under automatic progress (a [ProgressEngine]) it
 * completes on the engine's thread. Under manual progress (the default) the domain runs a progress driver on the common
 * coroutine pool (`Dispatchers.Default`, no thread of its own) for as long as any future it handed out is incomplete,
 * idling by the domain's [IdlePolicy]. So `CompletableFuture.allOf`, `thenApply`, `thenCompose`, `isDone()` polling and
 * `get()` all just work, with no progress call. A blocking `get()` or `join()` drives progress itself while it waits,
 * and the driver leaves the role to it, so the future completes on the joining thread with no hand-off: the driver then
 * lingers off the cores, waking once a millisecond while futures are being joined, and drives again only when a whole
 * millisecond passed with futures outstanding and nobody waiting on the domain (a future nobody waits for beside a
 * joined loop is driven within one to two milliseconds; with no joins at all, within microseconds); it ends after 100
 * parks with no future started. Dependent stages added without an executor run on the thread that completed the future
 * (the joiner's, the driver's or the engine's): keep them short, or use the `…Async(fn, executor)` stages. The driver
 * costs what a waiting thread costs under the idle policy (under BACKOFF about a thousand short wake-ups a second once
 * idle), for as long as a future is outstanding: `cancel()` a receive you abandon, or it keeps the driver running. Each
 * future allocates itself and its [Completion] and nothing else (its operation comes from the domain's pool and goes
 * back once the future is complete; a completed future never looks at it again). A caller that wants no background
 * activity, or no allocation at all, drives progress itself with the `try…` forms and [CompletionQueue.read], or the
 * `suspend` forms, which allocate nothing on a quick completion.
 *
 * An error completion completes the future exceptionally with a [FabricException] carrying the errno code; a refused
 * start (not enabled, too large, a ByteBuffer it cannot use) likewise, at once. `cancel()` withdraws a receive that has
 * not matched (and returns true) and returns false for an operation that has taken effect, which then completes
 * normally.
 *
 * Buffers: an Agrona region, or a `java.nio.ByteBuffer`'s position..limit (heap or direct; position and limit are left
 * as they are). The buffer must stay untouched until completion.
 */
public fun Endpoint.sendAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
): CompletableFuture<Completion> = Waiting.startAsync(this, PendingOp.SEND, buffer, offset, length, dest, 0, 0, 0)

/** [sendAsync] from [buffer]'s position..limit. */
public fun Endpoint.sendAsync(buffer: ByteBuffer, dest: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.SEND, buffer, dest, 0, false, false))

/** [Endpoint.tryTsend] as a future, which completes on its own (see [sendAsync]). */
public fun Endpoint.tsendAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    tag: Long,
): CompletableFuture<Completion> = Waiting.startAsync(this, PendingOp.TSEND, buffer, offset, length, dest, tag, 0, 0)

/** [tsendAsync] from [buffer]'s position..limit. */
public fun Endpoint.tsendAsync(buffer: ByteBuffer, dest: Long, tag: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.TSEND, buffer, dest, tag, false, false))

/** [Endpoint.tryRecv] as a future, which completes on its own (see [sendAsync]). */
public fun Endpoint.recvAsync(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
): CompletableFuture<Completion> = Waiting.startAsync(this, PendingOp.RECV, buffer, offset, length, src, 0, 0, 0)

/** [recvAsync] into [buffer]'s position..limit. */
public fun Endpoint.recvAsync(buffer: ByteBuffer, src: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.RECV, buffer, src, 0, true, false))

/** [Endpoint.tryTrecv] as a future, which completes on its own (see [sendAsync]). */
@JvmOverloads
public fun Endpoint.trecvAsync(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long = 0,
): CompletableFuture<Completion> =
    Waiting.startAsync(this, PendingOp.TRECV, buffer, offset, length, src, tag, ignore, 0)

/** [trecvAsync] into [buffer]'s position..limit. */
@JvmOverloads
public fun Endpoint.trecvAsync(
    buffer: ByteBuffer,
    src: Long,
    tag: Long,
    ignore: Long = 0,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.TRECV, buffer, src, tag, true, false).also { it.ignore = ignore })

/**
 * [Endpoint.tryInject] as a future: completes once the rail has copied the message (at once, unless it has no room).
 * Its operation comes from the domain's pool, and one done at once goes back to it: such a future allocates only itself
 * and its completion.
 */
public fun Endpoint.injectAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
): CompletableFuture<Completion> = Waiting.startAsync(this, PendingOp.INJECT, buffer, offset, length, dest, 0, 0, 0)

/** [injectAsync] from [buffer]'s position..limit. */
public fun Endpoint.injectAsync(buffer: ByteBuffer, dest: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.INJECT, buffer, dest, 0, false, false))

/** [Endpoint.tryTinject] as a future. */
public fun Endpoint.tinjectAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    tag: Long,
): CompletableFuture<Completion> = Waiting.startAsync(this, PendingOp.TINJECT, buffer, offset, length, dest, tag, 0, 0)

/** [tinjectAsync] from [buffer]'s position..limit. */
public fun Endpoint.tinjectAsync(buffer: ByteBuffer, dest: Long, tag: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.bytes(this, PendingOp.TINJECT, buffer, dest, tag, false, false))

/** [Endpoint.trySenddata] as a future: the receiver's completion carries [data] (see [sendAsync]). */
public fun Endpoint.senddataAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
): CompletableFuture<Completion> =
    Waiting.startAsync(this, PendingOp.SENDDATA, buffer, offset, length, dest, 0, 0, data)

/** [senddataAsync] from [buffer]'s position..limit. */
public fun Endpoint.senddataAsync(buffer: ByteBuffer, data: Long, dest: Long): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.withData(Ops.bytes(this, PendingOp.SENDDATA, buffer, dest, 0, false, false), data))

/** [Endpoint.tryTsenddata] as a future (see [sendAsync]). */
public fun Endpoint.tsenddataAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
    tag: Long,
): CompletableFuture<Completion> =
    Waiting.startAsync(this, PendingOp.TSENDDATA, buffer, offset, length, dest, tag, 0, data)

/** [tsenddataAsync] from [buffer]'s position..limit. */
public fun Endpoint.tsenddataAsync(
    buffer: ByteBuffer,
    data: Long,
    dest: Long,
    tag: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.withData(Ops.bytes(this, PendingOp.TSENDDATA, buffer, dest, tag, false, false), data))

/**
 * [Endpoint.trySend], blocking up to [timeoutMillis] (negative: for ever). Under manual progress the caller drives
 * progress while it waits; under automatic progress it parks (see [IdlePolicy] for what waiting costs). On time-out an
 * unmatched receive is withdrawn and [TimeoutException] thrown (the message stays for a later receive); a receive that
 * matched is waited for and returned; a send, RMA operation or atomic the rail has taken cannot be withdrawn, so the
 * TimeoutException says so, and its buffer must stay untouched. An interrupt is treated like a time-out and throws
 * InterruptedException. Failures throw [FabricException].
 */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.sendBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(Ops.of(this, PendingOp.SEND, buffer, offset, length, dest, 0, false), timeoutMillis)

/** [sendBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.sendBlocking(buffer: ByteBuffer, dest: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(Ops.bytes(this, PendingOp.SEND, buffer, dest, 0, false, false), timeoutMillis)

/** [Endpoint.tryTsend], blocking up to [timeoutMillis] (negative: for ever); see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsendBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    tag: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(Ops.of(this, PendingOp.TSEND, buffer, offset, length, dest, tag, false), timeoutMillis)

/** [tsendBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsendBlocking(buffer: ByteBuffer, dest: Long, tag: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(Ops.bytes(this, PendingOp.TSEND, buffer, dest, tag, false, false), timeoutMillis)

/** [Endpoint.tryRecv], blocking up to [timeoutMillis] (negative: for ever); see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.recvBlocking(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(Ops.of(this, PendingOp.RECV, buffer, offset, length, src, 0, false), timeoutMillis)

/** [recvBlocking] into [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.recvBlocking(buffer: ByteBuffer, src: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(Ops.bytes(this, PendingOp.RECV, buffer, src, 0, true, false), timeoutMillis)

/** [Endpoint.tryTrecv], blocking up to [timeoutMillis] (negative: for ever); see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(PendingOp(this, PendingOp.TRECV, buffer, offset, length, src, tag, ignore), timeoutMillis)

/** [trecvBlocking] into [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(
    buffer: ByteBuffer,
    src: Long,
    tag: Long,
    ignore: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.bytes(this, PendingOp.TRECV, buffer, src, tag, true, false).also { it.ignore = ignore },
        timeoutMillis,
    )

/** [trecvBlocking] of exactly [tag] (no ignore bits). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    tag: Long,
    timeoutMillis: Long,
): Completion = trecvBlocking(buffer, offset, length, src, tag, 0, timeoutMillis)

/** [trecvBlocking] of exactly [tag] (no ignore bits) into [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(buffer: ByteBuffer, src: Long, tag: Long, timeoutMillis: Long): Completion =
    trecvBlocking(buffer, src, tag, 0, timeoutMillis)

/** [Endpoint.tryInject], blocking up to [timeoutMillis] while the rail has no room. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.injectBlocking(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, timeoutMillis: Long) {
    Waiting.runBlocking(Ops.of(this, PendingOp.INJECT, buffer, offset, length, dest, 0, false), timeoutMillis)
}

/** [injectBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.injectBlocking(buffer: ByteBuffer, dest: Long, timeoutMillis: Long) {
    Waiting.runBlocking(Ops.bytes(this, PendingOp.INJECT, buffer, dest, 0, false, false), timeoutMillis)
}

/** [Endpoint.tryTinject], blocking up to [timeoutMillis] while the rail has no room. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tinjectBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    tag: Long,
    timeoutMillis: Long,
) {
    Waiting.runBlocking(Ops.of(this, PendingOp.TINJECT, buffer, offset, length, dest, tag, false), timeoutMillis)
}

/** [tinjectBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tinjectBlocking(buffer: ByteBuffer, dest: Long, tag: Long, timeoutMillis: Long) {
    Waiting.runBlocking(Ops.bytes(this, PendingOp.TINJECT, buffer, dest, tag, false, false), timeoutMillis)
}

/** [Endpoint.trySenddata], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.senddataBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.withData(Ops.of(this, PendingOp.SENDDATA, buffer, offset, length, dest, 0, false), data),
        timeoutMillis,
    )

/** [senddataBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.senddataBlocking(buffer: ByteBuffer, data: Long, dest: Long, timeoutMillis: Long): Completion =
    Waiting.runBlocking(
        Ops.withData(Ops.bytes(this, PendingOp.SENDDATA, buffer, dest, 0, false, false), data),
        timeoutMillis,
    )

/** [Endpoint.tryTsenddata], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsenddataBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
    tag: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.withData(Ops.of(this, PendingOp.TSENDDATA, buffer, offset, length, dest, tag, false), data),
        timeoutMillis,
    )

/** [tsenddataBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsenddataBlocking(
    buffer: ByteBuffer,
    data: Long,
    dest: Long,
    tag: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.withData(Ops.bytes(this, PendingOp.TSENDDATA, buffer, dest, tag, false, false), data),
        timeoutMillis,
    )
