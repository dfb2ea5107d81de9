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
