package braid.mpi

import braid.core.MemoryRegion

/**
 * The rest of a communicator's calls on registered memory regions of any interface (device memory included), beside
 * [CommRegions]: the ready and buffered send modes, send-receive, reduce_scatter with unequal counts, alltoallw and the
 * neighbor collectives. Each is built from the same pieces as [CommRegions]' calls, so device bytes cross by the same
 * copy service and staging and are refused by the same rules:
 * - `rsend` is a standard send (as for buffers); `bsend` packs the region's elements into the attached buffer
 *   ([Mpi.bufferAttach]) through the copy service and returns at once;
 * - `sendRecv` is a region receive and a region send waited for together; `sendRecvReplace` sends a host copy of the
 *   region's elements (taken through the copy service) while the receive goes into the region;
 * - `reduceScatter` and `alltoallw` are the collectives module's region forms (intracommunicators; contiguous types,
 *   `MPI_ERR_TYPE` for a strided one; a null send region for reduceScatter is `MPI_IN_PLACE`);
 * - the neighbor collectives are one region send or receive per neighbor (any type: a strided one is packed or unpacked
 *   host-side through the copy service).
 *
 * Implemented by [Comm] alone, through [CommRegions] (its members, from Java as from Kotlin).
 */
public sealed interface CommRegionExchanges {
    // ## Send modes ##

    /** `MPI_Rsend` from a region (carried as a standard send). */
    public fun rsend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int) {
        irsend(buf, offset, count, type, dest, tag).waitFor(Status.IGNORED)
    }

    /** `MPI_Irsend` from a region. */
    public fun irsend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        comm.startRegionSend("MPI_Irsend", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_READY)

    /** `MPI_Bsend` from a region: its elements are copied into the attached buffer; returns at once. */
    public fun bsend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int) {
        ibsend(buf, offset, count, type, dest, tag).waitFor(Status.IGNORED)
    }

    /** `MPI_Ibsend` from a region (complete at once, as [bsend]). */
    public fun ibsend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        comm.startRegionSend("MPI_Ibsend", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_BUFFERED)

    /** `MPI_Rsend_init` from a region. */
    public fun rsendInit(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        regionSendInit("MPI_Rsend_init", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_READY)

    /** `MPI_Bsend_init` from a region: each start copies the region's current elements into the attached buffer. */
    public fun bsendInit(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        regionSendInit("MPI_Bsend_init", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_BUFFERED)

    // ## Send-receive ##

    /** `MPI_Sendrecv` between regions: the receive and the send proceed together; returns the receive's status. */
    public fun sendRecv(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        dest: Int,
        sendTag: Int,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        source: Int,
        recvTag: Int,
    ): Status {
        val r =
            comm.startRegionRecv("MPI_Sendrecv", RegionSpan(recvBuf, recvOffset, recvCount, recvType), source, recvTag)
        val span = RegionSpan(sendBuf, sendOffset, sendCount, sendType)
        return comm.waitBoth(r, comm.startRegionSend("MPI_Sendrecv", span, dest, sendTag, Comm.MODE_STANDARD))
    }

    /**
     * `MPI_Sendrecv_replace` on a region: its elements are copied out (through the copy service) and sent, while the
     * message from [source] is received into it.
     */
    public fun sendRecvReplace(
        buf: MemoryRegion,
        offset: Long,
        count: Int,
        type: Datatype,
        dest: Int,
        sendTag: Int,
        source: Int,
        recvTag: Int,
    ): Status {
        val call = "MPI_Sendrecv_replace"
        val span = RegionSpan(buf, offset, count, type)
        val copy =
            comm.guard {
                comm.checkUsable(call)
                span.check(call, comm.mpi.ep, "buffer").packed(call, comm.mpi.ep)
            }
        val r = comm.startRegionRecv(call, span, source, recvTag)
        return comm.waitBoth(r, comm.isend(copy.byteBuffer(), span.bytes, Datatype.BYTE, dest, sendTag))
    }

    // ## Collectives ##

    /** `MPI_Reduce_scatter` on regions: rank i keeps `recvCounts[i]` elements of the reduction; null send: in place. */
    public fun reduceScatter(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        type: Datatype,
        op: Op,
    ) {
        ireduceScatter(sendBuf, sendOffset, recvBuf, recvOffset, recvCounts, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Ireduce_scatter` on regions. */
    public fun ireduceScatter(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        type: Datatype,
        op: Op,
    ): Request =
        regionColl("MPI_Ireduce_scatter") { c, call ->
            c.checkVector(call, "recvCounts", recvCounts, null)
            val total = recvCounts.sum()
            val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, total, type, "send buffer") }
            val mine = if (s == null) total else recvCounts[c.rank]
            val r = c.regionSpan(call, recvBuf, recvOffset, mine, type, "receive buffer")
            c.regionReduceScatter(call, s, r, recvCounts, type, op)
        }

    /**
     * `MPI_Alltoallw` on regions: rank j gets `sendCounts[j]` elements of `sendTypes[j]` from byte `sendDispls[j]` of
     * [sendBuf] (after [sendOffset]), and rank j's `recvCounts[j]` elements of `recvTypes[j]` land at byte
     * `recvDispls[j]` of [recvBuf]. Contiguous types only.
     */
    public fun alltoallw(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendTypes: Array<Datatype>,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvTypes: Array<Datatype>,
    ) {
        ialltoallw(
                sendBuf,
                sendOffset,
                sendCounts,
                sendDispls,
                sendTypes,
                recvBuf,
                recvOffset,
                recvCounts,
                recvDispls,
                recvTypes,
            )
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ialltoallw` on regions. */
    public fun ialltoallw(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendTypes: Array<Datatype>,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvTypes: Array<Datatype>,
    ): Request =
        regionColl("MPI_Ialltoallw") { c, call ->
            c.regionAlltoallw(
                call,
                RegionSpan(sendBuf, sendOffset, 0, Datatype.BYTE),
                sendCounts,
                sendDispls,
                sendTypes,
                RegionSpan(recvBuf, recvOffset, 0, Datatype.BYTE),
                recvCounts,
                recvDispls,
                recvTypes,
            )
        }

    // ## Neighbor collectives (a communicator with a topology) ##

    /** `MPI_Neighbor_allgather` on regions: [sendBuf]'s block to every destination; source j's into block j. */
    public fun neighborAllgather(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ineighborAllgather(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_allgather` on regions. */
    public fun ineighborAllgather(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        neighborRegions("MPI_Ineighbor_allgather", sendBuf, sendOffset, recvBuf, recvOffset) { n, call ->
            NeighborBlocks.allgather(n, call, sendCount, sendType, recvCount, recvType)
        }

    /** `MPI_Neighbor_allgatherv` on regions: source j's block at [displs]`[j]` extents of [recvType]. */
    public fun neighborAllgatherv(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ) {
        ineighborAllgatherv(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCounts, displs, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_allgatherv` on regions. */
    public fun ineighborAllgatherv(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): Request =
        neighborRegions("MPI_Ineighbor_allgatherv", sendBuf, sendOffset, recvBuf, recvOffset) { n, call ->
            NeighborBlocks.allgatherv(n, call, sendCount, sendType, recvCounts, displs, recvType)
        }

    /** `MPI_Neighbor_alltoall` on regions: block k of [sendBuf] to destination k; source j's into block j. */
    public fun neighborAlltoall(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ineighborAlltoall(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_alltoall` on regions. */
    public fun ineighborAlltoall(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        neighborRegions("MPI_Ineighbor_alltoall", sendBuf, sendOffset, recvBuf, recvOffset) { n, call ->
            NeighborBlocks.alltoall(n, call, sendCount, sendType, recvCount, recvType)
        }

    /** `MPI_Neighbor_alltoallv` on regions: counts and displacements (in extents) per neighbor. */
    public fun neighborAlltoallv(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ) {
        ineighborAlltoallv(
                sendBuf,
                sendOffset,
                sendCounts,
                sendDispls,
                sendType,
                recvBuf,
                recvOffset,
                recvCounts,
                recvDispls,
                recvType,
            )
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_alltoallv` on regions. */
    public fun ineighborAlltoallv(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ): Request =
        neighborRegions("MPI_Ineighbor_alltoallv", sendBuf, sendOffset, recvBuf, recvOffset) { _, _ ->
            NeighborBlocks.alltoallv(sendCounts, sendDispls, sendType, recvCounts, recvDispls, recvType)
        }
}

/** A neighbor collective on regions: [blocks] gives each side's blocks, from the byte offsets given. */
private inline fun CommRegionExchanges.neighborRegions(
    call: String,
    sendBuf: MemoryRegion,
    sendOffset: Long,
    recvBuf: MemoryRegion,
    recvOffset: Long,
    blocks: (NeighborCollectives, String) -> Pair<NeighborBlocks, NeighborBlocks>,
): Request =
    comm.neighborColl(call) { n, c ->
        val at = RegionSpan(sendBuf, sendOffset, 0, Datatype.BYTE)
        n.startRegions(c, at, RegionSpan(recvBuf, recvOffset, 0, Datatype.BYTE), blocks(n, c))
    }
