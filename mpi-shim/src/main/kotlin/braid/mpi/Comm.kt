package braid.mpi

import braid.core.MemoryRegion
import braid.core.OpFlags
import java.nio.ByteBuffer

/**
 * A communicator (`MPI_Comm`): a context on this process's one endpoint, a local group, and the processes
 * point-to-point calls address ([Intracomm]: the group itself; [Intercomm]: the remote group). This class holds
 * point-to-point communication and what every communicator has; construction lives in the subclasses.
 *
 * Buffers: a call's data starts at byte 0 of its `ByteBuffer` (heap or direct; slice it to start elsewhere) and spans
 * `count` elements of the datatype. A contiguous layout is sent and received in place; any other is packed into a
 * staging copy. Registered memory regions of any interface (device memory included) are buffers too: [CommRegions].
 *
 * Modes: standard ([send]), synchronous ([ssend]: completes only once a receive has matched — rail-core's
 * delivery-complete), ready ([rsend]: as standard, which the standard permits) and buffered ([bsend]: copied into the
 * attached buffer, completes at once). Messages between one pair of processes on one communicator are non-overtaking,
 * whatever their sizes.
 */
public sealed class Comm(
    /** The process this communicator belongs to. */
    public val mpi: Mpi,
    @get:JvmSynthetic internal val context: Int,
    @get:JvmSynthetic internal val localGroup: Group,
    /** Process-table indices of the ranks point-to-point calls name. */
    @get:JvmSynthetic internal val targets: IntArray,
    private var name: String,
) : CommRegions {
    /** This process's rank in the (local) group. */
    public val rank: Int = localGroup.rank

    /** The number of processes in the (local) group. */
    public val size: Int
        get() = localGroup.size

    @get:JvmSynthetic internal val destAddr: LongArray = LongArray(targets.size) { mpi.processes.fiAddr(targets[it]) }

    @get:JvmSynthetic @set:JvmSynthetic @Volatile internal var freed: Boolean = false
    /** The collectives groups made for this communicator ([CommCollectives]); [free] closes them. */
    @get:JvmSynthetic internal val collGroups: MutableList<braid.collectives.CollectiveGroup> = ArrayList(2)
    @Volatile private var handler: ErrorHandler = ErrorHandler.ERRORS_ARE_FATAL

    public fun getName(): String = name

    public fun setName(name: String) {
        this.name = name
    }

    /** `MPI_Comm_group`: the (local) group. */
    public fun getGroup(): Group = localGroup

    /** Whether this is an intercommunicator (`MPI_Comm_test_inter`). */
    public abstract val isInter: Boolean

    /** `MPI_Comm_set_errhandler`. */
    public fun setErrhandler(h: ErrorHandler) {
        handler = h
    }

    /** `MPI_Comm_get_errhandler`. */
    public fun getErrhandler(): ErrorHandler = handler

    /** `MPI_Comm_call_errhandler`: applies this communicator's handler to [code]. */
    public fun callErrhandler(code: Int) {
        throw raise(MPIException(code, "$name: user-raised error ${ErrorClass.errorString(code)}"))
    }

    /**
     * `MPI_Comm_free`: lets the communicator's collectives in flight end, closes its collectives groups (their
     * schedules and offload segments), releases the context id; any later call on this communicator raises
     * `MPI_ERR_COMM`.
     */
    public open fun free() {
        guard { checkUsable("MPI_Comm_free") }
        if (this === mpi.world || this === mpi.self)
            throw raise(MPIException.of(ErrorClass.ERR_COMM, "MPI_Comm_free", "$name cannot be freed"))
        guard { Attributes.deleteAll(this) }
        for (g in collGroups) mpi.progressUntil {
            g.tryClose() == 0
        } // collectives in flight end first, as MPI_Comm_free lets them
        freed = true
        mpi.contexts.release(context)
    }

    /**
     * `MPI_Comm_get_attr`: a predefined key's value (an `Int`), or the value set under a user keyval ([createKeyval]);
     * null when the keyval has no value here.
     */
    public fun getAttr(key: Int): Any? =
        when (key) {
            TAG_UB -> Mpi.TAG_UB
            UNIVERSE_SIZE -> mpi.bootstrap.universeSize
            APPNUM -> mpi.bootstrap.appnum
            WTIME_IS_GLOBAL -> 0
            HOST -> Mpi.PROC_NULL
            IO -> Mpi.ANY_SOURCE
            LASTUSEDCODE -> ErrorClass.lastUsedCode()
            else ->
                if (Attributes.isUser(key)) guard { Attributes.get(this, key)?.value }
                else
                    throw raise(
                        MPIException.of(
                            ErrorClass.ERR_ARG,
                            "MPI_Comm_get_attr",
                            "key $key is not a predefined attribute (TAG_UB, UNIVERSE_SIZE, APPNUM, WTIME_IS_GLOBAL, HOST, IO, LASTUSEDCODE) nor a keyval from createKeyval",
                        )
                    )
        }

    /**
     * `MPI_Comm_set_attr`: [value] under user keyval [keyval]; a value already there is deleted first (its delete
     * callback runs).
     */
    public fun setAttr(keyval: Int, value: Any?): Unit = guard {
        checkUsable("MPI_Comm_set_attr")
        Attributes.set(this, keyval, value)
    }

    /** `MPI_Comm_delete_attr`: runs the keyval's delete callback and removes the value. */
    public fun deleteAttr(keyval: Int): Unit = guard {
        checkUsable("MPI_Comm_delete_attr")
        Attributes.delete(this, keyval)
    }

    @Volatile private var hints: Info = Info()

    /** `MPI_Comm_set_info`: hints for this communicator (kept, none read today). */
    public fun setInfo(info: Info) {
        hints = info.dup()
    }

    /** `MPI_Comm_get_info`: a copy of the hints set. */
    public fun getInfo(): Info = hints.dup()

    /**
     * `MPI_Comm_disconnect`: waits until the communication this process started on the communicator has completed on
     * both sides (a barrier over it: every member calls this), then frees it. For the communicators of [accept] and
     * [connect] between jobs, as MPI means it.
     */
    public fun disconnect() {
        guard { checkUsable("MPI_Comm_disconnect") }
        barrier()
        free()
    }

    /** `MPI_Pack` on this communicator: [Datatype.pack] (every member packs alike: one layout). */
    public fun pack(
        inbuf: ByteBuffer,
        offset: Int,
        count: Int,
        type: Datatype,
        outbuf: ByteBuffer,
        position: Int,
    ): Int = guard { type.pack(inbuf, offset, count, outbuf, position) }

    /** `MPI_Unpack` on this communicator: [Datatype.unpack]. */
    public fun unpack(
        inbuf: ByteBuffer,
        position: Int,
        outbuf: ByteBuffer,
        offset: Int,
        count: Int,
        type: Datatype,
    ): Int = guard { type.unpack(inbuf, position, outbuf, offset, count) }

    /**
     * `MPI_Pack` from a registered region of memory of any interface (device memory included): the bytes [count]
     * elements of [type] span at [offset] of [inbuf] are copied to host memory through the endpoint's copy service (its
     * overrides, else the built-in copy), then packed into [outbuf] at [position]; returns the position after them. A
     * failed copy raises `MPI_ERR_OTHER` with its errno.
     */
    public fun pack(
        inbuf: MemoryRegion,
        offset: Long,
        count: Int,
        type: Datatype,
        outbuf: ByteBuffer,
        position: Int,
    ): Int = guard { regionPack.pack("MPI_Pack", type, inbuf, offset, count, outbuf, position) }

    /**
     * `MPI_Unpack` into a registered region of memory of any interface: the bytes the elements span are read from the
     * region, the packed bytes spread over them host-side, and the span copied back (the gaps keep their bytes).
     */
    public fun unpack(
        inbuf: ByteBuffer,
        position: Int,
        outbuf: MemoryRegion,
        offset: Long,
        count: Int,
        type: Datatype,
    ): Int = guard { regionPack.unpack("MPI_Unpack", type, inbuf, position, outbuf, offset, count) }

    @get:JvmSynthetic internal val regionPack by lazy { RegionPack(mpi.ep) }

    /** `MPI_Pack_size` on this communicator: [Datatype.packSize]. */
    public fun packSize(count: Int, type: Datatype): Long = guard { type.packSize(count) }

    /** The process topology made with this communicator ([Intracomm.createCart] …), or null. */
    @get:JvmSynthetic @set:JvmSynthetic @Volatile internal var topo: Topology? = null

    /** `MPI_Topo_test`: this communicator's topology, or null when it has none. */
    public fun getTopology(): Topology? = topo

    @get:JvmSynthetic internal val neighbors by lazy { NeighborCollectives(this) }

    // ## Neighbor collectives ##

    /** `MPI_Neighbor_allgather`: [sendBuf] to every destination; source j's block into block j of [recvBuf]. */
    public fun neighborAllgather(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ineighborAllgather(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_allgather`. */
    public fun ineighborAllgather(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        neighborColl("MPI_Ineighbor_allgather") { n, call ->
            n.start(call, sendBuf, recvBuf, NeighborBlocks.allgather(n, call, sendCount, sendType, recvCount, recvType))
        }

    /** `MPI_Neighbor_allgatherv`: source j's block into [recvBuf] at [displs]`[j]` extents of [recvType]. */
    public fun neighborAllgatherv(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ) {
        ineighborAllgatherv(sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_allgatherv`. */
    public fun ineighborAllgatherv(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): Request =
        neighborColl("MPI_Ineighbor_allgatherv") { n, call ->
            val blocks = NeighborBlocks.allgatherv(n, call, sendCount, sendType, recvCounts, displs, recvType)
            n.start(call, sendBuf, recvBuf, blocks)
        }

    /** `MPI_Neighbor_alltoall`: block k of [sendBuf] to destination k; source j's block into block j of [recvBuf]. */
    public fun neighborAlltoall(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ineighborAlltoall(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_alltoall`. */
    public fun ineighborAlltoall(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        neighborColl("MPI_Ineighbor_alltoall") { n, call ->
            n.start(call, sendBuf, recvBuf, NeighborBlocks.alltoall(n, call, sendCount, sendType, recvCount, recvType))
        }

    /** `MPI_Neighbor_alltoallv`: counts and displacements (in extents) per neighbor. */
    public fun neighborAlltoallv(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ) {
        ineighborAlltoallv(sendBuf, sendCounts, sendDispls, sendType, recvBuf, recvCounts, recvDispls, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ineighbor_alltoallv`. */
    public fun ineighborAlltoallv(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ): Request =
        neighborColl("MPI_Ineighbor_alltoallv") { n, call ->
            val blocks = NeighborBlocks.alltoallv(sendCounts, sendDispls, sendType, recvCounts, recvDispls, recvType)
            n.start(call, sendBuf, recvBuf, blocks)
        }

    /** `MPI_Abort` on this communicator: ends the whole job through the launcher. */
    public fun abort(errorCode: Int): Nothing = mpi.abortJob(errorCode, "MPI_Abort on $name with code $errorCode")

    override fun toString(): String = name

    // ## Point-to-point: blocking ##

    // A blocking call's request never reaches the caller, so it goes back to the pool once
    // waited for: a warm blocking send or receive of a contiguous type allocates nothing.

    /** `MPI_Send`. */
    public fun send(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int) {
        waitAndRecycle(startSend("MPI_Send", buf, count, type, dest, tag, MODE_STANDARD), Status.IGNORED)
    }

    /** `MPI_Ssend`: returns only once the receiver has matched the message. */
    public fun ssend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int) {
        waitAndRecycle(startSend("MPI_Ssend", buf, count, type, dest, tag, MODE_SYNCHRONOUS), Status.IGNORED)
    }

    /** `MPI_Rsend` (carried as a standard send). */
    public fun rsend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int) {
        waitAndRecycle(startSend("MPI_Rsend", buf, count, type, dest, tag, MODE_READY), Status.IGNORED)
    }

    /** `MPI_Bsend`: copies into the attached buffer and returns. */
    public fun bsend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int) {
        waitAndRecycle(startSend("MPI_Bsend", buf, count, type, dest, tag, MODE_BUFFERED), Status.IGNORED)
    }

    /** `MPI_Recv`. [source] may be [Mpi.ANY_SOURCE], [tag] [Mpi.ANY_TAG]. */
    public fun recv(buf: ByteBuffer, count: Int, type: Datatype, source: Int, tag: Int): Status =
        waitAndRecycle(irecv(buf, count, type, source, tag), null)

    /** `MPI_Recv` filling the caller's [status] (reuse one: no allocation), which it returns. */
    public fun recv(buf: ByteBuffer, count: Int, type: Datatype, source: Int, tag: Int, status: Status): Status =
        waitAndRecycle(irecv(buf, count, type, source, tag), status)

    /** `MPI_Sendrecv`: the send and the receive proceed together. */
    public fun sendRecv(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        dest: Int,
        sendTag: Int,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
        source: Int,
        recvTag: Int,
    ): Status {
        val r = irecv(recvBuf, recvCount, recvType, source, recvTag)
        val s = isend(sendBuf, sendCount, sendType, dest, sendTag)
        return waitBoth(r, s)
    }

    /**
     * Waits for a sendrecv's receive [r] and send [s]; returns the receive's status (the send's error, if any, raised
     * after).
     */
    @JvmSynthetic
    internal fun waitBoth(r: Request, s: Request): Status {
        mpi.progressUntil { r.done && s.done }
        try {
            return waitAndRecycle(r, null)
        } finally {
            waitAndRecycle(s, Status.IGNORED)
        }
    }

    /** `MPI_Sendrecv_replace`: sends [buf]'s contents and receives into [buf]. */
    public fun sendRecvReplace(
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        dest: Int,
        sendTag: Int,
        source: Int,
        recvTag: Int,
    ): Status {
        val copy = guard {
            checkBuffer("MPI_Sendrecv_replace", buf, count, type, receive = false)
            val bytes = (count * type.size).toInt()
            (if (buf.isDirect) ByteBuffer.allocateDirect(bytes) else ByteBuffer.allocate(bytes)).also {
                type.packInto(buf, 0, count, it, 0)
            }
        }
        val r = irecv(buf, count, type, source, recvTag)
        val s = isend(copy, count * type.size.toInt(), Datatype.BYTE, dest, sendTag)
        return waitBoth(r, s)
    }

    // ## Point-to-point: nonblocking ##

    public fun isend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        startSend("MPI_Isend", buf, count, type, dest, tag, MODE_STANDARD)

    public fun issend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        startSend("MPI_Issend", buf, count, type, dest, tag, MODE_SYNCHRONOUS)

    public fun irsend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        startSend("MPI_Irsend", buf, count, type, dest, tag, MODE_READY)

    public fun ibsend(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Request =
        startSend("MPI_Ibsend", buf, count, type, dest, tag, MODE_BUFFERED)

    /** `MPI_Irecv`. */
    public fun irecv(buf: ByteBuffer, count: Int, type: Datatype, source: Int, tag: Int): Request = guard {
        val call = "MPI_Irecv"
        checkUsable(call)
        checkSource(call, source)
        checkTag(call, tag, receive = true)
        checkBuffer(call, buf, count, type, receive = true)
        if (source == Mpi.PROC_NULL) return@guard DoneRequest(mpi, this, Status.PROC_NULL)
        val from = if (source == Mpi.ANY_SOURCE) braid.core.FiAddr.UNSPEC else destAddr[source]
        // No early failure for a dead source: its messages that arrived before it went still match (RecvOp.post).
        val op = mpi.takeRecv().set(this, recvBits(source, tag), recvIgnore(source, tag), from)
        op.region.set(buf, count, type, packNow = false)
        mpi.submit(op)
        op
    }

    // ## Persistent requests ##

    public fun sendInit(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        persistentSend("MPI_Send_init", buf, count, type, dest, tag, MODE_STANDARD)

    public fun ssendInit(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        persistentSend("MPI_Ssend_init", buf, count, type, dest, tag, MODE_SYNCHRONOUS)

    public fun rsendInit(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        persistentSend("MPI_Rsend_init", buf, count, type, dest, tag, MODE_READY)

    public fun bsendInit(buf: ByteBuffer, count: Int, type: Datatype, dest: Int, tag: Int): Prequest =
        persistentSend("MPI_Bsend_init", buf, count, type, dest, tag, MODE_BUFFERED)

    /** `MPI_Recv_init`. */
    public fun recvInit(buf: ByteBuffer, count: Int, type: Datatype, source: Int, tag: Int): Prequest = guard {
        val call = "MPI_Recv_init"
        checkUsable(call)
        checkSource(call, source)
        checkTag(call, tag, receive = true)
        checkBuffer(call, buf, count, type, receive = true)
        Prequest(mpi, this) { irecv(buf, count, type, source, tag) }
    }

    private fun persistentSend(
        call: String,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        dest: Int,
        tag: Int,
        mode: Int,
    ): Prequest = guard {
        checkUsable(call)
        checkDest(call, dest)
        checkTag(call, tag, receive = false)
        checkBuffer(call, buf, count, type, receive = false)
        Prequest(mpi, this) { startSend(call, buf, count, type, dest, tag, mode) }
    }

    // ## Probes ##

    /** `MPI_Iprobe`: the status of a matching message that has arrived, or null. */
    public fun iprobe(source: Int, tag: Int): Status? = guard {
        val call = "MPI_Iprobe"
        checkUsable(call)
        checkSource(call, source)
        checkTag(call, tag, receive = true)
        if (source == Mpi.PROC_NULL) return@guard Status.PROC_NULL
        val p = ProbeOp(mpi, this, claim = false)
        mpi.progress()
        if (p.look(recvBits(source, tag), recvIgnore(source, tag))) p.status() else null
    }

    /** `MPI_Probe`: waits for a matching message and returns its status without receiving it. */
    public fun probe(source: Int, tag: Int): Status {
        var found: Status? = null
        mpi.lookUntil {
            found = iprobe(source, tag)
            found != null
        }
        return found!!
    }

    /** `MPI_Improbe`: a matching message, now reserved for the returned [Message], or null. */
    public fun improbe(source: Int, tag: Int): Message? = guard {
        val call = "MPI_Improbe"
        checkUsable(call)
        checkSource(call, source)
        checkTag(call, tag, receive = true)
        if (source == Mpi.PROC_NULL) return@guard Message.noProc(this)
        val p = ProbeOp(mpi, this, claim = true)
        mpi.progress()
        if (p.look(recvBits(source, tag), recvIgnore(source, tag))) Message(this, p, p.status()) else null
    }

    /** `MPI_Mprobe`: waits for a matching message and reserves it. */
    public fun mprobe(source: Int, tag: Int): Message {
        var found: Message? = null
        mpi.lookUntil {
            found = improbe(source, tag)
            found != null
        }
        return found!!
    }

    // ## Collectives (CommCollectives.kt, CommReductions.kt, IntercommCollectives.kt) ##
    //
    // Blocking forms are waited for here; a warm blocking barrier, bcast, reduce, allreduce or
    // reduce_scatter_block of a contiguous type with a built-in op allocates nothing. Buffers
    // start at byte 0, as for point-to-point; Mpi.IN_PLACE stands for MPI_IN_PLACE where MPI
    // allows it (intracommunicators only). On an intercommunicator (MPI-3 §5.2.2) a rooted
    // collective's root is Mpi.ROOT at the root, Mpi.PROC_NULL at the other members of the root's
    // group, and the root's rank in the remote group at the members of the other group; results
    // come from, and go to, the other group. Scan and exscan are for intracommunicators only.

    /** `MPI_Barrier`. */
    public fun barrier(): Unit =
        blocking("MPI_Barrier", { it.ibarrier("MPI_Barrier", blocking = true) }, { it.ibarrier("MPI_Barrier") })

    /** `MPI_Ibarrier`. */
    public fun ibarrier(): Request =
        coll("MPI_Ibarrier", { it.ibarrier("MPI_Ibarrier")!! }, { it.ibarrier("MPI_Ibarrier") })

    /** `MPI_Bcast` of [count] elements from [root]. */
    public fun bcast(buf: ByteBuffer, count: Int, type: Datatype, root: Int): Unit =
        blocking(
            "MPI_Bcast",
            { it.ibcast("MPI_Bcast", buf, count, type, root, blocking = true) },
            { it.ibcast("MPI_Bcast", buf, count, type, root) },
        )

    /** `MPI_Ibcast`. */
    public fun ibcast(buf: ByteBuffer, count: Int, type: Datatype, root: Int): Request =
        coll(
            "MPI_Ibcast",
            { it.ibcast("MPI_Ibcast", buf, count, type, root)!! },
            { it.ibcast("MPI_Ibcast", buf, count, type, root) },
        )

    /**
     * `MPI_Reduce`: [recvBuf] matters at [root] only (null elsewhere); [sendBuf] may be [Mpi.IN_PLACE] at the root of
     * an intracommunicator, and is ignored (may be null) at an intercommunicator's root group.
     */
    public fun reduce(sendBuf: ByteBuffer?, recvBuf: ByteBuffer?, count: Int, type: Datatype, op: Op, root: Int): Unit =
        blocking(
            "MPI_Reduce",
            { it.ireduce("MPI_Reduce", sendBuf, recvBuf, count, type, op, root, blocking = true) },
            { it.ireduce("MPI_Reduce", sendBuf, recvBuf, count, type, op, root) },
        )

    /** `MPI_Ireduce`. */
    public fun ireduce(
        sendBuf: ByteBuffer?,
        recvBuf: ByteBuffer?,
        count: Int,
        type: Datatype,
        op: Op,
        root: Int,
    ): Request =
        coll(
            "MPI_Ireduce",
            { it.ireduce("MPI_Ireduce", sendBuf, recvBuf, count, type, op, root)!! },
            { it.ireduce("MPI_Ireduce", sendBuf, recvBuf, count, type, op, root) },
        )

    /** `MPI_Allreduce`; [sendBuf] may be [Mpi.IN_PLACE] (intracommunicators). */
    public fun allreduce(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op): Unit =
        blocking(
            "MPI_Allreduce",
            { it.iallreduce("MPI_Allreduce", sendBuf, recvBuf, count, type, op, blocking = true) },
            { it.iallreduce("MPI_Allreduce", sendBuf, recvBuf, count, type, op) },
        )

    /** `MPI_Iallreduce`. */
    public fun iallreduce(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op): Request =
        coll(
            "MPI_Iallreduce",
            { it.iallreduce("MPI_Iallreduce", sendBuf, recvBuf, count, type, op)!! },
            { it.iallreduce("MPI_Iallreduce", sendBuf, recvBuf, count, type, op) },
        )

    /**
     * `MPI_Reduce_scatter_block`: block [rank] (of [recvCount] elements) of the reduction; on an intercommunicator, of
     * the remote group's reduction (each group's `size × recvCount` must be equal).
     */
    public fun reduceScatterBlock(
        sendBuf: ByteBuffer,
        recvBuf: ByteBuffer,
        recvCount: Int,
        type: Datatype,
        op: Op,
    ): Unit =
        blocking(
            "MPI_Reduce_scatter_block",
            {
                it.ireduceScatterBlock(
                    "MPI_Reduce_scatter_block",
                    sendBuf,
                    recvBuf,
                    recvCount,
                    type,
                    op,
                    blocking = true,
                )
            },
            { it.ireduceScatter("MPI_Reduce_scatter_block", sendBuf, recvBuf, IntArray(size) { recvCount }, type, op) },
        )

    /** `MPI_Ireduce_scatter_block`. */
    public fun ireduceScatterBlock(
        sendBuf: ByteBuffer,
        recvBuf: ByteBuffer,
        recvCount: Int,
        type: Datatype,
        op: Op,
    ): Request =
        coll(
            "MPI_Ireduce_scatter_block",
            { it.ireduceScatterBlock("MPI_Ireduce_scatter_block", sendBuf, recvBuf, recvCount, type, op)!! },
            { it.ireduceScatter("MPI_Ireduce_scatter_block", sendBuf, recvBuf, IntArray(size) { recvCount }, type, op) },
        )

    /**
     * `MPI_Reduce_scatter`: rank i keeps `recvCounts[i]` elements of the reduction (of the remote group's, on an
     * intercommunicator).
     */
    public fun reduceScatter(sendBuf: ByteBuffer, recvBuf: ByteBuffer, recvCounts: IntArray, type: Datatype, op: Op) {
        ireduceScatter(sendBuf, recvBuf, recvCounts, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Ireduce_scatter`. */
    public fun ireduceScatter(
        sendBuf: ByteBuffer,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        type: Datatype,
        op: Op,
    ): Request =
        coll(
            "MPI_Ireduce_scatter",
            { it.ireduceScatter("MPI_Ireduce_scatter", sendBuf, recvBuf, recvCounts, type, op) },
            { it.ireduceScatter("MPI_Ireduce_scatter", sendBuf, recvBuf, recvCounts, type, op) },
        )

    /** `MPI_Scan` (inclusive prefix). */
    public fun scan(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op) {
        iscan(sendBuf, recvBuf, count, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Iscan`. */
    public fun iscan(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op): Request =
        intra("MPI_Iscan") { it.iscan("MPI_Iscan", sendBuf, recvBuf, count, type, op, exclusive = false) }

    /** `MPI_Exscan` (exclusive prefix; rank 0's [recvBuf] is left as it was). */
    public fun exscan(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op) {
        iexscan(sendBuf, recvBuf, count, type, op).waitFor(Status.IGNORED)
    }

    /** `MPI_Iexscan`. */
    public fun iexscan(sendBuf: ByteBuffer, recvBuf: ByteBuffer, count: Int, type: Datatype, op: Op): Request =
        intra("MPI_Iexscan") { it.iscan("MPI_Iexscan", sendBuf, recvBuf, count, type, op, exclusive = true) }

    /**
     * `MPI_Gather`: the receive arguments matter at [root] only; [sendBuf] may be [Mpi.IN_PLACE] there
     * (intracommunicators), and is ignored (may be null) at an intercommunicator's root group.
     */
    public fun gather(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        igather(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Igather`. */
    public fun igather(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        coll(
            "MPI_Igather",
            {
                it.igather(
                    "MPI_Igather",
                    sendBuf,
                    sendCount,
                    sendType,
                    recvBuf,
                    IntArray(size) { recvCount },
                    IntArray(size) { i -> i * recvCount },
                    recvType,
                    root,
                    regular = true,
                )
            },
            {
                it.igather(
                    "MPI_Igather",
                    sendBuf,
                    sendCount,
                    sendType,
                    recvBuf,
                    IntArray(peerCount) { recvCount },
                    IntArray(peerCount) { i -> i * recvCount },
                    recvType,
                    root,
                )
            },
        )

    /**
     * `MPI_Gatherv`: rank i's data (remote rank i's, on an intercommunicator) lands at element `displs[i]` of [recvBuf]
     * (at [root]).
     */
    public fun gatherv(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCounts: IntArray?,
        displs: IntArray?,
        recvType: Datatype?,
        root: Int,
    ) {
        igatherv(sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Igatherv`. */
    public fun igatherv(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCounts: IntArray?,
        displs: IntArray?,
        recvType: Datatype?,
        root: Int,
    ): Request =
        coll(
            "MPI_Igatherv",
            {
                it.igather(
                    "MPI_Igatherv",
                    sendBuf,
                    sendCount,
                    sendType,
                    recvBuf,
                    recvCounts,
                    displs,
                    recvType,
                    root,
                    regular = false,
                )
            },
            { it.igather("MPI_Igatherv", sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType, root) },
        )

    /**
     * `MPI_Scatter`: the send arguments matter at [root] only; [recvBuf] may be [Mpi.IN_PLACE] there
     * (intracommunicators), and is ignored (may be null) at an intercommunicator's root group.
     */
    public fun scatter(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        iscatter(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Iscatter`. */
    public fun iscatter(
        sendBuf: ByteBuffer?,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        coll(
            "MPI_Iscatter",
            {
                it.iscatter(
                    "MPI_Iscatter",
                    sendBuf,
                    IntArray(size) { sendCount },
                    IntArray(size) { i -> i * sendCount },
                    sendType,
                    recvBuf,
                    recvCount,
                    recvType,
                    root,
                )
            },
            {
                it.iscatter(
                    "MPI_Iscatter",
                    sendBuf,
                    IntArray(peerCount) { sendCount },
                    IntArray(peerCount) { i -> i * sendCount },
                    sendType,
                    recvBuf,
                    recvCount,
                    recvType,
                    root,
                )
            },
        )

    /**
     * `MPI_Scatterv`: rank i (remote rank i, on an intercommunicator) gets `sendCounts[i]` elements from element
     * `displs[i]` of [sendBuf] (at [root]).
     */
    public fun scatterv(
        sendBuf: ByteBuffer?,
        sendCounts: IntArray?,
        displs: IntArray?,
        sendType: Datatype?,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ) {
        iscatterv(sendBuf, sendCounts, displs, sendType, recvBuf, recvCount, recvType, root).waitFor(Status.IGNORED)
    }

    /** `MPI_Iscatterv`. */
    public fun iscatterv(
        sendBuf: ByteBuffer?,
        sendCounts: IntArray?,
        displs: IntArray?,
        sendType: Datatype?,
        recvBuf: ByteBuffer?,
        recvCount: Int,
        recvType: Datatype,
        root: Int,
    ): Request =
        coll(
            "MPI_Iscatterv",
            { it.iscatter("MPI_Iscatterv", sendBuf, sendCounts, displs, sendType, recvBuf, recvCount, recvType, root) },
            { it.iscatter("MPI_Iscatterv", sendBuf, sendCounts, displs, sendType, recvBuf, recvCount, recvType, root) },
        )

    /**
     * `MPI_Allgather`; [sendBuf] may be [Mpi.IN_PLACE] (intracommunicators). On an intercommunicator, [recvBuf] gets
     * the remote group's blocks.
     */
    public fun allgather(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ) {
        iallgather(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Iallgather`. */
    public fun iallgather(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ): Request =
        coll(
            "MPI_Iallgather",
            {
                it.iallgather(
                    "MPI_Iallgather",
                    sendBuf,
                    sendCount,
                    sendType,
                    recvBuf,
                    IntArray(size) { recvCount },
                    IntArray(size) { i -> i * recvCount },
                    recvType,
                )
            },
            {
                it.iallgatherv(
                    "MPI_Iallgather",
                    sendBuf,
                    sendCount,
                    sendType,
                    recvBuf,
                    IntArray(peerCount) { recvCount },
                    IntArray(peerCount) { i -> i * recvCount },
                    recvType,
                )
            },
        )

    /** `MPI_Allgatherv`: counts and displacements per rank (per remote rank, on an intercommunicator). */
    public fun allgatherv(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ) {
        iallgatherv(sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Iallgatherv`. */
    public fun iallgatherv(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        displs: IntArray,
        recvType: Datatype,
    ): Request =
        coll(
            "MPI_Iallgatherv",
            { it.iallgather("MPI_Iallgatherv", sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType) },
            { it.iallgatherv("MPI_Iallgatherv", sendBuf, sendCount, sendType, recvBuf, recvCounts, displs, recvType) },
        )

    /** `MPI_Alltoall`; [sendBuf] may be [Mpi.IN_PLACE] (intracommunicators). */
    public fun alltoall(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ) {
        ialltoall(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType).waitFor(Status.IGNORED)
    }

    /** `MPI_Ialltoall`. */
    public fun ialltoall(
        sendBuf: ByteBuffer,
        sendCount: Int,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCount: Int,
        recvType: Datatype,
    ): Request {
        val n = peerCount
        return ialltoallv(
            sendBuf,
            IntArray(n) { sendCount },
            IntArray(n) { i -> i * sendCount },
            sendType,
            recvBuf,
            IntArray(n) { recvCount },
            IntArray(n) { i -> i * recvCount },
            recvType,
            "MPI_Ialltoall",
        )
    }

    /**
     * `MPI_Alltoallv`: displacements in elements of each side's type; one entry per rank (per remote rank, on an
     * intercommunicator).
     */
    public fun alltoallv(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ) {
        ialltoallv(sendBuf, sendCounts, sendDispls, sendType, recvBuf, recvCounts, recvDispls, recvType)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ialltoallv`. */
    public fun ialltoallv(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
    ): Request =
        ialltoallv(
            sendBuf,
            sendCounts,
            sendDispls,
            sendType,
            recvBuf,
            recvCounts,
            recvDispls,
            recvType,
            "MPI_Ialltoallv",
        )

    /**
     * `MPI_Alltoallw`: rank i gets [sendCounts]`[i]` elements of [sendTypes]`[i]` laid out from byte [sendDispls]`[i]`
     * of [sendBuf], and this process receives [recvCounts]`[i]` elements of [recvTypes]`[i]` from rank i, laid out from
     * byte [recvDispls]`[i]` of [recvBuf] (the remote group's ranks on an intercommunicator). Each peer's block is
     * packed, the packed bytes go through [alltoallv], and each block is unpacked into place.
     */
    public fun alltoallw(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendTypes: Array<Datatype>,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvTypes: Array<Datatype>,
    ) {
        ialltoallw(sendBuf, sendCounts, sendDispls, sendTypes, recvBuf, recvCounts, recvDispls, recvTypes)
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Ialltoallw`: [alltoallw]'s blocks are packed at once; they are unpacked when the request completes. */
    public fun ialltoallw(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendTypes: Array<Datatype>,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvTypes: Array<Datatype>,
    ): Request = guard {
        val call = "MPI_Ialltoallw"
        val n = peerCount
        checkUsable(call)
        for ((what, len) in
            listOf(
                "sendCounts" to sendCounts.size,
                "sendDispls" to sendDispls.size,
                "sendTypes" to sendTypes.size,
                "recvCounts" to recvCounts.size,
                "recvDispls" to recvDispls.size,
                "recvTypes" to recvTypes.size,
            )) {
            if (len != n)
                throw MPIException.of(ErrorClass.ERR_ARG, call, "$what has $len entries; it needs one per rank ($n)")
        }
        val sBytes = IntArray(n) { (sendCounts[it] * sendTypes[it].size).toInt() }
        val rBytes = IntArray(n) { (recvCounts[it] * recvTypes[it].size).toInt() }
        val sOff = IntArray(n)
        val rOff = IntArray(n)
        for (i in 1 until n) {
            sOff[i] = sOff[i - 1] + sBytes[i - 1]
            rOff[i] = rOff[i - 1] + rBytes[i - 1]
        }
        val packed = ByteBuffer.allocateDirect(if (n == 0) 0 else sOff[n - 1] + sBytes[n - 1])
        val got = ByteBuffer.allocateDirect(if (n == 0) 0 else rOff[n - 1] + rBytes[n - 1])
        for (i in 0 until n) sendTypes[i].pack(sendBuf, sendDispls[i], sendCounts[i], packed, sOff[i])
        val exchange: () -> Any? = { ialltoallv(packed, sBytes, sOff, Datatype.BYTE, got, rBytes, rOff, Datatype.BYTE) }
        val unpack = { for (i in 0 until n) recvTypes[i].unpack(got, rOff[i], recvBuf, recvDispls[i], recvCounts[i]) }
        CollRequest(mpi, this, arrayOf(exchange), { unpack() }).start()
    }

    private fun ialltoallv(
        sendBuf: ByteBuffer,
        sendCounts: IntArray,
        sendDispls: IntArray,
        sendType: Datatype,
        recvBuf: ByteBuffer,
        recvCounts: IntArray,
        recvDispls: IntArray,
        recvType: Datatype,
        call: String,
    ): Request =
        coll(
            call,
            {
                it.ialltoall(call, sendBuf, sendCounts, sendDispls, sendType, recvBuf, recvCounts, recvDispls, recvType)
            },
            {
                it.ialltoallv(
                    call,
                    sendBuf,
                    sendCounts,
                    sendDispls,
                    sendType,
                    recvBuf,
                    recvCounts,
                    recvDispls,
                    recvType,
                )
            },
        )

    private inline fun coll(
        call: String,
        intra: (CommCollectives) -> Request,
        inter: (IntercommCollectives) -> Request,
    ): Request = guard {
        checkUsable(call)
        when (this) {
            is Intracomm -> intra(coll)
            is Intercomm -> inter(coll)
        }
    }

    /**
     * A blocking collective: started under the error handler ([intra] returns null when it waited itself), then waited
     * for.
     */
    private inline fun blocking(
        call: String,
        intra: (CommCollectives) -> Request?,
        inter: (IntercommCollectives) -> Request,
    ) {
        val r = guard {
            checkUsable(call)
            when (this) {
                is Intracomm -> intra(coll)
                is Intercomm -> inter(coll)
            }
        }
        r?.waitFor(Status.IGNORED)
    }

    private inline fun intra(call: String, block: (CommCollectives) -> Request): Request = guard {
        checkUsable(call)
        when (this) {
            is Intracomm -> block(coll)
            is Intercomm ->
                throw MPIException.of(
                    ErrorClass.ERR_COMM,
                    call,
                    "$name is an intercommunicator; scan and exscan are for intracommunicators only",
                )
        }
    }

    // ## Internals ##

    private fun startSend(
        call: String,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        dest: Int,
        tag: Int,
        mode: Int,
    ): Request = guard {
        checkUsable(call)
        checkDest(call, dest)
        checkTag(call, tag, receive = false)
        checkBuffer(call, buf, count, type, receive = false)
        if (dest == Mpi.PROC_NULL) return@guard DoneRequest(mpi, this, Status.PROC_NULL)
        failedPeer(call, dest)?.let {
            return@guard it
        }
        val bits = MatchBitsDescriptor.bits(context, MatchBitsDescriptor.SUB_PT2PT, rank, tag)
        val op =
            if (mode == MODE_BUFFERED) {
                bufferedSend(mpi.buffered.stage(buf, count, type), dest, bits, count * type.size)
            } else {
                val flags = if (mode == MODE_SYNCHRONOUS) OpFlags.DELIVERY_COMPLETE else 0L
                val send = mpi.takeSend().set(this, destAddr[dest], bits, flags)
                send.region.set(buf, count, type, packNow = true)
                send.also { mpi.submit(it) }
            }
        op
    }

    /**
     * Waits for [r] (a request the caller never saw), fills [into] (null: a new status; [Status.IGNORED]: none, for a
     * send) and returns [r] to the pool, raising its error after.
     */
    private fun waitAndRecycle(r: Request, into: Status?): Status {
        try {
            return r.waitInto(into)
        } finally {
            mpi.recycle(r)
        }
    }

    /** The rank whose fabric address is [fiAddr] (for messages; a scan), or -1. */
    @JvmSynthetic internal fun rankOfAddr(fiAddr: Long): Int = destAddr.indexOf(fiAddr)

    /** A request already failed with ERR_PROC_FAILED if [peer] was reported dead, else null. */
    @JvmSynthetic
    internal fun failedPeer(call: String, peer: Int): Request? {
        val why = mpi.deadPeer(destAddr[peer]) ?: return null
        return DoneRequest(mpi, this, Status(peer, Mpi.ANY_TAG, 0, false, ErrorClass.ERR_PROC_FAILED, -1)).also {
            it.errorMessage = "$call: rank $peer of $name has failed: $why"
        }
    }

    @JvmSynthetic
    internal fun recvBits(source: Int, tag: Int): Long =
        MatchBitsDescriptor.bits(
            context,
            MatchBitsDescriptor.SUB_PT2PT,
            if (source == Mpi.ANY_SOURCE) 0 else source,
            if (tag == Mpi.ANY_TAG) 0 else tag,
        )

    @JvmSynthetic
    internal fun recvIgnore(source: Int, tag: Int): Long =
        MatchBitsDescriptor.ignore(source == Mpi.ANY_SOURCE, tag == Mpi.ANY_TAG)

    /** Runs [block], passing an [MPIException] it throws through this communicator's error handler. */
    @JvmSynthetic
    internal inline fun <T> guard(block: () -> T): T =
        try {
            block()
        } catch (e: MPIException) {
            throw raise(e)
        }

    /** Applies the error handler to [e] (aborting under ERRORS_ARE_FATAL) and returns it to throw. */
    @JvmSynthetic internal fun raise(e: MPIException): MPIException = handler.handle(this, e)

    @JvmSynthetic
    internal fun checkUsable(call: String) {
        mpi.checkLive(call)
        if (freed) throw MPIException.of(ErrorClass.ERR_COMM, call, "communicator $name has been freed")
    }

    /** The number of ranks point-to-point calls may name (the remote group's size for an intercommunicator). */
    @get:JvmSynthetic
    internal val peerCount: Int
        get() = targets.size

    @JvmSynthetic
    internal fun checkDest(call: String, dest: Int) {
        if (dest == Mpi.PROC_NULL) return
        if (dest !in 0 until peerCount)
            throw MPIException.of(
                ErrorClass.ERR_RANK,
                call,
                "rank $dest is out of range for ${rankSpace()} of size $peerCount",
            )
    }

    @JvmSynthetic
    internal fun checkSource(call: String, source: Int) {
        if (source == Mpi.PROC_NULL || source == Mpi.ANY_SOURCE) return
        if (source !in 0 until peerCount)
            throw MPIException.of(
                ErrorClass.ERR_RANK,
                call,
                "source rank $source is out of range for ${rankSpace()} of size $peerCount",
            )
    }

    private fun rankSpace(): String =
        if (isInter) "the remote group of intercommunicator $name" else "communicator $name"

    @JvmSynthetic
    internal fun checkTag(call: String, tag: Int, receive: Boolean) {
        if (receive && tag == Mpi.ANY_TAG) return
        if (tag < 0 || tag > Mpi.TAG_UB)
            throw MPIException.of(
                ErrorClass.ERR_TAG,
                call,
                "tag $tag is outside 0..${Mpi.TAG_UB}${if (receive) " (or ANY_TAG)" else ""}",
            )
    }

    @JvmSynthetic
    internal fun checkBuffer(call: String, buf: ByteBuffer, count: Int, type: Datatype, receive: Boolean) {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "count is $count; it must be ≥ 0")
        type.checkUsable(call)
        if (receive && buf.isReadOnly)
            throw MPIException.of(ErrorClass.ERR_BUFFER, call, "the receive buffer is read-only")
        type.checkFits(call, if (receive) "receive buffer" else "send buffer", buf.capacity(), 0, count)
    }

    public companion object {
        /** `MPI_TAG_UB`'s attribute key. */
        public const val TAG_UB: Int = 0
        /** `MPI_UNIVERSE_SIZE`'s attribute key. */
        public const val UNIVERSE_SIZE: Int = 1
        /** `MPI_APPNUM`'s attribute key. */
        public const val APPNUM: Int = 2
        /** `MPI_WTIME_IS_GLOBAL`'s attribute key. */
        public const val WTIME_IS_GLOBAL: Int = 3
        /** `MPI_HOST`'s attribute key: [Mpi.PROC_NULL], no process is the host. */
        public const val HOST: Int = 4
        /** `MPI_IO`'s attribute key: [Mpi.ANY_SOURCE], every process can do I/O. */
        public const val IO: Int = 5
        /** `MPI_LASTUSEDCODE`'s attribute key: the last error code or class added ([ErrorClass.addErrorClass]). */
        public const val LASTUSEDCODE: Int = 6

        /** `MPI_COMM_TYPE_SHARED` ([Intracomm.splitType]): the processes that share memory (one host). */
        public const val TYPE_SHARED: Int = 0

        /** `MPI_COMM_NULL_COPY_FN`: a dup gets no copy of the attribute. */
        @JvmField public val NULL_COPY_FN: AttributeCopier = AttributeCopier { _, _, _, _ -> null }
        /** `MPI_COMM_DUP_FN`: a dup gets the same value. */
        @JvmField public val DUP_FN: AttributeCopier = AttributeCopier { _, _, _, value -> value }
        /** `MPI_COMM_NULL_DELETE_FN`: nothing to do on delete. */
        @JvmField public val NULL_DELETE_FN: AttributeDeleter = AttributeDeleter { _, _, _, _ -> }

        /**
         * `MPI_Comm_create_keyval`: a new keyval whose attributes [copy] decides on for a dup and [delete] is told of
         * when deleted, replaced or their communicator freed; [extraState] is passed to both.
         */
        @JvmStatic
        public fun createKeyval(copy: AttributeCopier, delete: AttributeDeleter, extraState: Any?): Int =
            Attributes.create(copy, delete, extraState)

        /** `MPI_Comm_free_keyval`: no new attributes under [keyval]; those set stay until deleted. */
        @JvmStatic public fun freeKeyval(keyval: Int): Unit = Attributes.free(keyval)

        internal const val MODE_STANDARD = 0
        internal const val MODE_SYNCHRONOUS = 1
        internal const val MODE_READY = 2
        internal const val MODE_BUFFERED = 3
    }
}
