package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.AtomicOps
import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The same-host path of a [Window]: where the target's window memory is in the segment this process shares with it
 * ([WindowTargets.directData]: `allocate` and `allocateShared` windows, a target on this host), an operation is done
 * here and now on the mapping, as MPICH's shared-memory RMA does it. [put] and [get] are copies. Accumulates:
 * - on a window whose processes all reach each other here ([WindowTargets.lockedAccumulates]: no operation can come
 *   through the rail), every accumulate, fetch-and-op and compare-and-swap is read, combined and written back with a
 *   plain loop under the target's accumulate lock word: one lock per operation instead of one CPU atomic per element;
 * - otherwise, on elements the rail has atomics for, [AtomicOps]' compare-and-swap per element, the very code the
 *   target's rail runs for operations that arrive from other hosts, on the same memory, so the two mix without a lost
 *   update; the other elements under the accumulate lock word, which remote origins take by the rail's compare-and-swap
 *   on the same word.
 *
 * Each operation is complete at the target when it returns, so the target makes no call and drives no progress for it,
 * and a flush has nothing left to wait for.
 */
internal class WindowDirect(
    private val win: Window,
    private val targets: WindowTargets,
    private val locks: WindowLocks,
) {
    /** The completed request plain operations return (their caller drops it). */
    private val doneShared: Request = DoneRequest(win.mpi, win.comm, Status.EMPTY)
    /** Views over callers' buffers, rewrapped per call (window calls are serial). */
    private val originView = UnsafeBuffer(ByteArray(0))
    private val compareView = UnsafeBuffer(ByteArray(0))
    private val resultView = UnsafeBuffer(ByteArray(0))

    private fun done(reporting: Boolean): Request =
        if (reporting) doneShared else DoneRequest(win.mpi, win.comm, Status.EMPTY)

    fun put(
        call: String,
        target: Int,
        base: Long,
        local: DirectBuffer,
        localBase: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        reporting: Boolean,
    ): Request {
        val shm = targets.shm
        eachRun(call, target, base, disp, count, type, 1) { remote, at, len ->
            shm.putBytes(remote, local, localBase + at, len)
        }
        return done(reporting)
    }

    /** A put straight from [origin] (contiguous from byte [at]): no view, no copy but the one into the target. */
    fun putFrom(
        call: String,
        target: Int,
        base: Long,
        origin: ByteBuffer,
        at: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        reporting: Boolean,
    ): Request {
        if (!targets.oneRun(call, target, disp, count, type, Int.MAX_VALUE)) {
            originView.wrap(origin)
            return put(call, target, base, originView, at, disp, count, type, reporting)
        }
        targets.shm.putBytes((base + targets.oneRemote).toInt(), origin, at, targets.oneLen)
        return done(reporting)
    }

    /** A get into [local] from byte [localBase] (packed), then [finisher] (an unpack into a non-contiguous origin). */
    fun get(
        call: String,
        target: Int,
        base: Long,
        local: MutableDirectBuffer,
        localBase: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        finisher: Runnable?,
        reporting: Boolean,
    ): Request {
        val shm = targets.shm
        eachRun(call, target, base, disp, count, type, 1) { remote, at, len ->
            shm.getBytes(remote, local, localBase + at, len)
        }
        finisher?.run()
        return done(reporting)
    }

    /** A get straight into [origin] (contiguous from byte [at]). */
    fun getInto(
        call: String,
        target: Int,
        base: Long,
        origin: ByteBuffer,
        at: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        reporting: Boolean,
    ): Request {
        if (!targets.oneRun(call, target, disp, count, type, Int.MAX_VALUE)) {
            resultView.wrap(origin)
            return get(call, target, base, resultView, at, disp, count, type, null, reporting)
        }
        targets.shm.getBytes((base + targets.oneRemote).toInt(), origin, at, targets.oneLen)
        return done(reporting)
    }

    /**
     * `target = target op origin` on [count] × [type] at [disp], the old values to [result] (packed, from [resultAt])
     * when given: by [AtomicOps] on [native] elements, else (no native atomic, or [WindowTargets.lockedAccumulates])
     * under the accumulate lock, as [basic] elements.
     */
    fun update(
        call: String,
        target: Int,
        base: Long,
        disp: Long,
        count: Int,
        type: Datatype,
        basic: BasicType,
        native: AtomicDatatype?,
        op: Op,
        origin: DirectBuffer,
        originAt: Int,
        result: MutableDirectBuffer?,
        resultAt: Int,
        reporting: Boolean,
    ): Request {
        val shm = targets.shm
        if (native != null && !targets.lockedAccumulates) {
            val aop = WindowAccumulate.atomicOpOf(op)
            // NO_OP reads no operand; the result buffer stands in for it.
            val operand = if (op === Op.NO_OP) result!! else origin
            val operandAt = if (op === Op.NO_OP) resultAt else originAt
            eachRun(call, target, base, disp, count, type, native.size) { remote, at, len ->
                AtomicOps.execute(
                    shm,
                    remote,
                    operand,
                    operandAt + at,
                    null,
                    0,
                    result,
                    resultAt + at,
                    native,
                    aop,
                    len / native.size,
                )
            }
            return done(reporting)
        }
        val elementType = WindowAccumulate.datatypeOf(basic)
        // The runs are checked inside the lock (a range error gives it back on its way out): the common single run
        // needs no list.
        locks.underAccumulateLock(target) {
            eachRun(call, target, base, disp, count, type, basic.size) { remote, at, len ->
                result?.putBytes(resultAt + at, shm, remote, len)
                // target = target op origin: combinePacked computes inout = input op inout.
                if (op !== Op.NO_OP) op.combinePacked(origin, originAt + at, shm, remote, len / basic.size, elementType)
            }
        }
        return done(reporting)
    }

    /**
     * [update] from and into the caller's buffers, wrapped, not copied: [origin] contiguous from [originAt] (null for
     * [Op.NO_OP]), the old values into [result] contiguous from [resultAt].
     */
    fun fetchUpdate(
        call: String,
        target: Int,
        base: Long,
        disp: Long,
        count: Int,
        type: Datatype,
        basic: BasicType,
        native: AtomicDatatype?,
        op: Op,
        origin: ByteBuffer?,
        originAt: Int,
        result: ByteBuffer,
        resultAt: Int,
    ): Request {
        resultView.wrap(result)
        val operand = if (origin == null) resultView else originView.also { it.wrap(origin) }
        val at = if (origin == null) resultAt else originAt
        return update(
            call,
            target,
            base,
            disp,
            count,
            type,
            basic,
            native,
            op,
            operand,
            at,
            resultView,
            resultAt,
            false,
        )
    }

    /**
     * Calls [each] for every contiguous run of [count] × [type] at [disp] of [target]'s memory (run lengths a multiple
     * of [unit]): the run's byte in the shared mapping, its offset in the packed origin, its length.
     */
    private inline fun eachRun(
        call: String,
        target: Int,
        base: Long,
        disp: Long,
        count: Int,
        type: Datatype,
        unit: Int,
        each: (remote: Int, at: Int, len: Int) -> Unit,
    ) {
        if (targets.oneRun(call, target, disp, count, type, Int.MAX_VALUE)) {
            each((base + targets.oneRemote).toInt(), 0, targets.oneLen)
            return
        }
        val runs = targets.runs(call, target, disp, count, type, WindowOps.MAX_RUN, unit)
        for (i in runs.at.indices) each((base + runs.remote[i]).toInt(), runs.at[i], runs.len[i])
    }

    /**
     * `MPI_Compare_and_swap` on one element of [len] bytes at byte [at] of the target's memory: [AtomicOps]' CSWAP on
     * [native] elements, else (or on a window of [WindowTargets.lockedAccumulates]) compared and replaced under the
     * accumulate lock.
     */
    fun compareAndSwap(
        target: Int,
        base: Long,
        at: Long,
        len: Int,
        native: AtomicDatatype?,
        origin: ByteBuffer,
        compare: ByteBuffer,
        result: ByteBuffer,
    ) {
        val shm = targets.shm
        val where = (base + at).toInt()
        originView.wrap(origin)
        compareView.wrap(compare)
        resultView.wrap(result)
        if (native != null && !targets.lockedAccumulates) {
            AtomicOps.execute(shm, where, originView, 0, compareView, 0, resultView, 0, native, AtomicOp.CSWAP, 1)
            return
        }
        locks.underAccumulateLock(target) {
            resultView.putBytes(0, shm, where, len)
            var same = true
            for (i in 0 until len) if (shm.getByte(where + i) != compareView.getByte(i)) same = false
            if (same) shm.putBytes(where, originView, 0, len)
        }
    }
}
