package braid.mpi

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveRequest
import braid.collectives.Collectives
import braid.collectives.JoinOptions
import braid.core.FabricException
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The collectives of one intracommunicator, run by the collectives module on a [CollectiveGroup] of the communicator's
 * members ([group]).
 *
 * **Context ids and the chicken-and-egg.** A group needs a context id every member agrees on, and agreeing one needs a
 * collective. The MPI layer already agrees one id per communicator (MPICH's free-mask AND), so the group is made with
 * [Collectives.groupOf] over an id derived from the communicator's ([collContext]: its MPI context id, the
 * [MatchBitsDescriptor.SUB_COLL] sub-context, and a slot), with no join. `MPI_COMM_WORLD`'s id is fixed, so its group
 * exists from `MPI_Init`; a new communicator's id is agreed with an allreduce on its parent's group ([agreeContext]),
 * and its own group is then made over that id. Collective tags put the group id in bits 62..40, so its bits 49..48 hold
 * SUB_COLL, which no point-to-point receive matches.
 *
 * **Data.** Data-moving collectives move bytes: a contiguous layout in place, others packed into a staging copy
 * ([CollBlocks]). The reductions are in `CommReductions.kt`.
 *
 * **No allocation when warm.** A collective that is one module call on buffers that need no staging goes through
 * [direct]: the module's cached schedule is started on two reused views ([viewA], [viewB]) and, when blocking, waited
 * for with no request object.
 *
 * **Order.** Every member must start group operations in the same order; a collective of several stages is driven until
 * all have started before the next one starts ([CollOrder]).
 */
internal class CommCollectives(
    internal val comm: Comm,
    members: LongArray,
    slot: Int,
    private val order: CollOrder = CollOrder(),
) {
    internal val mpi = comm.mpi
    internal val size = members.size
    internal val rank: Int
    val group: CollectiveGroup

    /**
     * Reused views over callers' buffers for the calls that need no staging (a direct layout, [CollBlocks.isDirect]):
     * the module wraps its own views before a start returns, so one pair serves every such call, and a warm blocking
     * one allocates nothing.
     */
    internal val viewA = UnsafeBuffer(0L, 0)
    internal val viewB = UnsafeBuffer(0L, 0)

    init {
        val set = mpi.av.avSet(*members)
        group = Collectives.groupOf(mpi.ep, set, collContext(comm.context, slot), mpi.joinOptions)
        comm.collGroups += group
        rank = group.rank
    }

    internal fun run(stages: Array<() -> Any?>, after: (() -> Unit)?): CollRequest {
        awaitStarted()
        val r = CollRequest(mpi, comm, stages, after).start()
        order.lastStaged = if (stages.size > 1) r else null
        return r
    }

    internal fun one(after: (() -> Unit)? = null, start: () -> CollectiveRequest): CollRequest =
        run(arrayOf(start), after)

    /** Drives the last multi-stage collective until it has started every stage ([CollOrder]). */
    internal fun awaitStarted() {
        val prev = order.lastStaged ?: return
        if (!prev.allStarted) mpi.progressUntil { prev.advance() || prev.allStarted }
    }

    /**
     * A collective that is one module call, [start], on buffers that need no staging. Nonblocking (![blocking]): its
     * request. Blocking: started and waited for here with no request object (a warm call allocates nothing), returning
     * null; a failure raises an [MPIException] whose class comes from the errno.
     */
    internal inline fun direct(
        call: String,
        blocking: Boolean,
        crossinline start: () -> CollectiveRequest,
    ): CollRequest? =
        direct(call, blocking, start) {
            val r = start()
            mpi.progressUntil { r.test() }
        }

    /**
     * [direct] for a call the module also has in a blocking form, [wait]: a blocking call runs that form, which the
     * intra-node offload carries inline on this thread (its one phase stepped while it waits, no deferred work); its
     * wait drives braid.mpi's progress ([Mpi.progress], the group's [JoinOptions.withProgress]), so MPI's progress rule
     * holds while it waits.
     */
    internal inline fun direct(
        call: String,
        blocking: Boolean,
        crossinline start: () -> CollectiveRequest,
        crossinline wait: () -> Unit,
    ): CollRequest? {
        if (!blocking) return one { start() }
        awaitStarted()
        try {
            wait()
        } catch (e: FabricException) {
            throw MPIException.of(
                Request.errorClassOf(e.code).takeIf { it != ErrorClass.SUCCESS } ?: ErrorClass.ERR_OTHER,
                call,
                e.message ?: e.toString(),
            )
        }
        return null
    }

    // ## Synchronization and broadcast ##

    /** `MPI_(I)barrier`; [blocking]: waited for here, null returned (as for every `blocking` below). */
    fun ibarrier(call: String, blocking: Boolean = false): CollRequest? =
        direct(call, blocking, { group.startBarrier() }) { group.barrier() }

    fun ibcast(
        call: String,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        root: Int,
        blocking: Boolean = false,
    ): CollRequest? {
        checkRoot(call, root)
        checkData(call, buf, count, type, "buffer")
        if (CollBlocks.isDirect(type)) {
            val bytes = (count * type.size).toInt()
            val byteType = braid.collectives.Datatype.BYTE
            return direct(
                call,
                blocking,
                { group.startBroadcast(CollBlocks.wrap(viewA, buf), 0, bytes, byteType, root) },
            ) {
                group.broadcast(CollBlocks.wrap(viewA, buf), 0, bytes, byteType, root)
            }
        }
        val b = CollBlocks.single(buf, type, count)
        if (rank == root) b.pack()
        return one({ if (rank != root) b.unpack() }) {
            group.startBroadcast(b.view, 0, b.byteCounts[0], braid.collectives.Datatype.BYTE, root)
        }
    }

    // ## Gather, scatter, allgather, alltoall ##

    fun igather(
        call: String,
        send: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recv: ByteBuffer?,
        recvCounts: IntArray?,
        displs: IntArray?,
        recvType: Datatype?,
        root: Int,
        regular: Boolean,
    ): CollRequest {
        checkRoot(call, root)
        val atRoot = rank == root
        val inPlace = inPlaceAtRoot(call, send, root, "send")
        val r =
            if (atRoot)
                rootBlocks(call, recv, recvType, recvCounts, displs, "receive").also { if (inPlace) it.pack(rank) }
            else null
        val s = if (inPlace) null else sendBlocks(call, send, sendCount, sendType)
        if (r != null && s != null && s.byteCounts[0] != r.byteCounts[rank])
            mismatch(call, s.byteCounts[0], r.byteCounts[rank])
        val sendBytes = s?.byteCounts?.get(0) ?: 0
        return one({ r?.unpack() }) {
            if (regular && (r == null || r.byteDispls.contentEquals(IntArray(size) { it * r.byteCounts[0] }))) {
                group.startGather(
                    s?.view,
                    0,
                    r?.view,
                    0,
                    r?.byteCounts?.get(0) ?: sendBytes,
                    braid.collectives.Datatype.BYTE,
                    root,
                )
            } else {
                group.startGatherv(
                    s?.view,
                    0,
                    sendBytes,
                    r?.view,
                    0,
                    r?.byteCounts,
                    r?.byteDispls,
                    braid.collectives.Datatype.BYTE,
                    root,
                )
            }
        }
    }

    fun iscatter(
        call: String,
        send: ByteBuffer?,
        sendCounts: IntArray?,
        displs: IntArray?,
        sendType: Datatype?,
        recv: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): CollRequest {
        checkRoot(call, root)
        val atRoot = rank == root
        val inPlace = inPlaceAtRoot(call, recv, root, "receive")
        val s = if (atRoot) rootBlocks(call, send, sendType, sendCounts, displs, "send").pack() else null
        val r =
            if (inPlace) null
            else {
                checkCount(call, recvCount)
                checkData(call, recv ?: missing(call, "receive"), recvCount, recvType, "receive buffer")
                CollBlocks.single(recv, recvType, recvCount)
            }
        if (s != null && r != null && r.byteCounts[0] != s.byteCounts[rank])
            mismatch(call, s.byteCounts[rank], r.byteCounts[0])
        return one({ r?.unpack() }) {
            group.startScatterv(
                s?.view,
                0,
                s?.byteCounts,
                s?.byteDispls,
                r?.view,
                0,
                r?.byteCounts?.get(0) ?: 0,
                braid.collectives.Datatype.BYTE,
                root,
            )
        }
    }

    fun iallgather(
        call: String,
        send: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recv: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): CollRequest {
        checkVector(call, "recvCounts", recvCounts, displs)
        checkBlocks(call, recv, recvType, recvCounts, displs, "receive buffer")
        val r = CollBlocks(recv, recvType, recvCounts, displs)
        val inPlace = send === Mpi.IN_PLACE
        val s =
            if (inPlace) {
                r.pack(rank)
                null
            } else sendBlocks(call, send, sendCount, sendType)
        if (s != null && s.byteCounts[0] != r.byteCounts[rank]) mismatch(call, s.byteCounts[0], r.byteCounts[rank])
        return one({ r.unpack() }) {
            group.startAllgatherv(s?.view, 0, r.view, 0, r.byteCounts, r.byteDispls, braid.collectives.Datatype.BYTE)
        }
    }

    fun ialltoall(
        call: String,
        send: ByteBuffer?,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recv: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ): CollRequest {
        checkVector(call, "recvCounts", recvCounts, recvDispls)
        checkBlocks(call, recv, recvType, recvCounts, recvDispls, "receive buffer")
        val r = CollBlocks(recv, recvType, recvCounts, recvDispls)
        val s =
            if (send === Mpi.IN_PLACE) {
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
            group.startAlltoallv(
                s.view,
                0,
                s.byteCounts,
                s.byteDispls,
                r.view,
                0,
                r.byteCounts,
                r.byteDispls,
                braid.collectives.Datatype.BYTE,
            )
        }
    }

    // ## For communicator construction (blocking, raising through the communicator's handler) ##

    /** The bitwise AND of every member's [mask] (context-id agreement). */
    fun andMasks(mask: ByteArray): ByteArray {
        val out = ByteArray(mask.size)
        one {
                group.startAllreduce(
                    UnsafeBuffer(mask),
                    0,
                    UnsafeBuffer(out),
                    0,
                    mask.size,
                    braid.collectives.Datatype.BYTE,
                    braid.collectives.ReduceOp.BAND,
                )
            }
            .waitFor()
        return out
    }

    /** Every member's [mine] (all of one length), indexed by rank. */
    fun allgatherFixed(mine: ByteArray): Array<ByteArray> {
        val all = ByteArray(mine.size * size)
        one {
                group.startAllgather(
                    UnsafeBuffer(mine),
                    0,
                    UnsafeBuffer(all),
                    0,
                    mine.size,
                    braid.collectives.Datatype.BYTE,
                )
            }
            .waitFor()
        return Array(size) { all.copyOfRange(it * mine.size, (it + 1) * mine.size) }
    }

    /** Every member's [mine] (any lengths), indexed by rank: the lengths first, then all padded to the longest. */
    fun allgatherBytes(mine: ByteArray): Array<ByteArray> {
        val lengths = allgatherFixed(java.nio.ByteBuffer.allocate(4).putInt(mine.size).array())
        val sizes = IntArray(size) { java.nio.ByteBuffer.wrap(lengths[it]).getInt() }
        val padded = allgatherFixed(mine.copyOf(sizes.max()))
        return Array(size) { padded[it].copyOf(sizes[it]) }
    }

    /** [root]'s [data] (any length; others pass null), on every member: its length, then it. */
    fun bcastBytes(root: Int, data: ByteArray?): ByteArray {
        val length = ByteArray(4)
        if (rank == root) UnsafeBuffer(length).putInt(0, data!!.size)
        one { group.startBroadcast(UnsafeBuffer(length), 0, 4, braid.collectives.Datatype.BYTE, root) }.waitFor()
        val out = if (rank == root) data!! else ByteArray(UnsafeBuffer(length).getInt(0))
        if (out.isNotEmpty())
            one { group.startBroadcast(UnsafeBuffer(out), 0, out.size, braid.collectives.Datatype.BYTE, root) }
                .waitFor()
        return out
    }

    // ## Checks ##

    /** Whether [buf] is MPI_IN_PLACE, which only the root may pass as its [side] buffer. */
    internal fun inPlaceAtRoot(call: String, buf: ByteBuffer?, root: Int, side: String): Boolean {
        val inPlace = buf === Mpi.IN_PLACE
        if (inPlace && rank != root)
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                call,
                "MPI_IN_PLACE is the root's $side buffer only (rank $rank is not root $root)",
            )
        return inPlace
    }

    /** The root's per-rank blocks of a gather(v) or scatter(v), checked. */
    internal fun rootBlocks(
        call: String,
        buf: ByteBuffer?,
        type: Datatype?,
        counts: IntArray?,
        displs: IntArray?,
        side: String,
    ): CollBlocks {
        val b = buf ?: missing(call, side)
        val t = type ?: throw MPIException.of(ErrorClass.ERR_TYPE, call, "the root needs a $side datatype")
        if (counts == null || displs == null)
            throw MPIException.of(ErrorClass.ERR_ARG, call, "the root needs $side counts and displacements")
        checkVector(call, "${side} counts", counts, displs)
        checkBlocks(call, b, t, counts, displs, "$side buffer")
        return CollBlocks(b, t, counts, displs)
    }

    internal fun sendBlocks(call: String, send: ByteBuffer?, count: Int, type: Datatype): CollBlocks {
        checkCount(call, count)
        val buf = send ?: missing(call, "send")
        checkData(call, buf, count, type, "send buffer")
        return CollBlocks.single(buf, type, count).pack()
    }

    internal fun checkRoot(call: String, root: Int) {
        if (root !in 0 until size)
            throw MPIException.of(
                ErrorClass.ERR_ROOT,
                call,
                "root $root is not a rank of ${comm.getName()} (size $size)",
            )
    }

    internal fun checkCount(call: String, count: Int) = checkCollCount(call, count)

    internal fun checkData(call: String, buf: ByteBuffer, count: Int, type: Datatype, what: String) {
        checkCount(call, count)
        type.checkUsable(call)
        if (what.startsWith("receive") && buf.isReadOnly)
            throw MPIException.of(ErrorClass.ERR_BUFFER, call, "the $what is read-only")
        type.checkFits(call, what, buf.capacity(), 0, count)
    }

    internal fun checkVector(call: String, name: String, counts: IntArray, displs: IntArray?) =
        checkCollVector(call, name, counts, displs, size, comm.getName())

    internal fun checkBlocks(
        call: String,
        buf: ByteBuffer,
        type: Datatype,
        counts: IntArray,
        displs: IntArray,
        what: String,
    ) {
        type.checkUsable(call)
        for (i in counts.indices) type.checkFits(
            call,
            "$what block $i",
            buf.capacity(),
            (displs[i] * type.extent).toInt(),
            counts[i],
        )
    }

    internal fun missing(call: String, what: String): Nothing =
        throw MPIException.of(ErrorClass.ERR_BUFFER, call, "rank $rank: the $what buffer is required here")

    internal fun mismatch(call: String, sent: Int, expected: Int): Nothing =
        throw MPIException.of(
            ErrorClass.ERR_TRUNCATE,
            call,
            "rank $rank sends $sent bytes to itself but its receive block holds $expected; the type signatures must match",
        )

    internal fun scratch(bytes: Int) = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes)))

    companion object {
        /** The collectives group id of slot [slot] (0..255) of MPI context [context]: context, SUB_COLL, slot. */
        fun collContext(context: Int, slot: Int): Int = (context shl 10) or (MatchBitsDescriptor.SUB_COLL shl 8) or slot
    }
}

/** A collective's element count: ≥ 0 (ERR_COUNT). */
internal fun checkCollCount(call: String, count: Int) {
    if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
}

/**
 * A v-form's counts (and displacements, if given): one per rank of [group] ([ranks] of them, ERR_ARG), none negative
 * (ERR_COUNT, ERR_ARG).
 */
internal fun checkCollVector(
    call: String,
    name: String,
    counts: IntArray,
    displs: IntArray?,
    ranks: Int,
    group: String,
) {
    if (counts.size != ranks || (displs != null && displs.size != ranks)) {
        val given =
            if (displs == null) "$name needs $ranks entries (one per rank of $group), not ${counts.size}"
            else
                "$name and displacements need $ranks entries (one per rank of $group), not ${counts.size} and ${displs.size}"
        throw MPIException.of(ErrorClass.ERR_ARG, call, given)
    }
    for (i in 0 until ranks) {
        if (counts[i] < 0)
            throw MPIException.of(ErrorClass.ERR_COUNT, call, "$name[$i] is ${counts[i]}; it must be ≥ 0")
        if (displs != null && displs[i] < 0)
            throw MPIException.of(ErrorClass.ERR_ARG, call, "displacement $i is ${displs[i]}; it must be ≥ 0")
    }
}
