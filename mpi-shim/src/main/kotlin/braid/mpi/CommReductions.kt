package braid.mpi

import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

// The reductions of an intracommunicator's collectives ([CommCollectives]): reduce, allreduce,
// scan, exscan, reduce_scatter_block and reduce_scatter, on the collectives module.
//
// - A built-in op on a type of one element kind runs the module's kernel on `count × perElement`
//   elements of that kind; a direct layout (CollBlocks.isDirect) is used in place through the
//   reused views, so a warm blocking reduce, allreduce or reduce_scatter_block allocates nothing.
// - A user op on a type of single basic elements runs as the module's user reduction; the module
//   keeps a non-commutative op in rank order.
// - A user op on elements of several basic elements (a struct, a contiguous run) cannot be split
//   where the module splits vectors: an allgather of every contribution and a local fold in rank
//   order (`x0 op (x1 op … xn-1)`), at `size ×` the memory.
// - reduce_scatter_block is the module's reduce-scatter (ring for commutative ops, reduce then
//   scatter for the others); reduce_scatter with unequal counts is a reduce to rank 0 then a
//   scatterv (with equal counts, the block form).

internal enum class ReductionKind {
    REDUCE,
    ALLREDUCE,
    SCAN,
    EXSCAN,
}

internal fun CommCollectives.ireduce(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer?,
    count: Int,
    type: Datatype,
    op: Op,
    root: Int,
    blocking: Boolean = false,
): CollRequest? {
    checkRoot(call, root)
    val atRoot = rank == root
    if (send === Mpi.IN_PLACE && !atRoot)
        throw MPIException.of(
            ErrorClass.ERR_BUFFER,
            call,
            "MPI_IN_PLACE is the root's send buffer only (rank $rank is not root $root)",
        )
    return reduction(
        call,
        send,
        if (atRoot) recv ?: missing(call, "receive") else null,
        count,
        type,
        op,
        ReductionKind.REDUCE,
        root,
        blocking,
    )
}

internal fun CommCollectives.iallreduce(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer,
    count: Int,
    type: Datatype,
    op: Op,
    blocking: Boolean = false,
): CollRequest? = reduction(call, send, recv, count, type, op, ReductionKind.ALLREDUCE, 0, blocking)

internal fun CommCollectives.iscan(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer,
    count: Int,
    type: Datatype,
    op: Op,
    exclusive: Boolean,
): CollRequest =
    reduction(
        call,
        send,
        recv,
        count,
        type,
        op,
        if (exclusive) ReductionKind.EXSCAN else ReductionKind.SCAN,
        0,
        false,
    )!!

/**
 * `MPI_Reduce_scatter_block`: the module's reduce-scatter of `size × recvCount` elements; this rank keeps block
 * [CommCollectives.rank].
 */
internal fun CommCollectives.ireduceScatterBlock(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer,
    recvCount: Int,
    type: Datatype,
    op: Op,
    blocking: Boolean = false,
): CollRequest? {
    checkCount(call, recvCount)
    val total = recvCount * size
    val inPlace = send === Mpi.IN_PLACE
    val input = scatterInput(call, send, recv, total, recvCount, type, op)
    val builtin = op.reduceOp
    val b = type.basic
    if (builtin != null && b != null && CollBlocks.isDirect(type) && !op.isComplexProduct(type)) {
        val n = recvCount * (type.size / b.size).toInt()
        return direct(call, blocking) {
            group.startReduceScatterBlock(
                if (inPlace) null else CollBlocks.wrap(viewA, input),
                0,
                CollBlocks.wrap(viewB, recv),
                0,
                n,
                b.element,
                builtin,
            )
        }
    }
    val plan = plan(type, op) ?: return foldScatter(input, recv, IntArray(size) { recvCount }, type, op)
    // In place the module reads the whole vector from, and leaves this rank's block at the start of, one buffer.
    val s = CollBlocks.single(input, type, total).pack()
    val r = if (inPlace) s else CollBlocks.single(recv, type, recvCount)
    return one({ if (inPlace) s.unpackFirst(recvCount) else r.unpack() }) {
        plan.reduceScatterBlock(group, if (inPlace) null else s.view, r.view, recvCount * plan.perElement)
    }
}

/** `MPI_Reduce_scatter`: equal counts are the block form; otherwise a reduce to rank 0 and a scatterv of the blocks. */
internal fun CommCollectives.ireduceScatter(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer,
    recvCounts: IntArray,
    type: Datatype,
    op: Op,
): CollRequest {
    checkVector(call, "recvCounts", recvCounts, null)
    if (recvCounts.all { it == recvCounts[0] }) return ireduceScatterBlock(call, send, recv, recvCounts[0], type, op)!!
    val total = recvCounts.sum()
    val input = scatterInput(call, send, recv, total, recvCounts[rank], type, op)
    val plan = plan(type, op) ?: return foldScatter(input, recv, recvCounts, type, op)
    val s = CollBlocks.single(input, type, total).pack()
    val byteCounts = IntArray(size) { (recvCounts[it] * type.size).toInt() }
    val full = if (rank == 0) scratch((total * type.size).toInt()) else null
    val r = CollBlocks.single(recv, type, recvCounts[rank])
    // In place, the scatterv writes where the input was: it starts only once the reduce has ended, which read the input
    // first.
    return run(
        arrayOf(
            { plan.reduce(group, s.view, full, total * plan.perElement, 0, false) },
            {
                group.startScatterv(
                    full,
                    0,
                    if (rank == 0) byteCounts else null,
                    if (rank == 0) CollBlocks.prefix(byteCounts) else null,
                    r.view,
                    0,
                    byteCounts[rank],
                    braid.collectives.Datatype.BYTE,
                    0,
                )
            },
        )
    ) {
        r.unpack()
    }
}

/** Checks a reduce-scatter's buffers and op; the input ([recv] in place). */
private fun CommCollectives.scatterInput(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer,
    total: Int,
    mine: Int,
    type: Datatype,
    op: Op,
): ByteBuffer {
    val inPlace = send === Mpi.IN_PLACE
    val input = if (inPlace) recv else send ?: missing(call, "send")
    checkData(call, input, total, type, if (inPlace) "receive buffer (in place)" else "send buffer")
    checkData(call, recv, mine, type, "receive buffer")
    checkOrder(call, if (inPlace) "receive" else "send", input, type)
    checkOrder(call, "receive", recv, type)
    checkOp(call, op, type)
    return input
}

/**
 * A reduce-scatter by a multi-element user op: the allreduce by allgather and fold, of which this rank keeps its block.
 */
private fun CommCollectives.foldScatter(
    input: ByteBuffer,
    recv: ByteBuffer,
    recvCounts: IntArray,
    type: Datatype,
    op: Op,
): CollRequest {
    val total = recvCounts.sum()
    val packed = CollBlocks.single(input, type, total).pack()
    val result = scratch((total * type.size).toInt())
    val at = (CollBlocks.prefix(recvCounts)[rank] * type.size).toInt()
    val me = recvCounts[rank]
    return reductionOn(packed.view, total, type, op, null, ReductionKind.ALLREDUCE, 0, result) {
        type.unpackFrom(result.byteBuffer()!!, at, recv, 0, me)
    }
}

private fun CommCollectives.reduction(
    call: String,
    send: ByteBuffer?,
    recv: ByteBuffer?,
    count: Int,
    type: Datatype,
    op: Op,
    kind: ReductionKind,
    root: Int,
    blocking: Boolean,
): CollRequest? {
    checkCount(call, count)
    val inPlace = send === Mpi.IN_PLACE
    val input = if (inPlace) recv!! else send ?: missing(call, "send")
    checkData(call, input, count, type, if (inPlace) "receive buffer (in place)" else "send buffer")
    checkOrder(call, if (inPlace) "receive" else "send", input, type)
    if (recv != null) {
        checkData(call, recv, count, type, "receive buffer")
        checkOrder(call, "receive", recv, type)
    }
    checkOp(call, op, type)
    val builtin = op.reduceOp
    val b = type.basic
    if (
        builtin != null &&
            b != null &&
            CollBlocks.isDirect(type) &&
            !op.isComplexProduct(type) &&
            (kind == ReductionKind.REDUCE || kind == ReductionKind.ALLREDUCE)
    ) {
        val n = count * (type.size / b.size).toInt()
        return direct(
            call,
            blocking,
            {
                val s = if (inPlace) null else CollBlocks.wrap(viewA, input)
                if (kind == ReductionKind.REDUCE)
                    group.startReduce(
                        s,
                        0,
                        if (recv == null) null else CollBlocks.wrap(viewB, recv),
                        0,
                        n,
                        b.element,
                        builtin,
                        root,
                    )
                else group.startAllreduce(s, 0, CollBlocks.wrap(viewB, recv!!), 0, n, b.element, builtin)
            },
        ) {
            val s = if (inPlace) null else CollBlocks.wrap(viewA, input)
            if (kind == ReductionKind.REDUCE)
                group.reduce(
                    s,
                    0,
                    if (recv == null) null else CollBlocks.wrap(viewB, recv),
                    0,
                    n,
                    b.element,
                    builtin,
                    root,
                )
            else group.allreduce(s, 0, CollBlocks.wrap(viewB, recv!!), 0, n, b.element, builtin)
        }
    }
    val packed = CollBlocks.single(input, type, count).pack()
    val out = if (recv != null) CollBlocks.single(recv, type, count) else null
    // The module reads the input from `packed.view`; a contiguous in-place buffer is read and written in place.
    return reductionOn(packed.view, count, type, op, plan(type, op), kind, root, out?.view) { out?.unpack() }
}

/**
 * Runs [kind] over [count] packed elements of [type] in [input] by [plan] (null: allgather and fold); the result lands
 * in [resultView] (null at a reduce's non-roots; the same memory as [input] means in place) and [after] runs on
 * completion where a result arrived.
 */
internal fun CommCollectives.reductionOn(
    input: UnsafeBuffer,
    count: Int,
    type: Datatype,
    op: Op,
    plan: ReductionPlan?,
    kind: ReductionKind,
    root: Int,
    resultView: UnsafeBuffer?,
    after: () -> Unit,
): CollRequest {
    val bytes = (count * type.size).toInt()
    if (plan == null) {
        val gathered = scratch(bytes * size)
        return one({
            val need = resultView != null && !(kind == ReductionKind.EXSCAN && rank == 0)
            if (need) {
                val (from, to) =
                    when (kind) {
                        ReductionKind.SCAN -> 0 to rank + 1
                        ReductionKind.EXSCAN -> 0 to rank
                        else -> 0 to size
                    }
                val acc = fold(gathered, bytes, from, to, type, op, count)
                resultView!!.putBytes(0, acc, 0, bytes)
                after()
            }
        }) {
            group.startAllgather(input, 0, gathered, 0, bytes, braid.collectives.Datatype.BYTE)
        }
    }
    val n = count * plan.perElement
    val sameBuffer =
        resultView != null &&
            resultView.addressOffset() == input.addressOffset() &&
            resultView.byteArray() === input.byteArray()
    val send = if (sameBuffer) null else input
    return one({
        if (!(kind == ReductionKind.EXSCAN && rank == 0) && (kind != ReductionKind.REDUCE || resultView != null))
            after()
    }) {
        when (kind) {
            ReductionKind.REDUCE -> plan.reduce(group, send ?: input, resultView, n, root, sameBuffer)
            ReductionKind.ALLREDUCE -> plan.allreduce(group, send, resultView!!, n)
            ReductionKind.SCAN -> plan.scan(group, send, resultView!!, n, false)
            ReductionKind.EXSCAN -> plan.scan(group, send, resultView!!, n, true)
        }
    }
}

/** `x[from] op (x[from+1] op … x[to-1])` over the packed contributions in [gathered]; a fresh buffer. */
private fun fold(
    gathered: UnsafeBuffer,
    bytes: Int,
    from: Int,
    to: Int,
    type: Datatype,
    op: Op,
    count: Int,
): UnsafeBuffer {
    val acc = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes)))
    if (to <= from) return acc
    acc.putBytes(0, gathered, (to - 1) * bytes, bytes)
    for (i in to - 2 downTo from) op.combinePacked(gathered, i * bytes, acc, 0, count, type)
    return acc
}

/** How [op] runs on the module for [type], or null when only allgather and fold can keep it right. */
internal fun plan(type: Datatype, op: Op): ReductionPlan? {
    val b = type.basic
    if (op.isComplexProduct(type)) return null // the module's kernels are element-wise
    if (op.isPredefined) return ReductionPlan(b!!.element, (type.size / b.size).toInt(), op.reduceOp!!, null)
    if (b != null && type.size == b.size.toLong()) return ReductionPlan(b.element, 1, null, op.asReduction(type))
    return null
}

internal fun checkOp(call: String, op: Op, type: Datatype) {
    op.checkApplies(type, call)
    if (op.isPredefined && op.reduceOp == null)
        throw MPIException.of(
            ErrorClass.ERR_OP,
            call,
            "$op is for one-sided accumulate only, not for collective reductions",
        )
}
