package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * The accumulate paths of a [Window] (`accumulate`, `getAccumulate`, `fetchAndOp`, `compareAndSwap`), atomic per
 * element from any number of origins: on 32- and 64-bit integers, floats and doubles they are the rail's atomics, which
 * the target applies under its domain's lock, one [WindowRequest] of pieces no longer than one atomic carries; on the
 * elements the rail has no atomic for (bytes, shorts, chars, booleans, the MAXLOC pairs) they read, combine and write
 * back under the target's accumulate lock word ([WindowLocks.underAccumulateLock]). To a target whose memory this
 * process maps ([WindowTargets.directData]) they are the same two schemes done here ([WindowDirect]): the CPU's
 * compare-and-swap per element, the code the rail applies ([braid.core.AtomicOps]), chosen for exactly the elements and
 * ops the rail path uses atomics for ([railAtomic]), and the same accumulate lock word otherwise.
 */
internal class WindowAccumulate(
    private val win: Window,
    private val targets: WindowTargets,
    private val ops: WindowOps,
    private val locks: WindowLocks,
    private val errors: WindowErrors,
    private val direct: WindowDirect,
) {
    fun accumulate(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
        op: Op,
    ): Request {
        val call = "MPI_Accumulate"
        ops.prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, false)
        val basic = errors.checkAccumulate(call, op, originType, targetType)
        if (targetRank == Mpi.PROC_NULL || op === Op.NO_OP) return ops.done()
        val (local, localBase) = ops.originBytes(origin, originCount, originType)
        return atomicUpdate(
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
            borrowsOrigin = originType.isContiguous,
        )
    }

    fun getAccumulate(
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
    ): Request {
        val call = "MPI_Get_accumulate"
        val noOp = op === Op.NO_OP
        ops.prologue(call, targetRank, result, resultCount, resultType, targetCount, targetType, true)
        if (!noOp) errors.checkOrigin(call, origin, originCount, originType, targetCount, targetType, false)
        val basic = errors.checkAccumulate(call, op, if (noOp) targetType else originType, targetType)
        if (targetRank == Mpi.PROC_NULL) return ops.done()
        val base = targets.directData(targetRank)
        if (base >= 0 && resultType.isContiguous && (noOp || originType.isContiguous)) {
            // Same host, both buffers contiguous: straight from the origin into the caller's result buffer.
            val resAt = if (resultCount == 0) 0 else resultType.trueLb.toInt()
            val originAt = if (noOp || originCount == 0) 0 else originType.trueLb.toInt()
            return direct.fetchUpdate(
                call,
                targetRank,
                base,
                targetDisp,
                targetCount,
                targetType,
                basic,
                railAtomic(basic, op, fetch = true),
                op,
                if (noOp) null else origin,
                originAt,
                result,
                resAt,
            )
        }
        val bytes = ops.packedBytes(targetCount, targetType)
        val (local, localBase) =
            if (noOp) UnsafeBuffer(ByteBuffer.allocateDirect(bytes)) to 0
            else ops.originBytes(origin, originCount, originType)
        val resultStage = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
        val unpack = Runnable { resultType.unpackFrom(resultStage, 0, result, 0, resultCount) }
        return atomicUpdate(
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

    fun compareAndSwap(
        origin: ByteBuffer,
        compare: ByteBuffer,
        result: ByteBuffer,
        type: Datatype,
        targetRank: Int,
        targetDisp: Long,
    ) {
        val call = "MPI_Compare_and_swap"
        ops.prologue(call, targetRank, result, 1, type, 1, type, true)
        errors.checkOrigin(call, origin, 1, type, 1, type, false)
        errors.checkOrigin(call, compare, 1, type, 1, type, false)
        val b = errors.checkSwappable(call, type)
        if (targetRank == Mpi.PROC_NULL) return
        val len = b.size
        val native = atomicTypeOf(b)
        val base = targets.directData(targetRank)
        if (base >= 0) {
            val at = targets.byteTarget(call, targetRank, targetDisp, len.toLong()).first
            direct.compareAndSwap(targetRank, base, at, len, native, origin, compare, result)
            return
        }
        val o = UnsafeBuffer(ByteBuffer.allocateDirect(len)).also { it.putBytes(0, origin, 0, len) }
        val c = UnsafeBuffer(ByteBuffer.allocateDirect(len)).also { it.putBytes(0, compare, 0, len) }
        val res = UnsafeBuffer(ByteBuffer.allocateDirect(len))
        val finish = Runnable { res.getBytes(0, result, 0, len) }
        val at = targets.byteTarget(call, targetRank, targetDisp, len.toLong())
        if (native != null) {
            val r =
                WindowRequest(
                    win,
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
            targets.await(targets.submit(r))
        } else {
            locks.underAccumulateLock(targetRank) {
                val cur = UnsafeBuffer(ByteBuffer.allocateDirect(len))
                targets.await(ops.piece(call, WindowRequest.GET, targetRank, cur, at))
                res.putBytes(0, cur, 0, len)
                var same = true
                for (i in 0 until len) if (cur.getByte(i) != c.getByte(i)) same = false
                if (same) targets.await(ops.piece(call, WindowRequest.PUT, targetRank, o, at))
            }
            finish.run()
        }
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
        /** Whether [local] is the caller's origin buffer rather than a packed copy. */
        borrowsOrigin: Boolean = true,
    ): Request {
        val fetch = result != null
        val native = railAtomic(basic, op, fetch)
        val base = targets.directData(target)
        if (base >= 0) {
            val r =
                direct.update(
                    call,
                    target,
                    base,
                    disp,
                    count,
                    type,
                    basic,
                    native,
                    op,
                    local,
                    localBase,
                    result,
                    0,
                    ops.reporting,
                )
            finisher?.run()
            return r
        }
        if (native != null) {
            val aop = atomicOpOf(op)
            val max = atomicElements(native, aop, fetch) * native.size
            val runs = targets.runs(call, target, disp, count, type, max, native.size)
            val kind = if (fetch) WindowRequest.FETCH else WindowRequest.ACC
            val r =
                WindowRequest(
                    win,
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
            r.report = ops.reporting
            // An accumulate from a packed copy, fetching nothing, leaves the caller's memory free at once.
            r.borrows = result != null || borrowsOrigin
            return targets.submit(r)
        }
        // No rail atomic for these elements: read, combine and write back under the target's accumulate lock.
        val runs = targets.runs(call, target, disp, count, type, WindowOps.MAX_RUN, basic.size)
        val elementType = datatypeOf(basic)
        locks.underAccumulateLock(target) {
            for (i in runs.at.indices) {
                val len = runs.len[i]
                val cur = UnsafeBuffer(ByteBuffer.allocateDirect(len))
                val where = runs.remote[i] to runs.keys[i]
                targets.await(ops.piece(call, WindowRequest.GET, target, cur, where))
                result?.putBytes(runs.at[i], cur, 0, len)
                if (op !== Op.NO_OP) {
                    // target = target op origin: combinePacked computes inout = input op inout.
                    op.combinePacked(local, localBase + runs.at[i], cur, 0, len / basic.size, elementType)
                    targets.await(ops.piece(call, WindowRequest.PUT, target, cur, where))
                }
            }
        }
        finisher?.run()
        return ops.done()
    }

    /**
     * The rail's atomic type for [basic] elements under [op] where the rail path applies the update as its atomics (and
     * the same-host path as the CPU's, the same code), or null where both read, combine and write back under the
     * accumulate lock. One decision for both paths, so updates of one element from both never use different schemes.
     */
    fun railAtomic(basic: BasicType, op: Op, fetch: Boolean): AtomicDatatype? {
        val native = atomicTypeOf(basic) ?: return null
        return if (atomicElements(native, atomicOpOf(op), fetch) > 0) native else null
    }

    /** How many [native] elements one of the rail's atomics carries under [aop] (0: it has none). */
    private fun atomicElements(native: AtomicDatatype, aop: AtomicOp, fetch: Boolean): Int {
        val ep = win.mpi.ep
        return if (fetch) ep.fetchAtomicValid(native, aop) else ep.atomicValid(native, aop)
    }

    companion object {
        /** The rail's atomic type for elements of [b], or null where it has none. */
        fun atomicTypeOf(b: BasicType): AtomicDatatype? =
            when (b) {
                BasicType.INT32 -> AtomicDatatype.INT32
                BasicType.UINT32 -> AtomicDatatype.UINT32
                BasicType.INT64 -> AtomicDatatype.INT64
                BasicType.UINT64 -> AtomicDatatype.UINT64
                BasicType.FLOAT32 -> AtomicDatatype.FLOAT
                BasicType.FLOAT64 -> AtomicDatatype.DOUBLE
                else -> null
            }

        fun atomicOpOf(op: Op): AtomicOp =
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
        fun datatypeOf(b: BasicType): Datatype =
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
