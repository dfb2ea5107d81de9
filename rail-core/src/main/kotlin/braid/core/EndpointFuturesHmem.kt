@file:JvmName("EndpointFutures")
@file:JvmMultifileClass

package braid.core

import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeoutException

// The future and blocking forms of the device-memory operations (a registered region and a byte
// range of it instead of a buffer; see Endpoint's "Device memory" section). They complete and
// wait as every future and blocking form does (see sendAsync, sendBlocking).

/** [Endpoint.trySend] of device memory as a future, which completes on its own (see [sendAsync]). */
public fun Endpoint.sendAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
): CompletableFuture<Completion> = Waiting.runAsync(regionOp(PendingOp.SEND, region, offset, length, dest, 0, false))

/** [Endpoint.tryTsend] of device memory as a future. */
public fun Endpoint.tsendAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    tag: Long,
): CompletableFuture<Completion> = Waiting.runAsync(regionOp(PendingOp.TSEND, region, offset, length, dest, tag, false))

/** [Endpoint.tryRecv] into device memory as a future. */
public fun Endpoint.recvAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
): CompletableFuture<Completion> = Waiting.runAsync(regionOp(PendingOp.RECV, region, offset, length, src, 0, false))

/** [Endpoint.tryTrecv] into device memory as a future. */
public fun Endpoint.trecvAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(regionOp(PendingOp.TRECV, region, offset, length, src, tag, false).also { it.ignore = ignore })

/** [Endpoint.trySend] of device memory, blocking up to [timeoutMillis] (negative: for ever); see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.sendBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(regionOp(PendingOp.SEND, region, offset, length, dest, 0, false), timeoutMillis)

/** [Endpoint.tryTsend] of device memory, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.tsendBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    tag: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(regionOp(PendingOp.TSEND, region, offset, length, dest, tag, false), timeoutMillis)

/** [Endpoint.tryRecv] into device memory, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.recvBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    timeoutMillis: Long,
): Completion = Waiting.runBlocking(regionOp(PendingOp.RECV, region, offset, length, src, 0, false), timeoutMillis)

/** [Endpoint.tryTrecv] into device memory, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.trecvBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionOp(PendingOp.TRECV, region, offset, length, src, tag, false).also { it.ignore = ignore },
        timeoutMillis,
    )

/** [Endpoint.tryWrite] from device memory as a future. */
public fun Endpoint.writeAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(regionOp(PendingOp.WRITE, region, offset, length, dest, 0, false).rma(remoteOffset, key))

/** [Endpoint.tryRead] into device memory as a future. */
public fun Endpoint.readAsync(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
): CompletableFuture<Completion> =
    Waiting.runAsync(regionOp(PendingOp.READ, region, offset, length, src, 0, false).rma(remoteOffset, key))

/** [Endpoint.tryAtomic] with a region operand as a future. */
public fun Endpoint.atomicAsync(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        regionAtomic(
            PendingOp.ATOMIC,
            region,
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

/** [Endpoint.tryFetchAtomic] with region operand and result as a future. */
public fun Endpoint.fetchAtomicAsync(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    result: MemoryRegion,
    resultOffset: Long,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        regionAtomic(
            PendingOp.FETCH_ATOMIC,
            region,
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

/** [Endpoint.tryCompareAtomic] with region operand, compare and result as a future. */
public fun Endpoint.compareAtomicAsync(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    compare: MemoryRegion,
    compareOffset: Long,
    result: MemoryRegion,
    resultOffset: Long,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
): CompletableFuture<Completion> =
    Waiting.runAsync(
        regionAtomic(
            PendingOp.COMPARE_ATOMIC,
            region,
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

/** [Endpoint.tryWrite] from device memory, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.writeBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionOp(PendingOp.WRITE, region, offset, length, dest, 0, false).rma(remoteOffset, key),
        timeoutMillis,
    )

/** [Endpoint.tryRead] into device memory, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.readBlocking(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionOp(PendingOp.READ, region, offset, length, src, 0, false).rma(remoteOffset, key),
        timeoutMillis,
    )

/** [Endpoint.tryAtomic] with a region operand, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.atomicBlocking(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionAtomic(
            PendingOp.ATOMIC,
            region,
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

/** [Endpoint.tryFetchAtomic] with region operand and result, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.fetchAtomicBlocking(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    result: MemoryRegion,
    resultOffset: Long,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionAtomic(
            PendingOp.FETCH_ATOMIC,
            region,
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

/** [Endpoint.tryCompareAtomic] with region operand, compare and result, blocking; see [sendBlocking]. */
@Throws(TimeoutException::class, InterruptedException::class)
public fun Endpoint.compareAtomicBlocking(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    compare: MemoryRegion,
    compareOffset: Long,
    result: MemoryRegion,
    resultOffset: Long,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    timeoutMillis: Long,
): Completion =
    Waiting.runBlocking(
        regionAtomic(
            PendingOp.COMPARE_ATOMIC,
            region,
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
