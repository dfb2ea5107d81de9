package braid.mpi

import braid.core.MemoryRegion
import braid.core.MrAccess
import java.nio.ByteBuffer
import java.nio.ByteOrder
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
 * the window is made. The control regions, and the memory of [allocate] and [allocateShared] windows, are in a segment
 * the processes of each host share and map ([WindowCreation.hostPart]). To a target on its host a process does the
 * operation itself on that mapping ([WindowDirect]): copies for [put] and [get], the CPU's compare-and-swap per element
 * for the accumulates and the lock words. To any other target, [put] is the rail's RMA write, [get] its read;
 * [accumulate] and the fetching ops on 32- and 64-bit integers, floats and doubles are the rail's atomics, which the
 * target applies under its domain's lock by the same compare-and-swap ([braid.core.AtomicOps]), so updates from any
 * number of origins, direct or remote, are atomic per element. Types the rail has no atomic for (bytes, shorts, chars,
 * booleans, the MAXLOC pairs) are updated under an accumulate lock word in the target's control region, taken by
 * compare-and-swap, so they are never lost either: read, combine, write back, release.
 *
 * Passive target: a direct operation needs nothing of the target. The rail's target side runs inside the target
 * process's progress: while any window of a process lives, a [WindowServant] thread drives that progress whenever the
 * application does not, so a lock epoch completes while the target computes outside MPI. It costs the target one daemon
 * thread that parks between 1 µs and 200 µs when idle (about 5,000 wake-ups a second at most), and the domain lock for
 * each request it serves.
 *
 * Errors go through the window's error handler (the communicator's at creation; [setErrhandler]): an access outside the
 * target's window raises `MPI_ERR_RMA_RANGE` before anything is sent; an operation outside an epoch, or an unlock
 * without a lock, `MPI_ERR_RMA_SYNC`; a freed window `MPI_ERR_WIN`; an op a type does not take `MPI_ERR_OP`; a bad
 * displacement unit `MPI_ERR_DISP`. Failures of operations in flight (a dead target) are raised by the next
 * synchronisation call (or the request's wait) naming the target.
 *
 * This class is the API; the work is by concern: [WindowCreation] (creation, host segments, [WindowAttachments] for
 * dynamic windows), [WindowTargets] (what is known of every process, addressing, operations in flight), [WindowOps]
 * (put and get), [WindowAccumulate] (the accumulate paths), [WindowDirect] (both, on a same-host target's mapping),
 * [WindowEpochs] (synchronisation), [WindowLocks] (the lock words, [WindowControl] their layout) and [WindowErrors]
 * (argument checks).
 */
public class Window
private constructor(
    parent: Intracomm,
    /** How the window was made: [FLAVOR_CREATE], [FLAVOR_ALLOCATE], [FLAVOR_SHARED] or [FLAVOR_DYNAMIC]. */
    public val flavor: Int,
    base: ByteBuffer?,
    size: Long,
    dispUnit: Int,
    /** The segment this process shares with the others of its host ([WindowCreation.hostPart]). */
    private val host: WindowCreation.HostPart,
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

    private val control: ByteBuffer = host.control
    private val controlMr: MemoryRegion = mpi.domain.registerMemory(control, MrAccess.REMOTE)
    private val baseMr: MemoryRegion? =
        if (base != null && size > 0)
            mpi.domain.registerMemory(base.duplicate().clear().limit(size.toInt()), MrAccess.REMOTE)
        else null

    private val n = comm.size
    private val targets = WindowTargets(this, n)
    private val errors = WindowErrors(this, n)
    private val attachments = WindowAttachments(this, UnsafeBuffer(control))
    private val locks = WindowLocks(this, targets)
    private val direct = WindowDirect(this, targets, locks)
    private val epochs = WindowEpochs(this, n, targets, locks, errors)
    private val ops = WindowOps(this, targets, epochs, errors, direct)
    private val accumulates = WindowAccumulate(this, targets, ops, locks, errors, direct)
    private val attributes = HashMap<Int, Any?>()
    @Volatile private var freed = false

    init {
        // (Not `direct`: that name is the window's WindowDirect.)
        val mapped = mpi.settings[MpiParams.WIN_DIRECT]
        val locked = mapped && mpi.settings[MpiParams.WIN_ACC_LOCK] && host.dataAt.all { it >= 0 }
        targets.exchange(baseMr?.key ?: 0, size, dispUnit, controlMr.key, locked)
        if (mapped) targets.mapHost(host.segment.buffer, host.dataAt, host.controlAt)
        WindowServant.acquire(mpi)
    }

    @JvmSynthetic internal fun name(): String = name

    /**
     * For tests: takes [target]'s accumulate lock word and keeps it, as a process that dies inside an accumulate leaves
     * it.
     */
    @JvmSynthetic
    internal fun holdAccumulateLock(target: Int) {
        check(locks.casWord("holdAccumulateLock", target, WindowControl.ACC_LOCK, 0, comm.rank + 1L) == 0L)
    }

    /** Whether this window's accumulates run under the target's lock with a plain loop ([WindowTargets]). */
    @get:JvmSynthetic
    internal val lockedAccumulates: Boolean
        get() = targets.lockedAccumulates

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
                errors.checkKeyval("MPI_Win_get_attr", key)
                attributes[key]
            }
        }
    }

    /** `MPI_Win_set_attr`. */
    public fun setAttr(keyval: Int, value: Any?): Unit = guard {
        checkUsable("MPI_Win_set_attr")
        errors.checkKeyval("MPI_Win_set_attr", keyval)
        attributes[keyval] = value
    }

    /** `MPI_Win_delete_attr`. */
    public fun deleteAttr(keyval: Int): Unit = guard {
        checkUsable("MPI_Win_delete_attr")
        errors.checkKeyval("MPI_Win_delete_attr", keyval)
        attributes.remove(keyval)
    }

    // ## Shared windows ##

    /**
     * `MPI_Win_shared_query`: rank [rank]'s part of a shared window as a buffer over the same memory (native order),
     * which this process loads and stores directly; [Mpi.PROC_NULL] gives the first non-empty part. Stores are seen by
     * the others after [sync] and a synchronisation between the processes (a barrier).
     */
    public fun sharedQuery(rank: Int): ByteBuffer = guard {
        checkUsable("MPI_Win_shared_query")
        if (flavor != FLAVOR_SHARED)
            throw MPIException.of(
                ErrorClass.ERR_RMA_FLAVOR,
                "MPI_Win_shared_query",
                "$name was not made by allocateShared; only shared windows can be queried",
            )
        val r =
            if (rank == Mpi.PROC_NULL) (0 until n).firstOrNull { targets.sizes[it] > 0 } ?: 0
            else {
                errors.checkRank("MPI_Win_shared_query", rank)
                rank
            }
        val whole = host.segment.buffer.byteBuffer()!!.duplicate().clear()
        whole.position(host.dataAt[r].toInt()).limit((host.dataAt[r] + targets.sizes[r]).toInt())
        whole.slice().order(ByteOrder.nativeOrder())
    }

    /** The displacement unit of rank [rank]'s part ([sharedQuery]'s `disp_unit`). */
    public fun sharedDispUnit(rank: Int): Int = guard {
        errors.checkRank("MPI_Win_shared_query", rank)
        targets.units[rank]
    }

    // ## Dynamic windows ##

    /**
     * `MPI_Win_attach`: exposes the first [size] bytes of [buffer] (direct) in this dynamic window; peers address them
     * by [address] of the buffer (plus a byte offset), as `MPI_Get_address` gives it.
     */
    public fun attach(buffer: ByteBuffer, size: Long): Unit = guard {
        checkUsable("MPI_Win_attach")
        attachments.attach(buffer, size)
    }

    /** `MPI_Win_detach`: [buffer] is no longer exposed; peers that address it get `MPI_ERR_RMA_RANGE`. */
    public fun detach(buffer: ByteBuffer): Unit = guard {
        checkUsable("MPI_Win_detach")
        attachments.detach(buffer)
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
        ops.reporting = true
        try {
            rPut(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType)
        } finally {
            ops.reporting = false
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
    ): Request = guard { ops.put(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType) }

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
        ops.reporting = true
        try {
            rGet(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType)
        } finally {
            ops.reporting = false
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
    ): Request = guard { ops.get(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType) }

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
        ops.reporting = true
        try {
            rAccumulate(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType, op)
        } finally {
            ops.reporting = false
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
        accumulates.accumulate(origin, originCount, originType, targetRank, targetDisp, targetCount, targetType, op)
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
        accumulates.getAccumulate(
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
    ): Unit = guard { accumulates.compareAndSwap(origin, compare, result, type, targetRank, targetDisp) }

    // ## Synchronisation ##

    /**
     * `MPI_Win_fence`: completes every operation this process started in the window and, with a barrier, every one
     * targeting it; opens the next fence epoch unless [assertion] has [MODE_NOSUCCEED]. [assertion] is a sum of
     * [MODE_NOSTORE], [MODE_NOPUT], [MODE_NOPRECEDE] and [MODE_NOSUCCEED] (0 for none).
     */
    public fun fence(assertion: Int): Unit = guard { epochs.fence("MPI_Win_fence", assertion) }

    /** `MPI_Win_start`: opens an access epoch to [group] (ranks of [getGroup]); waits for each of them to [post]. */
    public fun start(group: Group, assertion: Int): Unit = guard { epochs.start("MPI_Win_start", group, assertion) }

    /** `MPI_Win_complete`: completes the operations of the epoch [start] opened and tells each target so. */
    public fun complete(): Unit = guard { epochs.complete("MPI_Win_complete") }

    /** `MPI_Win_post`: opens an exposure epoch to the ranks of [group], which then [start] an access epoch. */
    public fun post(group: Group, assertion: Int): Unit = guard { epochs.post("MPI_Win_post", group, assertion) }

    /** `MPI_Win_wait`: waits until every origin of the exposure epoch has called [complete]. */
    public fun waitFor(): Unit = guard { epochs.waitFor("MPI_Win_wait") }

    /** `MPI_Win_test`: [waitFor] if every origin has completed (true), else false and the epoch stays open. */
    public fun test(): Boolean = guard { epochs.test("MPI_Win_test") }

    /**
     * `MPI_Win_lock`: a passive-target access epoch to [rank], [LOCK_SHARED] or [LOCK_EXCLUSIVE]; returns once the lock
     * is held (the target need not call anything). [MODE_NOCHECK] skips taking it (the caller knows nobody conflicts).
     */
    public fun lock(lockType: Int, rank: Int, assertion: Int): Unit = guard {
        epochs.lock("MPI_Win_lock", lockType, rank, assertion)
    }

    /** `MPI_Win_unlock`: completes the epoch's operations at [rank] and releases its lock. */
    public fun unlock(rank: Int): Unit = guard { epochs.unlock("MPI_Win_unlock", rank) }

    /** `MPI_Win_lock_all`: a shared lock on every rank. */
    public fun lockAll(assertion: Int): Unit = guard { epochs.lockAll("MPI_Win_lock_all", assertion) }

    /** `MPI_Win_unlock_all`. */
    public fun unlockAll(): Unit = guard { epochs.unlockAll("MPI_Win_unlock_all") }

    /** `MPI_Win_flush`: completes, at the origin and at [rank], every operation to [rank] started so far. */
    public fun flush(rank: Int): Unit = guard { epochs.flush("MPI_Win_flush", rank) }

    /** `MPI_Win_flush_all`. */
    public fun flushAll(): Unit = guard { epochs.flushAll("MPI_Win_flush_all") }

    /**
     * `MPI_Win_flush_local`: once it returns, the origin (and result) buffers of every operation to [rank] started so
     * far may be reused; the operations may not be complete at [rank] yet. Puts of up to 512 bytes, and puts and
     * accumulates from a non-contiguous origin, carry a copy of their data, so they are locally complete when called;
     * the others complete locally when they complete.
     */
    public fun flushLocal(rank: Int): Unit = guard { epochs.flushLocal("MPI_Win_flush_local", rank) }

    /** `MPI_Win_flush_local_all`: [flushLocal] for every rank. */
    public fun flushLocalAll(): Unit = guard { epochs.flushLocalAll("MPI_Win_flush_local_all") }

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
        epochs.checkClosed(call)
        targets.flushEverything()
        comm.barrier()
        freed = true
        WindowServant.release(mpi)
        baseMr?.close()
        controlMr.close()
        attachments.close()
        host.segment.unmap()
        comm.free()
    }

    override fun toString(): String = name

    // ## Inside (for WindowRequest and the Window* parts) ##

    @JvmSynthetic internal fun addrOf(rank: Int): Long = comm.destAddr[rank]

    @JvmSynthetic internal fun noteError(target: Int, e: MPIException): Unit = targets.noteError(target, e)

    @JvmSynthetic internal fun finished(target: Int, borrowed: Boolean): Unit = targets.finished(target, borrowed)

    @JvmSynthetic
    internal fun checkUsable(call: String) {
        mpi.checkLive(call)
        if (freed) throw MPIException.of(ErrorClass.ERR_WIN, call, "$name has been freed")
    }

    private inline fun <T> guard(block: () -> T): T = comm.guard(block)

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

        private val ids = java.util.concurrent.atomic.AtomicInteger()
        private val keyvals = java.util.concurrent.atomic.AtomicInteger(WindowErrors.FIRST_KEYVAL)

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
                WindowCreation.checkArgs(call, comm, size, dispUnit)
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
                val host = WindowCreation.hostPart(call, comm, size, withData = false, oneHost = false)
                Window(comm, FLAVOR_CREATE, base, size, dispUnit, host)
            }

        /**
         * `MPI_Win_allocate` (collective): [size] bytes of new direct memory, native order, as [base]. The memory is in
         * a segment the processes of this host share, so those of them that target it read, write and update it
         * directly (loads, stores and the CPU's atomics), as MPICH serves a window on one node from shared memory.
         */
        @JvmStatic
        public fun allocate(size: Long, dispUnit: Int, comm: Intracomm): Window =
            comm.guard {
                val call = "MPI_Win_allocate"
                WindowCreation.checkArgs(call, comm, size, dispUnit)
                val host = WindowCreation.hostPart(call, comm, size, withData = true, oneHost = false)
                Window(comm, FLAVOR_ALLOCATE, host.buffer, size, dispUnit, host)
            }

        /**
         * `MPI_Win_allocate_shared` (collective; every process of [comm] on this host): one shared-memory segment holds
         * every process's part, in rank order; [sharedQuery] gives any part for direct loads and stores.
         */
        @JvmStatic
        public fun allocateShared(size: Long, dispUnit: Int, comm: Intracomm): Window =
            comm.guard {
                val call = "MPI_Win_allocate_shared"
                WindowCreation.checkArgs(call, comm, size, dispUnit)
                val host = WindowCreation.hostPart(call, comm, size, withData = true, oneHost = true)
                Window(comm, FLAVOR_SHARED, host.buffer, size, dispUnit, host)
            }

        /** `MPI_Win_create_dynamic` (collective): a window with no memory until [attach]. */
        @JvmStatic
        public fun createDynamic(comm: Intracomm): Window =
            comm.guard {
                val call = "MPI_Win_create_dynamic"
                comm.checkUsable(call)
                Window(comm, FLAVOR_DYNAMIC, null, 0, 1, WindowCreation.hostPart(call, comm, 0, false, false))
            }
    }
}
