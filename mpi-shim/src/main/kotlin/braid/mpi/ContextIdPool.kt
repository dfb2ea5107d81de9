package braid.mpi

import java.util.BitSet

/**
 * This process's context ids ([MatchBitsDescriptor.CONTEXT_COUNT] of them): which are free. A new communicator's id is
 * agreed as MPICH does it: the members AND their free masks together and take the lowest id free in all of them, so it
 * is unused by every member. Ids 0 (port connections), 1 (world) and 2 (self) are never handed out.
 */
internal class ContextIdPool {
    private val free =
        BitSet(MatchBitsDescriptor.CONTEXT_COUNT).apply { set(FIRST_FREE, MatchBitsDescriptor.CONTEXT_COUNT) }

    /** This process's free mask, one bit per id. */
    @Synchronized fun mask(): ByteArray = free.toByteArray().copyOf(MatchBitsDescriptor.CONTEXT_COUNT / 8)

    /** The lowest id free in [agreed] (the AND of every member's mask); throws when none is. */
    fun lowest(agreed: ByteArray, call: String): Int {
        val id = BitSet.valueOf(agreed).nextSetBit(FIRST_FREE)
        if (id < 0 || id >= MatchBitsDescriptor.CONTEXT_COUNT) {
            throw MPIException.of(
                ErrorClass.ERR_OTHER,
                call,
                "no context id is free in every member (all ${MatchBitsDescriptor.CONTEXT_COUNT} in use somewhere); free some communicators",
            )
        }
        return id
    }

    @Synchronized
    fun reserve(id: Int) {
        check(free[id]) { "context id $id was agreed free but is in use here" }
        free.clear(id)
    }

    @Synchronized
    fun release(id: Int) {
        if (id >= FIRST_FREE) free.set(id)
    }

    companion object {
        const val PORTS = 0
        const val WORLD = 1
        const val SELF = 2
        const val FIRST_FREE = 3

        /** The bitwise AND of two masks, into [into]. */
        fun and(into: ByteArray, other: ByteArray) {
            for (i in into.indices) into[i] = (into[i].toInt() and other[i].toInt()).toByte()
        }
    }
}
