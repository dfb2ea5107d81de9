package braid.mpi

import java.nio.ByteBuffer

/**
 * The argument checks of a [Window]'s calls, each raising the error class MPI defines for it with a message naming the
 * window, the target rank and the value: a rank outside the group (`MPI_ERR_RANK`), an assertion bit a call does not
 * take (`MPI_ERR_ASSERT`), counts, buffers and datatypes that do not fit or match (`MPI_ERR_COUNT`, `MPI_ERR_BUFFER`,
 * `MPI_ERR_TYPE`), an op a type does not take (`MPI_ERR_OP`), a group with ranks outside the window's (`MPI_ERR_GROUP`)
 * and a keyval that is not one (`MPI_ERR_KEYVAL`). The epoch checks (`MPI_ERR_RMA_SYNC`) are [WindowEpochs]'s, the
 * range checks (`MPI_ERR_RMA_RANGE`) [WindowTargets]'.
 */
internal class WindowErrors(private val win: Window, private val n: Int) {
    private val name: String
        get() = win.name()

    fun checkRank(call: String, rank: Int) {
        if (rank !in 0 until n)
            throw MPIException.of(ErrorClass.ERR_RANK, call, "$name: rank $rank is outside 0..${n - 1}")
    }

    fun checkAssert(call: String, assertion: Int, allowed: Int) {
        if (assertion and allowed.inv() != 0)
            throw MPIException.of(
                ErrorClass.ERR_ASSERT,
                call,
                "$name: assertion $assertion has bits this call does not take (allowed: $allowed)",
            )
    }

    fun checkKeyval(call: String, key: Int) {
        if (key < FIRST_KEYVAL)
            throw MPIException.of(
                ErrorClass.ERR_KEYVAL,
                call,
                "$name: key $key is neither a predefined window attribute (WIN_BASE … WIN_MODEL) nor a keyval from Window.createKeyval",
            )
    }

    fun ranksOf(call: String, group: Group): IntArray {
        val t = group.translateRanks(IntArray(group.size) { it }, win.comm.getGroup())
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

    fun checkOrigin(
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

    fun checkAccumulate(call: String, op: Op, originType: Datatype, targetType: Datatype): BasicType {
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

    /** Compare-and-swap's element type: an integer, boolean or byte type. */
    fun checkSwappable(call: String, type: Datatype): BasicType {
        val b = type.basic
        if (!type.isPredefined || b == null || b.floating || b.pairValue != null || b == BasicType.OPAQUE)
            throw MPIException.of(
                ErrorClass.ERR_TYPE,
                call,
                "$name: compare-and-swap takes an integer, boolean or byte type, not $type",
            )
        return b
    }

    companion object {
        /** The first keyval [Window.createKeyval] hands out: below it are the predefined attributes. */
        const val FIRST_KEYVAL = 1000
    }
}
