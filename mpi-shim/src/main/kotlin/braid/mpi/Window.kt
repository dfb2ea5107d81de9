package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.shm.SharedMemoryDir
import braid.core.shm.ShmSegment
import braid.provider.HostIdentity
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.atomic.AtomicIntegerArray
import org.agrona.BufferUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * An MPI-3 window (`MPI_Win`): memory of every process of a communicator that the others read and write one-sidedly
 * ([put], [get], [accumulate], [getAccumulate], [fetchAndOp], [compareAndSwap] and the request-based `r…` forms), in
 * epochs opened and closed by [fence], [start]/[complete] with [post]/[waitFor], or [lock]/[unlock] and
 * [lockAll]/[unlockAll]. Made by [create] (the caller's memory), [allocate], [allocateShared] (one segment per host;
 * [sharedQuery] hands out a peer's part for plain loads and stores) and [createDynamic] ([attach]/[detach]).
 *
 * Counts and displacements are in elements, as in MPI: a target displacement is in the target's displacement unit
 * (bytes for a dynamic window, where it is an address from [address]); buffers are `ByteBuffer`s whose data starts at
 * byte 0, as [Comm]'s calls take them. Window memory must be direct (the rail registers it).
 *
 * How it is carried: every process registers its window memory with rail-core (a [MemoryRegion] with remote read and
 * write) and a small control region (the lock words and the attach table, [WindowControl]); the keys are exchanged when
 * the window is made. [put] is the rail's RMA write, [get] its read; [accumulate] and the fetching ops on 32- and
 * 64-bit integers, floats and doubles are the rail's atomics, which the target applies under its domain's lock, so
 * updates from any number of origins are atomic per element. Types the rail has no atomic for (bytes, shorts, chars,
 * booleans, the MAXLOC pairs) are updated under an accumulate lock word in the target's control region, taken by
 * compare-and-swap, so they are never lost either: read, combine, write back, release.
 *
 * Passive target: the rail's target side runs inside the target process's progress. While any window of a process
 * lives, a [WindowServant] thread drives that progress whenever the application does not, so a lock epoch completes
 * while the target computes outside MPI. It costs the target one daemon thread that parks between 1 µs and 200 µs when
 * idle (about 5,000 wake-ups a second at most), and the domain lock for each request it serves.
 *
 * Errors go through the window's error handler (the communicator's at creation; [setErrhandler]): an access outside the
 * target's window raises `MPI_ERR_RMA_RANGE` before anything is sent; an operation outside an epoch, or an unlock
 * without a lock, `MPI_ERR_RMA_SYNC`; a freed window `MPI_ERR_WIN`; an op a type does not take `MPI_ERR_OP`; a bad
 * displacement unit `MPI_ERR_DISP`. Failures of operations in flight (a dead target) are raised by the next
 * synchronisation call (or the request's wait) naming the target.
 */
public class Window
private constructor(
    parent: Intracomm,
    /** How the window was made: [FLAVOR_CREATE], [FLAVOR_ALLOCATE], [FLAVOR_SHARED] or [FLAVOR_DYNAMIC]. */
    public val flavor: Int,
    base: ByteBuffer?,
    size: Long,
    dispUnit: Int,
    private val segment: ShmSegment?,
    /** This process's offset in [segment] (shared windows). */
    segmentOffset: Long,
) {
    @get:JvmSynthetic internal val mpi: Mpi = parent.mpi
    /** The window's own communicator: its synchronisation traffic is apart from the caller's. */
    @get:JvmSynthetic internal val comm: Intracomm = parent.dup()
    private var name = "window ${nextId()} of ${parent.getName()}"

    /** This process's window memory (`MPI_WIN_BASE`); null for a dynamic window. */
    public val base: ByteBuffer? = base

    /** Bytes of window memory here (`MPI_WIN_SIZE`). */
    public val size: Long = size

    /** This process's displacement unit (`MPI_WIN_DISP_UNIT`). */
    public val dispUnit: Int = dispUnit

    private val control: ByteBuffer = BufferUtil.allocateDirectAligned(WindowControl.LENGTH, 64)
    private val controlView = UnsafeBuffer(control)
    private val controlMr: MemoryRegion = mpi.domain.registerMemory(control, MrAccess.REMOTE)
    private val baseMr: MemoryRegion? =
        if (base != null && size > 0)
            mpi.domain.registerMemory(base.duplicate().clear().limit(size.toInt()), MrAccess.REMOTE)
        else null

    private val n = comm.size
    private val keys = LongArray(n)
    private val sizes = LongArray(n)
    private val units = IntArray(n)
    private val controlKeys = LongArray(n)
    private val segmentOffsets = LongArray(n)
    private val inflight = AtomicIntegerArray(n)
    /** Per target, the first failure of a plain (not request-based) operation, raised by the next synchronisation. */
    private val pendingErrors = arrayOfNulls<MPIException>(n)
    /** Set while a plain operation builds its request, whose failure then goes to [pendingErrors]. */
    private var reporting = false
    @Volatile private var freed = false

    // ## Epochs (owned by the calling thread, as MPI's window calls are) ##
    private var fenceOpen = false
    private var accessGroup: IntArray? = null
    private var exposureGroup: IntArray? = null
    private var exposureRequests: Array<Request>? = null
    private val lockState = IntArray(n)
    private var lockedCount = 0
    private var lockAllState = LOCK_NONE

    // ## Dynamic windows ##
    private class Attached(val buffer: ByteBuffer, val address: Long, val length: Long, val mr: MemoryRegion)

    private val attached = ArrayList<Attached>()
    /** Each target's attach table as last read (address, length, key triples); cleared at every synchronisation. */
    private val remoteTables = arrayOfNulls<LongArray>(n)

    private val attributes = HashMap<Int, Any?>()

    /** Small direct buffers for the lock words' atomics (one operation at a time: window calls are serial). */
    private val wordOperand = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordCompare = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordResult = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))

    init {
        val mine = ByteBuffer.allocate(5 * 8).order(ByteOrder.nativeOrder())
        mine.putLong(0, baseMr?.key ?: 0).putLong(8, size).putLong(16, dispUnit.toLong())
        mine.putLong(24, controlMr.key).putLong(32, segmentOffset)
        val all = ByteBuffer.allocate(n * 5 * 8).order(ByteOrder.nativeOrder())
        comm.allgather(mine, 5, Datatype.LONG, all, 5, Datatype.LONG)
        for (r in 0 until n) {
            keys[r] = all.getLong(r * 40)
            sizes[r] = all.getLong(r * 40 + 8)
            units[r] = all.getLong(r * 40 + 16).toInt()
            controlKeys[r] = all.getLong(r * 40 + 24)
            segmentOffsets[r] = all.getLong(r * 40 + 32)
        }
        WindowServant.acquire(mpi)
    }

    @JvmSynthetic internal fun name(): String = name

    public fun getName(): String = name

    public fun setName(name: String) {
        this.name = name
    }

    /** `MPI_Win_get_group`: the group of the communicator the window was made over. */
    public fun getGroup(): Group = comm.getGroup()

    /** `MPI_Win_set_errhandler`. */
    public fun setErrhandler(h: ErrorHandler): Unit = comm.setErrhandler(h)

    /** `MPI_Win_get_errhandler`. */
    public fun getErrhandler(): ErrorHandler = comm.getErrhandler()

    /** `MPI_Win_call_errhandler`. */
    public fun callErrhandler(code: Int) {
        throw comm.raise(MPIException(code, "$name: user-raised error ${ErrorClass.errorString(code)}"))
    }

    // ## Attributes ##

    /**
     * `MPI_Win_get_attr`: [WIN_BASE] (the base [ByteBuffer], null for a dynamic window), [WIN_SIZE] (a `Long`),
     * [WIN_DISP_UNIT], [WIN_CREATE_FLAVOR] and [WIN_MODEL] (`Int`s), or what [setAttr] put under a [createKeyval]
     * keyval (null if nothing).
     */
    public fun getAttr(key: Int): Any? = guard {
        checkUsable("MPI_Win_get_attr")
        when (key) {
            WIN_BASE -> base
            WIN_SIZE -> size
            WIN_DISP_UNIT -> dispUnit
            WIN_CREATE_FLAVOR -> flavor
            WIN_MODEL -> UNIFIED
            else -> {
                checkKeyval("MPI_Win_get_attr", key)
                attributes[key]
            }
        }
    }

    /** `MPI_Win_set_attr`. */
    public fun setAttr(keyval: Int, value: Any?): Unit = guard {
        checkUsable("MPI_Win_set_attr")
        checkKeyval("MPI_Win_set_attr", keyval)
        attributes[keyval] = value
    }

    /** `MPI_Win_delete_attr`. */
    public fun deleteAttr(keyval: Int): Unit = guard {
        checkUsable("MPI_Win_delete_attr")
        checkKeyval("MPI_Win_delete_attr", keyval)
        attributes.remove(keyval)
    }

    private fun checkKeyval(call: String, key: Int) {
        if (key < FIRST_KEYVAL)
            throw MPIException.of(
                ErrorClass.ERR_KEYVAL,
                call,
                "$name: key $key is neither a predefined window attribute (WIN_BASE … WIN_MODEL) nor a keyval from Window.createKeyval",
            )
    }

    // ## Shared windows ##

    /**
     * `MPI_Win_shared_query`: rank [rank]'s part of a shared window as a buffer over the same memory (native order),
     * which this process loads and stores directly; [Mpi.PROC_NULL] gives the first non-empty part. Stores are seen by
     * the others after [sync] and a synchronisation between the processes (a barrier).
     */
    public fun sharedQuery(rank: Int): ByteBuffer = guard {
        checkUsable("MPI_Win_shared_query")
        if (flavor != FLAVOR_SHARED || segment == null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_FLAVOR,
                "MPI_Win_shared_query",
                "$name was not made by allocateShared; only shared windows can be queried",
            )
        val r =
            if (rank == Mpi.PROC_NULL) (0 until n).firstOrNull { sizes[it] > 0 } ?: 0
            else {
                checkRank("MPI_Win_shared_query", rank)
                rank
            }
        val whole = segment.buffer.byteBuffer()!!.duplicate().clear()
        whole.position(segmentOffsets[r].toInt()).limit((segmentOffsets[r] + sizes[r]).toInt())
        whole.slice().order(ByteOrder.nativeOrder())
    }

    /** The displacement unit of rank [rank]'s part ([sharedQuery]'s `disp_unit`). */
    public fun sharedDispUnit(rank: Int): Int = guard {
        checkRank("MPI_Win_shared_query", rank)
        units[rank]
    }

    // ## Dynamic windows ##

    /**
     * `MPI_Win_attach`: exposes the first [size] bytes of [buffer] (direct) in this dynamic window; peers address them
     * by [address] of the buffer (plus a byte offset), as `MPI_Get_address` gives it.
     */
    public fun attach(buffer: ByteBuffer, size: Long): Unit = guard {
        checkUsable("MPI_Win_attach")
        if (flavor != FLAVOR_DYNAMIC)
            throw MPIException.of(
                ErrorClass.ERR_RMA_FLAVOR,
                "MPI_Win_attach",
                "$name is not dynamic; attach needs createDynamic",
            )
        if (!buffer.isDirect)
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name: the buffer is on the heap; attach a direct buffer",
            )
        if (size < 0 || size > buffer.capacity())
            throw MPIException.of(
                ErrorClass.ERR_SIZE,
                "MPI_Win_attach",
                "$name: size $size is outside 0..${buffer.capacity()} (the buffer's capacity)",
            )
        if (attached.size >= WindowControl.ATTACH_MAX)
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name already has ${WindowControl.ATTACH_MAX} attachments; detach one first",
            )
        val addr = address(buffer)
        if (attached.any { addr < it.address + it.length && it.address < addr + size })
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name: [$addr, ${addr + size}) overlaps memory already attached",
            )
        val mr = mpi.domain.registerMemory(buffer.duplicate().clear().limit(size.toInt()), MrAccess.REMOTE)
        attached += Attached(buffer, addr, size, mr)
        writeAttachTable()
    }

    /** `MPI_Win_detach`: [buffer] is no longer exposed; peers that address it get `MPI_ERR_RMA_RANGE`. */
    public fun detach(buffer: ByteBuffer): Unit = guard {
        checkUsable("MPI_Win_detach")
        val a =
            attached.firstOrNull { it.buffer === buffer || it.address == address(buffer) }
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_ATTACH,
                    "MPI_Win_detach",
                    "$name: that buffer is not attached",
                )
        attached.remove(a)
        writeAttachTable()
        a.mr.close()
    }

    private fun writeAttachTable() {
        // Entries first, then the count with release order, so a reader that sees the count sees the entries.
        attached.forEachIndexed { i, a ->
            val at = WindowControl.ATTACH + i * WindowControl.ENTRY
            controlView.putLong(at, a.address)
            controlView.putLong(at + 8, a.length)
            controlView.putLong(at + 16, a.mr.key)
        }
        controlView.putLongVolatile(WindowControl.ATTACH_COUNT, attached.size.toLong())
    }

    /** Rank [t]'s attach table, read once per epoch. */
    private fun remoteTable(t: Int): LongArray {
        remoteTables[t]?.let {
            return it
        }
        val buf = UnsafeBuffer(BufferUtil.allocateDirectAligned(WindowControl.LENGTH, 64))
        val r =
            WindowRequest(
                this,
                "MPI_Win (attach table)",
                t,
                WindowRequest.GET,
                buf,
                0,
                null,
                null,
                null,
                null,
                intArrayOf(0),
                intArrayOf(WindowControl.LENGTH),
                longArrayOf(0),
                longArrayOf(controlKeys[t]),
                null,
            )
        started(t)
        mpi.submit(r)
        await(r)
        val count = buf.getLong(WindowControl.ATTACH_COUNT).toInt().coerceIn(0, WindowControl.ATTACH_MAX)
        val table = LongArray(count * 3)
        for (i in 0 until count) for (j in 0 until 3) table[i * 3 + j] =
            buf.getLong(WindowControl.ATTACH + i * WindowControl.ENTRY + j * 8)
        remoteTables[t] = table
        return table
    }

    // ## Communication ##

    /** `MPI_Put`. */
    public fun put(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ) {
        reporting = true
        try {
            rPut(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType)
        } finally {
            reporting = false
        }
    }

    /** `MPI_Rput`: [put] with a request that completes once the data is at the target. */
    public fun rPut(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ): Request = guard {
        val call = "MPI_Put"
        prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, false)
        if (targetRank == Mpi.PROC_NULL) return@guard done()
        val (local, localBase) = originBytes(origin, originCount, originType)
        transfer(call, WindowRequest.PUT, targetRank, targetDisp, targetCount, targetType, local, localBase, null)
    }

    /** `MPI_Get`. */
    public fun get(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ) {
        reporting = true
        try {
            rGet(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType)
        } finally {
            reporting = false
        }
    }

    /** `MPI_Rget`: [get] with a request that completes once the data is in [origin]. */
    public fun rGet(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ): Request = guard {
        val call = "MPI_Get"
        prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, true)
        if (targetRank == Mpi.PROC_NULL) return@guard done()
        if (originType.isContiguous && !origin.isReadOnly) {
            val local = UnsafeBuffer(origin)
            val at = if (originCount == 0) 0 else originType.trueLb.toInt()
            transfer(call, WindowRequest.GET, targetRank, targetDisp, targetCount, targetType, local, at, null)
        } else {
            val staging = ByteBuffer.allocateDirect(packedBytes(originCount, originType))
            val unpack = Runnable { originType.unpackFrom(staging, 0, origin, 0, originCount) }
            transfer(
                call,
                WindowRequest.GET,
                targetRank,
                targetDisp,
                targetCount,
                targetType,
                UnsafeBuffer(staging),
                0,
                unpack,
            )
        }
    }

    /** `MPI_Accumulate`: `target = target op origin`, element by element, atomically per element. */
    public fun accumulate(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
        op: Op,
    ) {
        reporting = true
        try {
            rAccumulate(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType, op)
        } finally {
            reporting = false
        }
    }

    /** `MPI_Raccumulate`. */
    public fun rAccumulate(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
        op: Op,
    ): Request = guard {
        val call = "MPI_Accumulate"
        prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, false)
        val basic = checkAccumulate(call, op, originType, targetType)
        if (targetRank == Mpi.PROC_NULL || op === Op.NO_OP) return@guard done()
        val (local, localBase) = originBytes(origin, originCount, originType)
        atomicUpdate(
            call,
            targetRank,
            targetDisp,
            targetCount,
            targetType,
            basic,
            op,
            local,
            localBase,
            null,
            null,
            null,
        )
    }

    /**
     * `MPI_Get_accumulate`: the target's old values go to [result] (as [resultCount] × [resultType]), then `target =
     * target op origin`, atomically per element. With [Op.NO_OP] the origin is not read (an atomic get).
     */
    public fun getAccumulate(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        result: ByteBuffer,
        resultCount: Int,
        resultType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
        op: Op,
    ) {
        rGetAccumulate(
                origin,
                originCount,
                originType,
                result,
                resultCount,
                resultType,
                targetRank,
                targetDisp,
                targetCount,
                targetType,
                op,
            )
            .waitFor(Status.IGNORED)
    }

    /** `MPI_Rget_accumulate`. */
    public fun rGetAccumulate(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        result: ByteBuffer,
        resultCount: Int,
        resultType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
        op: Op,
    ): Request = guard {
        val call = "MPI_Get_accumulate"
        val noOp = op === Op.NO_OP
        prologue(call, targetRank, result, resultCount, resultType, targetCount, targetType, true)
        if (!noOp) checkOrigin(call, origin, originCount, originType, targetCount, targetType, false)
        val basic = checkAccumulate(call, op, if (noOp) targetType else originType, targetType)
        if (targetRank == Mpi.PROC_NULL) return@guard done()
        val bytes = packedBytes(targetCount, targetType)
        val (local, localBase) =
            if (noOp) UnsafeBuffer(ByteBuffer.allocateDirect(bytes)) to 0
            else originBytes(origin, originCount, originType)
        val resultStage = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
        val unpack = Runnable { resultType.unpackFrom(resultStage, 0, result, 0, resultCount) }
        atomicUpdate(
            call,
            targetRank,
            targetDisp,
            targetCount,
            targetType,
            basic,
            op,
            local,
            localBase,
            UnsafeBuffer(resultStage),
            null,
            unpack,
        )
    }

    /** `MPI_Fetch_and_op`: one element of [type] at [targetDisp]; the old value goes to [result]. */
    public fun fetchAndOp(
        origin: ByteBuffer,
        result: ByteBuffer,
        type: Datatype,
        targetRank: Int,
        targetDisp: Long,
        op: Op,
    ) {
        getAccumulate(origin, 1, type, result, 1, type, targetRank, targetDisp, 1, type, op)
    }

    /**
     * `MPI_Compare_and_swap`: if the target element equals [compare]'s, it becomes [origin]'s; the old value goes to
     * [result]. [type] must be an integer, boolean or byte type.
     */
    public fun compareAndSwap(
        origin: ByteBuffer,
        compare: ByteBuffer,
        result: ByteBuffer,
        type: Datatype,
        targetRank: Int,
        targetDisp: Long,
    ): Unit = guard {
        val call = "MPI_Compare_and_swap"
        prologue(call, targetRank, result, 1, type, 1, type, true)
        checkOrigin(call, origin, 1, type, 1, type, false)
        checkOrigin(call, compare, 1, type, 1, type, false)
        val b = type.basic
        if (!type.isPredefined || b == null || b.floating || b.pairValue != null || b == BasicType.OPAQUE)
            throw MPIException.of(
                ErrorClass.ERR_TYPE,
                call,
                "$name: compare-and-swap takes an integer, boolean or byte type, not $type",
            )
        if (targetRank == Mpi.PROC_NULL) return@guard
        val len = b.size
        val o = UnsafeBuffer(ByteBuffer.allocateDirect(len)).also { it.putBytes(0, origin, 0, len) }
        val c = UnsafeBuffer(ByteBuffer.allocateDirect(len)).also { it.putBytes(0, compare, 0, len) }
        val res = UnsafeBuffer(ByteBuffer.allocateDirect(len))
        val finish = Runnable { res.getBytes(0, result, 0, len) }
        val at = byteTarget(call, targetRank, targetDisp, len.toLong())
        val native = atomicTypeOf(b)
        if (native != null) {
            val r =
                WindowRequest(
                    this,
                    call,
                    targetRank,
                    WindowRequest.CAS,
                    o,
                    0,
                    res,
                    c,
                    native,
                    AtomicOp.CSWAP,
                    intArrayOf(0),
                    intArrayOf(len),
                    longArrayOf(at.first),
                    longArrayOf(at.second),
                    finish,
                )
            started(targetRank)
            mpi.submit(r)
            await(r)
        } else {
            underAccumulateLock(targetRank) {
                val cur = UnsafeBuffer(ByteBuffer.allocateDirect(len))
                await(piece(call, WindowRequest.GET, targetRank, cur, at))
                res.putBytes(0, cur, 0, len)
                var same = true
                for (i in 0 until len) if (cur.getByte(i) != c.getByte(i)) same = false
                if (same) await(piece(call, WindowRequest.PUT, targetRank, o, at))
            }
            finish.run()
        }
    }

    // ## Synchronisation ##

    /**
     * `MPI_Win_fence`: completes every operation this process started in the window and, with a barrier, every one
     * targeting it; opens the next fence epoch unless [assertion] has [MODE_NOSUCCEED]. [assertion] is a sum of
     * [MODE_NOSTORE], [MODE_NOPUT], [MODE_NOPRECEDE] and [MODE_NOSUCCEED] (0 for none).
     */
    public fun fence(assertion: Int): Unit = guard {
        val call = "MPI_Win_fence"
        checkUsable(call)
        checkAssert(call, assertion, MODE_NOSTORE or MODE_NOPUT or MODE_NOPRECEDE or MODE_NOSUCCEED)
        if (accessGroup != null || exposureGroup != null || lockedCount > 0 || lockAllState != LOCK_NONE)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: a start/post or lock epoch is open; close it before fencing",
            )
        flushEverything()
        comm.barrier()
        fenceOpen = assertion and MODE_NOSUCCEED == 0
        resetTables()
        raisePending(call)
    }

    /** `MPI_Win_start`: opens an access epoch to [group] (ranks of [getGroup]); waits for each of them to [post]. */
    public fun start(group: Group, assertion: Int): Unit = guard {
        val call = "MPI_Win_start"
        checkUsable(call)
        checkAssert(call, assertion, MODE_NOCHECK)
        if (accessGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an access epoch started by start is still open; complete it first",
            )
        val ranks = ranksOf(call, group)
        if (assertion and MODE_NOCHECK == 0) for (r in ranks) comm.recv(NOTHING, 0, Datatype.BYTE, r, TAG_POST)
        accessGroup = ranks
        resetTables()
    }

    /** `MPI_Win_complete`: completes the operations of the epoch [start] opened and tells each target so. */
    public fun complete(): Unit = guard {
        val call = "MPI_Win_complete"
        checkUsable(call)
        val ranks =
            accessGroup
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_SYNC,
                    call,
                    "$name: no access epoch was started (call start first)",
                )
        for (r in ranks) flushTarget(r)
        accessGroup = null
        for (r in ranks) comm.send(NOTHING, 0, Datatype.BYTE, r, TAG_DONE)
        raisePending(call)
    }

    /** `MPI_Win_post`: opens an exposure epoch to the ranks of [group], which then [start] an access epoch. */
    public fun post(group: Group, assertion: Int): Unit = guard {
        val call = "MPI_Win_post"
        checkUsable(call)
        checkAssert(call, assertion, MODE_NOCHECK or MODE_NOSTORE or MODE_NOPUT)
        if (exposureGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an exposure epoch is still open; wait for it first",
            )
        val ranks = ranksOf(call, group)
        exposureRequests =
            Array(ranks.size) { comm.irecv(ByteBuffer.allocate(0), 0, Datatype.BYTE, ranks[it], TAG_DONE) }
        if (assertion and MODE_NOCHECK == 0) for (r in ranks) comm.send(NOTHING, 0, Datatype.BYTE, r, TAG_POST)
        exposureGroup = ranks
    }

    /** `MPI_Win_wait`: waits until every origin of the exposure epoch has called [complete]. */
    public fun waitFor(): Unit = guard {
        val call = "MPI_Win_wait"
        checkUsable(call)
        val reqs =
            exposureRequests
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_SYNC,
                    call,
                    "$name: no exposure epoch was posted (call post first)",
                )
        for (r in reqs) r.waitFor(Status.IGNORED)
        exposureRequests = null
        exposureGroup = null
    }

    /** `MPI_Win_test`: [waitFor] if every origin has completed (true), else false and the epoch stays open. */
    public fun test(): Boolean = guard {
        val call = "MPI_Win_test"
        checkUsable(call)
        val reqs =
            exposureRequests
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_SYNC,
                    call,
                    "$name: no exposure epoch was posted (call post first)",
                )
        mpi.progress()
        if (reqs.any { !it.isComplete }) return@guard false
        for (r in reqs) r.waitFor(Status.IGNORED)
        exposureRequests = null
        exposureGroup = null
        true
    }

    /**
     * `MPI_Win_lock`: a passive-target access epoch to [rank], [LOCK_SHARED] or [LOCK_EXCLUSIVE]; returns once the lock
     * is held (the target need not call anything). [MODE_NOCHECK] skips taking it (the caller knows nobody conflicts).
     */
    public fun lock(lockType: Int, rank: Int, assertion: Int): Unit = guard {
        val call = "MPI_Win_lock"
        checkUsable(call)
        checkRank(call, rank)
        checkAssert(call, assertion, MODE_NOCHECK)
        if (lockType != LOCK_SHARED && lockType != LOCK_EXCLUSIVE)
            throw MPIException.of(
                ErrorClass.ERR_LOCKTYPE,
                call,
                "$name: lock type $lockType is neither LOCK_SHARED ($LOCK_SHARED) nor LOCK_EXCLUSIVE ($LOCK_EXCLUSIVE)",
            )
        if (lockState[rank] != LOCK_NONE || lockAllState != LOCK_NONE)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: rank $rank is already locked by this process; unlock it first",
            )
        if (assertion and MODE_NOCHECK == 0) acquire(call, rank, lockType == LOCK_EXCLUSIVE)
        lockState[rank] = if (assertion and MODE_NOCHECK != 0) LOCK_NOCHECK else lockType
        lockedCount++
    }

    /** `MPI_Win_unlock`: completes the epoch's operations at [rank] and releases its lock. */
    public fun unlock(rank: Int): Unit = guard {
        val call = "MPI_Win_unlock"
        checkUsable(call)
        checkRank(call, rank)
        val s = lockState[rank]
        if (s == LOCK_NONE)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: rank $rank is not locked by this process (call lock first)",
            )
        flushTarget(rank)
        lockState[rank] = LOCK_NONE
        lockedCount--
        remoteTables[rank] = null
        // A failure of the epoch's operations is the one to report; the release's own (a dead target) comes second.
        val released =
            if (s == LOCK_NOCHECK) null else runCatching { release(call, rank, s == LOCK_EXCLUSIVE) }.exceptionOrNull()
        raisePending(call, rank)
        if (released != null) throw released
    }

    /** `MPI_Win_lock_all`: a shared lock on every rank. */
    public fun lockAll(assertion: Int): Unit = guard {
        val call = "MPI_Win_lock_all"
        checkUsable(call)
        checkAssert(call, assertion, MODE_NOCHECK)
        if (lockAllState != LOCK_NONE || lockedCount > 0)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: this process already holds locks in it; unlock them first",
            )
        if (assertion and MODE_NOCHECK == 0) {
            for (r in 0 until n) acquire(call, r, false)
            lockAllState = LOCK_SHARED
        } else lockAllState = LOCK_NOCHECK
    }

    /** `MPI_Win_unlock_all`. */
    public fun unlockAll(): Unit = guard {
        val call = "MPI_Win_unlock_all"
        checkUsable(call)
        val s = lockAllState
        if (s == LOCK_NONE) throw MPIException.of(ErrorClass.ERR_RMA_SYNC, call, "$name: lockAll was not called")
        try {
            flushEverything()
        } finally {
            if (s != LOCK_NOCHECK) for (r in 0 until n) release(call, r, false)
            lockAllState = LOCK_NONE
            resetTables()
        }
        raisePending(call)
    }

    /** `MPI_Win_flush`: completes, at the origin and at [rank], every operation to [rank] started so far. */
    public fun flush(rank: Int): Unit = guard {
        val call = "MPI_Win_flush"
        checkPassive(call, rank)
        flushTarget(rank)
        raisePending(call, rank)
    }

    /** `MPI_Win_flush_all`. */
    public fun flushAll(): Unit = guard {
        val call = "MPI_Win_flush_all"
        checkPassive(call, -1)
        flushEverything()
        raisePending(call)
    }

    /** `MPI_Win_flush_local`: the origin buffers of operations to [rank] may be reused (here: as [flush]). */
    public fun flushLocal(rank: Int): Unit = flush(rank)

    /** `MPI_Win_flush_local_all` (here: as [flushAll]). */
    public fun flushLocalAll(): Unit = flushAll()

    /** `MPI_Win_sync`: orders this process's loads and stores on window memory against others' (a full fence). */
    public fun sync(): Unit = guard {
        checkUsable("MPI_Win_sync")
        java.lang.invoke.VarHandle.fullFence()
    }

    /**
     * `MPI_Win_free` (collective): completes what is in flight, waits for every process, and releases the memory; any
     * later call raises `MPI_ERR_WIN`. Locks still held raise `MPI_ERR_RMA_SYNC`.
     */
    public fun free(): Unit = guard {
        val call = "MPI_Win_free"
        checkUsable(call)
        if (lockedCount > 0 || lockAllState != LOCK_NONE || accessGroup != null || exposureGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an epoch is still open (unlock, complete or wait first)",
            )
        flushEverything()
        comm.barrier()
        freed = true
        WindowServant.release(mpi)
        baseMr?.close()
        controlMr.close()
        for (a in attached) a.mr.close()
        attached.clear()
        segment?.let {
            it.unmap()
            it.delete()
        }
        comm.free()
    }

    override fun toString(): String = name

    // ## Inside ##

    @JvmSynthetic internal fun addrOf(rank: Int): Long = comm.destAddr[rank]

    @JvmSynthetic
    internal fun noteError(target: Int, e: MPIException) {
        if (pendingErrors[target] == null) pendingErrors[target] = e
    }

    @JvmSynthetic
    internal fun finished(target: Int) {
        inflight.decrementAndGet(target)
    }

    private fun started(target: Int) {
        inflight.incrementAndGet(target)
    }

    /** Raises the failure pending for [target] (-1: for any target), if there is one. */
    private fun raisePending(call: String, target: Int = -1) {
        val t = if (target >= 0) target else pendingErrors.indexOfFirst { it != null }
        if (t < 0) return
        val e = pendingErrors[t] ?: return
        pendingErrors[t] = null
        throw MPIException.of(e.errorClass, call, e.message ?: "")
    }

    private fun done(): Request = DoneRequest(mpi, comm, Status.EMPTY)

    private inline fun <T> guard(block: () -> T): T = comm.guard(block)

    private fun checkUsable(call: String) {
        mpi.checkLive(call)
        if (freed) throw MPIException.of(ErrorClass.ERR_WIN, call, "$name has been freed")
    }

    private fun checkRank(call: String, rank: Int) {
        if (rank !in 0 until n)
            throw MPIException.of(ErrorClass.ERR_RANK, call, "$name: rank $rank is outside 0..${n - 1}")
    }

    private fun checkAssert(call: String, assertion: Int, allowed: Int) {
        if (assertion and allowed.inv() != 0)
            throw MPIException.of(
                ErrorClass.ERR_ASSERT,
                call,
                "$name: assertion $assertion has bits this call does not take (allowed: $allowed)",
            )
    }

    private fun checkPassive(call: String, rank: Int) {
        checkUsable(call)
        if (rank >= 0) checkRank(call, rank)
        val ok = lockAllState != LOCK_NONE || (if (rank >= 0) lockState[rank] != LOCK_NONE else lockedCount > 0)
        if (!ok)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: ${if (rank >= 0) "rank $rank is" else "no rank is"} locked by this process; flush belongs in a lock epoch",
            )
    }

    private fun ranksOf(call: String, group: Group): IntArray {
        val t = group.translateRanks(IntArray(group.size) { it }, comm.getGroup())
        t.forEachIndexed { i, r ->
            if (r == Mpi.UNDEFINED)
                throw MPIException.of(
                    ErrorClass.ERR_GROUP,
                    call,
                    "$name: rank $i of the group is not in the window's group",
                )
        }
        return t
    }

    private fun resetTables() {
        for (i in remoteTables.indices) remoteTables[i] = null
    }

    /** The checks every communication call makes: the window, the epoch, the target, the buffers. */
    private fun prologue(
        call: String,
        target: Int,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        targetCount: Int,
        targetType: Datatype,
        receive: Boolean,
    ) {
        checkUsable(call)
        if (target == Mpi.PROC_NULL) return
        checkRank(call, target)
        val open =
            fenceOpen ||
                lockAllState != LOCK_NONE ||
                lockState[target] != LOCK_NONE ||
                accessGroup?.contains(target) == true
        if (!open)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: no access epoch is open to rank $target; open one with fence, start or lock",
            )
        checkOrigin(call, buf, count, type, targetCount, targetType, receive)
    }

    private fun checkOrigin(
        call: String,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        targetCount: Int,
        targetType: Datatype,
        receive: Boolean,
    ) {
        if (count < 0) throw MPIException.of(ErrorClass.ERR_COUNT, call, "$name: origin count $count must be ≥ 0")
        if (targetCount < 0)
            throw MPIException.of(ErrorClass.ERR_COUNT, call, "$name: target count $targetCount must be ≥ 0")
        type.checkUsable(call)
        targetType.checkUsable(call)
        if (receive && buf.isReadOnly)
            throw MPIException.of(ErrorClass.ERR_BUFFER, call, "$name: the result buffer is read-only")
        type.checkFits(call, if (receive) "result buffer" else "origin buffer", buf.capacity(), 0, count)
        if (count * type.size != targetCount * targetType.size)
            throw MPIException.of(
                ErrorClass.ERR_TYPE,
                call,
                "$name: the origin is $count × $type (${count * type.size} bytes) but the target is $targetCount × $targetType (${targetCount * targetType.size} bytes); they must match",
            )
    }

    private fun checkAccumulate(call: String, op: Op, originType: Datatype, targetType: Datatype): BasicType {
        val b = targetType.basic
        if (b == null || b == BasicType.OPAQUE && op !== Op.REPLACE && op !== Op.NO_OP || !op.isPredefined)
            throw MPIException.of(
                ErrorClass.ERR_OP,
                call,
                "$name: $op on $targetType: one-sided accumulates take a predefined op on elements of one predefined type",
            )
        if (originType.basic != b)
            throw MPIException.of(
                ErrorClass.ERR_TYPE,
                call,
                "$name: origin elements ${originType.basic} differ from target elements $b",
            )
        op.checkApplies(targetType, call)
        return b
    }

    private fun packedBytes(count: Int, type: Datatype): Int = (count * type.size).toInt()

    /** The origin's data as one run: the caller's buffer where its layout is contiguous, else a packed copy. */
    private fun originBytes(origin: ByteBuffer, count: Int, type: Datatype): Pair<UnsafeBuffer, Int> {
        if (type.isContiguous) return UnsafeBuffer(origin) to (if (count == 0) 0 else type.trueLb.toInt())
        val staging = ByteBuffer.allocateDirect(packedBytes(count, type))
        type.packInto(origin, 0, count, staging, 0)
        return UnsafeBuffer(staging) to 0
    }

    /**
     * The target runs of [count] × [type] at [disp] on [target]: (packed offset, length, target offset, key) per run,
     * each checked against the target's window (`MPI_ERR_RMA_RANGE`) and at most [maxRun] bytes.
     */
    private fun runs(call: String, target: Int, disp: Long, count: Int, type: Datatype, maxRun: Int): Runs {
        if (count == 0 || type.size == 0L) return NO_RUNS
        if (disp >= 0 && type.segDisp.size == 1 && (count == 1 || type.isContiguous)) {
            // One run (the common case): no lists.
            val total = count * type.size
            if (total <= maxRun) {
                val first = (if (flavor == FLAVOR_DYNAMIC) disp else disp * units[target]) + type.segDisp[0]
                val (rOff, key) = byteTarget(call, target, first, total, raw = true)
                return Runs(intArrayOf(0), intArrayOf(total.toInt()), longArrayOf(rOff), longArrayOf(key))
            }
        }
        val at = ArrayList<Int>()
        val lens = ArrayList<Int>()
        val remote = ArrayList<Long>()
        val rkeys = ArrayList<Long>()
        var packed = 0
        val startByte = if (flavor == FLAVOR_DYNAMIC) disp else disp * units[target]
        if (disp < 0)
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "$name: target displacement $disp at rank $target is negative",
            )
        for (i in 0 until count) {
            for (s in type.segDisp.indices) {
                var off = startByte + i * type.extent + type.segDisp[s]
                var len = type.segLen[s]
                while (len > 0) {
                    val piece = minOf(len, maxRun.toLong()).toInt()
                    val (rOff, key) = byteTarget(call, target, off, piece.toLong(), raw = true)
                    at += packed
                    lens += piece
                    remote += rOff
                    rkeys += key
                    packed += piece
                    off += piece
                    len -= piece
                }
            }
        }
        return Runs(at.toIntArray(), lens.toIntArray(), remote.toLongArray(), rkeys.toLongArray())
    }

    private class Runs(val at: IntArray, val len: IntArray, val remote: LongArray, val keys: LongArray)

    private val NO_RUNS = Runs(IntArray(0), IntArray(0), LongArray(0), LongArray(0))

    /**
     * Target offset and key of [len] bytes at [offset] on [target] ([offset] is in displacement units unless [raw]),
     * checked against its window.
     */
    private fun byteTarget(call: String, target: Int, offset: Long, len: Long, raw: Boolean = false): Pair<Long, Long> {
        if (flavor == FLAVOR_DYNAMIC) {
            val table = remoteTable(target)
            var i = 0
            while (i < table.size) {
                val a = table[i]
                val l = table[i + 1]
                if (offset >= a && offset + len <= a + l) return (offset - a) to table[i + 2]
                i += 3
            }
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "$name: [$offset, ${offset + len}) at rank $target is not inside memory it has attached",
            )
        }
        val b = if (raw) offset else offset * units[target]
        if (b < 0 || b + len > sizes[target])
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "$name: bytes [$b, ${b + len}) at rank $target fall outside its window of ${sizes[target]} bytes",
            )
        return b to keys[target]
    }

    private fun transfer(
        call: String,
        kind: Int,
        target: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        local: UnsafeBuffer,
        localBase: Int,
        finisher: Runnable?,
    ): Request {
        val runs = runs(call, target, disp, count, type, MAX_RUN)
        val r =
            WindowRequest(
                this,
                call,
                target,
                kind,
                local,
                localBase,
                null,
                null,
                null,
                null,
                runs.at,
                runs.len,
                runs.remote,
                runs.keys,
                finisher,
            )
        r.report = reporting
        started(target)
        mpi.submit(r)
        return r
    }

    /** One run of bytes for the accumulate lock's read-modify-write. */
    private fun piece(call: String, kind: Int, target: Int, local: UnsafeBuffer, at: Pair<Long, Long>): WindowRequest {
        val r =
            WindowRequest(
                this,
                call,
                target,
                kind,
                local,
                0,
                null,
                null,
                null,
                null,
                intArrayOf(0),
                intArrayOf(local.capacity()),
                longArrayOf(at.first),
                longArrayOf(at.second),
                null,
            )
        started(target)
        mpi.submit(r)
        return r
    }

    private fun atomicUpdate(
        call: String,
        target: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        basic: BasicType,
        op: Op,
        local: UnsafeBuffer,
        localBase: Int,
        result: UnsafeBuffer?,
        compare: UnsafeBuffer?,
        finisher: Runnable?,
    ): Request {
        val native = atomicTypeOf(basic)
        if (native != null) {
            val aop = atomicOpOf(op)
            val fetch = result != null
            val max =
                (if (fetch) mpi.ep.fetchAtomicValid(native, aop) else mpi.ep.atomicValid(native, aop)) * native.size
            if (max > 0) {
                val runs = runs(call, target, disp, count, type, max - max % native.size)
                val kind = if (fetch) WindowRequest.FETCH else WindowRequest.ACC
                val r =
                    WindowRequest(
                        this,
                        call,
                        target,
                        kind,
                        local,
                        localBase,
                        result,
                        compare,
                        native,
                        aop,
                        runs.at,
                        runs.len,
                        runs.remote,
                        runs.keys,
                        finisher,
                    )
                r.report = reporting
                started(target)
                mpi.submit(r)
                return r
            }
        }
        // No rail atomic for these elements: read, combine and write back under the target's accumulate lock.
        val runs = runs(call, target, disp, count, type, MAX_RUN)
        val elementType = datatypeOf(basic)
        underAccumulateLock(target) {
            for (i in runs.at.indices) {
                val len = runs.len[i]
                val cur = UnsafeBuffer(ByteBuffer.allocateDirect(len))
                val where = runs.remote[i] to runs.keys[i]
                await(piece(call, WindowRequest.GET, target, cur, where))
                result?.putBytes(runs.at[i], cur, 0, len)
                if (op !== Op.NO_OP) {
                    // target = target op origin: combinePacked computes inout = input op inout.
                    op.combinePacked(local, localBase + runs.at[i], cur, 0, len / basic.size, elementType)
                    await(piece(call, WindowRequest.PUT, target, cur, where))
                }
            }
        }
        finisher?.run()
        return done()
    }

    /** Runs [block] holding [target]'s accumulate lock word (a compare-and-swap spin lock in its control region). */
    private inline fun underAccumulateLock(target: Int, block: () -> Unit) {
        val me = comm.rank + 1L
        while (casWord("MPI_Accumulate (lock)", target, WindowControl.ACC_LOCK, 0, me) != 0L) backOff(
            "MPI_Accumulate",
            target,
        )
        try {
            block()
        } finally {
            swapWord("MPI_Accumulate (unlock)", target, WindowControl.ACC_LOCK, 0)
        }
    }

    /** Takes [target]'s passive-target lock word: exclusive by compare-and-swap from 0, shared by adding 1. */
    private fun acquire(call: String, target: Int, exclusive: Boolean) {
        if (exclusive) {
            while (casWord(call, target, WindowControl.LOCK, 0, EXCLUSIVE) != 0L) backOff(call, target)
        } else {
            while (true) {
                val old = addWord(call, target, WindowControl.LOCK, 1)
                if (old < EXCLUSIVE) return
                addWord(call, target, WindowControl.LOCK, -1)
                backOff(call, target)
            }
        }
    }

    private fun release(call: String, target: Int, exclusive: Boolean) {
        addWord(call, target, WindowControl.LOCK, if (exclusive) -EXCLUSIVE else -1)
    }

    /** Drives progress a little between lock attempts; a target reported dead ends the wait. */
    private fun backOff(call: String, target: Int) {
        mpi.deadPeer(addrOf(target))?.let {
            throw MPIException.of(ErrorClass.ERR_PROC_FAILED, call, "$name: rank $target has failed: $it")
        }
        mpi.progress()
        Thread.onSpinWait()
    }

    private fun casWord(call: String, target: Int, at: Int, expected: Long, value: Long): Long {
        wordOperand.putLong(0, value)
        wordCompare.putLong(0, expected)
        return word(call, target, at, WindowRequest.CAS, AtomicOp.CSWAP)
    }

    private fun addWord(call: String, target: Int, at: Int, delta: Long): Long {
        wordOperand.putLong(0, delta)
        return word(call, target, at, WindowRequest.FETCH, AtomicOp.SUM)
    }

    private fun swapWord(call: String, target: Int, at: Int, value: Long): Long {
        wordOperand.putLong(0, value)
        return word(call, target, at, WindowRequest.FETCH, AtomicOp.ATOMIC_WRITE)
    }

    private fun word(call: String, target: Int, at: Int, kind: Int, aop: AtomicOp): Long {
        val r =
            WindowRequest(
                this,
                call,
                target,
                kind,
                wordOperand,
                0,
                wordResult,
                wordCompare,
                AtomicDatatype.INT64,
                aop,
                intArrayOf(0),
                intArrayOf(8),
                longArrayOf(at.toLong()),
                longArrayOf(controlKeys[target]),
                null,
            )
        started(target)
        mpi.submit(r)
        await(r)
        return wordResult.getLong(0)
    }

    /** Waits for [r] and raises its error (for the window's internal steps). */
    private fun await(r: Request) {
        if (!r.isComplete) mpi.progressUntil { r.isComplete }
        r.waitFor(Status.IGNORED)
    }

    private fun flushTarget(t: Int) {
        if (inflight.get(t) == 0) return
        mpi.progressUntil { inflight.get(t) == 0 }
    }

    private fun flushEverything() {
        for (t in 0 until n) flushTarget(t)
    }

    public companion object {
        /** `MPI_WIN_BASE` … `MPI_WIN_MODEL`: the predefined attribute keys of [getAttr]. */
        public const val WIN_BASE: Int = 0
        public const val WIN_SIZE: Int = 1
        public const val WIN_DISP_UNIT: Int = 2
        public const val WIN_CREATE_FLAVOR: Int = 3
        public const val WIN_MODEL: Int = 4

        public const val FLAVOR_CREATE: Int = 1
        public const val FLAVOR_ALLOCATE: Int = 2
        public const val FLAVOR_DYNAMIC: Int = 3
        public const val FLAVOR_SHARED: Int = 4

        /** `MPI_WIN_UNIFIED`: one copy of window memory; the only model here. */
        public const val UNIFIED: Int = 1
        public const val SEPARATE: Int = 2

        public const val LOCK_EXCLUSIVE: Int = 234
        public const val LOCK_SHARED: Int = 235

        public const val MODE_NOCHECK: Int = 1024
        public const val MODE_NOSTORE: Int = 2048
        public const val MODE_NOPUT: Int = 4096
        public const val MODE_NOPRECEDE: Int = 8192
        public const val MODE_NOSUCCEED: Int = 16384

        private const val LOCK_NONE = 0
        private const val LOCK_NOCHECK = 1
        private const val EXCLUSIVE = 1L shl 32
        private const val TAG_POST = 1
        private const val TAG_DONE = 2
        /** The longest run one RMA piece carries. */
        private const val MAX_RUN = 1 shl 20
        private const val FIRST_KEYVAL = 1000
        private val NOTHING: ByteBuffer = ByteBuffer.allocate(0)
        private val ids = java.util.concurrent.atomic.AtomicInteger()
        private val keyvals = java.util.concurrent.atomic.AtomicInteger(FIRST_KEYVAL)

        private fun nextId() = ids.incrementAndGet()

        /** `MPI_Win_create_keyval` (no copy or delete callbacks: windows are never duplicated). */
        @JvmStatic public fun createKeyval(): Int = keyvals.getAndIncrement()

        /** `MPI_Get_address`: the address of byte [offset] of a direct [buffer], as dynamic windows take it. */
        @JvmStatic
        @JvmOverloads
        public fun address(buffer: ByteBuffer, offset: Int = 0): Long {
            if (!buffer.isDirect)
                throw MPIException.of(
                    ErrorClass.ERR_BUFFER,
                    "MPI_Get_address",
                    "the buffer is on the heap; only direct buffers have an address",
                )
            return BufferUtil.address(buffer) + offset
        }

        /**
         * `MPI_Win_create` (collective over [comm]): the first [size] bytes of [base] (direct) are this process's
         * window; target displacements here are in units of [dispUnit] bytes.
         */
        @JvmStatic
        public fun create(base: ByteBuffer, size: Long, dispUnit: Int, comm: Intracomm): Window =
            comm.guard {
                val call = "MPI_Win_create"
                checkArgs(call, comm, size, dispUnit)
                if (!base.isDirect)
                    throw MPIException.of(
                        ErrorClass.ERR_BASE,
                        call,
                        "the base buffer is on the heap; window memory must be direct (ByteBuffer.allocateDirect)",
                    )
                if (size > base.capacity())
                    throw MPIException.of(
                        ErrorClass.ERR_SIZE,
                        call,
                        "size $size exceeds the base buffer's ${base.capacity()} bytes",
                    )
                Window(comm, FLAVOR_CREATE, base, size, dispUnit, null, 0)
            }

        /** `MPI_Win_allocate` (collective): [size] bytes of new direct memory, native order, as [base]. */
        @JvmStatic
        public fun allocate(size: Long, dispUnit: Int, comm: Intracomm): Window =
            comm.guard {
                checkArgs("MPI_Win_allocate", comm, size, dispUnit)
                val mem =
                    BufferUtil.allocateDirectAligned(alignUp(maxOf(size, 1)).toInt(), 64).order(ByteOrder.nativeOrder())
                Window(comm, FLAVOR_ALLOCATE, mem, size, dispUnit, null, 0)
            }

        /**
         * `MPI_Win_allocate_shared` (collective; every process of [comm] on this host): one shared-memory segment holds
         * every process's part, in rank order; [sharedQuery] gives any part for direct loads and stores.
         */
        @JvmStatic
        public fun allocateShared(size: Long, dispUnit: Int, comm: Intracomm): Window =
            comm.guard {
                val call = "MPI_Win_allocate_shared"
                checkArgs(call, comm, size, dispUnit)
                val n = comm.size
                val info =
                    ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(0, HostIdentity.id).putLong(8, size)
                val all = ByteBuffer.allocate(16 * n).order(ByteOrder.nativeOrder())
                comm.allgather(info, 2, Datatype.LONG, all, 2, Datatype.LONG)
                val offsets = LongArray(n + 1)
                for (r in 0 until n) {
                    if (all.getLong(r * 16) != HostIdentity.id)
                        throw MPIException.of(
                            ErrorClass.ERR_RMA_SHARED,
                            call,
                            "rank $r of ${comm.getName()} is on another host; split the communicator by host (COMM_TYPE_SHARED) first",
                        )
                    offsets[r + 1] = offsets[r] + alignUp(all.getLong(r * 16 + 8))
                }
                // Rank 0 names and creates the segment; the name travels in a broadcast; the file is unlinked at free.
                val nameBuf = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
                val dir = SharedMemoryDir.of(comm.mpi.settings)
                var seg: ShmSegment? = null
                if (comm.rank == 0) {
                    val id = java.util.concurrent.ThreadLocalRandom.current().nextLong() and Long.MAX_VALUE
                    seg =
                        ShmSegment.create(
                            dir.resolve("braid-win-${java.lang.Long.toHexString(id)}.seg"),
                            maxOf(offsets[n], 8),
                        )
                    nameBuf.putLong(0, id)
                }
                comm.bcast(nameBuf, 1, Datatype.LONG, 0)
                if (comm.rank != 0) {
                    val path = dir.resolve("braid-win-${java.lang.Long.toHexString(nameBuf.getLong(0))}.seg")
                    seg =
                        ShmSegment.open(path, maxOf(offsets[n], 8))
                            ?: throw MPIException.of(
                                ErrorClass.ERR_RMA_SHARED,
                                call,
                                "the segment $path rank 0 made cannot be opened here",
                            )
                }
                comm.barrier()
                val me = comm.rank
                val whole = seg!!.buffer.byteBuffer()!!.duplicate().clear()
                whole.position(offsets[me].toInt()).limit((offsets[me] + maxOf(size, 0)).toInt())
                val mine = whole.slice().order(ByteOrder.nativeOrder())
                Window(comm, FLAVOR_SHARED, mine, size, dispUnit, seg, offsets[me])
            }

        /** `MPI_Win_create_dynamic` (collective): a window with no memory until [attach]. */
        @JvmStatic
        public fun createDynamic(comm: Intracomm): Window =
            comm.guard {
                comm.checkUsable("MPI_Win_create_dynamic")
                Window(comm, FLAVOR_DYNAMIC, null, 0, 1, null, 0)
            }

        private fun checkArgs(call: String, comm: Intracomm, size: Long, dispUnit: Int) {
            comm.checkUsable(call)
            if (size < 0 || size > Int.MAX_VALUE)
                throw MPIException.of(ErrorClass.ERR_SIZE, call, "size $size is outside 0..${Int.MAX_VALUE} bytes")
            if (dispUnit <= 0)
                throw MPIException.of(
                    ErrorClass.ERR_DISP,
                    call,
                    "displacement unit $dispUnit must be > 0 (1 for bytes, the element size for arrays)",
                )
        }

        private fun alignUp(v: Long): Long = (v + 63) and 63L.inv()

        /** The rail's atomic type for elements of [b], or null where it has none. */
        private fun atomicTypeOf(b: BasicType): AtomicDatatype? =
            when (b) {
                BasicType.INT32 -> AtomicDatatype.INT32
                BasicType.UINT32 -> AtomicDatatype.UINT32
                BasicType.INT64 -> AtomicDatatype.INT64
                BasicType.UINT64 -> AtomicDatatype.UINT64
                BasicType.FLOAT32 -> AtomicDatatype.FLOAT
                BasicType.FLOAT64 -> AtomicDatatype.DOUBLE
                else -> null
            }

        private fun atomicOpOf(op: Op): AtomicOp =
            when (op) {
                Op.MAX -> AtomicOp.MAX
                Op.MIN -> AtomicOp.MIN
                Op.SUM -> AtomicOp.SUM
                Op.PROD -> AtomicOp.PROD
                Op.LAND -> AtomicOp.LAND
                Op.BAND -> AtomicOp.BAND
                Op.LOR -> AtomicOp.LOR
                Op.BOR -> AtomicOp.BOR
                Op.LXOR -> AtomicOp.LXOR
                Op.BXOR -> AtomicOp.BXOR
                Op.REPLACE -> AtomicOp.ATOMIC_WRITE
                Op.NO_OP -> AtomicOp.ATOMIC_READ
                else -> throw MPIException.of(ErrorClass.ERR_OP, "MPI_Accumulate", "$op has no atomic form")
            }

        /** The predefined datatype of one element of [b], for the locked read-modify-write's combine. */
        private fun datatypeOf(b: BasicType): Datatype =
            when (b) {
                BasicType.INT8 -> Datatype.BYTE
                BasicType.INT16 -> Datatype.SHORT
                BasicType.INT32 -> Datatype.INT
                BasicType.INT64 -> Datatype.LONG
                BasicType.UINT8 -> Datatype.UINT8_T
                BasicType.UINT16 -> Datatype.UINT16_T
                BasicType.UINT32 -> Datatype.UINT32_T
                BasicType.UINT64 -> Datatype.UINT64_T
                BasicType.FLOAT32 -> Datatype.FLOAT
                BasicType.FLOAT64 -> Datatype.DOUBLE
                BasicType.BOOL -> Datatype.BOOLEAN
                BasicType.CHAR16 -> Datatype.CHAR
                BasicType.OPAQUE -> Datatype.BYTE
                BasicType.PAIR_INT_INT -> Datatype.INT2
                BasicType.PAIR_SHORT_INT -> Datatype.SHORT_INT
                BasicType.PAIR_LONG_INT -> Datatype.LONG_INT
                BasicType.PAIR_FLOAT_INT -> Datatype.FLOAT_INT
                BasicType.PAIR_DOUBLE_INT -> Datatype.DOUBLE_INT
            }
    }
}

/**
 * The control region every process of a window registers beside its window memory: the words peers take locks in, and a
 * dynamic window's attach table, which peers read before addressing attached memory.
 *
 * ```
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  LOCK: passive-target lock word (INT64): shared holders in    |  0
 *  |  the low 32 bits, 1 << 32 while an exclusive holder has it    |
 *  +---------------------------------------------------------------+
 *  |  ACC_LOCK (INT64): 0 free, else the holder's rank + 1         |  8
 *  +---------------------------------------------------------------+
 *  |  ATTACH_COUNT (INT64), written last (release order)           | 16
 *  +---------------------------------------------------------------+
 *  |  VERSION (INT64) = 1                                          | 24
 *  +---------------------------------------------------------------+
 *  |  ATTACH_MAX entries: address, length, key (3 × INT64)         | 32
 *  +---------------------------------------------------------------+
 * ```
 */
internal object WindowControl {
    const val LOCK = 0
    const val ACC_LOCK = 8
    const val ATTACH_COUNT = 16
    const val VERSION = 24
    const val ATTACH = 32
    const val ENTRY = 24
    const val ATTACH_MAX = 64
    const val LENGTH = ATTACH + ATTACH_MAX * ENTRY
}
