package braid.mpi

import java.nio.ByteBuffer

/**
 * The synchronisation epochs of a [Window], owned by the calling thread as MPI's window calls are: fence epochs
 * ([fence]), generalised active target ([start]/[complete] at the origin, [post]/[waitFor]/[test] at the target), and
 * passive target ([lock]/[unlock], [lockAll]/[unlockAll], the flushes) over [WindowLocks]' lock words. [checkAccess] is
 * what every operation asks first: an epoch open to its target, else `MPI_ERR_RMA_SYNC`.
 *
 * The modes do not mix: a fence while a lock, start or post epoch is open, or a lock, start or post while the fence
 * epoch the last fence opened has operations in it, raises `MPI_ERR_RMA_SYNC` naming the window and the rank. A fence
 * epoch nothing was started in ends quietly at the next lock, start or post (MPI's "fence ... lock" idiom, where the
 * fence only separates phases).
 */
internal class WindowEpochs(
    private val win: Window,
    private val n: Int,
    private val targets: WindowTargets,
    private val locks: WindowLocks,
    private val errors: WindowErrors,
) {
    private var fenceOpen = false
    /** Whether an operation was started in the fence epoch now open (which then only a fence may end). */
    private var fenceUsed = false
    private var accessGroup: IntArray? = null
    private var exposureGroup: IntArray? = null
    private var exposureRequests: Array<Request>? = null
    private val lockState = IntArray(n)
    private var lockedCount = 0
    private var lockAllState = LOCK_NONE

    private val name: String
        get() = win.name()

    /** Whether an epoch is open to [target] ([Mpi.PROC_NULL] is always open), else `MPI_ERR_RMA_SYNC`. */
    fun checkAccess(call: String, target: Int) {
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
        if (fenceOpen) fenceUsed = true
    }

    /** Ends an unused fence epoch before [call] opens another kind on [rank]; a used one is an error. */
    private fun leaveFence(call: String, rank: String) {
        if (!fenceOpen) return
        if (fenceUsed)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: $rank: operations were started in the fence epoch the last fence opened; end it with " +
                    "fence(MODE_NOSUCCEED) before mixing in lock, start or post epochs",
            )
        fenceOpen = false
    }

    fun fence(call: String, assertion: Int) {
        win.checkUsable(call)
        errors.checkAssert(
            call,
            assertion,
            Window.MODE_NOSTORE or Window.MODE_NOPUT or Window.MODE_NOPRECEDE or Window.MODE_NOSUCCEED,
        )
        val open =
            when {
                lockAllState != LOCK_NONE -> "every rank is locked by lockAll; unlockAll"
                lockedCount > 0 -> "rank ${lockState.indexOfFirst { it != LOCK_NONE }} is locked; unlock it"
                accessGroup != null -> "an access epoch to ranks ${accessGroup!!.joinToString()} is open; complete it"
                exposureGroup != null -> "an exposure epoch to ranks ${exposureGroup!!.joinToString()} is open; wait"
                else -> null
            }
        if (open != null) throw MPIException.of(ErrorClass.ERR_RMA_SYNC, call, "$name: $open before fencing")
        targets.flushEverything()
        win.comm.barrier()
        fenceOpen = assertion and Window.MODE_NOSUCCEED == 0
        fenceUsed = false
        targets.resetTables()
        targets.raisePending(call)
    }

    fun start(call: String, group: Group, assertion: Int) {
        win.checkUsable(call)
        errors.checkAssert(call, assertion, Window.MODE_NOCHECK)
        if (accessGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an access epoch started by start is still open; complete it first",
            )
        val ranks = errors.ranksOf(call, group)
        leaveFence(call, "ranks ${ranks.joinToString()}")
        if (assertion and Window.MODE_NOCHECK == 0)
            for (r in ranks) win.comm.recv(NOTHING, 0, Datatype.BYTE, r, TAG_POST)
        accessGroup = ranks
        targets.resetTables()
    }

    fun complete(call: String) {
        win.checkUsable(call)
        val ranks =
            accessGroup
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_SYNC,
                    call,
                    "$name: no access epoch was started (call start first)",
                )
        for (r in ranks) targets.flushTarget(r)
        accessGroup = null
        for (r in ranks) win.comm.send(NOTHING, 0, Datatype.BYTE, r, TAG_DONE)
        targets.raisePending(call)
    }

    fun post(call: String, group: Group, assertion: Int) {
        win.checkUsable(call)
        errors.checkAssert(call, assertion, Window.MODE_NOCHECK or Window.MODE_NOSTORE or Window.MODE_NOPUT)
        if (exposureGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an exposure epoch is still open; wait for it first",
            )
        val ranks = errors.ranksOf(call, group)
        leaveFence(call, "ranks ${ranks.joinToString()}")
        exposureRequests =
            Array(ranks.size) { win.comm.irecv(ByteBuffer.allocate(0), 0, Datatype.BYTE, ranks[it], TAG_DONE) }
        if (assertion and Window.MODE_NOCHECK == 0)
            for (r in ranks) win.comm.send(NOTHING, 0, Datatype.BYTE, r, TAG_POST)
        exposureGroup = ranks
    }

    private fun exposure(call: String): Array<Request> {
        win.checkUsable(call)
        return exposureRequests
            ?: throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: no exposure epoch was posted (call post first)",
            )
    }

    fun waitFor(call: String) {
        val reqs = exposure(call)
        for (r in reqs) r.waitFor(Status.IGNORED)
        exposureRequests = null
        exposureGroup = null
    }

    fun test(call: String): Boolean {
        val reqs = exposure(call)
        win.mpi.progress()
        if (reqs.any { !it.isComplete }) return false
        for (r in reqs) r.waitFor(Status.IGNORED)
        exposureRequests = null
        exposureGroup = null
        return true
    }

    fun lock(call: String, lockType: Int, rank: Int, assertion: Int) {
        win.checkUsable(call)
        errors.checkRank(call, rank)
        errors.checkAssert(call, assertion, Window.MODE_NOCHECK)
        if (lockType != Window.LOCK_SHARED && lockType != Window.LOCK_EXCLUSIVE)
            throw MPIException.of(
                ErrorClass.ERR_LOCKTYPE,
                call,
                "$name: lock type $lockType is neither LOCK_SHARED (${Window.LOCK_SHARED}) nor LOCK_EXCLUSIVE (${Window.LOCK_EXCLUSIVE})",
            )
        if (lockState[rank] != LOCK_NONE || lockAllState != LOCK_NONE)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: rank $rank is already locked by this process; unlock it first",
            )
        leaveFence(call, "rank $rank")
        if (assertion and Window.MODE_NOCHECK == 0) locks.acquire(call, rank, lockType == Window.LOCK_EXCLUSIVE)
        lockState[rank] = if (assertion and Window.MODE_NOCHECK != 0) LOCK_NOCHECK else lockType
        lockedCount++
    }

    fun unlock(call: String, rank: Int) {
        win.checkUsable(call)
        errors.checkRank(call, rank)
        val s = lockState[rank]
        if (s == LOCK_NONE)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: rank $rank is not locked by this process (call lock first)",
            )
        targets.flushTarget(rank)
        lockState[rank] = LOCK_NONE
        lockedCount--
        targets.forgetTable(rank)
        // A failure of the epoch's operations is the one to report; the release's own (a dead target) comes second.
        val released =
            if (s == LOCK_NOCHECK) null
            else runCatching { locks.release(call, rank, s == Window.LOCK_EXCLUSIVE) }.exceptionOrNull()
        targets.raisePending(call, rank)
        if (released != null) throw released
    }

    fun lockAll(call: String, assertion: Int) {
        win.checkUsable(call)
        errors.checkAssert(call, assertion, Window.MODE_NOCHECK)
        if (lockAllState != LOCK_NONE || lockedCount > 0)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: this process already holds locks in it; unlock them first",
            )
        leaveFence(call, "every rank")
        if (assertion and Window.MODE_NOCHECK == 0) {
            for (r in 0 until n) locks.acquire(call, r, false)
            lockAllState = Window.LOCK_SHARED
        } else lockAllState = LOCK_NOCHECK
    }

    fun unlockAll(call: String) {
        win.checkUsable(call)
        val s = lockAllState
        if (s == LOCK_NONE) throw MPIException.of(ErrorClass.ERR_RMA_SYNC, call, "$name: lockAll was not called")
        try {
            targets.flushEverything()
        } finally {
            if (s != LOCK_NOCHECK) for (r in 0 until n) locks.release(call, r, false)
            lockAllState = LOCK_NONE
            targets.resetTables()
        }
        targets.raisePending(call)
    }

    /** A flush's check: [rank] (-1: any rank) is in a passive-target epoch of this process. */
    fun checkPassive(call: String, rank: Int) {
        win.checkUsable(call)
        if (rank >= 0) errors.checkRank(call, rank)
        val ok = lockAllState != LOCK_NONE || (if (rank >= 0) lockState[rank] != LOCK_NONE else lockedCount > 0)
        if (!ok)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: ${if (rank >= 0) "rank $rank is" else "no rank is"} locked by this process; flush belongs in a lock epoch",
            )
    }

    fun flush(call: String, rank: Int) {
        checkPassive(call, rank)
        targets.flushTarget(rank)
        targets.raisePending(call, rank)
    }

    fun flushAll(call: String) {
        checkPassive(call, -1)
        targets.flushEverything()
        targets.raisePending(call)
    }

    fun flushLocal(call: String, rank: Int) {
        checkPassive(call, rank)
        targets.flushLocal(rank)
        targets.raisePending(call, rank)
    }

    fun flushLocalAll(call: String) {
        checkPassive(call, -1)
        for (t in 0 until n) targets.flushLocal(t)
        targets.raisePending(call)
    }

    /** `MPI_Win_free`'s check: no epoch but a fence epoch is open. */
    fun checkClosed(call: String) {
        if (lockedCount > 0 || lockAllState != LOCK_NONE || accessGroup != null || exposureGroup != null)
            throw MPIException.of(
                ErrorClass.ERR_RMA_SYNC,
                call,
                "$name: an epoch is still open (unlock, complete or wait first)",
            )
    }

    private companion object {
        const val LOCK_NONE = 0
        const val LOCK_NOCHECK = 1
        const val TAG_POST = 1
        const val TAG_DONE = 2
        val NOTHING: ByteBuffer = ByteBuffer.allocate(0)
    }
}
