package braid.collectives

import braid.core.AvSet
import braid.core.Endpoint
import braid.core.FabricException
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A collective group (`fid_mc` of `fi_join_collective`): the members of an [AvSet], ranked in the set's order, on one
 * [endpoint] — any provider's (shm, tcp, link). Join one with [Collectives.join] and friends.
 *
 * Every operation has a `start…` form that returns a [CollectiveRequest] (test / wait / `suspend` await / future) and a
 * blocking form. Arguments are MPI's: a buffer and a byte offset, a count of elements of a [Datatype], a built-in
 * [ReduceOp] or a [UserReduction], a root rank; counts and displacements of the `v` forms are in elements. A null send
 * buffer means in place (MPI_IN_PLACE): the input is taken from the receive buffer.
 *
 * Each call's shape (operation, algorithm, datatype, reduction, counts, root) is compiled once to a [Schedule] of
 * deferred work and cached; later calls of that shape re-arm it, wrapping its buffer views over the caller's buffers,
 * and allocate nothing. Several collectives may be in flight at once, on this group and on overlapping groups: every
 * message's tag holds the group's context id, the call's sequence number and the step (bit 63 stays clear). Members
 * must call collectives in the same order, as MPI requires.
 *
 * Closing. [close] (or [tryClose], which returns a code) frees the cached schedules and the [offload] binding's segment
 * once no collective is in flight, and refuses every collective started after it with EOPBADSTATE. A close while a
 * collective is in flight is refused with EBUSY and changes nothing (libfabric's `fi_close` of an object with
 * operations outstanding): wait for the collective, or [CollectiveRequest.cancel] it and wait for it to end, then
 * close.
 *
 * Mismatches between ranks. A rank sending more than its peer expects fails the peer's collective with ETRUNC. What
 * cannot be detected: a rank sending fewer bytes than its peer expects (the receive completes short), a different
 * datatype of the same size, a different reduction, or a different root that still pairs every send with a receive.
 */
public class CollectiveGroup
internal constructor(
    /** The endpoint the group's messages go through. */
    public val endpoint: Endpoint,
    /** The members, in rank order. */
    public val avSet: AvSet,
    private val members: LongArray,
    /** This process's rank. */
    public val rank: Int,
    /** The group's context id, agreed at the join (0 is the joins' own). */
    public val contextId: Int,
    /** How algorithms are chosen. */
    public val tuning: CollectiveTuning,
    firstSequence: Int,
) : AutoCloseable, RegionCollectives {
    /** How many members. */
    public val size: Int
        get() = members.size

    /** Whether [close] has closed it (every later collective is refused). */
    @Volatile
    public var isClosed: Boolean = false
        private set

    @get:JvmSynthetic internal val lock = Any()

    /** What a blocking call's wait drives ([JoinOptions.withProgress]); null: the domain's progress. */
    @get:JvmSynthetic @set:JvmSynthetic internal var waitProgress: java.util.function.IntSupplier? = null
    private var sequence = firstSequence
    private val cache = HashMap<ShapeKey, ArrayList<Schedule>>()
    private val probe = ShapeKey()

    /**
     * The offload provider paired with this group at the join ([JoinOptions.withOffload]), or null: the calls it takes
     * run through its shared-memory segment (and, across hosts, as hierarchical schedules), the rest through
     * [endpoint].
     */
    public var offload: OffloadBinding? = null
        @JvmSynthetic
        internal set(value) {
            field = value
            // Its calls show on the endpoint's JMX bean (OffloadCalls) until the group closes.
            if (value != null)
                braid.core.telemetry.Telemetry.addCounter(
                    endpoint,
                    braid.core.telemetry.Telemetry.OFFLOAD_CALLS,
                    this,
                    java.util.function.LongSupplier { value.offloadCalls },
                )
        }

    /** Schedules built so far (cache misses). */
    public var schedulesBuilt: Int = 0
        private set

    /** The fi_addr of rank [rank] in the endpoint's AV. */
    public fun addressOf(rank: Int): Long = members[rank]

    @JvmSynthetic
    internal fun tagBase(seq: Int): Long = (contextId.toLong() shl 40) or ((seq and 0xffff).toLong() shl 24)

    // ## Barrier, broadcast ##

    public fun startBarrier(): CollectiveRequest = barrier(false)

    public fun barrier(): Unit = barrier(true).waitFor(-1)

    private fun barrier(blocking: Boolean): CollectiveRequest =
        run(
            probe.set(CollectiveOp.BARRIER, algo(CollectiveOp.BARRIER, 0, true), null, null, 0, 0, false),
            null,
            0,
            0,
            null,
            0,
            0,
            blocking,
        )

    public fun startBroadcast(
        buffer: MutableDirectBuffer,
        offset: Int,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest = broadcast(buffer, offset, count, datatype, root, false)

    public fun broadcast(buffer: MutableDirectBuffer, offset: Int, count: Int, datatype: Datatype, root: Int): Unit =
        broadcast(buffer, offset, count, datatype, root, true).waitFor(-1)

    private fun broadcast(
        buffer: MutableDirectBuffer,
        offset: Int,
        count: Int,
        datatype: Datatype,
        root: Int,
        blocking: Boolean,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(count)
        val bytes = count * datatype.size
        return run(
            probe.set(
                CollectiveOp.BROADCAST,
                algo(CollectiveOp.BROADCAST, bytes, true),
                datatype,
                null,
                count,
                root,
                false,
            ),
            null,
            0,
            0,
            buffer,
            offset,
            bytes,
            blocking,
        )
    }

    // ## Reductions ##

    /** Reduces to [root]; [recv] matters only there (null elsewhere is fine). */
    public fun startReduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.REDUCE, send, sendOffset, recv, recvOffset, count, datatype, op, true, root)

    public fun startReduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
        root: Int,
    ): CollectiveRequest =
        reduceLike(
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

    public fun startAllreduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.ALLREDUCE, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    public fun startAllreduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        reduceLike(
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

    public fun allreduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): Unit =
        reduceLike(
                CollectiveOp.ALLREDUCE,
                send,
                sendOffset,
                recv,
                recvOffset,
                count,
                datatype,
                op,
                true,
                0,
                blocking = true,
            )
            .waitFor(-1)

    public fun allreduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): Unit =
        reduceLike(
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
                blocking = true,
            )
            .waitFor(-1)

    // ## Memory of any interface (device memory included): RegionCollectives.kt ##

    /** The staging of the region forms ([RegionCollectives]). */
    @get:JvmSynthetic internal val regions: RegionStaging by lazy { RegionStaging(this) }

    /** The staging of the region collective being started; [run] hands it to the request it starts. Under [lock]. */
    @get:JvmSynthetic @set:JvmSynthetic internal var stagedJob: RegionJob? = null

    /** Reduces to [root] and waits; [recv] matters only there (null elsewhere is fine). */
    public fun reduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): Unit =
        reduceLike(
                CollectiveOp.REDUCE,
                send,
                sendOffset,
                recv,
                recvOffset,
                count,
                datatype,
                op,
                true,
                root,
                blocking = true,
            )
            .waitFor(-1)

    public fun reduce(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
        root: Int,
    ): Unit =
        reduceLike(
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
                blocking = true,
            )
            .waitFor(-1)

    /** Reduces `size × recvCount` elements and leaves block [rank] in [recv] (`MPI_Reduce_scatter_block`). */
    public fun startReduceScatterBlock(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        recvCount: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        reduceLike(
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

    public fun startReduceScatterBlock(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        recvCount: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        reduceLike(
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

    /** Inclusive prefix reduction (`MPI_Scan`). */
    public fun startScan(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.SCAN, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    public fun startScan(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.SCAN, send, sendOffset, recv, recvOffset, count, datatype, op, op.isCommutative(), 0)

    /** Exclusive prefix reduction (`MPI_Exscan`); rank 0's [recv] is left untouched. */
    public fun startExscan(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.EXSCAN, send, sendOffset, recv, recvOffset, count, datatype, op, true, 0)

    public fun startExscan(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        reduceLike(CollectiveOp.EXSCAN, send, sendOffset, recv, recvOffset, count, datatype, op, op.isCommutative(), 0)

    @JvmSynthetic
    internal fun reduceLike(
        kind: CollectiveOp,
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        op: Any,
        commutative: Boolean,
        root: Int,
        blocking: Boolean = false,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(count)
        if (op is ReduceOp && !datatype.supports(op))
            throw FabricException.invalid(
                "$kind: $op is not defined on $datatype; MPI defines it on ${Datatype.entries.filter { it.supports(op) }.joinToString()}"
            )
        val needRecv = kind != CollectiveOp.REDUCE || rank == root
        if (needRecv && recv == null) throw FabricException.invalid("$kind on rank $rank: a receive buffer is required")
        if (send == null && !needRecv)
            throw FabricException.invalid("$kind on rank $rank: in place (a null send buffer) only at the root")
        val bytes = count * datatype.size
        val total = if (kind == CollectiveOp.REDUCE_SCATTER_BLOCK) bytes * size else bytes
        val algorithm = algo(kind, total, commutative)
        val key = probe.set(kind, algorithm, datatype, op, count, root, send == null)
        val recvBytes = if (needRecv) bytes else 0
        return run(
            key,
            send,
            sendOffset,
            if (send == null) 0 else total,
            if (needRecv) recv else null,
            recvOffset,
            if (kind == CollectiveOp.REDUCE_SCATTER_BLOCK && send == null) total else recvBytes,
            blocking,
        )
    }

    // ## Gather, scatter, allgather, alltoall ##

    public fun startAllgather(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
    ): CollectiveRequest {
        checkCount(count)
        val bytes = count * datatype.size
        return run(
            probe.set(
                CollectiveOp.ALLGATHER,
                algo(CollectiveOp.ALLGATHER, bytes * size, true),
                datatype,
                null,
                count,
                0,
                send == null,
            ),
            send,
            sendOffset,
            if (send == null) 0 else bytes,
            recv,
            recvOffset,
            bytes * size,
        )
    }

    /** `MPI_Allgatherv`: rank i's `recvCounts[i]` elements land at `displs[i]`. */
    public fun startAllgatherv(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        recvCounts: IntArray,
        displs: IntArray,
        datatype: Datatype,
    ): CollectiveRequest {
        checkVector("recvCounts", recvCounts, displs)
        val es = datatype.size
        return run(
            probe.set(
                CollectiveOp.ALLGATHERV,
                CollectiveAlgorithm.RING,
                datatype,
                null,
                0,
                0,
                send == null,
                recvCounts,
                displs,
            ),
            send,
            sendOffset,
            if (send == null) 0 else recvCounts[rank] * es,
            recv,
            recvOffset,
            extent(recvCounts, displs) * es,
        )
    }

    public fun startGather(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(count)
        val counts = IntArray(size) { count }
        val displs = IntArray(size) { it * count }
        return gatherv(
            CollectiveOp.GATHER,
            send,
            sendOffset,
            count,
            recv,
            recvOffset,
            if (rank == root) counts else null,
            if (rank == root) displs else null,
            datatype,
            root,
        )
    }

    public fun startGatherv(
        send: DirectBuffer?,
        sendOffset: Int,
        sendCount: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        recvCounts: IntArray?,
        displs: IntArray?,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        gatherv(CollectiveOp.GATHERV, send, sendOffset, sendCount, recv, recvOffset, recvCounts, displs, datatype, root)

    private fun gatherv(
        kind: CollectiveOp,
        send: DirectBuffer?,
        sendOffset: Int,
        sendCount: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        recvCounts: IntArray?,
        displs: IntArray?,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(sendCount)
        val es = datatype.size
        if (rank == root) {
            if (recv == null || recvCounts == null || displs == null)
                throw FabricException.invalid(
                    "$kind at the root (rank $rank): the receive buffer, counts and displacements are required"
                )
            checkVector("recvCounts", recvCounts, displs)
            if (send == null) {
                return run(
                    probe.set(
                        kind,
                        CollectiveAlgorithm.LINEAR,
                        datatype,
                        null,
                        sendCount,
                        root,
                        true,
                        recvCounts,
                        displs,
                    ),
                    null,
                    0,
                    0,
                    recv,
                    recvOffset,
                    extent(recvCounts, displs) * es,
                )
            }
            return run(
                probe.set(kind, CollectiveAlgorithm.LINEAR, datatype, null, sendCount, root, false, recvCounts, displs),
                send,
                sendOffset,
                sendCount * es,
                recv,
                recvOffset,
                extent(recvCounts, displs) * es,
            )
        }
        if (send == null)
            throw FabricException.invalid("$kind on rank $rank: a send buffer is required (in place only at the root)")
        return run(
            probe.set(kind, CollectiveAlgorithm.LINEAR, datatype, null, sendCount, root, false),
            send,
            sendOffset,
            sendCount * es,
            null,
            0,
            0,
        )
    }

    public fun startScatter(
        send: DirectBuffer?,
        sendOffset: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(count)
        val counts = IntArray(size) { count }
        val displs = IntArray(size) { it * count }
        return scatterv(
            CollectiveOp.SCATTER,
            send,
            sendOffset,
            if (rank == root) counts else null,
            if (rank == root) displs else null,
            recv,
            recvOffset,
            count,
            datatype,
            root,
        )
    }

    public fun startScatterv(
        send: DirectBuffer?,
        sendOffset: Int,
        sendCounts: IntArray?,
        displs: IntArray?,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        recvCount: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        scatterv(
            CollectiveOp.SCATTERV,
            send,
            sendOffset,
            sendCounts,
            displs,
            recv,
            recvOffset,
            recvCount,
            datatype,
            root,
        )

    private fun scatterv(
        kind: CollectiveOp,
        send: DirectBuffer?,
        sendOffset: Int,
        sendCounts: IntArray?,
        displs: IntArray?,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        recvCount: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest {
        checkRoot(root)
        checkCount(recvCount)
        val es = datatype.size
        if (rank == root) {
            if (send == null || sendCounts == null || displs == null)
                throw FabricException.invalid(
                    "$kind at the root (rank $rank): the send buffer, counts and displacements are required"
                )
            checkVector("sendCounts", sendCounts, displs)
            return run(
                probe.set(
                    kind,
                    CollectiveAlgorithm.LINEAR,
                    datatype,
                    null,
                    recvCount,
                    root,
                    recv == null,
                    sendCounts,
                    displs,
                ),
                send,
                sendOffset,
                extent(sendCounts, displs) * es,
                recv,
                recvOffset,
                if (recv == null) 0 else recvCount * es,
            )
        }
        if (recv == null) throw FabricException.invalid("$kind on rank $rank: a receive buffer is required")
        return run(
            probe.set(kind, CollectiveAlgorithm.LINEAR, datatype, null, recvCount, root, false),
            null,
            0,
            0,
            recv,
            recvOffset,
            recvCount * es,
        )
    }

    public fun startAlltoall(
        send: DirectBuffer,
        sendOffset: Int,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        count: Int,
        datatype: Datatype,
    ): CollectiveRequest {
        checkCount(count)
        val bytes = count * datatype.size * size
        return run(
            probe.set(CollectiveOp.ALLTOALL, CollectiveAlgorithm.PAIRWISE, datatype, null, count, 0, false),
            send,
            sendOffset,
            bytes,
            recv,
            recvOffset,
            bytes,
        )
    }

    public fun startAlltoallv(
        send: DirectBuffer,
        sendOffset: Int,
        sendCounts: IntArray,
        sendDispls: IntArray,
        recv: MutableDirectBuffer,
        recvOffset: Int,
        recvCounts: IntArray,
        recvDispls: IntArray,
        datatype: Datatype,
    ): CollectiveRequest {
        checkVector("sendCounts", sendCounts, sendDispls)
        checkVector("recvCounts", recvCounts, recvDispls)
        val es = datatype.size
        return run(
            probe.set(
                CollectiveOp.ALLTOALLV,
                CollectiveAlgorithm.PAIRWISE,
                datatype,
                null,
                0,
                0,
                false,
                sendCounts,
                sendDispls,
                recvCounts,
                recvDispls,
            ),
            send,
            sendOffset,
            extent(sendCounts, sendDispls) * es,
            recv,
            recvOffset,
            extent(recvCounts, recvDispls) * es,
        )
    }

    // ## ByteBuffer forms (for Java callers) ##
    //
    // Each takes heap or direct ByteBuffers where the forms above take an Agrona buffer and an
    // offset: the data starts at the buffer's position, and the elements must fit between its
    // position and limit; neither moves. A null send buffer means in place, as above. A buffer
    // written into must not be read-only; a read-only heap buffer cannot be read without a copy
    // and is refused (a read-only direct one may be sent). Nothing is allocated per call.

    /** [startBroadcast] over [buffer] from its position. */
    public fun startBroadcast(buffer: ByteBuffer, count: Int, datatype: Datatype, root: Int): CollectiveRequest =
        synchronized(lock) { startBroadcast(recvView(buffer, "broadcast")!!, 0, count, datatype, root) }

    /** [broadcast] over [buffer] from its position. */
    public fun broadcast(buffer: ByteBuffer, count: Int, datatype: Datatype, root: Int): Unit =
        synchronized(lock) { broadcast(recvView(buffer, "broadcast")!!, 0, count, datatype, root, true) }.waitFor(-1)

    /** [startReduce] over ByteBuffers from their positions. */
    public fun startReduce(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): CollectiveRequest = reduceBytes(CollectiveOp.REDUCE, send, recv, count, datatype, op, true, root, false)

    /** [startReduce] with a user reduction over ByteBuffers from their positions. */
    public fun startReduce(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
        root: Int,
    ): CollectiveRequest =
        reduceBytes(CollectiveOp.REDUCE, send, recv, count, datatype, op, op.isCommutative(), root, false)

    /** [startAllreduce] over ByteBuffers from their positions. */
    public fun startAllreduce(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest = reduceBytes(CollectiveOp.ALLREDUCE, send, recv, count, datatype, op, true, 0, false)

    /** [startAllreduce] with a user reduction over ByteBuffers from their positions. */
    public fun startAllreduce(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        reduceBytes(CollectiveOp.ALLREDUCE, send, recv, count, datatype, op, op.isCommutative(), 0, false)

    /** [allreduce] over ByteBuffers from their positions. */
    public fun allreduce(send: ByteBuffer?, recv: ByteBuffer, count: Int, datatype: Datatype, op: ReduceOp): Unit =
        reduceBytes(CollectiveOp.ALLREDUCE, send, recv, count, datatype, op, true, 0, true).waitFor(-1)

    /** [allreduce] with a user reduction over ByteBuffers from their positions. */
    public fun allreduce(send: ByteBuffer?, recv: ByteBuffer, count: Int, datatype: Datatype, op: UserReduction): Unit =
        reduceBytes(CollectiveOp.ALLREDUCE, send, recv, count, datatype, op, op.isCommutative(), 0, true).waitFor(-1)

    /** [reduce] over ByteBuffers from their positions. */
    public fun reduce(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
        root: Int,
    ): Unit = reduceBytes(CollectiveOp.REDUCE, send, recv, count, datatype, op, true, root, true).waitFor(-1)

    /** [reduce] with a user reduction over ByteBuffers from their positions. */
    public fun reduce(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
        root: Int,
    ): Unit =
        reduceBytes(CollectiveOp.REDUCE, send, recv, count, datatype, op, op.isCommutative(), root, true).waitFor(-1)

    /**
     * A reduce or allreduce over views of the ByteBuffers, wrapped and started under the lock (the views are the
     * group's).
     */
    private fun reduceBytes(
        kind: CollectiveOp,
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        op: Any,
        commutative: Boolean,
        root: Int,
        blocking: Boolean,
    ): CollectiveRequest {
        val name =
            if (kind == CollectiveOp.REDUCE) "reduce" else "allreduce" // a literal: a warm call allocates nothing
        return synchronized(lock) {
            reduceLike(
                kind,
                sendView(send, name),
                0,
                recvView(recv, name),
                0,
                count,
                datatype,
                op,
                commutative,
                root,
                blocking,
            )
        }
    }

    /** [startReduceScatterBlock] over ByteBuffers from their positions. */
    public fun startReduceScatterBlock(
        send: ByteBuffer?,
        recv: ByteBuffer,
        recvCount: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        synchronized(lock) {
            startReduceScatterBlock(
                sendView(send, "reduce-scatter"),
                0,
                recvView(recv, "reduce-scatter")!!,
                0,
                recvCount,
                datatype,
                op,
            )
        }

    /** [startReduceScatterBlock] with a user reduction over ByteBuffers from their positions. */
    public fun startReduceScatterBlock(
        send: ByteBuffer?,
        recv: ByteBuffer,
        recvCount: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        synchronized(lock) {
            startReduceScatterBlock(
                sendView(send, "reduce-scatter"),
                0,
                recvView(recv, "reduce-scatter")!!,
                0,
                recvCount,
                datatype,
                op,
            )
        }

    /** [startScan] over ByteBuffers from their positions. */
    public fun startScan(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        synchronized(lock) { startScan(sendView(send, "scan"), 0, recvView(recv, "scan")!!, 0, count, datatype, op) }

    /** [startScan] with a user reduction over ByteBuffers from their positions. */
    public fun startScan(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        synchronized(lock) { startScan(sendView(send, "scan"), 0, recvView(recv, "scan")!!, 0, count, datatype, op) }

    /** [startExscan] over ByteBuffers from their positions. */
    public fun startExscan(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: ReduceOp,
    ): CollectiveRequest =
        synchronized(lock) {
            startExscan(sendView(send, "exscan"), 0, recvView(recv, "exscan")!!, 0, count, datatype, op)
        }

    /** [startExscan] with a user reduction over ByteBuffers from their positions. */
    public fun startExscan(
        send: ByteBuffer?,
        recv: ByteBuffer,
        count: Int,
        datatype: Datatype,
        op: UserReduction,
    ): CollectiveRequest =
        synchronized(lock) {
            startExscan(sendView(send, "exscan"), 0, recvView(recv, "exscan")!!, 0, count, datatype, op)
        }

    /** [startAllgather] over ByteBuffers from their positions. */
    public fun startAllgather(send: ByteBuffer?, recv: ByteBuffer, count: Int, datatype: Datatype): CollectiveRequest =
        synchronized(lock) {
            startAllgather(sendView(send, "allgather"), 0, recvView(recv, "allgather")!!, 0, count, datatype)
        }

    /** [startAllgatherv] over ByteBuffers from their positions. */
    public fun startAllgatherv(
        send: ByteBuffer?,
        recv: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        datatype: Datatype,
    ): CollectiveRequest =
        synchronized(lock) {
            startAllgatherv(
                sendView(send, "allgatherv"),
                0,
                recvView(recv, "allgatherv")!!,
                0,
                recvCounts,
                displs,
                datatype,
            )
        }

    /** [startGather] over ByteBuffers from their positions. */
    public fun startGather(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        synchronized(lock) {
            startGather(sendView(send, "gather"), 0, recvView(recv, "gather"), 0, count, datatype, root)
        }

    /** [startGatherv] over ByteBuffers from their positions. */
    public fun startGatherv(
        send: ByteBuffer?,
        sendCount: Int,
        recv: ByteBuffer?,
        recvCounts: IntArray?,
        displs: IntArray?,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        synchronized(lock) {
            startGatherv(
                sendView(send, "gatherv"),
                0,
                sendCount,
                recvView(recv, "gatherv"),
                0,
                recvCounts,
                displs,
                datatype,
                root,
            )
        }

    /** [startScatter] over ByteBuffers from their positions. */
    public fun startScatter(
        send: ByteBuffer?,
        recv: ByteBuffer?,
        count: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        synchronized(lock) {
            startScatter(sendView(send, "scatter"), 0, recvView(recv, "scatter"), 0, count, datatype, root)
        }

    /** [startScatterv] over ByteBuffers from their positions. */
    public fun startScatterv(
        send: ByteBuffer?,
        sendCounts: IntArray?,
        displs: IntArray?,
        recv: ByteBuffer?,
        recvCount: Int,
        datatype: Datatype,
        root: Int,
    ): CollectiveRequest =
        synchronized(lock) {
            startScatterv(
                sendView(send, "scatterv"),
                0,
                sendCounts,
                displs,
                recvView(recv, "scatterv"),
                0,
                recvCount,
                datatype,
                root,
            )
        }

    /** [startAlltoall] over ByteBuffers from their positions. */
    public fun startAlltoall(send: ByteBuffer, recv: ByteBuffer, count: Int, datatype: Datatype): CollectiveRequest =
        synchronized(lock) {
            startAlltoall(sendView(send, "alltoall")!!, 0, recvView(recv, "alltoall")!!, 0, count, datatype)
        }

    /** [startAlltoallv] over ByteBuffers from their positions. */
    public fun startAlltoallv(
        send: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        recv: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        datatype: Datatype,
    ): CollectiveRequest =
        synchronized(lock) {
            startAlltoallv(
                sendView(send, "alltoallv")!!,
                0,
                sendCounts,
                sendDispls,
                recvView(recv, "alltoallv")!!,
                0,
                recvCounts,
                recvDispls,
                datatype,
            )
        }

    // Views of the ByteBuffers of the call under way, used under [lock] only until its schedule has wrapped its own.
    private val byteSend = UnsafeBuffer(0L, 0)
    private val byteRecv = UnsafeBuffer(0L, 0)

    private fun sendView(b: ByteBuffer?, op: String): DirectBuffer? =
        if (b == null) null else wrapBytes(byteSend, b, false, "send", op)

    private fun recvView(b: ByteBuffer?, op: String): MutableDirectBuffer? =
        if (b == null) null else wrapBytes(byteRecv, b, true, "receive", op)

    private fun wrapBytes(view: UnsafeBuffer, b: ByteBuffer, written: Boolean, role: String, op: String): UnsafeBuffer {
        if (written && b.isReadOnly)
            throw FabricException.invalid(
                "$op on rank $rank: the $role ByteBuffer is read-only; the result cannot be written into it"
            )
        if (b.isReadOnly && !b.isDirect)
            throw FabricException.invalid(
                "$op on rank $rank: the $role ByteBuffer is a read-only heap buffer, which cannot be read without a copy; pass a writable or a direct one"
            )
        view.wrap(b, b.position(), b.remaining())
        return view
    }

    // ## Closing ##

    /**
     * Closes the group (`fi_close` of its `fid_mc`) if no collective of it is in flight: frees its cached schedules,
     * unmaps and releases its [offload] binding's segment, and from then on refuses every collective (EOPBADSTATE,
     * naming the group). Returns 0, or `-EBUSY` and leaves the group open and usable while a collective started on it
     * has not ended — libfabric's rule for closing an object with operations outstanding. Wait for those (or
     * [CollectiveRequest.cancel] them and wait for the cancellation) and call again. A request that ended before the
     * close stays readable. Closing a closed group returns 0. Never throws.
     *
     * Every member closes its own group; closing on one member does not end the others' (their next collective with
     * this member would fail or hang as with any member that left), so members close after their last common
     * collective, as `MPI_Comm_free` requires.
     */
    public fun tryClose(): Int {
        val binding: OffloadBinding?
        synchronized(lock) {
            if (isClosed) return 0
            for (list in cache.values) for (s in list) if (s.busy()) return -braid.core.Errno.EBUSY
            isClosed = true
            cache.clear()
            binding = offload
        }
        binding?.close()
        if (binding != null) braid.core.telemetry.Telemetry.removeCounters(endpoint, this)
        return 0
    }

    /**
     * [tryClose], throwing [FabricException] with EBUSY, naming the collectives in flight, if it cannot close yet. A
     * Java try-with-resources closes the group this way.
     */
    @Throws(FabricException::class)
    override fun close() {
        if (tryClose() == 0) return
        val busy = synchronized(lock) { cache.values.flatten().filter { it.busy() }.map { it.name } }
        throw FabricException(
            braid.core.Errno.EBUSY,
            "$this: ${busy.size} collective(s) still in flight (${busy.joinToString()}); wait for them to end, or cancel them and wait, then close again",
        )
    }

    // ## Running a call ##

    /**
     * Starts a call of [key] over the caller's buffers. A [blocking] call (the caller waits on the request at once,
     * outside the group's lock) that the [offload] carries in one shared-memory phase queues no deferred work: the wait
     * carries the phase itself.
     */
    private fun run(
        key: ShapeKey,
        send: DirectBuffer?,
        sendOffset: Int,
        sendBytes: Int,
        recv: MutableDirectBuffer?,
        recvOffset: Int,
        recvBytes: Int,
        blocking: Boolean = false,
    ): CollectiveRequest {
        if (send != null) checkRange("send", send.capacity(), sendOffset, sendBytes)
        if (recv != null) checkRange("receive", recv.capacity(), recvOffset, recvBytes)
        synchronized(lock) {
            if (isClosed)
                throw FabricException(
                    braid.core.Errno.EOPBADSTATE,
                    "$this is closed; a ${key.op.name.lowercase()} cannot start on it (join a new group)",
                )
            val s = scheduleFor(key)
            s.request.regionJob = stagedJob.also { stagedJob = null }
            if (send != null && sendBytes > 0) s.send.wrap(send, sendOffset, sendBytes) else s.send.wrap(EMPTY, 0, 0)
            if (recv != null && recvBytes > 0) s.recv.wrap(recv, recvOffset, recvBytes) else s.recv.wrap(EMPTY, 0, 0)
            val inline = offload?.starting(s, blocking)
            if (inline != null) {
                sequence++
                s.request.armInline(inline)
            } else s.startRun(sequence++)
            return s.request
        }
    }

    private fun scheduleFor(key: ShapeKey): Schedule {
        var list = cache[key]
        if (list != null) {
            for (i in list.indices) if (list[i].reusable()) return list[i]
        } else {
            list = ArrayList(1)
            cache[key.copy()] = list
        }
        val s = offload?.compile(key) ?: ScheduleCompiler.compile(this, key)
        schedulesBuilt++
        list += s
        return s
    }

    /** Builds (and does not run) the schedule of [key]; for measuring and tests. */
    @JvmSynthetic internal fun compile(key: ShapeKey): Schedule = ScheduleCompiler.compile(this, key)

    private fun algo(op: CollectiveOp, bytes: Int, commutative: Boolean): CollectiveAlgorithm =
        ScheduleCompiler.choose(this, op, bytes, commutative)

    @JvmSynthetic
    internal fun kernelFor(key: ShapeKey, maxCount: Int): Kernel? =
        when (val r = key.reduction) {
            is ReduceOp -> Kernels.builtin(key.datatype!!, r)
            is UserReduction -> UserKernel(r, key.datatype!!, maxCount)
            else -> null
        }

    private fun checkRoot(root: Int) {
        if (root !in 0 until size) throw FabricException.invalid("root $root is not a rank of this group of $size")
    }

    private fun checkCount(count: Int) {
        if (count < 0) throw FabricException.invalid("count $count must be ≥ 0")
    }

    @JvmSynthetic
    internal fun checkVector(name: String, counts: IntArray, displs: IntArray) {
        if (counts.size != size || displs.size != size)
            throw FabricException.invalid(
                "$name and displacements need $size entries (one per rank), not ${counts.size} and ${displs.size}"
            )
        for (i in 0 until size) if (counts[i] < 0 || displs[i] < 0)
            throw FabricException.invalid("$name[$i] = ${counts[i]}, displacement ${displs[i]}: both must be ≥ 0")
    }

    @JvmSynthetic
    internal fun extent(counts: IntArray, displs: IntArray): Int {
        var m = 0
        for (i in counts.indices) m = maxOf(m, displs[i] + counts[i])
        return m
    }

    private fun checkRange(what: String, capacity: Int, offset: Int, bytes: Int) {
        if (offset < 0 || bytes < 0 || offset.toLong() + bytes > capacity) {
            throw FabricException.invalid(
                "rank $rank: the $what buffer of $capacity bytes does not hold [$offset, ${offset.toLong() + bytes}); pass a larger buffer or a smaller count"
            )
        }
    }

    override fun toString(): String = "CollectiveGroup(rank $rank of $size, context $contextId, $endpoint)"

    private companion object {
        val EMPTY = org.agrona.concurrent.UnsafeBuffer(ByteArray(0))
    }
}
