package braid.mpi

import braid.core.MemoryRegion

/**
 * The calls of a communicator ([Comm]) on registered memory regions of any interface — device memory included (CUDA,
 * ROCm …, or one the application defines): the region is the call's buffer, with a byte [offset][send] where the data
 * starts. Register device memory with [Mpi.registerMemory] and, if you supply the copies, set them with [Mpi.setOp].
 *
 * Point-to-point (send, ssend, recv and their nonblocking forms) match and order with the buffer forms (one stream of
 * messages). A contiguous type goes through the endpoint's region operations, which stage device bytes through pooled
 * bounce buffers with the endpoint's copy service (a large send chunk by chunk); another type is packed or unpacked
 * host-side through the same service. The collectives (intracommunicators) are the collectives module's region forms:
 * the input copied to a pooled host buffer, the collective run there, the result copied back before the request ends.
 * They take contiguous types; a null send region is `MPI_IN_PLACE` where MPI allows it (not for alltoall or scatter). A
 * failed copy is an MPI error (`MPI_ERR_OTHER`, or the class of its errno) through the communicator's handler.
 *
 * The other send modes, send-receive, reduce_scatter, alltoallw and the neighbor collectives on regions are in
 * [CommRegionExchanges], which this extends; a matched probe's receive into a region is [Message.mrecv].
 *
 * Implemented by [Comm] alone (its members, from Java as from Kotlin: `comm.send(region, 0, n, Datatype.INT, 1, 0)`);
 * declared here to keep `Comm.kt` to the buffer forms.
 */
public sealed interface CommRegions : CommRegionExchanges {
    // ## Point-to-point ##

    /** `MPI_Send` from [count] × [type] at byte [offset] of [buf]. */
    public fun send(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int) {
        isend(buf, offset, count, type, dest, tag).waitFor(Status.IGNORED)
    }

    /** `MPI_Ssend` from a region: returns once the receiver has matched. */
    public fun ssend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int) {
        issend(buf, offset, count, type, dest, tag).waitFor(Status.IGNORED)
    }

    /** `MPI_Isend` from a region. */
    public fun isend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        comm.startRegionSend("MPI_Isend", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_STANDARD)

    /** `MPI_Issend` from a region. */
    public fun issend(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        comm.startRegionSend("MPI_Issend", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_SYNCHRONOUS)

    /** `MPI_Recv` into a region. */
    public fun recv(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, source: Int, tag: Int): Status =
        irecv(buf, offset, count, type, source, tag).waitFor()

    /** `MPI_Irecv` into a region. */
    public fun irecv(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, source: Int, tag: Int): Request =
        comm.startRegionRecv("MPI_Irecv", RegionSpan(buf, offset, count, type), source, tag)

    /** `MPI_Send_init` from a region: each [Prequest.start] sends the region's current bytes. */
    public fun sendInit(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        regionSendInit("MPI_Send_init", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_STANDARD)

    /** `MPI_Ssend_init` from a region. */
    public fun ssendInit(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        regionSendInit("MPI_Ssend_init", RegionSpan(buf, offset, count, type), dest, tag, Comm.MODE_SYNCHRONOUS)

    /** `MPI_Recv_init` into a region. */
    public fun recvInit(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, source: Int, tag: Int): Prequest =
        persistent("MPI_Recv_init") {
            comm.startRegionRecv("MPI_Recv_init", RegionSpan(buf, offset, count, type), source, tag)
        }

    // ## Collectives ##

    /** `MPI_Bcast` of a region from [root]. */
    public fun bcast(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, root: Int) {
        ibcast(buf, offset, count, type, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Ibcast` of a region. */
    public fun ibcast(buf: MemoryRegion, offset: Long, count: Int, type: Datatype, root: Int): Request =
        regionColl("MPI_Ibcast") { c, call ->
            c.regionBcast(call, c.regionSpan(call, buf, offset, count, type, "buffer"), root)
        }

    /** `MPI_Allreduce` on regions; [sendBuf] null: in place. */
    public fun allreduce(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ) {
        iallreduce(sendBuf, sendOffset, recvBuf, recvOffset, count, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Iallreduce` on regions. */
    public fun iallreduce(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ): Request =
        reduction(
            "MPI_Iallreduce",
            ReductionKind.ALLREDUCE,
            false,
            sendBuf,
            sendOffset,
            recvBuf,
            recvOffset,
            count,
            type,
            op,
            0,
        )

    /**
     * `MPI_Reduce` on regions: [recvBuf] matters at [root] only (null elsewhere); [sendBuf] null at the root: in place.
     */
    public fun reduce(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
        root: Int,
    ) {
        ireduce(sendBuf, sendOffset, recvBuf, recvOffset, count, type, op, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Ireduce` on regions. */
    public fun ireduce(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
        root: Int,
    ): Request =
        reduction(
            "MPI_Ireduce",
            ReductionKind.REDUCE,
            false,
            sendBuf,
            sendOffset,
            recvBuf,
            recvOffset,
            count,
            type,
            op,
            root,
        )

    /** `MPI_Scan` on regions; [sendBuf] null: in place. */
    public fun scan(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ) {
        iscan(sendBuf, sendOffset, recvBuf, recvOffset, count, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Iscan` on regions. */
    public fun iscan(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ): Request =
        reduction("MPI_Iscan", ReductionKind.SCAN, false, sendBuf, sendOffset, recvBuf, recvOffset, count, type, op, 0)

    /** `MPI_Exscan` on regions (rank 0's [recvBuf] is left as it was). */
    public fun exscan(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ) {
        iexscan(sendBuf, sendOffset, recvBuf, recvOffset, count, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Iexscan` on regions. */
    public fun iexscan(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        count: Int,
        type: Datatype,
        op: Op,
    ): Request =
        reduction(
            "MPI_Iexscan",
            ReductionKind.EXSCAN,
            false,
            sendBuf,
            sendOffset,
            recvBuf,
            recvOffset,
            count,
            type,
            op,
            0,
        )

    /** `MPI_Reduce_scatter_block` on regions: block [Comm.rank] ([recvCount] elements) of the reduction. */
    public fun reduceScatterBlock(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        type: Datatype,
        op: Op,
    ) {
        ireduceScatterBlock(sendBuf, sendOffset, recvBuf, recvOffset, recvCount, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Ireduce_scatter_block` on regions. */
    public fun ireduceScatterBlock(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        type: Datatype,
        op: Op,
    ): Request =
        reduction(
            "MPI_Ireduce_scatter_block",
            ReductionKind.ALLREDUCE,
            true,
            sendBuf,
            sendOffset,
            recvBuf,
            recvOffset,
            recvCount,
            type,
            op,
            0,
        )

    /** `MPI_Allgather` on regions; [sendBuf] null: in place. */
    public fun allgather(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ) {
        iallgather(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Iallgather` on regions. */
    public fun iallgather(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        regionColl("MPI_Iallgather") { c, call ->
            val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, sendCount, sendType, "send buffer") }
            val r = c.regionSpan(call, recvBuf, recvOffset, recvCount * c.size, recvType, "receive buffer")
            c.regionAllgather(call, s, r, c.regionBlock(call, s, recvCount, recvType))
        }

    /** `MPI_Allgatherv` on regions: rank i's `recvCounts[i]` elements at `displs[i]`; [sendBuf] null: in place. */
    public fun allgatherv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ) {
        iallgatherv(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCounts, displs, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Iallgatherv` on regions. */
    public fun iallgatherv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): Request =
        regionColl("MPI_Iallgatherv") { c, call ->
            c.checkVector(call, "recvCounts", recvCounts, displs)
            val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, sendCount, sendType, "send buffer") }
            val r = c.regionSpan(call, recvBuf, recvOffset, vExtent(recvCounts, displs), recvType, "receive buffer")
            c.regionAllgatherv(call, s, r, recvCounts, displs)
        }

    /** `MPI_Alltoall` on regions (no in-place form). */
    public fun alltoall(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ialltoall(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ialltoall` on regions. */
    public fun ialltoall(
        sendBuf: MemoryRegion,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        regionColl("MPI_Ialltoall") { c, call ->
            val s = c.regionSpan(call, sendBuf, sendOffset, sendCount * c.size, sendType, "send buffer")
            val r = c.regionSpan(call, recvBuf, recvOffset, recvCount * c.size, recvType, "receive buffer")
            val n = (recvCount * recvType.size).toInt()
            if (sendCount * sendType.size != n.toLong()) c.mismatch(call, (sendCount * sendType.size).toInt(), n)
            c.regionAlltoall(call, s, r, n)
        }

    /**
     * `MPI_Alltoallv` on regions: `sendCounts[j]` elements at `sendDispls[j]` to rank j, rank j's at `recvDispls[j]`.
     */
    public fun alltoallv(
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
        ialltoallv(
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

    /** `MPI_Ialltoallv` on regions. */
    public fun ialltoallv(
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
        regionColl("MPI_Ialltoallv") { c, call ->
            c.checkVector(call, "sendCounts", sendCounts, sendDispls)
            c.checkVector(call, "recvCounts", recvCounts, recvDispls)
            val s = c.regionSpan(call, sendBuf, sendOffset, vExtent(sendCounts, sendDispls), sendType, "send buffer")
            val r = c.regionSpan(call, recvBuf, recvOffset, vExtent(recvCounts, recvDispls), recvType, "receive buffer")
            c.regionAlltoallv(
                call,
                s,
                asBytes(sendCounts, sendType, false),
                asBytes(sendDispls, sendType, true, s.start - s.offset),
                r,
                asBytes(recvCounts, recvType, false),
                asBytes(recvDispls, recvType, true, r.start - r.offset),
            )
        }

    /** `MPI_Gather` on regions to [root] ([recvBuf] null elsewhere); [sendBuf] null at the root: in place. */
    public fun gather(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        igather(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType, root)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Igather` on regions. */
    public fun igather(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        regionColl("MPI_Igather") { c, call ->
            val atRoot = c.rank == root
            val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, sendCount, sendType, "send buffer") }
            val r =
                recvBuf
                    ?.takeIf { atRoot }
                    ?.let { c.regionSpan(call, it, recvOffset, recvCount * c.size, recvType, "receive buffer") }
            val n = if (atRoot) c.regionBlock(call, s, recvCount, recvType) else s?.bytes ?: 0
            c.regionGather(call, s, r, n, root)
        }

    /** `MPI_Gatherv` on regions: [root]'s [recvBuf] gets rank i's elements at `displs[i]`. */
    public fun gatherv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        recvCounts: IntArray?,
        displs: IntArray?,
        recvType: Datatype?,
        root: Int,
    ) {
        igatherv(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCounts, displs, recvType, root)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Igatherv` on regions. */
    public fun igatherv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion?,
        recvOffset: Long,
        recvCounts: IntArray?,
        displs: IntArray?,
        recvType: Datatype?,
        root: Int,
    ): Request =
        regionColl("MPI_Igatherv") { c, call ->
            val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, sendCount, sendType, "send buffer") }
            val r =
                if (c.rank == root && recvBuf != null && recvCounts != null && displs != null && recvType != null) {
                    c.checkVector(call, "recvCounts", recvCounts, displs)
                    c.regionSpan(call, recvBuf, recvOffset, vExtent(recvCounts, displs), recvType, "receive buffer")
                } else null
            c.regionGatherv(call, s, r, recvCounts, displs, root)
        }

    /** `MPI_Scatter` on regions from block i of [root]'s [sendBuf] (null elsewhere) to rank i's [recvBuf]. */
    public fun scatter(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        iscatter(sendBuf, sendOffset, sendCount, sendType, recvBuf, recvOffset, recvCount, recvType, root)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Iscatter` on regions. */
    public fun iscatter(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        regionColl("MPI_Iscatter") { c, call ->
            val s =
                sendBuf
                    ?.takeIf { c.rank == root }
                    ?.let { c.regionSpan(call, it, sendOffset, sendCount * c.size, sendType, "send buffer") }
            val r = c.regionSpan(call, recvBuf, recvOffset, recvCount, recvType, "receive buffer")
            if (s != null && sendCount * sendType.size != r.bytes.toLong())
                c.mismatch(call, (sendCount * sendType.size).toInt(), r.bytes)
            c.regionScatter(call, s, r, r.bytes, root)
        }

    /** `MPI_Scatterv` on regions: rank i's [recvBuf] gets `sendCounts[i]` elements from `displs[i]` of the root's. */
    public fun scatterv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCounts: IntArray?,
        displs: IntArray?,
        sendType: Datatype?,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        iscatterv(sendBuf, sendOffset, sendCounts, displs, sendType, recvBuf, recvOffset, recvCount, recvType, root)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Iscatterv` on regions. */
    public fun iscatterv(
        sendBuf: MemoryRegion?,
        sendOffset: Long,
        sendCounts: IntArray?,
        displs: IntArray?,
        sendType: Datatype?,
        recvBuf: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        regionColl("MPI_Iscatterv") { c, call ->
            val s =
                if (c.rank == root && sendBuf != null && sendCounts != null && displs != null && sendType != null) {
                    c.checkVector(call, "sendCounts", sendCounts, displs)
                    c.regionSpan(call, sendBuf, sendOffset, vExtent(sendCounts, displs), sendType, "send buffer")
                } else null
            val r = c.regionSpan(call, recvBuf, recvOffset, recvCount, recvType, "receive buffer")
            c.regionScatterv(call, s, sendCounts, displs, r, root)
        }
}

/** The one implementation of [CommRegions] and [CommRegionExchanges]. */
internal val CommRegionExchanges.comm: Comm
    get() = this as Comm

/** A persistent request whose every start is [start] (its checks run at each start, through the handler). */
internal fun CommRegionExchanges.persistent(call: String, start: () -> Request): Prequest =
    comm.guard {
        comm.checkUsable(call)
        Prequest(comm.mpi, comm, start)
    }

/** A persistent send of [span] in [mode] ([Comm.MODE_STANDARD] …), every start a [startRegionSend]. */
internal fun CommRegionExchanges.regionSendInit(
    call: String,
    span: RegionSpan,
    dest: Int,
    tag: Int,
    mode: Int,
): Prequest = persistent(call) { comm.startRegionSend(call, span, dest, tag, mode) }

/** A region collective on an intracommunicator, started under its error handler: [block] gets the group and [call]. */
internal inline fun CommRegionExchanges.regionColl(call: String, block: (CommCollectives, String) -> Request): Request =
    comm.guard {
        comm.checkUsable(call)
        when (val c = comm) {
            is Intracomm -> block(c.coll, call)
            is Intercomm ->
                throw MPIException.of(
                    ErrorClass.ERR_COMM,
                    call,
                    "${c.getName()} is an intercommunicator; the memory-region collectives are for intracommunicators",
                )
        }
    }

/** A reduction on regions: the spans checked, then [regionReduce]. */
private fun CommRegions.reduction(
    call: String,
    kind: ReductionKind,
    scatter: Boolean,
    sendBuf: MemoryRegion?,
    sendOffset: Long,
    recvBuf: MemoryRegion?,
    recvOffset: Long,
    count: Int,
    type: Datatype,
    op: Op,
    root: Int,
): Request =
    regionColl(call) { c, _ ->
        val total = if (scatter) count * c.size else count
        val s = sendBuf?.let { c.regionSpan(call, it, sendOffset, total, type, "send buffer") }
        val keep = recvBuf?.takeIf { kind != ReductionKind.REDUCE || c.rank == root }
        val r =
            keep?.let { c.regionSpan(call, it, recvOffset, if (s == null) total else count, type, "receive buffer") }
        if (s == null && r == null) c.missing(call, "send")
        if (kind == ReductionKind.REDUCE && s == null && c.rank != root) c.missing(call, "send")
        c.regionReduce(call, kind, scatter, s, r, count, type, op, root)
    }
