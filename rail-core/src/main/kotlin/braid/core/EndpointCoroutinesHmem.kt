@file:JvmName("EndpointCoroutines")
@file:JvmMultifileClass

package braid.core

// The `suspend` forms of the device-memory operations: a registered region and a byte range of
// it instead of a buffer (see Endpoint's "Device memory" section). They wait as every suspend
// form does (see EndpointCoroutines); the bytes cross the rail through the endpoint's bounce
// buffers, and a failed copy is thrown as FabricException with the copy's errno.

/** Sends `region[offset, offset+length)` to [dest] and suspends until the send completes; see [send] for [into]. */
public suspend fun Endpoint.send(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    into: Completion? = null,
): Completion = Waiting.runPrepared(regionOp(PendingOp.SEND, region, offset, length, dest, 0, true), into)

/** [send] tagged [tag]. */
public suspend fun Endpoint.tsend(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    tag: Long,
    into: Completion? = null,
): Completion = Waiting.runPrepared(regionOp(PendingOp.TSEND, region, offset, length, dest, tag, true), into)

/** Receives an untagged message from [src] into `region[offset, offset+length)`, suspending until it arrives. */
public suspend fun Endpoint.recv(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    into: Completion? = null,
): Completion = Waiting.runPrepared(regionOp(PendingOp.RECV, region, offset, length, src, 0, true), into)

/** Receives a message tagged [tag] (but for [ignore] bits) into `region[offset, offset+length)`. */
public suspend fun Endpoint.trecv(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long = 0,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        regionOp(PendingOp.TRECV, region, offset, length, src, tag, true).also { it.ignore = ignore },
        into,
    )

/** Writes `region[offset, offset+length)` into [dest]'s region [key] at [remoteOffset] and suspends until done. */
public suspend fun Endpoint.write(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(regionOp(PendingOp.WRITE, region, offset, length, dest, 0, true).rma(remoteOffset, key), into)

/** Reads [src]'s region [key] at [remoteOffset] into `region[offset, offset+length)` and suspends until done. */
public suspend fun Endpoint.read(
    region: MemoryRegion,
    offset: Long,
    length: Int,
    src: Long,
    remoteOffset: Long,
    key: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(regionOp(PendingOp.READ, region, offset, length, src, 0, true).rma(remoteOffset, key), into)

/**
 * Applies [op] with [count] elements of [type] at [offset] of [region], memory of any interface, to [dest]'s region
 * [key] at [remoteOffset], suspending until done; see [Endpoint.tryAtomic] with a region.
 */
public suspend fun Endpoint.atomic(
    region: MemoryRegion,
    offset: Long,
    count: Int,
    dest: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** [atomic], copying the target's old values into [result] at [resultOffset] (memory of any interface). */
public suspend fun Endpoint.fetchAtomic(
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
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** Compare-and-swap whose operand, [compare] and [result] are memory of any interface; see [fetchAtomic]. */
public suspend fun Endpoint.compareAtomic(
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
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
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
            true,
        ),
        into,
    )

/** An atomic of [kind] whose local operands are regions; posted by [Endpoint.postRegion] as the `try…` form is. */
@JvmSynthetic
internal fun Endpoint.regionAtomic(
    kind: Int,
    region: MemoryRegion,
    offset: Long,
    count: Int,
    compare: MemoryRegion?,
    compareOffset: Long,
    result: MemoryRegion?,
    resultOffset: Long,
    peer: Long,
    remoteOffset: Long,
    key: Long,
    type: AtomicDatatype,
    op: AtomicOp,
    pooled: Boolean,
): PendingOp {
    val o = regionOp(kind, region, offset, count, peer, 0, pooled).rma(remoteOffset, key)
    o.atomicType = type
    o.atomicOp = op
    o.compareRegion = compare
    o.compareRegionOffset = compareOffset
    o.fetchRegion = result
    o.fetchRegionOffset = resultOffset
    return o
}

/** An operation of [kind] on `region[offset, offset+length)`, pooled for a suspend form or fresh for a future. */
@JvmSynthetic
internal fun Endpoint.regionOp(
    kind: Int,
    region: MemoryRegion,
    offset: Long,
    length: Int,
    addr: Long,
    tag: Long,
    pooled: Boolean,
): PendingOp {
    val op = Ops.of(this, kind, region.buffer, 0, 0, addr, tag, pooled)
    op.length = length
    op.region = region
    op.regionOffset = offset
    return op
}
