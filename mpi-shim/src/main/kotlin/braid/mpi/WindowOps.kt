package braid.mpi

import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The data movement of a [Window]: to a target on this host whose memory is in the shared segment, [put] and [get] are
 * copies on the mapping ([WindowDirect]); to any other, [put] is the rail's RMA write and [get] its read, one per
 * contiguous run of the target datatype ([WindowTargets.runs]), carried by one [WindowRequest]; [prologue] is the check
 * every communication call makes first (the window, the epoch, the target, the buffers). A plain operation
 * ([reporting]) leaves its failure for the next synchronisation; a request-based one raises it from its request.
 */
internal class WindowOps(
    private val win: Window,
    private val targets: WindowTargets,
    private val epochs: WindowEpochs,
    private val errors: WindowErrors,
    private val direct: WindowDirect,
) {
    /** Set while a plain operation builds its request, whose failure then goes to the window's pending errors. */
    var reporting = false
    private val pool = WindowRequests(win)

    /** The checks every communication call makes: the window, the epoch, the target, the buffers. */
    fun prologue(
        call: String,
        target: Int,
        buf: ByteBuffer,
        count: Int,
        type: Datatype,
        targetCount: Int,
        targetType: Datatype,
        receive: Boolean,
    ) {
        win.checkUsable(call)
        if (target == Mpi.PROC_NULL) return
        errors.checkRank(call, target)
        epochs.checkAccess(call, target)
        errors.checkOrigin(call, buf, count, type, targetCount, targetType, receive)
    }

    fun put(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ): Request {
        val call = "MPI_Put"
        prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, false)
        if (targetRank == Mpi.PROC_NULL) return done()
        val base = targets.directData(targetRank)
        if (base >= 0) {
            if (originType.isContiguous) {
                val at = if (originCount == 0) 0 else originType.trueLb.toInt()
                return direct.putFrom(
                    call,
                    targetRank,
                    base,
                    origin,
                    at,
                    targetDisp,
                    targetCount,
                    targetType,
                    reporting,
                )
            }
            val (local, localBase) = originBytes(origin, originCount, originType)
            return direct.put(call, targetRank, base, local, localBase, targetDisp, targetCount, targetType, reporting)
        }
        if (reporting && originType.isContiguous) {
            val at = if (originCount == 0) 0 else originType.trueLb.toInt()
            pooled(call, WindowRequest.PUT, targetRank, targetDisp, targetCount, targetType, origin, at)?.let {
                return it
            }
        }
        val (local, localBase) = originBytes(origin, originCount, originType)
        return transfer(
            call,
            WindowRequest.PUT,
            targetRank,
            targetDisp,
            targetCount,
            targetType,
            local,
            localBase,
            null,
            borrows = originType.isContiguous,
        )
    }

    fun get(
        origin: ByteBuffer,
        originCount: Int,
        originType: Datatype,
        targetRank: Int,
        targetDisp: Long,
        targetCount: Int,
        targetType: Datatype,
    ): Request {
        val call = "MPI_Get"
        prologue(call, targetRank, origin, originCount, originType, targetCount, targetType, true)
        if (targetRank == Mpi.PROC_NULL) return done()
        val base = targets.directData(targetRank)
        if (originType.isContiguous && !origin.isReadOnly) {
            val at = if (originCount == 0) 0 else originType.trueLb.toInt()
            if (base >= 0)
                return direct.getInto(
                    call,
                    targetRank,
                    base,
                    origin,
                    at,
                    targetDisp,
                    targetCount,
                    targetType,
                    reporting,
                )
            if (reporting)
                pooled(call, WindowRequest.GET, targetRank, targetDisp, targetCount, targetType, origin, at)?.let {
                    return it
                }
            val local = UnsafeBuffer(origin)
            return transfer(call, WindowRequest.GET, targetRank, targetDisp, targetCount, targetType, local, at, null)
        }
        val staging = ByteBuffer.allocateDirect(packedBytes(originCount, originType))
        val unpack = Runnable { originType.unpackFrom(staging, 0, origin, 0, originCount) }
        if (base >= 0)
            return direct.get(
                call,
                targetRank,
                base,
                UnsafeBuffer(staging),
                0,
                targetDisp,
                targetCount,
                targetType,
                unpack,
                reporting,
            )
        return transfer(
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

    /**
     * A plain put or get that is one run, through a pooled request (allocation-free once warm); null where it is more
     * runs, for [transfer].
     */
    private fun pooled(
        call: String,
        kind: Int,
        target: Int,
        disp: Long,
        count: Int,
        type: Datatype,
        buffer: ByteBuffer,
        at: Int,
    ): Request? {
        if (!targets.oneRun(call, target, disp, count, type, MAX_RUN)) return null
        val r = pool.take()
        return targets.submit(
            r.rearm(pool, call, kind, target, buffer, at, targets.oneLen, targets.oneRemote, targets.oneKey)
        )
    }

    fun done(): Request = DoneRequest(win.mpi, win.comm, Status.EMPTY)

    fun packedBytes(count: Int, type: Datatype): Int = (count * type.size).toInt()

    /** The origin's data as one run: the caller's buffer where its layout is contiguous, else a packed copy. */
    fun originBytes(origin: ByteBuffer, count: Int, type: Datatype): Pair<UnsafeBuffer, Int> {
        if (type.isContiguous) return UnsafeBuffer(origin) to (if (count == 0) 0 else type.trueLb.toInt())
        val staging = ByteBuffer.allocateDirect(packedBytes(count, type))
        type.packInto(origin, 0, count, staging, 0)
        return UnsafeBuffer(staging) to 0
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
        /** Whether [local] is the caller's memory (not a packed copy), used until the request completes. */
        borrows: Boolean = true,
    ): Request {
        val runs = targets.runs(call, target, disp, count, type, MAX_RUN)
        val r =
            WindowRequest(
                win,
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
        r.borrows = borrows
        return targets.submit(r)
    }

    /** One run of bytes for the accumulate lock's read-modify-write. */
    fun piece(call: String, kind: Int, target: Int, local: UnsafeBuffer, at: Pair<Long, Long>): WindowRequest =
        targets.submit(
            WindowRequest(
                    win,
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
                .also { it.borrows = false }
        )

    companion object {
        /** The longest run one RMA piece carries. */
        const val MAX_RUN = 1 shl 20
    }
}
