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
     * Starts one exchange: block k of [sendCounts]`[k]` × [sendType] from byte [sendOffsets]`[k]` of [sendBuf] to
     * destination k, and block j from source j into byte [recvOffsets]`[j]` of [recvBuf].
     */
    fun start(
        call: String,
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendOffsets: LongArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvOffsets: LongArray,
        recvType: Datatype,
    ): Request {
        val topo = topology(call)
        val srcs = topo.sources(comm.rank)
        val dsts = topo.destinations(comm.rank)
        check(call, "send", dsts.size, sendCounts.size)
        check(call, "receive", srcs.size, recvCounts.size)
        val stage: () -> Any? = {
            val ops = ArrayList<Request>(srcs.size + dsts.size)
            for (j in srcs.indices) {
                val src = srcs[j]
                if (src == Mpi.PROC_NULL) continue
                val bits = bits(src, topo.recvTag(comm.rank, j))
                val op = mpi.takeRecv().set(comm, bits, 0L, comm.destAddr[src])
                op.region.set(at(recvBuf, recvOffsets[j]), recvCounts[j], recvType, packNow = false)
                mpi.submit(op)
                ops += op
            }
            for (k in dsts.indices) {
                val dst = dsts[k]
                if (dst == Mpi.PROC_NULL) continue
                val op = mpi.takeSend().set(comm, comm.destAddr[dst], bits(comm.rank, topo.sendTag(comm.rank, k)), 0)
                op.region.set(at(sendBuf, sendOffsets[k]), sendCounts[k], sendType, packNow = true)
                mpi.submit(op)
                ops += op
            }
            ops.toTypedArray()
        }
        return CollRequest(mpi, comm, arrayOf(stage), null).start()
    }

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
