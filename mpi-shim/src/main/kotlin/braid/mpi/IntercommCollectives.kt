package braid.mpi

import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer

/**
 * Intercommunicator collectives (MPI-3 §5.2.2), on two collectives groups made over the
 * intercommunicator's context ([CommCollectives.collContext]): [union] of both groups (the group
 * whose leader's address sorts lower first, so both sides order it alike; slot 0) and [local]
 * (this side only; slot 1 for the lower group, 2 for the other).
 *
 * - barrier: a barrier of the union.
 * - bcast: the root (passing [Mpi.ROOT]) sends to the remote group's rank 0, which broadcasts
 *   over its local group; the root's other members (passing [Mpi.PROC_NULL]) do nothing.
 * - allgather: an allgatherv over the union; each side keeps the other side's blocks.
 * - alltoall: an alltoallv over the union in which no rank sends to its own side.
 * - allreduce: an allgather over the union of every contribution, then each rank folds the
 *   remote group's in rank order (so non-commutative ops are right), at `size ×` the memory.
 */
internal class IntercommCollectives(private val comm: Intercomm) {
    private val mpi = comm.mpi
    private val localSize = comm.size
    private val remoteSize = comm.remoteSize
    private val lowFirst = java.util.Arrays.compareUnsigned(
        mpi.processes.blob(comm.localGroup.procs[0]), mpi.processes.blob(comm.remoteGroup.procs[0]),
    ) < 0

    /** The union rank of remote rank 0. */
    private val remoteBase = if (lowFirst) localSize else 0
    private val localBase = if (lowFirst) 0 else remoteSize

    private val localAddrs = LongArray(localSize) { mpi.processes.fiAddr(comm.localGroup.procs[it]) }
    private val union: CommCollectives by lazy {
        val members = if (lowFirst) localAddrs + comm.destAddr else comm.destAddr + localAddrs
        CommCollectives(comm, members, 0)
    }
    val local: CommCollectives by lazy { CommCollectives(comm, localAddrs, if (lowFirst) 1 else 2) }

    fun ibarrier(): CollRequest = union.ibarrier()

    fun ibcast(call: String, buf: ByteBuffer, count: Int, type: Datatype, root: Int): CollRequest {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
        when (root) {
            Mpi.PROC_NULL -> return local.run(arrayOf(), null)
            Mpi.ROOT -> {
                comm.checkBuffer(call, buf, count, type, receive = false)
                val send = SendOp(mpi).set(comm, comm.destAddr[0], bits(comm.rank), 0)
                send.region.set(buf, count, type, packNow = true)
                return local.run(arrayOf({ send.also { mpi.submit(it) } }), null)
            }
        }
        if (root !in 0 until remoteSize) throw MPIException.of(ErrorClass.ERR_ROOT, call, "root $root is not a rank of the remote group (size $remoteSize), ROOT or PROC_NULL")
        comm.checkBuffer(call, buf, count, type, receive = true)
        val receive: () -> Any? = {
            RecvOp(mpi).set(comm, bits(root), 0L, comm.destAddr[root])
                .also { it.region.set(buf, count, type, packNow = false); mpi.submit(it) }
        }
        val b = CollBlocks.single(buf, type, count)
        val spread: () -> Any? = {
            if (comm.rank == 0) b.pack() // after the receive: the root's data is in the caller's buffer now
            local.group.startBroadcast(b.view, 0, b.byteCounts[0], braid.collectives.Datatype.BYTE, 0)
        }
        return local.run(if (comm.rank == 0) arrayOf(receive, spread) else arrayOf(spread)) { if (comm.rank != 0) b.unpack() }
    }

    fun iallgather(call: String, send: ByteBuffer, sendCount: Int, sendType: Datatype, recv: ByteBuffer, recvCount: Int, recvType: Datatype): CollRequest {
        comm.checkBuffer(call, send, sendCount, sendType, receive = false)
        if (recvCount < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "receive count is $recvCount; it must be ≥ 0")
        recvType.checkUsable(call)
        recvType.checkFits(call, "receive buffer", recv.capacity(), 0, recvCount * remoteSize)
        val s = CollBlocks.single(send, sendType, sendCount).pack()
        val mine = s.byteCounts[0]
        val theirs = (recvCount * recvType.size).toInt()
        val counts = IntArray(localSize + remoteSize) { if (it - localBase in 0 until localSize) mine else theirs }
        val displs = CollBlocks.prefix(counts)
        val all = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, counts.sum())))
        val r = CollBlocks.regular(recv, recvType, recvCount, remoteSize)
        return union.one({
            r.view.putBytes(r.byteDispls[0], all, displs[remoteBase], theirs * remoteSize) // the remote blocks are adjacent in union order
            r.unpack()
        }) { union.group.startAllgatherv(s.view, 0, all, 0, counts, displs, braid.collectives.Datatype.BYTE) }
    }

    fun ialltoall(call: String, send: ByteBuffer, sendCount: Int, sendType: Datatype, recv: ByteBuffer, recvCount: Int, recvType: Datatype): CollRequest {
        sendType.checkUsable(call); recvType.checkUsable(call)
        if (sendCount < 0 || recvCount < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "counts $sendCount and $recvCount must be ≥ 0")
        sendType.checkFits(call, "send buffer", send.capacity(), 0, sendCount * remoteSize)
        recvType.checkFits(call, "receive buffer", recv.capacity(), 0, recvCount * remoteSize)
        val s = CollBlocks.regular(send, sendType, sendCount, remoteSize).pack()
        val r = CollBlocks.regular(recv, recvType, recvCount, remoteSize)
        val n = localSize + remoteSize
        fun spread(b: CollBlocks, what: (CollBlocks, Int) -> Int) = IntArray(n) { u -> if (u - remoteBase in 0 until remoteSize) what(b, u - remoteBase) else 0 }
        return union.one({ r.unpack() }) {
            union.group.startAlltoallv(
                s.view, 0, spread(s) { b, i -> b.byteCounts[i] }, spread(s) { b, i -> b.byteDispls[i] },
                r.view, 0, spread(r) { b, i -> b.byteCounts[i] }, spread(r) { b, i -> b.byteDispls[i] }, braid.collectives.Datatype.BYTE,
            )
        }
    }

    fun iallreduce(call: String, send: ByteBuffer, recv: ByteBuffer, count: Int, type: Datatype, op: Op): CollRequest {
        comm.checkBuffer(call, send, count, type, receive = false)
        comm.checkBuffer(call, recv, count, type, receive = true)
        op.checkApplies(type, call)
        if (op.isPredefined && op.reduceOp == null) throw MPIException.of(ErrorClass.ERR_OP, call, "$op is for one-sided accumulate only")
        checkOrder(call, "send", send, type); checkOrder(call, "receive", recv, type)
        val s = CollBlocks.single(send, type, count).pack()
        val bytes = s.byteCounts[0]
        val all = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes * (localSize + remoteSize))))
        val r = CollBlocks.single(recv, type, count)
        return union.one({
            if (remoteSize > 0) {
                val last = (remoteBase + remoteSize - 1) * bytes
                r.view.putBytes(0, all, last, bytes)
                for (u in remoteBase + remoteSize - 2 downTo remoteBase) op.combinePacked(all, u * bytes, r.view, 0, count, type)
            }
            r.unpack()
        }) { union.group.startAllgather(s.view, 0, all, 0, bytes, braid.collectives.Datatype.BYTE) }
    }

    private fun bits(senderRank: Int): Long = MatchBitsDescriptor.bits(comm.context, MatchBitsDescriptor.SUB_LEADERS, senderRank, TAG_BCAST)

    private companion object {
        /** The leaders' sub-context tag of a bcast's root-to-remote-leader message (agreements use 7). */
        const val TAG_BCAST = 8
    }
}
