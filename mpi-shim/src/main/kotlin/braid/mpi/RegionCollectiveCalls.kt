package braid.mpi

import braid.collectives.CollectiveRequest
import braid.collectives.Datatype.BYTE
import braid.core.FabricException
import braid.core.MemoryRegion

// The collectives of [CommRegions] on an intracommunicator's group: each is one call of the collectives module's region
// form (CollectiveGroup.startAllreduce(MemoryRegion, …) and the others), which stages device bytes through the group's
// pooled host buffers with the endpoint's copy service and copies the result back before the request ends. Data-moving
// collectives move bytes; reductions run the module's kernel or the communicator's user op as the buffer forms do
// ([plan]). Regions take contiguous types (a strided type: pack it with Comm.pack(region, …) first).

/** [count] elements of [type] at [offset] of [region], checked for a region collective: contiguous, in range. */
internal fun CommCollectives.regionSpan(
    call: String,
    region: MemoryRegion,
    offset: Long,
    count: Int,
    type: Datatype,
    what: String,
): RegionSpan {
    checkCount(call, count)
    type.checkUsable(call)
    if (!type.isContiguous)
        throw MPIException.of(
            ErrorClass.ERR_TYPE,
            call,
            "the $what: collectives on memory regions take a contiguous type, not $type; pack it into a host buffer " +
                "with Comm.pack(region, …) and use the buffer form",
        )
    return RegionSpan(region, offset, count, type).check(call, mpi.ep, what)
}

/** One module call on regions, its start's failure (a failed copy of the input) an MPI error of the call. */
internal inline fun CommCollectives.regionCall(call: String, crossinline start: () -> CollectiveRequest): CollRequest =
    try {
        one { start() }
    } catch (e: FabricException) {
        throw MPIException.of(
            Request.errorClassOf(e.code).takeIf { it != ErrorClass.SUCCESS } ?: ErrorClass.ERR_OTHER,
            call,
            e.message ?: e.toString(),
        )
    }

internal fun CommCollectives.regionBcast(call: String, buf: RegionSpan, root: Int): CollRequest {
    checkRoot(call, root)
    return regionCall(call) { group.startBroadcast(buf.region, buf.start, buf.bytes, BYTE, root) }
}

/**
 * A reduction on regions ([kind]; [scatter]: reduce_scatter_block, [count] elements per rank): [send] null is in place.
 */
internal fun CommCollectives.regionReduce(
    call: String,
    kind: ReductionKind,
    scatter: Boolean,
    send: RegionSpan?,
    recv: RegionSpan?,
    count: Int,
    type: Datatype,
    op: Op,
    root: Int,
): CollRequest {
    if (kind == ReductionKind.REDUCE) checkRoot(call, root)
    val (plan, reduction) = regionPlan(call, type, op)
    val n = count * plan.perElement
    val s = send?.region
    val so = send?.start ?: 0L
    val r = recv?.region
    val ro = recv?.start ?: 0L
    val el = plan.element
    val builtin = reduction as? braid.collectives.ReduceOp
    val user = reduction as? braid.collectives.UserReduction
    return regionCall(call) {
        when {
            scatter && builtin != null -> group.startReduceScatterBlock(s, so, r!!, ro, n, el, builtin)
            scatter -> group.startReduceScatterBlock(s, so, r!!, ro, n, el, user!!)
            builtin != null ->
                when (kind) {
                    ReductionKind.REDUCE -> group.startReduce(s, so, r, ro, n, el, builtin, root)
                    ReductionKind.ALLREDUCE -> group.startAllreduce(s, so, r!!, ro, n, el, builtin)
                    ReductionKind.SCAN -> group.startScan(s, so, r!!, ro, n, el, builtin)
                    ReductionKind.EXSCAN -> group.startExscan(s, so, r!!, ro, n, el, builtin)
                }
            else ->
                when (kind) {
                    ReductionKind.REDUCE -> group.startReduce(s, so, r, ro, n, el, user!!, root)
                    ReductionKind.ALLREDUCE -> group.startAllreduce(s, so, r!!, ro, n, el, user!!)
                    ReductionKind.SCAN -> group.startScan(s, so, r!!, ro, n, el, user!!)
                    ReductionKind.EXSCAN -> group.startExscan(s, so, r!!, ro, n, el, user!!)
                }
        }
    }
}

/**
 * How [op] on [type] runs element-wise on regions: the plan, and the module's reduction (its kernel's `ReduceOp` for a
 * predefined op, else the communicator's user op as a `UserReduction`); `MPI_ERR_OP` where it cannot.
 */
internal fun CommCollectives.regionPlan(call: String, type: Datatype, op: Op): Pair<ReductionPlan, Any> {
    checkOp(call, op, type)
    val plan =
        plan(type, op)
            ?: throw MPIException.of(
                ErrorClass.ERR_OP,
                call,
                "$op on $type cannot run element-wise on memory regions (a user op over multi-element items, or a " +
                    "complex product); pack the data into host buffers and use the buffer form",
            )
    val builtin = if (op.isPredefined) op.reduceOp else null
    return plan to (builtin ?: op.asReduction(type))
}

/** Bytes per rank of a regular collective: the send and receive sides must agree (ERR_TRUNCATE). */
internal fun CommCollectives.regionBlock(call: String, send: RegionSpan?, recvCount: Int, recvType: Datatype): Int {
    val n = (recvCount * recvType.size).toInt()
    if (send != null && send.bytes != n) mismatch(call, send.bytes, n)
    return n
}

/** The elements a v-form's blocks span, from the start of the buffer. */
internal fun vExtent(counts: IntArray, displs: IntArray): Int =
    counts.indices.maxOfOrNull { if (counts[it] == 0) 0 else displs[it] + counts[it] } ?: 0

/** A v-form's counts or displacements, in elements of [type], as bytes (plus [shift]). */
internal fun asBytes(values: IntArray, type: Datatype, extent: Boolean, shift: Long = 0): IntArray =
    IntArray(values.size) { (values[it] * (if (extent) type.extent else type.size) + shift).toInt() }

internal fun CommCollectives.regionAllgather(call: String, send: RegionSpan?, recv: RegionSpan, n: Int): CollRequest =
    regionCall(call) {
        if (send != null) group.startAllgather(send.region, send.start, recv.region, recv.start, n, BYTE)
        else
            group.startAllgatherv(
                null,
                0,
                recv.region,
                recv.start,
                IntArray(size) { n },
                IntArray(size) { it * n },
                BYTE,
            )
    }

internal fun CommCollectives.regionAllgatherv(
    call: String,
    send: RegionSpan?,
    recv: RegionSpan,
    recvCounts: IntArray,
    displs: IntArray,
): CollRequest {
    val t = recv.type
    if (send != null && send.bytes.toLong() != recvCounts[rank] * t.size)
        mismatch(call, send.bytes, (recvCounts[rank] * t.size).toInt())
    return regionCall(call) {
        group.startAllgatherv(
            send?.region,
            send?.start ?: 0,
            recv.region,
            recv.start,
            asBytes(recvCounts, t, false),
            asBytes(displs, t, true),
            BYTE,
        )
    }
}

internal fun CommCollectives.regionAlltoall(call: String, send: RegionSpan, recv: RegionSpan, n: Int): CollRequest =
    regionCall(call) { group.startAlltoall(send.region, send.start, recv.region, recv.start, n, BYTE) }

/**
 * An alltoallv on regions in bytes: [sendCounts]`[j]` bytes from byte [sendDispls]`[j]` of [send]'s region (from its
 * offset) to rank j, rank j's into byte [recvDispls]`[j]` of [recv]'s; alltoallv and alltoallw are both this.
 */
internal fun CommCollectives.regionAlltoallv(
    call: String,
    send: RegionSpan,
    sendCounts: IntArray,
    sendDispls: IntArray,
    recv: RegionSpan,
    recvCounts: IntArray,
    recvDispls: IntArray,
): CollRequest =
    regionCall(call) {
        group.startAlltoallv(
            send.region,
            send.offset,
            sendCounts,
            sendDispls,
            recv.region,
            recv.offset,
            recvCounts,
            recvDispls,
            BYTE,
        )
    }

/**
 * `MPI_Alltoallw` on regions: per rank a count, a byte displacement and a contiguous type on each side ([sendTypes],
 * [recvTypes]; a strided one is `MPI_ERR_TYPE`), every block checked against its region; then the byte alltoallv.
 */
internal fun CommCollectives.regionAlltoallw(
    call: String,
    send: RegionSpan,
    sendCounts: IntArray,
    sendDispls: IntArray,
    sendTypes: Array<Datatype>,
    recv: RegionSpan,
    recvCounts: IntArray,
    recvDispls: IntArray,
    recvTypes: Array<Datatype>,
): CollRequest {
    fun bytes(side: RegionSpan, counts: IntArray, displs: IntArray, types: Array<Datatype>, what: String): IntArray {
        checkVector(call, "${what}Counts", counts, displs)
        if (types.size != size)
            throw MPIException.of(ErrorClass.ERR_ARG, call, "${what}Types has ${types.size} entries; it needs $size")
        val b =
            IntArray(size) {
                val block =
                    regionSpan(call, side.region, side.offset + displs[it], counts[it], types[it], "$what buffer")
                block.bytes
            }
        return b
    }
    val sb = bytes(send, sendCounts, sendDispls, sendTypes, "send")
    val rb = bytes(recv, recvCounts, recvDispls, recvTypes, "receive")
    val sd = IntArray(size) { sendDispls[it] + (if (sb[it] == 0) 0 else sendTypes[it].trueLb.toInt()) }
    val rd = IntArray(size) { recvDispls[it] + (if (rb[it] == 0) 0 else recvTypes[it].trueLb.toInt()) }
    if (sb[rank] != rb[rank]) mismatch(call, sb[rank], rb[rank])
    return regionAlltoallv(call, send, sb, sd, recv, rb, rd)
}

/**
 * `MPI_Reduce_scatter` on regions: rank i keeps `recvCounts[i]` elements of the reduction of `recvCounts.sum()`; equal
 * counts are the block form ([regionReduce]), others the collectives module's reduce-scatter with counts. [send] null:
 * in place (the whole input in [recv]).
 */
internal fun CommCollectives.regionReduceScatter(
    call: String,
    send: RegionSpan?,
    recv: RegionSpan,
    recvCounts: IntArray,
    type: Datatype,
    op: Op,
): CollRequest {
    if (recvCounts.all { it == recvCounts[0] })
        return regionReduce(call, ReductionKind.ALLREDUCE, true, send, recv, recvCounts[0], type, op, 0)
    val (plan, reduction) = regionPlan(call, type, op)
    val counts = IntArray(size) { recvCounts[it] * plan.perElement }
    val s = send?.region
    return regionCall(call) {
        when (reduction) {
            is braid.collectives.ReduceOp ->
                group.startReduceScatter(s, send?.start ?: 0, recv.region, recv.start, counts, plan.element, reduction)
            else ->
                group.startReduceScatter(
                    s,
                    send?.start ?: 0,
                    recv.region,
                    recv.start,
                    counts,
                    plan.element,
                    reduction as braid.collectives.UserReduction,
                )
        }
    }
}

/** A gather to [root]: [send] null is in place (the root's block already in [recv]). */
internal fun CommCollectives.regionGather(
    call: String,
    send: RegionSpan?,
    recv: RegionSpan?,
    n: Int,
    root: Int,
): CollRequest {
    checkRoot(call, root)
    val atRoot = rank == root
    if (send == null && !atRoot) missing(call, "send")
    if (atRoot && recv == null) missing(call, "receive")
    return regionCall(call) {
        if (send != null) group.startGather(send.region, send.start, recv?.region, recv?.start ?: 0, n, BYTE, root)
        else
            group.startGatherv(
                null,
                0,
                n,
                recv!!.region,
                recv.start,
                IntArray(size) { n },
                IntArray(size) { it * n },
                BYTE,
                root,
            )
    }
}

internal fun CommCollectives.regionGatherv(
    call: String,
    send: RegionSpan?,
    recv: RegionSpan?,
    recvCounts: IntArray?,
    displs: IntArray?,
    root: Int,
): CollRequest {
    checkRoot(call, root)
    val atRoot = rank == root
    if (send == null && !atRoot) missing(call, "send")
    val t = recv?.type
    if (atRoot && (recv == null || recvCounts == null || displs == null))
        throw MPIException.of(ErrorClass.ERR_ARG, call, "the root needs a receive region, counts and displacements")
    if (atRoot) checkVector(call, "recvCounts", recvCounts!!, displs)
    return regionCall(call) {
        group.startGatherv(
            send?.region,
            send?.start ?: 0,
            send?.bytes ?: 0,
            recv?.region.takeIf { atRoot },
            recv?.start ?: 0,
            if (atRoot) asBytes(recvCounts!!, t!!, false) else null,
            if (atRoot) asBytes(displs!!, t!!, true) else null,
            BYTE,
            root,
        )
    }
}

internal fun CommCollectives.regionScatter(
    call: String,
    send: RegionSpan?,
    recv: RegionSpan,
    n: Int,
    root: Int,
): CollRequest {
    checkRoot(call, root)
    if (rank == root && send == null) missing(call, "send")
    return regionCall(call) {
        group.startScatter(send?.region, send?.start ?: 0, recv.region, recv.start, n, BYTE, root)
    }
}

internal fun CommCollectives.regionScatterv(
    call: String,
    send: RegionSpan?,
    sendCounts: IntArray?,
    displs: IntArray?,
    recv: RegionSpan,
    root: Int,
): CollRequest {
    checkRoot(call, root)
    val atRoot = rank == root
    if (atRoot && (send == null || sendCounts == null || displs == null))
        throw MPIException.of(ErrorClass.ERR_ARG, call, "the root needs a send region, counts and displacements")
    if (atRoot) checkVector(call, "sendCounts", sendCounts!!, displs)
    val t = send?.type
    return regionCall(call) {
        group.startScatterv(
            send?.region.takeIf { atRoot },
            send?.start ?: 0,
            if (atRoot) asBytes(sendCounts!!, t!!, false) else null,
            if (atRoot) asBytes(displs!!, t!!, true) else null,
            recv.region,
            recv.start,
            recv.bytes,
            BYTE,
            root,
        )
    }
}
