package braid.mpi

/**
 * An intercommunicator: a local group and a disjoint remote group; point-to-point calls name ranks of the remote group,
 * and a status's source is a remote rank. Made by [Intracomm.createIntercomm], [Intracomm.accept] and
 * [Intracomm.connect]; [merge] turns it into an intracommunicator of both groups.
 *
 * Internally the local group agrees through its own collectives group ([IntercommCollectives.local]) and the two
 * leaders (rank 0 of each group) talk in [MatchBitsDescriptor.SUB_LEADERS].
 */
public class Intercomm
internal constructor(
    mpi: Mpi,
    context: Int,
    group: Group,
    /** The remote group (`MPI_Comm_remote_group`). */
    public val remoteGroup: Group,
    name: String,
) : Comm(mpi, context, group, remoteGroup.procs, name) {
    override val isInter: Boolean
        get() = true

    /** `MPI_Comm_remote_size`. */
    public val remoteSize: Int
        get() = remoteGroup.size

    /** This intercommunicator's collectives, and its local group's (context-id agreement). */
    @get:JvmSynthetic internal val coll: IntercommCollectives by lazy { IntercommCollectives(this) }
    private val leaders: CommBootstrapCollectives by lazy {
        CommBootstrapCollectives(mpi, context, MatchBitsDescriptor.SUB_LEADERS, rank, destAddr)
    }

    /**
     * `MPI_Intercomm_merge`: an intracommunicator of both groups; the group that passes [high] = false comes first (if
     * both pass the same, the group whose leader's address sorts lower comes first).
     */
    public fun merge(high: Boolean): Intracomm = guard {
        checkUsable("MPI_Intercomm_merge")
        mpi.constructLock.lock()
        try {
            val (id, otherHigh) = agreeAcross("MPI_Intercomm_merge", if (high) 1 else 0)
            val lowFirst =
                when {
                    high != (otherHigh == 1) -> !high
                    else ->
                        java.util.Arrays.compareUnsigned(
                            mpi.processes.blob(localGroup.procs[0]),
                            mpi.processes.blob(remoteGroup.procs[0]),
                        ) < 0
                }
            val procs = if (lowFirst) localGroup.procs + remoteGroup.procs else remoteGroup.procs + localGroup.procs
            Intracomm(mpi, id, Group(procs, localGroup.self), "merge(${getName()})")
        } finally {
            mpi.constructLock.unlock()
        }
    }

    /** `MPI_Comm_dup` of an intercommunicator: the same groups with a new context. */
    public fun dup(): Intercomm = guard {
        checkUsable("MPI_Comm_dup")
        mpi.constructLock.lock()
        try {
            val (id, _) = agreeAcross("MPI_Comm_dup", 0)
            Intercomm(mpi, id, localGroup, remoteGroup, "dup(${getName()})").also {
                it.setErrhandler(getErrhandler())
                Attributes.copyAll(this, it)
            }
        } finally {
            mpi.constructLock.unlock()
        }
    }

    /**
     * Agrees a context id over both groups (local AND, leaders exchange and AND, local broadcast) and reserves it; also
     * passes [value] from each group to the other.
     */
    private fun agreeAcross(call: String, value: Int): Pair<Int, Int> {
        val mask = coll.local.andMasks(mpi.contexts.mask())
        var payload: ByteArray? = null
        if (rank == 0) {
            val theirs =
                CommBootstrapCollectives.split(
                    leaders.exchange(
                        0,
                        TAG_AGREE,
                        CommBootstrapCollectives.join(arrayOf(mask, Intracomm.intBytes(value))),
                    )
                )
            ContextIdPool.and(mask, theirs[0])
            payload =
                CommBootstrapCollectives.join(arrayOf(Intracomm.intBytes(mpi.contexts.lowest(mask, call)), theirs[1]))
        }
        val got = CommBootstrapCollectives.split(coll.local.bcastBytes(0, payload))
        val id = java.nio.ByteBuffer.wrap(got[0]).getInt()
        mpi.contexts.reserve(id)
        return id to java.nio.ByteBuffer.wrap(got[1]).getInt()
    }

    private companion object {
        const val TAG_AGREE = 7
    }
}
