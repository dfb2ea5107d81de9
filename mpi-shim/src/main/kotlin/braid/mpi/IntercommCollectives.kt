package braid.mpi

import braid.collectives.CollectiveRequest
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Intercommunicator collectives (MPI-3 §5.2.2), on two collectives groups made over the intercommunicator's context
 * ([CommCollectives.collContext]): [union] of both groups (the group whose leader's address sorts lower first, so both
 * sides order it alike; slot 0) and [local] (this side only; slot 1 for the lower group, 2 for the other); they share
 * one [CollOrder]. Messages between the groups go point-to-point in the [MatchBitsDescriptor.SUB_LEADERS] sub-context,
 * one tag per kind of collective; MPI's non-overtaking order keeps successive collectives of one kind apart.
 *
 * A rooted collective's root passes [Mpi.ROOT], the rest of its group [Mpi.PROC_NULL] (they do nothing), and the other
 * group the root's rank in it.
 * - barrier: a barrier of the union.
 * - bcast: the root sends to the remote group's rank 0, which broadcasts over its local group.
 * - reduce: the other group reduces to its rank 0 (in rank order: non-commutative ops are right), which sends the
 *   result to the root.
 * - gather(v), scatter(v): linear, as MPICH's intercommunicator forms: the root receives from (sends to) every remote
 *   rank, each block in place in its buffer.
 * - allgather(v): every rank sends its block to every remote rank and receives each of theirs.
 * - alltoall(v): an alltoallv over the union in which no rank sends to its own side.
 * - allreduce: an allgather over the union of every contribution, then each rank folds the remote group's in rank
 *   order, at `size ×` the memory.
 * - reduce_scatter(_block): each group reduces its vector to its rank 0; the two leaders swap the results; each leader
 *   scatters the other group's over its own group.
 */
internal class IntercommCollectives(private val comm: Intercomm) {
    private val mpi = comm.mpi
    private val localSize = comm.size
    private val remoteSize = comm.remoteSize
    private val lowFirst =
        java.util.Arrays.compareUnsigned(
            mpi.processes.blob(comm.localGroup.procs[0]),
            mpi.processes.blob(comm.remoteGroup.procs[0]),
        ) < 0

    /** The union rank of remote rank 0. */
    private val remoteBase = if (lowFirst) localSize else 0

    private val localAddrs = LongArray(localSize) { mpi.processes.fiAddr(comm.localGroup.procs[it]) }
    private val order = CollOrder()
    private val union: CommCollectives by lazy {
        val members = if (lowFirst) localAddrs + comm.destAddr else comm.destAddr + localAddrs
        CommCollectives(comm, members, 0, order)
    }
    val local: CommCollectives by lazy { CommCollectives(comm, localAddrs, if (lowFirst) 1 else 2, order) }

    fun ibarrier(call: String): CollRequest = union.ibarrier(call)!!

    fun ibcast(call: String, buf: ByteBuffer?, count: Int, type: Datatype, root: Int): CollRequest {
        checkCollCount(call, count)
        when (role(call, root)) {
            Mpi.PROC_NULL -> return done()
            Mpi.ROOT -> {
                comm.checkBuffer(call, buf ?: missing(call, "send"), count, type, receive = false)
                val send = packedSend(0, buf, count, type, TAG_BCAST)
                return local.run(arrayOf({ send.also { mpi.submit(it) } }), null)
            }
        }
        val b = buf ?: missing(call, "receive")
        comm.checkBuffer(call, b, count, type, receive = true)
        val blocks = CollBlocks.single(b, type, count)
        val receive: () -> Any? = { recvFrom(root, b, count, type, TAG_BCAST) }
        val spread: () -> Any? = {
            if (comm.rank == 0) blocks.pack() // after the receive: the root's data is in the caller's buffer now
            local.group.startBroadcast(blocks.view, 0, blocks.byteCounts[0], braid.collectives.Datatype.BYTE, 0)
        }
        return local.run(if (comm.rank == 0) arrayOf(receive, spread) else arrayOf(spread)) {
            if (comm.rank != 0) blocks.unpack()
        }
    }

    // ## Rooted: reduce, gather(v), scatter(v) ##

    fun ireduce(
        call: String,
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        type: Datatype,
        op: Op,
        root: Int,
    ): CollRequest {
        checkCollCount(call, count)
        when (role(call, root)) {
            Mpi.PROC_NULL -> return done()
            Mpi.ROOT -> {
                val r = recv ?: missing(call, "receive")
                comm.checkBuffer(call, r, count, type, receive = true)
                checkOp(call, op, type)
                return local.run(arrayOf({ recvFrom(0, r, count, type, TAG_REDUCE) }), null)
            }
        }
        val s = send ?: missing(call, "send")
        comm.checkBuffer(call, s, count, type, receive = false)
        checkOrder(call, "send", s, type)
        checkOp(call, op, type)
        val bytes = (count * type.size).toInt()
        val acc = if (comm.rank == 0) ByteBuffer.allocateDirect(maxOf(1, bytes)) else null
        val toZero = ReduceToZero(CollBlocks.single(s, type, count).pack().view, count, type, op, acc)
        if (acc == null) return local.run(arrayOf({ toZero.start() }), null)
        return local.run(
            arrayOf(
                { toZero.start() },
                {
                    toZero.finish()
                    sendTo(root, acc, bytes, Datatype.BYTE, TAG_REDUCE)
                },
            ),
            null,
        )
    }

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
    ): CollRequest {
        when (role(call, root)) {
            Mpi.PROC_NULL -> return done()
            Mpi.ROOT -> {
                val (r, t, counts, at) = rootBlocks(call, recv, recvType, recvCounts, displs, "receive")
                return local.run(
                    arrayOf({ Array(remoteSize) { i -> recvFrom(i, block(r, t, at[i]), counts[i], t, TAG_GATHER) } }),
                    null,
                )
            }
        }
        val s = send ?: missing(call, "send")
        checkCollCount(call, sendCount)
        comm.checkBuffer(call, s, sendCount, sendType, receive = false)
        return local.run(arrayOf({ sendTo(root, s, sendCount, sendType, TAG_GATHER) }), null)
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
        when (role(call, root)) {
            Mpi.PROC_NULL -> return done()
            Mpi.ROOT -> {
                val (s, t, counts, at) = rootBlocks(call, send, sendType, sendCounts, displs, "send")
                val sends = Array(remoteSize) { i -> packedSend(i, block(s, t, at[i]), counts[i], t, TAG_SCATTER) }
                return local.run(arrayOf({ sends.onEach { mpi.submit(it) } }), null)
            }
        }
        val r = recv ?: missing(call, "receive")
        checkCollCount(call, recvCount)
        comm.checkBuffer(call, r, recvCount, recvType, receive = true)
        return local.run(arrayOf({ recvFrom(root, r, recvCount, recvType, TAG_SCATTER) }), null)
    }

    /** The root's buffer, datatype, counts and displacements (one per remote rank), checked. */
    private fun rootBlocks(
        call: String,
        buf: ByteBuffer?,
        type: Datatype?,
        counts: IntArray?,
        displs: IntArray?,
        side: String,
    ): RootBlocks {
        val b = buf ?: missing(call, side)
        val t = type ?: throw MPIException.of(ErrorClass.ERR_TYPE, call, "the root needs a $side datatype")
        if (counts == null || displs == null)
            throw MPIException.of(ErrorClass.ERR_ARG, call, "the root needs $side counts and displacements")
        checkVector(call, "$side counts", counts, displs)
        t.checkUsable(call)
        if (side == "receive" && b.isReadOnly)
            throw MPIException.of(ErrorClass.ERR_BUFFER, call, "the receive buffer is read-only")
        for (i in counts.indices) t.checkFits(
            call,
            "$side buffer block $i",
            b.capacity(),
            (displs[i] * t.extent).toInt(),
            counts[i],
        )
        return RootBlocks(b, t, counts, displs)
    }

    private data class RootBlocks(val buf: ByteBuffer, val type: Datatype, val counts: IntArray, val displs: IntArray)

    // ## All to all: allgather(v), alltoall(v), allreduce ##

    fun iallgatherv(
        call: String,
        send: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recv: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): CollRequest {
        checkCollCount(call, sendCount)
        comm.checkBuffer(call, send, sendCount, sendType, receive = false)
        val (r, t, counts, at) = rootBlocks(call, recv, recvType, recvCounts, displs, "receive")
        return local.run(
            arrayOf({
                val sends = Array<Request>(remoteSize) { i -> sendTo(i, send, sendCount, sendType, TAG_ALLGATHER) }
                sends + Array<Request>(remoteSize) { i -> recvFrom(i, block(r, t, at[i]), counts[i], t, TAG_ALLGATHER) }
            }),
            null,
        )
    }

    fun ialltoallv(
        call: String,
        send: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recv: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ): CollRequest {
        val (sb, st, sc, sd) = rootBlocks(call, send, sendType, sendCounts, sendDispls, "send")
        val (rb, rt, rc, rd) = rootBlocks(call, recv, recvType, recvCounts, recvDispls, "receive")
        val s = CollBlocks(sb, st, sc, sd).pack()
        val r = CollBlocks(rb, rt, rc, rd)
        val n = localSize + remoteSize
        fun spread(b: CollBlocks, what: (CollBlocks, Int) -> Int) =
            IntArray(n) { u -> if (u - remoteBase in 0 until remoteSize) what(b, u - remoteBase) else 0 }
        return union.one({ r.unpack() }) {
            union.group.startAlltoallv(
                s.view,
                0,
                spread(s) { b, i -> b.byteCounts[i] },
                spread(s) { b, i -> b.byteDispls[i] },
                r.view,
                0,
                spread(r) { b, i -> b.byteCounts[i] },
                spread(r) { b, i -> b.byteDispls[i] },
                braid.collectives.Datatype.BYTE,
            )
        }
    }

    fun iallreduce(call: String, send: ByteBuffer, recv: ByteBuffer, count: Int, type: Datatype, op: Op): CollRequest {
        comm.checkBuffer(call, send, count, type, receive = false)
        comm.checkBuffer(call, recv, count, type, receive = true)
        checkOp(call, op, type)
        checkOrder(call, "send", send, type)
        checkOrder(call, "receive", recv, type)
        val s = CollBlocks.single(send, type, count).pack()
        val bytes = s.byteCounts[0]
        val all = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(1, bytes * (localSize + remoteSize))))
        val r = CollBlocks.single(recv, type, count)
        return union.one({
            if (remoteSize > 0) {
                val last = (remoteBase + remoteSize - 1) * bytes
                r.view.putBytes(0, all, last, bytes)
                for (u in remoteBase + remoteSize - 2 downTo remoteBase) op.combinePacked(
                    all,
                    u * bytes,
                    r.view,
                    0,
                    count,
                    type,
                )
            }
            r.unpack()
        }) {
            union.group.startAllgather(s.view, 0, all, 0, bytes, braid.collectives.Datatype.BYTE)
        }
    }

    // ## Reduce-scatter ##

    /** `MPI_Reduce_scatter(_block)`: this rank gets `recvCounts[rank]` elements of the remote group's reduction. */
    fun ireduceScatter(
        call: String,
        send: ByteBuffer,
        recv: ByteBuffer,
        recvCounts: IntArray,
        type: Datatype,
        op: Op,
    ): CollRequest {
        checkCollVector(call, "recvCounts", recvCounts, null, localSize, "the local group")
        val total = recvCounts.sum()
        val me = comm.rank
        comm.checkBuffer(call, send, total, type, receive = false)
        comm.checkBuffer(call, recv, recvCounts[me], type, receive = true)
        checkOrder(call, "send", send, type)
        checkOrder(call, "receive", recv, type)
        checkOp(call, op, type)
        val bytes = (total * type.size).toInt()
        val byteCounts = IntArray(localSize) { (recvCounts[it] * type.size).toInt() }
        val r = CollBlocks.single(recv, type, recvCounts[me])
        // The leader's own group's reduction, and the remote group's that it scatters.
        val mine = if (me == 0) ByteBuffer.allocateDirect(maxOf(1, bytes)) else null
        val theirs = if (me == 0) ByteBuffer.allocateDirect(maxOf(1, bytes)) else null
        val toZero = ReduceToZero(CollBlocks.single(send, type, total).pack().view, total, type, op, mine)
        val scatter: () -> Any? = {
            local.group.startScatterv(
                theirs?.let { UnsafeBuffer(it) },
                0,
                if (me == 0) byteCounts else null,
                if (me == 0) CollBlocks.prefix(byteCounts) else null,
                r.view,
                0,
                byteCounts[me],
                braid.collectives.Datatype.BYTE,
                0,
            )
        }
        if (me != 0) return local.run(arrayOf({ toZero.start() }, scatter)) { r.unpack() }
        lateinit var got: RecvOp
        val swap: () -> Any? = {
            toZero.finish()
            got = recvFrom(0, theirs!!, bytes, Datatype.BYTE, TAG_REDUCE_SCATTER)
            arrayOf(sendTo(0, mine!!, bytes, Datatype.BYTE, TAG_REDUCE_SCATTER), got)
        }
        val checked: () -> Any? = {
            if (got.statusBytes != bytes.toLong()) {
                throw MPIException.of(
                    ErrorClass.ERR_ARG,
                    call,
                    "this group reduces $total elements ($bytes bytes) but the remote group sent ${got.statusBytes} bytes; the sums of recvCounts must be equal on both sides",
                )
            }
            scatter()
        }
        return local.run(arrayOf({ toZero.start() }, swap, checked)) { r.unpack() }
    }

    /**
     * The reduction of [count] packed elements of [type] in [input] over the local group, left at local rank 0 in [acc]
     * (null elsewhere): the module's reduce by [op] where it can keep the op right ([plan]), else an allgather folded
     * in rank order. [start] is a stage; [finish], called once it has ended, completes [acc].
     */
    private inner class ReduceToZero(
        private val input: UnsafeBuffer,
        private val count: Int,
        private val type: Datatype,
        private val op: Op,
        acc: ByteBuffer?,
    ) {
        private val plan = plan(type, op)
        private val bytes = (count * type.size).toInt()
        private val result = acc?.let { UnsafeBuffer(it) }
        private val gathered = if (plan == null) local.scratch(bytes * localSize) else null

        fun start(): CollectiveRequest =
            plan?.reduce(local.group, input, result, count * plan.perElement, 0, false)
                ?: local.group.startAllgather(input, 0, gathered!!, 0, bytes, braid.collectives.Datatype.BYTE)

        fun finish() {
            val g = gathered ?: return
            val acc = result ?: return
            if (localSize == 0 || bytes == 0) return
            acc.putBytes(0, g, (localSize - 1) * bytes, bytes)
            for (i in localSize - 2 downTo 0) op.combinePacked(g, i * bytes, acc, 0, count, type)
        }
    }

    // ## Point-to-point between the groups ##

    /** Starts a send of [count] × [type] of [buf] to remote rank [dest] on [tag]. */
    private fun sendTo(dest: Int, buf: ByteBuffer, count: Int, type: Datatype, tag: Int): SendOp =
        packedSend(dest, buf, count, type, tag).also { mpi.submit(it) }

    /** A send to remote rank [dest], packed now (a non-contiguous layout is copied), not yet started. */
    private fun packedSend(dest: Int, buf: ByteBuffer?, count: Int, type: Datatype, tag: Int): SendOp =
        SendOp(mpi).set(comm, comm.destAddr[dest], bits(comm.rank, tag), 0).also {
            it.region.set(buf!!, count, type, packNow = true)
        }

    /** Starts a receive of [count] × [type] into [buf] from remote rank [source] on [tag]. */
    private fun recvFrom(source: Int, buf: ByteBuffer, count: Int, type: Datatype, tag: Int): RecvOp =
        RecvOp(mpi).set(comm, bits(source, tag), 0L, comm.destAddr[source]).also {
            it.region.set(buf, count, type, packNow = false)
            mpi.submit(it)
        }

    private fun bits(senderRank: Int, tag: Int): Long =
        MatchBitsDescriptor.bits(comm.context, MatchBitsDescriptor.SUB_LEADERS, senderRank, tag)

    /** [buf] from element displacement [displ] of [type] on (a view sharing its memory and byte order). */
    private fun block(buf: ByteBuffer, type: Datatype, displ: Int): ByteBuffer =
        buf.duplicate().clear().position((displ * type.extent).toInt()).slice().order(buf.order())

    // ## Checks ##

    /** [root] as this rank sees it: [Mpi.ROOT], [Mpi.PROC_NULL], or a rank of the remote group. */
    private fun role(call: String, root: Int): Int {
        if (root == Mpi.ROOT || root == Mpi.PROC_NULL || root in 0 until remoteSize) return root
        throw MPIException.of(
            ErrorClass.ERR_ROOT,
            call,
            "root $root is not a rank of the remote group (size $remoteSize), ROOT or PROC_NULL",
        )
    }

    /** A request complete at once (a [Mpi.PROC_NULL] member of the root's group). */
    private fun done(): CollRequest = local.run(arrayOf(), null)

    private fun checkVector(call: String, name: String, counts: IntArray, displs: IntArray) =
        checkCollVector(call, name, counts, displs, remoteSize, "the remote group")

    private fun missing(call: String, what: String): Nothing =
        throw MPIException.of(ErrorClass.ERR_BUFFER, call, "rank ${comm.rank}: the $what buffer is required here")

    private companion object {
        // The leaders' sub-context tags of the collectives' messages between the groups (agreements use 7).
        const val TAG_BCAST = 8
        const val TAG_REDUCE = 9
        const val TAG_GATHER = 10
        const val TAG_SCATTER = 11
        const val TAG_ALLGATHER = 12
        const val TAG_REDUCE_SCATTER = 13
    }
}
