@file:JvmName("EndpointCoroutines")
@file:JvmMultifileClass

package braid.core

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

// The `suspend` forms of RMA and atomics, beside their `try…` forms on Endpoint; progress,
// cancellation, buffers and failures as for the message forms (EndpointCoroutines.kt). Each
// returns once the target has carried the operation out. An RMA operation or atomic cannot be
// withdrawn once the rail has taken it: a cancelled caller still waits for its completion.
// Atomic elements are in the native byte order (see ByteBuffers and AtomicDatatype).

/**
 * Writes `buffer[offset, offset+length)` into [dest]'s region [key] at [remoteOffset] (`fi_write`); see
 * [Endpoint.tryWrite].
 */
public suspend fun Endpoint.write(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(Ops.rma(this, PendingOp.WRITE, buffer, offset, length, dest, remoteOffset, key, true), into)

/** [write] from [buffer]'s position..limit. */
public suspend fun Endpoint.write(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion = Waiting.runPrepared(Ops.rma(this, PendingOp.WRITE, buffer, dest, remoteOffset, key, true), into)

/** Reads `length` bytes of [src]'s region [key] at [remoteOffset] into `buffer[offset…]` (`fi_read`). */
public suspend fun Endpoint.read(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(Ops.rma(this, PendingOp.READ, buffer, offset, length, src, remoteOffset, key, true), into)

/** [read] into [buffer]'s position..limit. */
public suspend fun Endpoint.read(
    buffer: ByteBuffer,
    src: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion = Waiting.runPrepared(Ops.rma(this, PendingOp.READ, buffer, src, remoteOffset, key, true), into)

/** Applies [op] with [count] elements of [type] at `buffer[offset…]` to [dest]'s region (`fi_atomic`). */
public suspend fun Endpoint.atomic(
    buffer: DirectBuffer,
    offset: Int,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** [atomic] with the elements between [buffer]'s position and limit. */
public suspend fun Endpoint.atomic(
    buffer: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.atomic(this, PendingOp.ATOMIC, buffer, null, null, dest, remoteOffset, key, type, op, true),
        into,
    )

/** [atomic], writing the target's old values to `result[resultOffset…]` (`fi_fetch_atomic`). */
public suspend fun Endpoint.fetchAtomic(
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
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** [fetchAtomic] with ByteBuffers; the old values go to [result] from its position on. */
public suspend fun Endpoint.fetchAtomic(
    buffer: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.atomic(this, PendingOp.FETCH_ATOMIC, buffer, null, result, dest, remoteOffset, key, type, op, true),
        into,
    )

/** Compare-and-swap (`fi_compare_atomic`, [AtomicOp.CSWAP]); see [Endpoint.tryCompareAtomic]. */
public suspend fun Endpoint.compareAtomic(
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
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** [compareAtomic] with ByteBuffers. */
public suspend fun Endpoint.compareAtomic(
    buffer: ByteBuffer,
    compare: ByteBuffer,
    result: ByteBuffer,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.atomic(this, PendingOp.COMPARE_ATOMIC, buffer, compare, result, dest, remoteOffset, key, type, op, true),
        into,
    )
