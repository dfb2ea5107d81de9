package braid.collectives

import braid.core.FabricException
import braid.core.MemoryRegion

/**
 * The collectives of a [CollectiveGroup] on registered memory regions of its endpoint's domain instead of buffers, in
 * memory of any [braid.core.HmemIface] (device memory included). They share one staging step ([RegionStaging]): the
 * input copied to a pooled host buffer through the endpoint's copy service (its overrides, else the built-in copy), the
 * host collective started there, and the result copied back when it ends, before its request reports the end — so the
 * `start…` forms' requests wait every way a request does (test, waitFor, await, future), and several may be in flight
 * at once. A failed copy of the input throws [FabricException] with its errno; a failed copy of the result fails the
 * request with it. The blocking forms are their `start…` form and [CollectiveRequest.waitFor].
 *
 * Implemented by [CollectiveGroup] alone: these are its members (`group.startAllreduce(region, …)`, from Java as from
 * Kotlin), declared here so that the group's file holds the buffer forms and the machinery.
 */
public sealed interface RegionCollectives {
    /** Allreduce of [count] elements: [send] (null: in place, [recv] holds this rank's input) into [recv]. */
    public fun startAllreduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        regionReduce(CollectiveOp.ALLREDUCE, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    /** [startAllreduce] with a user reduction. */
    public fun startAllreduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        regionReduce(
            CollectiveOp.ALLREDUCE,
            send,
            sendOffset,
            recv,
            recvOffset,
            count,
            datatype,
            op,
            op.isCommutative(),
            0,
        )

    /** [startAllreduce] and wait. */
    public fun allreduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): Unit = startAllreduce(send, sendOffset, recv, recvOffset, count, datatype, op).waitFor(-1)

    /** Reduces [count] elements of [send] to [root]'s [recv] (null elsewhere; in place at the root: null send). */
    public fun startReduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): CollectiveRequest =
        regionReduce(CollectiveOp.REDUCE, send, sendOffset, recv, recvOffset, count, datatype, op, true, root)

    /** [startReduce] with a user reduction. */
    public fun startReduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
        root: Int,
    ): CollectiveRequest =
        regionReduce(
            CollectiveOp.REDUCE,
            send,
            sendOffset,
            recv,
            recvOffset,
            count,
            datatype,
            op,
            op.isCommutative(),
            root,
        )

    /** [startReduce] and wait. */
    public fun reduce(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): Unit = startReduce(send, sendOffset, recv, recvOffset, count, datatype, op, root).waitFor(-1)

    /** Inclusive prefix reduction (`MPI_Scan`) of [send] (null: in place, from [recv]) into [recv]. */
    public fun startScan(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        regionReduce(CollectiveOp.SCAN, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    /** [startScan] with a user reduction. */
    public fun startScan(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        regionReduce(CollectiveOp.SCAN, send, sendOffset, recv, recvOffset, count, datatype, op, op.isCommutative(), 0)

    /** Exclusive prefix reduction (`MPI_Exscan`); rank 0's [recv] is left untouched. */
    public fun startExscan(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        regionReduce(CollectiveOp.EXSCAN, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    /** [startExscan] with a user reduction. */
    public fun startExscan(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        regionReduce(
            CollectiveOp.EXSCAN,
            send,
            sendOffset,
            recv,
            recvOffset,
            count,
            datatype,
            op,
            op.isCommutative(),
            0,
        )

    /** Reduces `size × recvCount` elements of [send] (null: in place, from [recv]); block [rank] to [recv]. */
    public fun startReduceScatterBlock(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        regionReduce(
            CollectiveOp.REDUCE_SCATTER_BLOCK,
            send,
            sendOffset,
            recv,
            recvOffset,
            recvCount,
            datatype,
            op,
            true,
            0,
        )

    /** [startReduceScatterBlock] with a user reduction. */
    public fun startReduceScatterBlock(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        regionReduce(
            CollectiveOp.REDUCE_SCATTER_BLOCK,
            send,
            sendOffset,
            recv,
            recvOffset,
            recvCount,
            datatype,
            op,
            op.isCommutative(),
            0,
        )

    /**
     * `MPI_Reduce_scatter` on regions: reduces `recvCounts.sum()` elements of [send] (null: in place, from [recv]);
     * rank i's [recv] gets the `recvCounts[i]` elements after the blocks of the ranks before it.
     */
    public fun startReduceScatter(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest = regionReduceScatter(send, sendOffset, recv, recvOffset, recvCounts, datatype, op, true)

    /** [startReduceScatter] with a user reduction. */
    public fun startReduceScatter(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        regionReduceScatter(send, sendOffset, recv, recvOffset, recvCounts, datatype, op, op.isCommutative())

    /**
     * Reduce-scatter with unequal counts: the whole vector reduced on the staged host buffer (the host allreduce, so
     * every rank holds the sum), of which this rank's block is copied back; equal counts are the block form.
     */
    private fun regionReduceScatter(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        datatype: Datatype,
        op: Any,
        commutative: Boolean,
    ): CollectiveRequest {
        if (recvCounts.size != group.size)
            throw FabricException.invalid(
                "group ${group.contextId}: reduce_scatter: recvCounts needs ${group.size} entries (one per rank), " +
                    "not ${recvCounts.size}"
            )
        group.checkVector("recvCounts", recvCounts, IntArray(group.size))
        var before = 0
        for (i in 0 until group.rank) before += recvCounts[i]
        val total = recvCounts.sum()
        val n = group.regions.bytes("reduce_scatter", total, datatype, 2)
        val at = group.regions.bytes("reduce_scatter", before, datatype)
        val mine = group.regions.bytes("reduce_scatter", recvCounts[group.rank], datatype)
        val input = send ?: recv
        val from = if (send != null) sendOffset else recvOffset
        return group.regions.start("reduce_scatter", input, from, n, recv, recvOffset, n + at, mine) { h ->
            group.reduceLike(CollectiveOp.ALLREDUCE, h, 0, h, n, total, datatype, op, commutative, 0)
        }
    }

    /**
     * The one region form of the reductions: the input ([send], or in place [recv]) staged to a host buffer, the host
     * reduction ([reduceLike]) started on it, and the result copied back where this rank has one: [recv], only at the
     * root for a reduce, not at rank 0 for an exscan.
     */
    private fun regionReduce(
        kind: CollectiveOp,
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        op: Any,
        commutative: Boolean,
        root: Int,
    ): CollectiveRequest {
        val name = kind.name.lowercase()
        val scatter = kind == CollectiveOp.REDUCE_SCATTER_BLOCK
        val n = group.regions.bytes(name, count, datatype, if (scatter) group.size + 1 else 2)
        val inBytes = if (scatter) n * group.size else n
        val input =
            send
                ?: recv
                ?: throw FabricException.invalid(
                    "group ${group.contextId}: $name: send and recv are both null; give the input"
                )
        val out =
            when (kind) {
                CollectiveOp.REDUCE -> recv.takeIf { group.rank == root }
                CollectiveOp.EXSCAN -> recv.takeIf { group.rank != 0 }
                else -> recv
            }
        val at = if (send != null) sendOffset else recvOffset
        return group.regions.start(name, input, at, inBytes, out, recvOffset, inBytes, n) { h ->
            group.reduceLike(kind, h, 0, h, inBytes, count, datatype, op, commutative, root)
        }
    }

    /** Broadcasts [count] elements of [region] at [offset] from [root] (its region is read, the others' written). */
    public fun startBroadcast(
        region: MemoryRegion,
        offset: Long,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        val n = group.regions.bytes("broadcast", count, datatype)
        val mine = group.rank == root
        return group.regions.start(
            "broadcast",
            region.takeIf { mine },
            offset,
            n,
            region.takeIf { !mine },
            offset,
            0,
            n,
        ) { h ->
            group.startBroadcast(h, 0, count, datatype, root)
        }
    }

    /** [startBroadcast] and wait. */
    public fun broadcast(region: MemoryRegion, offset: Long, count: Int, datatype: Datatype, root: Int): Unit =
        startBroadcast(region, offset, count, datatype, root).waitFor(-1)

    /** Gathers [count] elements of every rank's [send] into every rank's [recv], in rank order. */
    public fun startAllgather(
        send: MemoryRegion,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
    ): CollectiveRequest {
        val n = group.regions.bytes("allgather", count, datatype, group.size + 1)
        return group.regions.start("allgather", send, sendOffset, n, recv, recvOffset, n, n * group.size) { h ->
            group.startAllgather(h, 0, h, n, count, datatype)
        }
    }

    /** [startAllgather] and wait. */
    public fun allgather(
        send: MemoryRegion,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
    ): Unit = startAllgather(send, sendOffset, recv, recvOffset, count, datatype).waitFor(-1)

    /** Gathers [count] elements of every rank's [send] into [root]'s [recv] (null elsewhere is fine), in rank order. */
    public fun startGather(
        send: MemoryRegion,
        sendOffset: Long,
        recv: MemoryRegion?,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        val n = group.regions.bytes("gather", count, datatype, group.size + 1)
        val mine = group.rank == root
        val out = recv.takeIf { mine }
        return group.regions.start(
            "gather",
            send,
            sendOffset,
            n,
            out,
            recvOffset,
            n,
            if (mine) n * group.size else 0,
        ) { h ->
            group.startGather(h, 0, if (mine) h else null, n, count, datatype, root)
        }
    }

    /** Scatters [count] elements to each rank's [recv] from block i of [root]'s [send] (null elsewhere is fine). */
    public fun startScatter(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        val n = group.regions.bytes("scatter", count, datatype, group.size + 1)
        val mine = group.rank == root
        if (mine && send == null)
            throw FabricException.invalid(
                "group ${group.contextId}: scatter at the root (rank ${group.rank}): the send region is required"
            )
        val input = send.takeIf { mine }
        val inBytes = if (mine) n * group.size else 0
        return group.regions.start("scatter", input, sendOffset, inBytes, recv, recvOffset, inBytes, n) { h ->
            group.startScatter(if (mine) h else null, 0, h, inBytes, count, datatype, root)
        }
    }

    /** Sends block j of [send] ([count] elements) to rank j, and receives rank j's into block j of [recv]. */
    public fun startAlltoall(
        send: MemoryRegion,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        count: Int,
        datatype: Datatype,
    ): CollectiveRequest {
        val n = group.regions.bytes("alltoall", count, datatype, 2 * group.size) * group.size
        return group.regions.start("alltoall", send, sendOffset, n, recv, recvOffset, n, n) { h ->
            group.startAlltoall(h, 0, h, n, count, datatype)
        }
    }

    // The `v` forms: counts and displacements in elements, as for buffers. The receive region's span is read first
    // ([RegionStaging.start]'s preload), so the gaps between displacements keep their bytes.

    /** `MPI_Allgatherv` on regions: rank i's `recvCounts[i]` elements land at `displs[i]`; null [send]: in place. */
    public fun startAllgatherv(
        send: MemoryRegion?,
        sendOffset: Long,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        displs: IntArray,
        datatype: Datatype,
    ): CollectiveRequest {
        group.checkVector("recvCounts", recvCounts, displs)
        val mine = group.regions.bytes("allgatherv", recvCounts[group.rank], datatype)
        val out = group.regions.bytes("allgatherv", group.extent(recvCounts, displs), datatype, 2)
        val inBytes = if (send != null) mine else 0
        return group.regions.start(
            "allgatherv",
            send,
            sendOffset,
            inBytes,
            recv,
            recvOffset,
            inBytes,
            out,
            preload = true,
        ) { h ->
            group.startAllgatherv(if (send != null) h else null, 0, h, inBytes, recvCounts, displs, datatype)
        }
    }

    /** `MPI_Gatherv` on regions: [root]'s [recv] gets rank i's [sendCount] elements at `displs[i]`. */
    public fun startGatherv(
        send: MemoryRegion?,
        sendOffset: Long,
        sendCount: Int,
        recv: MemoryRegion?,
        recvOffset: Long,
        recvCounts: IntArray?,
        displs: IntArray?,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        val mine = group.rank == root
        if (mine && (recv == null || recvCounts == null || displs == null))
            throw FabricException.invalid(
                "group ${group.contextId}: gatherv at the root (rank ${group.rank}): " +
                    "the receive region, counts and displacements are required"
            )
        if (mine) group.checkVector("recvCounts", recvCounts!!, displs!!)
        val inBytes = if (send != null) group.regions.bytes("gatherv", sendCount, datatype, 2) else 0
        val out = if (mine) group.regions.bytes("gatherv", group.extent(recvCounts!!, displs!!), datatype, 2) else 0
        return group.regions.start(
            "gatherv",
            send,
            sendOffset,
            inBytes,
            recv.takeIf { mine },
            recvOffset,
            inBytes,
            out,
            true,
        ) { h ->
            group.startGatherv(
                if (send != null) h else null,
                0,
                sendCount,
                if (mine) h else null,
                inBytes,
                recvCounts,
                displs,
                datatype,
                root,
            )
        }
    }

    /** `MPI_Scatterv` on regions: rank i's [recv] gets `sendCounts[i]` elements from `displs[i]` of [root]'s [send]. */
    public fun startScatterv(
        send: MemoryRegion?,
        sendOffset: Long,
        sendCounts: IntArray?,
        displs: IntArray?,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCount: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        val mine = group.rank == root
        if (mine && (send == null || sendCounts == null || displs == null))
            throw FabricException.invalid(
                "group ${group.contextId}: scatterv at the root (rank ${group.rank}): " +
                    "the send region, counts and displacements are required"
            )
        if (mine) group.checkVector("sendCounts", sendCounts!!, displs!!)
        val inBytes =
            if (mine) group.regions.bytes("scatterv", group.extent(sendCounts!!, displs!!), datatype, 2) else 0
        val out = group.regions.bytes("scatterv", recvCount, datatype, 2)
        return group.regions.start(
            "scatterv",
            send.takeIf { mine },
            sendOffset,
            inBytes,
            recv,
            recvOffset,
            inBytes,
            out,
        ) { h ->
            group.startScatterv(if (mine) h else null, 0, sendCounts, displs, h, inBytes, recvCount, datatype, root)
        }
    }

    /**
     * `MPI_Alltoallv` on regions: `sendCounts[j]` elements at `sendDispls[j]` to rank j, rank j's at `recvDispls[j]`.
     */
    public fun startAlltoallv(
        send: MemoryRegion,
        sendOffset: Long,
        sendCounts: IntArray,
        sendDispls: IntArray,
        recv: MemoryRegion,
        recvOffset: Long,
        recvCounts: IntArray,
        recvDispls: IntArray,
        datatype: Datatype,
    ): CollectiveRequest {
        group.checkVector("sendCounts", sendCounts, sendDispls)
        group.checkVector("recvCounts", recvCounts, recvDispls)
        val inBytes = group.regions.bytes("alltoallv", group.extent(sendCounts, sendDispls), datatype, 2)
        val out = group.regions.bytes("alltoallv", group.extent(recvCounts, recvDispls), datatype, 2)
        return group.regions.start(
            "alltoallv",
            send,
            sendOffset,
            inBytes,
            recv,
            recvOffset,
            inBytes,
            out,
            preload = true,
        ) { h ->
            group.startAlltoallv(h, 0, sendCounts, sendDispls, h, inBytes, recvCounts, recvDispls, datatype)
        }
    }
}

/** The one implementation of [RegionCollectives]. */
private val RegionCollectives.group: CollectiveGroup
    get() = this as CollectiveGroup
