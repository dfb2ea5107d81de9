package braid.mpi

import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.atomic.AtomicIntegerArray
import org.agrona.BufferUtil
import org.agrona.concurrent.AtomicBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * What one process of a [Window] knows of every process of it, and how it addresses them: each one's memory key, size,
 * displacement unit and control-region key (exchanged when the window is made), where the processes of its host have
 * their memory and control region in the mapping it shares with them ([mapHost]: those it reaches directly), a dynamic
 * window's attach tables as last read, the operations in flight to each, and the first failure of a plain operation to
 * each, which the next synchronisation raises.
 *
 * [runs] and [byteTarget] turn a target displacement and datatype into checked target byte runs (`MPI_ERR_RMA_RANGE`
 * before anything is sent); [submit] posts a [WindowRequest] counting it in flight; [flushTarget] waits for them.
 */
internal class WindowTargets(private val win: Window, private val n: Int) {
    val keys = LongArray(n)
    val sizes = LongArray(n)
    val units = IntArray(n)
    val controlKeys = LongArray(n)

    /** The host segment's mapping here (every process of this host's memory and control region). */
    var shm: AtomicBuffer = UnsafeBuffer(ByteArray(0))
        private set

    /** Per rank, where its window memory is in [shm] (-1: not there, reach it through the rail). */
    private var dataAt = LongArray(n) { -1 }
    /** Per rank, where its control region is in [shm] (-1: on another host). */
    private var controlAt = LongArray(n) { -1 }
    private val inflight = AtomicIntegerArray(n)
    /** Per target, the operations in flight that still use the caller's memory (its origin or result buffer). */
    private val borrowing = AtomicIntegerArray(n)
    /** Per target, the first failure of a plain (not request-based) operation, raised by the next synchronisation. */
    private val pendingErrors = arrayOfNulls<MPIException>(n)
    /** Each target's attach table as last read (address, length, key triples); cleared at every synchronisation. */
    private val remoteTables = arrayOfNulls<LongArray>(n)

    /**
     * Whether every accumulate-family operation on this window, from every process, is done on the host mapping under
     * the target's accumulate lock with a plain loop ([WindowDirect.update]), as MPICH does on one node: set when every
     * process of the window reaches every other's memory directly, so no operation can reach a target through the rail,
     * whose target side updates element by element with compare-and-swap and takes no lock. Agreed in [exchange], as
     * one process alone cannot know that of the others.
     */
    var lockedAccumulates: Boolean = false
        private set

    /**
     * Every process's (memory key, size, unit, control key), from an allgather over the window, and whether each one
     * reaches every process's memory directly and asks for the locked scheme ([reachesAll]), which decides
     * [lockedAccumulates].
     */
    fun exchange(key: Long, size: Long, dispUnit: Int, controlKey: Long, reachesAll: Boolean) {
        val mine = ByteBuffer.allocate(FIELDS * 8).order(ByteOrder.nativeOrder())
        mine.putLong(0, key).putLong(8, size).putLong(16, dispUnit.toLong()).putLong(24, controlKey)
        mine.putLong(32, if (reachesAll) 1 else 0)
        val all = ByteBuffer.allocate(n * FIELDS * 8).order(ByteOrder.nativeOrder())
        win.comm.allgather(mine, FIELDS, Datatype.LONG, all, FIELDS, Datatype.LONG)
        var everyone = true
        for (r in 0 until n) {
            val at = r * FIELDS * 8
            keys[r] = all.getLong(at)
            sizes[r] = all.getLong(at + 8)
            units[r] = all.getLong(at + 16).toInt()
            controlKeys[r] = all.getLong(at + 24)
            everyone = everyone && all.getLong(at + 32) == 1L
        }
        lockedAccumulates = everyone
    }

    /** The host segment [shm] and where each process of this host has its memory and control region in it. */
    fun mapHost(shm: AtomicBuffer, dataAt: LongArray, controlAt: LongArray) {
        this.shm = shm
        this.dataAt = dataAt
        this.controlAt = controlAt
    }

    /**
     * Where rank [t]'s window memory starts in [shm], if this process reaches it directly (same host, memory in the
     * segment: `allocate` and `allocateShared` windows), else -1. A target known dead is not reached directly: its
     * operations go to the rail, which fails them naming it.
     */
    fun directData(t: Int): Long {
        val at = dataAt[t]
        if (at < 0 || win.mpi.deadPeer(win.addrOf(t)) != null) return -1
        return at
    }

    /** Where rank [t]'s control region starts in [shm] if it is on this host and alive, else -1. */
    fun directControl(t: Int): Long {
        val at = controlAt[t]
        if (at < 0 || win.mpi.deadPeer(win.addrOf(t)) != null) return -1
        return at
    }

    // ## In flight ##

    fun finished(target: Int, borrowed: Boolean) {
        if (borrowed) borrowing.decrementAndGet(target)
        inflight.decrementAndGet(target)
    }

    /** Posts [r], counted in flight to its target (and as using the caller's memory, if it does) until it completes. */
    fun submit(r: WindowRequest): WindowRequest {
        inflight.incrementAndGet(r.target)
        if (r.borrows) borrowing.incrementAndGet(r.target)
        win.mpi.submit(r)
        return r
    }

    /** Waits for [r] and raises its error (for the window's internal steps). */
    fun await(r: Request) {
        if (!r.isComplete) win.mpi.progressUntil { r.isComplete }
        r.waitFor(Status.IGNORED)
    }

    fun flushTarget(t: Int) {
        // What was done on the mapping (same-host targets) is complete already; the fence orders it before what
        // follows.
        java.lang.invoke.VarHandle.fullFence()
        if (inflight.get(t) == 0) return
        win.mpi.progressUntil { inflight.get(t) == 0 }
    }

    fun flushEverything() {
        for (t in 0 until n) flushTarget(t)
    }

    /**
     * Local completion at [t]: waits until no operation to it still uses the caller's memory (operations that carry a
     * copy of their origin may still be on their way).
     */
    fun flushLocal(t: Int) {
        if (borrowing.get(t) == 0) return
        win.mpi.progressUntil { borrowing.get(t) == 0 }
    }

    fun noteError(target: Int, e: MPIException) {
        if (pendingErrors[target] == null) pendingErrors[target] = e
    }

    /** Raises the failure pending for [target] (-1: for any target), if there is one. */
    fun raisePending(call: String, target: Int = -1) {
        val t = if (target >= 0) target else pendingErrors.indexOfFirst { it != null }
        if (t < 0) return
        val e = pendingErrors[t] ?: return
        pendingErrors[t] = null
        throw MPIException.of(e.errorClass, call, e.message ?: "")
    }

    // ## Addressing ##

    /** Forgets every attach table read (a synchronisation: peers may have attached or detached since). */
    fun resetTables() {
        for (i in remoteTables.indices) remoteTables[i] = null
    }

    /** Forgets rank [t]'s attach table (its lock epoch ended). */
    fun forgetTable(t: Int) {
        remoteTables[t] = null
    }

    /** Rank [t]'s attach table, read once per epoch. */
    private fun remoteTable(t: Int): LongArray {
        remoteTables[t]?.let {
            return it
        }
        val buf = UnsafeBuffer(BufferUtil.allocateDirectAligned(WindowControl.SHARED_HOLDERS, 64))
        val r =
            WindowRequest(
                win,
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
                intArrayOf(WindowControl.SHARED_HOLDERS),
                longArrayOf(0),
                longArrayOf(controlKeys[t]),
                null,
            )
        r.borrows = false
        await(submit(r))
        val count = buf.getLong(WindowControl.ATTACH_COUNT).toInt().coerceIn(0, WindowControl.ATTACH_MAX)
        val table = LongArray(count * 3)
        for (i in 0 until count) for (j in 0 until 3) table[i * 3 + j] =
            buf.getLong(WindowControl.ATTACH + i * WindowControl.ENTRY + j * 8)
        remoteTables[t] = table
        return table
    }

    /**
     * The target runs of [count] × [type] at [disp] on [target]: (packed offset, length, target offset, key) per run,
     * each checked against the target's window (`MPI_ERR_RMA_RANGE`). Adjacent bytes are one run (a contiguous range is
     * one, whatever its element count), split only where a run passes [maxRun] bytes, at a multiple of [unit] (the
     * element size an atomic or a combine must keep whole).
     */
    fun runs(call: String, target: Int, disp: Long, count: Int, type: Datatype, maxRun: Int, unit: Int = 1): Runs {
        if (count == 0 || type.size == 0L) return NO_RUNS
        val dynamic = win.flavor == Window.FLAVOR_DYNAMIC
        val total = count * type.size
        val contiguous = type.segDisp.size == 1 && (count == 1 || type.isContiguous)
        if (disp >= 0 && contiguous && total <= maxRun) {
            // One run (the common case): no lists.
            val first = (if (dynamic) disp else disp * units[target]) + type.segDisp[0]
            val (rOff, key) = byteTarget(call, target, first, total, raw = true)
            return Runs(intArrayOf(0), intArrayOf(total.toInt()), longArrayOf(rOff), longArrayOf(key))
        }
        if (disp < 0)
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "${win.name()}: target displacement $disp at rank $target is negative",
            )
        val limit = maxOf(unit, maxRun - maxRun % unit)
        val out = RunList(this, call, target, limit)
        val startByte = if (dynamic) disp else disp * units[target]
        if (contiguous) out.add(startByte + type.segDisp[0], total, 0)
        else {
            var packed = 0L
            for (i in 0 until count) {
                for (s in type.segDisp.indices) {
                    out.add(startByte + i * type.extent + type.segDisp[s], type.segLen[s], packed)
                    packed += type.segLen[s]
                }
            }
        }
        return out.finish()
    }

    /** Builds [Runs]: byte ranges in packed order, merged where one starts where the last ended, split at [limit]. */
    private class RunList(
        private val targets: WindowTargets,
        private val call: String,
        private val target: Int,
        private val limit: Int,
    ) {
        private var at = IntArray(4)
        private var len = IntArray(4)
        private var remote = LongArray(4)
        private var keys = LongArray(4)
        private var size = 0
        private var runStart = 0L
        private var runLen = 0L
        private var runPacked = 0L

        fun add(off: Long, length: Long, packed: Long) {
            if (length == 0L) return
            if (runLen > 0 && off == runStart + runLen) {
                runLen += length
                return
            }
            flush()
            runStart = off
            runLen = length
            runPacked = packed
        }

        private fun flush() {
            while (runLen > 0) {
                val piece = minOf(runLen, limit.toLong()).toInt()
                val (rOff, key) = targets.byteTarget(call, target, runStart, piece.toLong(), raw = true)
                if (size == at.size) {
                    at = at.copyOf(size * 2)
                    len = len.copyOf(size * 2)
                    remote = remote.copyOf(size * 2)
                    keys = keys.copyOf(size * 2)
                }
                at[size] = runPacked.toInt()
                len[size] = piece
                remote[size] = rOff
                keys[size] = key
                size++
                runStart += piece
                runLen -= piece
                runPacked += piece
            }
        }

        fun finish(): Runs {
            flush()
            return Runs(at.copyOf(size), len.copyOf(size), remote.copyOf(size), keys.copyOf(size))
        }
    }

    /** Target runs: per run, its offset in the packed local data, its length, the target offset and the region key. */
    class Runs(val at: IntArray, val len: IntArray, val remote: LongArray, val keys: LongArray)

    private val NO_RUNS = Runs(IntArray(0), IntArray(0), LongArray(0), LongArray(0))

    /**
     * Target offset and key of [len] bytes at [offset] on [target] ([offset] is in displacement units unless [raw]),
     * checked against its window.
     */
    fun byteTarget(call: String, target: Int, offset: Long, len: Long, raw: Boolean = false): Pair<Long, Long> {
        val b = if (raw || win.flavor == Window.FLAVOR_DYNAMIC) offset else offset * units[target]
        val at = resolve(call, target, b, len)
        return at to resolvedKey
    }

    /** The key of the region [resolve] last found. */
    private var resolvedKey = 0L

    /**
     * The target offset of [len] bytes at byte [offset] on [target] (a dynamic window's: an address), checked against
     * its window or its attached memory; the region's key is left in [resolvedKey]. Allocates nothing once a dynamic
     * target's attach table is read.
     */
    private fun resolve(call: String, target: Int, offset: Long, len: Long): Long {
        if (win.flavor == Window.FLAVOR_DYNAMIC) {
            val table = remoteTable(target)
            var i = 0
            while (i < table.size) {
                val a = table[i]
                val l = table[i + 1]
                if (offset >= a && offset + len <= a + l) {
                    resolvedKey = table[i + 2]
                    return offset - a
                }
                i += 3
            }
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "${win.name()}: [$offset, ${offset + len}) at rank $target is not inside memory it has attached",
            )
        }
        if (offset < 0 || offset + len > sizes[target])
            throw MPIException.of(
                ErrorClass.ERR_RMA_RANGE,
                call,
                "${win.name()}: bytes [$offset, ${offset + len}) at rank $target fall outside its window of ${sizes[target]} bytes",
            )
        resolvedKey = keys[target]
        return offset
    }

    /** [oneRun]'s answer: the run's target offset, key and length. */
    var oneRemote = 0L
        private set

    var oneKey = 0L
        private set

    var oneLen = 0
        private set

    /**
     * [runs] where [count] × [type] at [disp] is one run of at most [maxRun] bytes, without allocating: true with
     * [oneRemote], [oneKey] and [oneLen] set (range-checked as [runs] checks), false where it is not one run.
     */
    fun oneRun(call: String, target: Int, disp: Long, count: Int, type: Datatype, maxRun: Int): Boolean {
        if (count == 0 || type.size == 0L || disp < 0) return false
        if (type.segDisp.size != 1 || !(count == 1 || type.isContiguous)) return false
        val total = count * type.size
        if (total > maxRun) return false
        val first = (if (win.flavor == Window.FLAVOR_DYNAMIC) disp else disp * units[target]) + type.segDisp[0]
        oneRemote = resolve(call, target, first, total)
        oneKey = resolvedKey
        oneLen = total.toInt()
        return true
    }

    private companion object {
        /** The longs each process contributes to [exchange]. */
        const val FIELDS = 5
    }
}
