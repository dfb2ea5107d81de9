package braid.mpi

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveRequest
import braid.collectives.Collectives
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The collectives of one intracommunicator, run by the collectives module on a
 * [CollectiveGroup] of the communicator's members ([group]).
 *
 * **Context ids and the chicken-and-egg.** A group needs a context id every member agrees on,
 * and agreeing one needs a collective. The MPI layer already agrees one id per communicator
 * (MPICH's free-mask AND), so the group is made with [Collectives.groupOf] over an id derived
 * from the communicator's ([collContext]: its MPI context id, the [MatchBitsDescriptor.SUB_COLL]
 * sub-context, and a slot), with no join. `MPI_COMM_WORLD`'s id is fixed, so its group exists
 * from `MPI_Init`; a new communicator's id is agreed with an allreduce on its parent's group
 * ([agreeContext]), and its own group is then made over that id. Collective tags put the group
 * id in bits 62..40, so its bits 49..48 hold SUB_COLL, which no point-to-point receive matches.
 *
 * **Data.** Data-moving collectives move bytes: a contiguous layout in place, others packed
 * into a staging copy ([CollBlocks]). Reductions run on the datatype's element kind with the
 * collectives module's kernels (built-in ops) or the user's function (a user op on a type of
 * single elements). A user op on a type whose elements are several basic elements (a struct, a
 * contiguous run) cannot be split where the module's algorithms split vectors, so it is done by
 * an allgather of every contribution and a local fold in rank order (`x0 op (x1 op … xn-1)`):
 * correct for non-commutative ops, at `size ×` the memory.
 */
internal class CommCollectives(private val comm: Comm, members: LongArray, slot: Int) {
    private val mpi = comm.mpi
    private val size = members.size
    private val rank: Int
    val group: CollectiveGroup

    init {
        val set = mpi.av.avSet(*members)
        group = Collectives.groupOf(mpi.ep, set, collContext(comm.context, slot))
        comm.collGroups += group
        rank = group.rank
    }

    /** The last multi-stage request started here; a later collective waits until it has started every stage. */
    private var lastStaged: CollRequest? = null

    internal fun run(stages: Array<() -> Any?>, after: (() -> Unit)?): CollRequest {
        lastStaged?.let { prev -> if (!prev.allStarted) mpi.progressUntil { prev.advance() || prev.allStarted } }
        val r = CollRequest(mpi, comm, stages, after).start()
        lastStaged = if (stages.size > 1) r else null
        return r
    }

    internal fun one(after: (() -> Unit)? = null, start: () -> CollectiveRequest): CollRequest = run(arrayOf(start), after)

    // ## Synchronization and broadcast ##

    fun ibarrier(): CollRequest = one { group.startBarrier() }

    fun ibcast(call: String, buf: ByteBuffer, count: Int, type: Datatype, root: Int): CollRequest {
        checkRoot(call, root)
        checkData(call, buf, count, type, "buffer")
        val b = CollBlocks.single(buf, type, count)
        if (rank == root) b.pack()
        return one({ if (rank != root) b.unpack() }) { group.startBroadcast(b.view, 0, b.byteCounts[0], braid.collectives.Datatype.BYTE, root) }
    }

    // ## Reductions ##

    fun ireduce(call: String, send: ByteBuffer?, recv: ByteBuffer?, count: Int, type: Datatype, op: Op, root: Int): CollRequest {
        checkRoot(call, root)
        val atRoot = rank == root
        if (send === Mpi.IN_PLACE && !atRoot) throw MPIException.of(ErrorClass.ERR_BUFFER, call, "MPI_IN_PLACE is the root's send buffer only (rank $rank is not root $root)")
        return reduction(call, send, if (atRoot) recv ?: missing(call, "receive") else null, count, type, op, Kind.REDUCE, root)
    }

    fun iallreduce(call: String, send: ByteBuffer?, recv: ByteBuffer, count: Int, type: Datatype, op: Op): CollRequest =
        reduction(call, send, recv, count, type, op, Kind.ALLREDUCE, 0)

    fun iscan(call: String, send: ByteBuffer?, recv: ByteBuffer, count: Int, type: Datatype, op: Op, exclusive: Boolean): CollRequest =
        reduction(call, send, recv, count, type, op, if (exclusive) Kind.EXSCAN else Kind.SCAN, 0)

    /** `MPI_Reduce_scatter_block`: as [ireduceScatter] with [recvCount] for every rank. */
    fun ireduceScatterBlock(call: String, send: ByteBuffer?, recv: ByteBuffer, recvCount: Int, type: Datatype, op: Op): CollRequest {
        checkCount(call, recvCount)
        return ireduceScatter(call, send, recv, IntArray(size) { recvCount }, type, op)
    }

    /** `MPI_Reduce_scatter`: an allreduce of every block into a staging copy; this rank keeps block [rank]. */
    fun ireduceScatter(call: String, send: ByteBuffer?, recv: ByteBuffer, recvCounts: IntArray, type: Datatype, op: Op): CollRequest {
        checkVector(call, "recvCounts", recvCounts, null)
        val total = recvCounts.sum()
        val inPlace = send === Mpi.IN_PLACE
        val input = if (inPlace) recv else send ?: missing(call, "send")
        checkData(call, input, total, type, if (inPlace) "receive buffer (in place)" else "send buffer")
        checkData(call, recv, recvCounts[rank], type, "receive buffer")
        checkOrder(call, "receive", recv, type)
        val packed = CollBlocks.single(input, type, total)
        // Copy even a contiguous input: in place, the result must not land in the buffer the input is read from.
        val full = ByteBuffer.allocateDirect(maxOf(1, (total * type.size).toInt())).order(ByteOrder.nativeOrder())
        if (packed.byteCounts[0] > 0) type.packInto(input, 0, total, full, 0)
        val result = ByteBuffer.allocateDirect(maxOf(1, (total * type.size).toInt())).order(ByteOrder.nativeOrder())
        val at = (CollBlocks.prefix(recvCounts)[rank] * type.size).toInt()
        return reductionOn(call, UnsafeBuffer(full), total, type, op, Kind.ALLREDUCE, 0, UnsafeBuffer(result)) {
            type.unpackFrom(result, at, recv, 0, recvCounts[rank])
        }
    }

    private enum class Kind { REDUCE, ALLREDUCE, SCAN, EXSCAN }

    private fun reduction(call: String, send: ByteBuffer?, recv: ByteBuffer?, count: Int, type: Datatype, op: Op, kind: Kind, root: Int): CollRequest {
        checkCount(call, count)
        val inPlace = send === Mpi.IN_PLACE
        val input = if (inPlace) recv!! else send ?: missing(call, "send")
        checkData(call, input, count, type, if (inPlace) "receive buffer (in place)" else "send buffer")
        checkOrder(call, if (inPlace) "receive" else "send", input, type)
        if (recv != null) { checkData(call, recv, count, type, "receive buffer"); checkOrder(call, "receive", recv, type) }
        val packed = CollBlocks.single(input, type, count).pack()
        val out = if (recv != null) CollBlocks.single(recv, type, count) else null
        // The module reads the input from `packed.view`; a contiguous in-place buffer is read and written in place.
        val result = out?.view
        return reductionOn(call, packed.view, count, type, op, kind, root, result) { out?.unpack() }
    }

    /**
     * Runs [kind] over [count] packed elements of [type] in [input]; the result lands in
     * [resultView] (null at a reduce's non-roots; the same memory as [input] means in place)
     * and [after] runs on completion where a result arrived.
     */
    private fun reductionOn(call: String, input: UnsafeBuffer, count: Int, type: Datatype, op: Op, kind: Kind, root: Int, resultView: UnsafeBuffer?, after: () -> Unit): CollRequest {
        checkOp(call, op, type)
        val bytes = (count * type.size).toInt()
        val plan = plan(call, type, op)
        if (plan == null) {
            val gathered = scratch(bytes * size)
            return one({
                val need = resultView != null && !(kind == Kind.EXSCAN && rank == 0)
                if (need) {
                    val (from, to) = when (kind) { Kind.SCAN -> 0 to rank + 1; Kind.EXSCAN -> 0 to rank; else -> 0 to size }
                    val acc = fold(gathered, bytes, from, to, type, op, count)
                    resultView!!.putBytes(0, acc, 0, bytes)
                    after()
                }
            }) { group.startAllgather(input, 0, gathered, 0, bytes, braid.collectives.Datatype.BYTE) }
        }
        val n = count * plan.perElement
        val sameBuffer = resultView != null && resultView.addressOffset() == input.addressOffset() && resultView.byteArray() === input.byteArray()
        val send = if (sameBuffer) null else input
        return one({ if (!(kind == Kind.EXSCAN && rank == 0)) after() }) {
            when (kind) {
                Kind.REDUCE -> plan.reduce(group, send ?: input, resultView, n, root, sameBuffer)
                Kind.ALLREDUCE -> plan.allreduce(group, send, resultView!!, n)
                Kind.SCAN -> plan.scan(group, send, resultView!!, n, false)
                Kind.EXSCAN -> plan.scan(group, send, resultView!!, n, true)
            }
        }
    }

    /** `x[from] op (x[from+1] op … x[to-1])` over the packed contributions in [gathered]; a fresh buffer. */
    private fun fold(gathered: UnsafeBuffer, bytes: Int, from: Int, to: Int, type: Datatype, op: Op, count: Int): UnsafeBuffer {
        val acc = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes)))
        if (to <= from) return acc
        acc.putBytes(0, gathered, (to - 1) * bytes, bytes)
        for (i in to - 2 downTo from) op.combinePacked(gathered, i * bytes, acc, 0, count, type)
        return acc
    }

    private fun plan(call: String, type: Datatype, op: Op): ReductionPlan? {
        val b = type.basic
        if (op.isPredefined) return ReductionPlan(b!!.element, (type.size / b.size).toInt(), op.reduceOp!!, null)
        if (b != null && type.size == b.size.toLong()) return ReductionPlan(b.element, 1, null, op.asReduction(type))
        return null
    }

    private fun checkOp(call: String, op: Op, type: Datatype) {
        op.checkApplies(type, call)
        if (op.isPredefined && op.reduceOp == null) throw MPIException.of(ErrorClass.ERR_OP, call, "$op is for one-sided accumulate only, not for collective reductions")
    }

    // ## Gather, scatter, allgather, alltoall ##

    fun igather(call: String, send: ByteBuffer?, sendCount: Int, sendType: Datatype, recv: ByteBuffer?, recvCounts: IntArray?, displs: IntArray?, recvType: Datatype?, root: Int, regular: Boolean): CollRequest {
        checkRoot(call, root)
        val atRoot = rank == root
        val inPlace = inPlaceAtRoot(call, send, root, "send")
        val r = if (atRoot) rootBlocks(call, recv, recvType, recvCounts, displs, "receive").also { if (inPlace) it.pack(rank) } else null
        val s = if (inPlace) null else sendBlocks(call, send, sendCount, sendType)
        if (r != null && s != null && s.byteCounts[0] != r.byteCounts[rank]) mismatch(call, s.byteCounts[0], r.byteCounts[rank])
        val sendBytes = s?.byteCounts?.get(0) ?: 0
        return one({ r?.unpack() }) {
            if (regular && (r == null || r.byteDispls.contentEquals(IntArray(size) { it * r.byteCounts[0] }))) {
                group.startGather(s?.view, 0, r?.view, 0, r?.byteCounts?.get(0) ?: sendBytes, braid.collectives.Datatype.BYTE, root)
            } else {
                group.startGatherv(s?.view, 0, sendBytes, r?.view, 0, r?.byteCounts, r?.byteDispls, braid.collectives.Datatype.BYTE, root)
            }
        }
    }

    fun iscatter(call: String, send: ByteBuffer?, sendCounts: IntArray?, displs: IntArray?, sendType: Datatype?, recv: ByteBuffer?, recvCount: Int, recvType: Datatype, root: Int): CollRequest {
        checkRoot(call, root)
        val atRoot = rank == root
        val inPlace = inPlaceAtRoot(call, recv, root, "receive")
        val s = if (atRoot) rootBlocks(call, send, sendType, sendCounts, displs, "send").pack() else null
        val r = if (inPlace) null else {
            checkCount(call, recvCount)
            checkData(call, recv ?: missing(call, "receive"), recvCount, recvType, "receive buffer")
            CollBlocks.single(recv, recvType, recvCount)
        }
        if (s != null && r != null && r.byteCounts[0] != s.byteCounts[rank]) mismatch(call, s.byteCounts[rank], r.byteCounts[0])
        return one({ r?.unpack() }) {
            group.startScatterv(s?.view, 0, s?.byteCounts, s?.byteDispls, r?.view, 0, r?.byteCounts?.get(0) ?: 0, braid.collectives.Datatype.BYTE, root)
        }
    }

    fun iallgather(call: String, send: ByteBuffer?, sendCount: Int, sendType: Datatype, recv: ByteBuffer, recvCounts: IntArray, displs: IntArray, recvType: Datatype): CollRequest {
        checkVector(call, "recvCounts", recvCounts, displs)
        checkBlocks(call, recv, recvType, recvCounts, displs, "receive buffer")
        val r = CollBlocks(recv, recvType, recvCounts, displs)
        val inPlace = send === Mpi.IN_PLACE
        val s = if (inPlace) { r.pack(rank); null } else sendBlocks(call, send, sendCount, sendType)
        if (s != null && s.byteCounts[0] != r.byteCounts[rank]) mismatch(call, s.byteCounts[0], r.byteCounts[rank])
        return one({ r.unpack() }) {
            group.startAllgatherv(s?.view, 0, r.view, 0, r.byteCounts, r.byteDispls, braid.collectives.Datatype.BYTE)
        }
    }

    fun ialltoall(call: String, send: ByteBuffer?, sendCounts: IntArray, sendDispls: IntArray, sendType: Datatype, recv: ByteBuffer, recvCounts: IntArray, recvDispls: IntArray, recvType: Datatype): CollRequest {
        checkVector(call, "recvCounts", recvCounts, recvDispls)
        checkBlocks(call, recv, recvType, recvCounts, recvDispls, "receive buffer")
        val r = CollBlocks(recv, recvType, recvCounts, recvDispls)
        val s = if (send === Mpi.IN_PLACE) {
            // In place: the data to send is the receive buffer's; send from a copy of it.
            val copy = ByteBuffer.allocate(recv.capacity()).order(recv.order())
            copy.put(0, recv, 0, recv.capacity())
            CollBlocks(copy, recvType, recvCounts, recvDispls).pack()
        } else {
            checkVector(call, "sendCounts", sendCounts, sendDispls)
            checkBlocks(call, send ?: missing(call, "send"), sendType, sendCounts, sendDispls, "send buffer")
            CollBlocks(send, sendType, sendCounts, sendDispls).pack()
        }
        return one({ r.unpack() }) {
            group.startAlltoallv(s.view, 0, s.byteCounts, s.byteDispls, r.view, 0, r.byteCounts, r.byteDispls, braid.collectives.Datatype.BYTE)
        }
    }

    // ## For communicator construction (blocking, raising through the communicator's handler) ##

    /** The bitwise AND of every member's [mask] (context-id agreement). */
    fun andMasks(mask: ByteArray): ByteArray {
        val out = ByteArray(mask.size)
        one { group.startAllreduce(UnsafeBuffer(mask), 0, UnsafeBuffer(out), 0, mask.size, braid.collectives.Datatype.BYTE, braid.collectives.ReduceOp.BAND) }.waitFor()
        return out
    }

    /** Every member's [mine] (all of one length), indexed by rank. */
    fun allgatherFixed(mine: ByteArray): Array<ByteArray> {
        val all = ByteArray(mine.size * size)
        one { group.startAllgather(UnsafeBuffer(mine), 0, UnsafeBuffer(all), 0, mine.size, braid.collectives.Datatype.BYTE) }.waitFor()
        return Array(size) { all.copyOfRange(it * mine.size, (it + 1) * mine.size) }
    }

    /** [root]'s [data] (any length; others pass null), on every member: its length, then it. */
    fun bcastBytes(root: Int, data: ByteArray?): ByteArray {
        val length = ByteArray(4)
        if (rank == root) UnsafeBuffer(length).putInt(0, data!!.size)
        one { group.startBroadcast(UnsafeBuffer(length), 0, 4, braid.collectives.Datatype.BYTE, root) }.waitFor()
        val out = if (rank == root) data!! else ByteArray(UnsafeBuffer(length).getInt(0))
        if (out.isNotEmpty()) one { group.startBroadcast(UnsafeBuffer(out), 0, out.size, braid.collectives.Datatype.BYTE, root) }.waitFor()
        return out
    }

    // ## Checks ##

    /** Whether [buf] is MPI_IN_PLACE, which only the root may pass as its [side] buffer. */
    private fun inPlaceAtRoot(call: String, buf: ByteBuffer?, root: Int, side: String): Boolean {
        val inPlace = buf === Mpi.IN_PLACE
        if (inPlace && rank != root) throw MPIException.of(ErrorClass.ERR_BUFFER, call, "MPI_IN_PLACE is the root's $side buffer only (rank $rank is not root $root)")
        return inPlace
    }

    /** The root's per-rank blocks of a gather(v) or scatter(v), checked. */
    private fun rootBlocks(call: String, buf: ByteBuffer?, type: Datatype?, counts: IntArray?, displs: IntArray?, side: String): CollBlocks {
        val b = buf ?: missing(call, side)
        val t = type ?: throw MPIException.of(ErrorClass.ERR_TYPE, call, "the root needs a $side datatype")
        if (counts == null || displs == null) throw MPIException.of(ErrorClass.ERR_ARG, call, "the root needs $side counts and displacements")
        checkVector(call, "${side} counts", counts, displs)
        checkBlocks(call, b, t, counts, displs, "$side buffer")
        return CollBlocks(b, t, counts, displs)
    }

    private fun sendBlocks(call: String, send: ByteBuffer?, count: Int, type: Datatype): CollBlocks {
        checkCount(call, count)
        val buf = send ?: missing(call, "send")
        checkData(call, buf, count, type, "send buffer")
        return CollBlocks.single(buf, type, count).pack()
    }

    private fun checkRoot(call: String, root: Int) {
        if (root !in 0 until size) throw MPIException.of(ErrorClass.ERR_ROOT, call, "root $root is not a rank of ${comm.getName()} (size $size)")
    }

    private fun checkCount(call: String, count: Int) {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
    }

    private fun checkData(call: String, buf: ByteBuffer, count: Int, type: Datatype, what: String) {
        checkCount(call, count)
        type.checkUsable(call)
        if (what.startsWith("receive") && buf.isReadOnly) throw MPIException.of(ErrorClass.ERR_BUFFER, call, "the $what is read-only")
        type.checkFits(call, what, buf.capacity(), 0, count)
    }

    private fun checkVector(call: String, name: String, counts: IntArray, displs: IntArray?) {
        if (counts.size != size || (displs != null && displs.size != size)) {
            throw MPIException.of(ErrorClass.ERR_ARG, call, "$name and displacements need $size entries (one per rank of ${comm.getName()}), not ${counts.size} and ${displs?.size}")
        }
        for (i in 0 until size) {
            if (counts[i] < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "$name[$i] is ${counts[i]}; it must be ≥ 0")
            if (displs != null && displs[i] < 0) throw MPIException.of(ErrorClass.ERR_ARG, call, "displacement $i is ${displs[i]}; it must be ≥ 0")
        }
    }

    private fun checkBlocks(call: String, buf: ByteBuffer, type: Datatype, counts: IntArray, displs: IntArray, what: String) {
        type.checkUsable(call)
        for (i in counts.indices) type.checkFits(call, "$what block $i", buf.capacity(), (displs[i] * type.extent).toInt(), counts[i])
    }

    private fun missing(call: String, what: String): Nothing =
        throw MPIException.of(ErrorClass.ERR_BUFFER, call, "rank $rank: the $what buffer is required here")

    private fun mismatch(call: String, sent: Int, expected: Int): Nothing =
        throw MPIException.of(ErrorClass.ERR_TRUNCATE, call, "rank $rank sends $sent bytes to itself but its receive block holds $expected; the type signatures must match")

    private fun scratch(bytes: Int) = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes)))

    companion object {
        /** The collectives group id of slot [slot] (0..255) of MPI context [context]: context, SUB_COLL, slot. */
        fun collContext(context: Int, slot: Int): Int = (context shl 10) or (MatchBitsDescriptor.SUB_COLL shl 8) or slot
    }
}
