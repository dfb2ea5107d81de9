@file:JvmName("EndpointFutures")
@file:JvmMultifileClass

package braid.core

import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

// The future and blocking forms of RMA and atomics (static methods of EndpointFutures from
// Java). Futures complete on their own under any progress model (see sendAsync); blocking forms
// follow sendBlocking. Atomic ByteBuffers must be in the native byte order (see AtomicDatatype).

/** [Endpoint.tryWrite] as a future, which completes once the target has the data (see [sendAsync]). */
public fun Endpoint.writeAsync(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.rma(this, PendingOp.WRITE, buffer, offset, length, dest, remoteOffset, key, false))

/** [writeAsync] from [buffer]'s position..limit. */
public fun Endpoint.writeAsync(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.rma(this, PendingOp.WRITE, buffer, dest, remoteOffset, key, false))

/** [Endpoint.tryRead] as a future, which completes once the data is in [buffer] (see [sendAsync]). */
public fun Endpoint.readAsync(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.rma(this, PendingOp.READ, buffer, offset, length, src, remoteOffset, key, false))

/** [readAsync] into [buffer]'s position..limit. */
public fun Endpoint.readAsync(
    buffer: ByteBuffer,
    src: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.rma(this, PendingOp.READ, buffer, src, remoteOffset, key, false))

/** [Endpoint.tryAtomic] as a future (see [sendAsync]). */
public fun Endpoint.atomicAsync(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        Ops.atomic(
            this,
            PendingOp.ATOMIC,
            buffer,
            offset,
            count,
            null,
            0,
            null,
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        )
    )

/** [atomicAsync] with the elements between [buffer]'s position and limit (native byte order). */
public fun Endpoint.atomicAsync(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(Ops.atomic(this, PendingOp.ATOMIC, buffer, null, null, dest, remoteOffset, key, type, op, false))

/** [Endpoint.tryFetchAtomic] as a future: once complete, `result[resultOffset…]` holds the old values. */
public fun Endpoint.fetchAtomicAsync(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    result: MutableDirectBuffer,
    resultOffset: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        Ops.atomic(
            this,
            PendingOp.FETCH_ATOMIC,
            buffer,
            offset,
            count,
            null,
            0,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        )
    )

/** [fetchAtomicAsync] with ByteBuffers in native byte order; the old values go to [result] from its position on. */
public fun Endpoint.fetchAtomicAsync(
    buffer: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        Ops.atomic(this, PendingOp.FETCH_ATOMIC, buffer, null, result, dest, remoteOffset, key, type, op, false)
    )

/** [Endpoint.tryCompareAtomic] as a future. */
public fun Endpoint.compareAtomicAsync(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    compare: DirectBuffer,
    compareOffset: Int,
    result: MutableDirectBuffer,
    resultOffset: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        Ops.atomic(
            this,
            PendingOp.COMPARE_ATOMIC,
            buffer,
            offset,
            count,
            compare,
            compareOffset,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        )
    )

/** [compareAtomicAsync] with ByteBuffers in native byte order. */
public fun Endpoint.compareAtomicAsync(
    buffer: ByteBuffer,
    compare: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        Ops.atomic(this, PendingOp.COMPARE_ATOMIC, buffer, compare, result, dest, remoteOffset, key, type, op, false)
    )

/** [Endpoint.tryWrite], blocking up to [timeoutMillis] (negative: for ever); see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.writeBlocking(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.rma(this, PendingOp.WRITE, buffer, offset, length, dest, remoteOffset, key, false),
        timeoutMillis,
    )

/** [writeBlocking] from [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.writeBlocking(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(Ops.rma(this, PendingOp.WRITE, buffer, dest, remoteOffset, key, false), timeoutMillis)

/** [Endpoint.tryRead], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.readBlocking(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.rma(this, PendingOp.READ, buffer, offset, length, src, remoteOffset, key, false),
        timeoutMillis,
    )

/** [readBlocking] into [buffer]'s position..limit. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.readBlocking(
    buffer: ByteBuffer,
    src: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(Ops.rma(this, PendingOp.READ, buffer, src, remoteOffset, key, false), timeoutMillis)

/** [Endpoint.tryAtomic], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.atomicBlocking(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(
            this,
            PendingOp.ATOMIC,
            buffer,
            offset,
            count,
            null,
            0,
            null,
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        ),
        timeoutMillis,
    )

/** [atomicBlocking] with the elements between [buffer]'s position and limit (native byte order). */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.atomicBlocking(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(this, PendingOp.ATOMIC, buffer, null, null, dest, remoteOffset, key, type, op, false),
        timeoutMillis,
    )

/** [Endpoint.tryFetchAtomic], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.fetchAtomicBlocking(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    result: MutableDirectBuffer,
    resultOffset: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(
            this,
            PendingOp.FETCH_ATOMIC,
            buffer,
            offset,
            count,
            null,
            0,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        ),
        timeoutMillis,
    )

/** [fetchAtomicBlocking] with ByteBuffers in native byte order. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.fetchAtomicBlocking(
    buffer: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(this, PendingOp.FETCH_ATOMIC, buffer, null, result, dest, remoteOffset, key, type, op, false),
        timeoutMillis,
    )

/** [Endpoint.tryCompareAtomic], blocking up to [timeoutMillis]; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.compareAtomicBlocking(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    compare: DirectBuffer,
    compareOffset: Int,
    result: MutableDirectBuffer,
    resultOffset: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(
            this,
            PendingOp.COMPARE_ATOMIC,
            buffer,
            offset,
            count,
            compare,
            compareOffset,
            result,
            resultOffset,
            dest,
            remoteOffset,
            key,
            type,
            op,
            false,
        ),
        timeoutMillis,
    )

/** [compareAtomicBlocking] with ByteBuffers in native byte order. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.compareAtomicBlocking(
    buffer: ByteBuffer,
    compare: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        Ops.atomic(this, PendingOp.COMPARE_ATOMIC, buffer, compare, result, dest, remoteOffset, key, type, op, false),
        timeoutMillis,
    )
