package braid.mpi

import java.nio.ByteBuffer

/**
 * The neighbor collectives of a communicator with a [Topology] (`MPI_Neighbor_allgather` … `_alltoallv`, blocking and
 * nonblocking): one receive from each of [Topology.sources] and one send to each of [Topology.destinations], in the
 * communicator's [MatchBitsDescriptor.SUB_INTERNAL] traffic, so they never meet user point-to-point messages. Each
 * block is addressed by its byte offset in the caller's buffer; a [Mpi.PROC_NULL] neighbor moves nothing.
 */
internal class NeighborCollectives(private val comm: Comm) {
    private val mpi = comm.mpi

    /**
     * Starts one exchange of [blocks] (the send side's, the receive side's): block k from [sendBuf] to destination k,
     * and block j from source j into [recvBuf].
     */
    fun start(
        call: String,
        sendBuf: ByteBuffer,
        recvBuf: ByteBuffer,
        blocks: Pair<NeighborBlocks, NeighborBlocks>,
    ): Request {
        val (send, recv) = blocks
        return exchange(
            call,
            send.counts.size,
            recv.counts.size,
            { j, src, bits ->
                val op = mpi.takeRecv().set(comm, bits, 0L, comm.destAddr[src])
                op.region.set(at(recvBuf, recv.offsets[j]), recv.counts[j], recv.type, packNow = false)
                mpi.submit(op)
                op
            },
            { k, dst, bits ->
                val op = mpi.takeSend().set(comm, comm.destAddr[dst], bits, 0)
                op.region.set(at(sendBuf, send.offsets[k]), send.counts[k], send.type, packNow = true)
                mpi.submit(op)
                op
            },
        )
    }

    /**
     * The same exchange on memory regions of any interface (device memory included): block k from [sendAt]'s region
     * (after its byte offset) to destination k, and block j from source j into [recvAt]'s region, each a region send or
     * receive ([RegionSendOp], [RegionRecvOp]: staged through the endpoint's copy service). Every block's range is
     * checked here, at the call.
     */
    fun startRegions(
        call: String,
        sendAt: RegionSpan,
        recvAt: RegionSpan,
        blocks: Pair<NeighborBlocks, NeighborBlocks>,
    ): Request {
        val (send, recv) = blocks
        val outs = outs(call)
        val ins = ins(call)
        check(call, "send", outs, send.counts.size)
        check(call, "receive", ins, recv.counts.size)
        fun block(at: RegionSpan, b: NeighborBlocks, i: Int, what: String) =
            RegionSpan(at.region, at.offset + b.offsets[i], b.counts[i], b.type).check(call, mpi.ep, what)
        val sends = Array(outs) { block(sendAt, send, it, "send buffer") }
        val recvs = Array(ins) { block(recvAt, recv, it, "receive buffer") }
        return exchange(
            call,
            outs,
            ins,
            { j, src, bits ->
                val span = recvs[j]
                val host = if (span.contiguous) null else span.hostBuffer()
                comm.postRegionRecv(RegionRecvOp(mpi, comm, span, host, bits, 0L, comm.destAddr[src]))
            },
            { k, dst, bits ->
                val span = sends[k]
                val host = if (span.contiguous) null else span.packed(call, mpi.ep)
                RegionSendOp(mpi, comm, span, host, comm.destAddr[dst], bits, 0L).also { mpi.submit(it) }
            },
        )
    }

    /**
     * The one shape of a neighbor exchange: [receive] posts the block from source j, [send] the block to destination k
     * (each given the neighbor's rank and the match bits), when the request starts; a [Mpi.PROC_NULL] neighbor moves
     * nothing.
     */
    private inline fun exchange(
        call: String,
        sendBlocks: Int,
        recvBlocks: Int,
        crossinline receive: (Int, Int, Long) -> Request,
        crossinline send: (Int, Int, Long) -> Request,
    ): Request {
        val topo = topology(call)
        val srcs = topo.sources(comm.rank)
        val dsts = topo.destinations(comm.rank)
        check(call, "send", dsts.size, sendBlocks)
        check(call, "receive", srcs.size, recvBlocks)
        val stage: () -> Any? = {
            val ops = ArrayList<Request>(srcs.size + dsts.size)
            for (j in srcs.indices) {
                val src = srcs[j]
                if (src != Mpi.PROC_NULL) ops += receive(j, src, bits(src, topo.recvTag(comm.rank, j)))
            }
            for (k in dsts.indices) {
                val dst = dsts[k]
                if (dst != Mpi.PROC_NULL) ops += send(k, dst, bits(comm.rank, topo.sendTag(comm.rank, k)))
            }
            ops.toTypedArray()
        }
        return CollRequest(mpi, comm, arrayOf(stage), null).start()
    }

    /** This rank's in-degree: how many sources (blocks it receives). */
    fun ins(call: String): Int = topology(call).sources(comm.rank).size

    /** This rank's out-degree: how many destinations (blocks it sends). */
    fun outs(call: String): Int = topology(call).destinations(comm.rank).size

    fun topology(call: String): Topology =
        comm.topo
            ?: throw MPIException.of(
                ErrorClass.ERR_TOPOLOGY,
                call,
                "${comm.getName()} has no topology; make one with createCart, createGraph or createDistGraph",
            )

    private fun check(call: String, what: String, neighbors: Int, given: Int) {
        if (given < neighbors)
            throw MPIException.of(
                ErrorClass.ERR_ARG,
                call,
                "$given $what counts for $neighbors neighbors of ${comm.getName()}",
            )
    }

    private fun bits(rank: Int, tag: Int): Long =
        MatchBitsDescriptor.bits(comm.context, MatchBitsDescriptor.SUB_INTERNAL, rank, NEIGHBOR_TAG + tag)

    private fun at(buf: ByteBuffer, offset: Long): ByteBuffer =
        if (offset == 0L) buf else buf.slice(offset.toInt(), buf.capacity() - offset.toInt())

    companion object {
        /** Tags of neighbor traffic (plus the topology's own) in [MatchBitsDescriptor.SUB_INTERNAL]. */
        const val NEIGHBOR_TAG: Int = 0x100
    }
}

/** A neighbor collective's blocks on one side: per neighbor, [counts] elements of [type] from byte [offsets]. */
internal class NeighborBlocks(val counts: IntArray, val offsets: LongArray, val type: Datatype) {
    companion object {
        /** [n] blocks of [count] elements: one after the other ([stacked]), or all the same block. */
        private fun same(n: Int, count: Int, type: Datatype, stacked: Boolean): NeighborBlocks =
            NeighborBlocks(IntArray(n) { count }, LongArray(n) { if (stacked) it * count * type.extent else 0 }, type)

        /** Blocks of [counts] elements at [displs] extents of [type]. */
        private fun of(counts: IntArray, displs: IntArray, type: Datatype): NeighborBlocks =
            NeighborBlocks(counts, LongArray(displs.size) { displs[it] * type.extent }, type)

        // The four collectives' blocks (send side to receive side), for the buffer and the region forms alike.

        /** `MPI_Neighbor_allgather`: one block to every destination; source j's into block j. */
        fun allgather(n: NeighborCollectives, call: String, sc: Int, st: Datatype, rc: Int, rt: Datatype) =
            same(n.outs(call), sc, st, stacked = false) to same(n.ins(call), rc, rt, stacked = true)

        /** `MPI_Neighbor_allgatherv`: one block to every destination; source j's at `displs[j]` extents. */
        fun allgatherv(
            n: NeighborCollectives,
            call: String,
            sc: Int,
            st: Datatype,
            rc: IntArray,
            displs: IntArray,
            rt: Datatype,
        ) = same(n.outs(call), sc, st, stacked = false) to of(rc, displs, rt)

        /** `MPI_Neighbor_alltoall`: block k to destination k; source j's into block j. */
        fun alltoall(n: NeighborCollectives, call: String, sc: Int, st: Datatype, rc: Int, rt: Datatype) =
            same(n.outs(call), sc, st, stacked = true) to same(n.ins(call), rc, rt, stacked = true)

        /** `MPI_Neighbor_alltoallv`: counts and displacements (in extents) per neighbor on both sides. */
        fun alltoallv(sc: IntArray, sd: IntArray, st: Datatype, rc: IntArray, rd: IntArray, rt: Datatype) =
            of(sc, sd, st) to of(rc, rd, rt)
    }
}

/**
 * A neighbor collective of this communicator, started under its error handler: [block] gets the collectives and [call].
 */
internal inline fun Comm.neighborColl(call: String, block: (NeighborCollectives, String) -> Request): Request = guard {
    checkUsable(call)
    block(neighbors, call)
}
