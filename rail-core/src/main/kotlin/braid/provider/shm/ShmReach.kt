package braid.provider.shm

import braid.core.Errno

/**
 * What [ShmTransport] found for a destination: the channel to it ([ShmOutChannel]), or why it cannot be reached
 * ([ShmUnreachable]). A typed result, so no caller casts an `Any` back.
 */
internal sealed interface ShmReach

/**
 * A destination shm cannot reach, and the negated errno ([rc]) a send to it returns. One cached object per reason, so a
 * refused send allocates nothing.
 */
internal class ShmUnreachable private constructor(val rc: Int) : ShmReach {
    override fun toString(): String = "unreachable (${Errno.name(-rc)})"

    companion object {
        /** Not an shm address. */
        val NOT_SHM = ShmUnreachable(-Errno.EINVAL)

        /** Another host, or no endpoint there. */
        val NO_ENDPOINT = ShmUnreachable(-Errno.EHOSTUNREACH)

        /** The endpoint closed (its process still runs). */
        val REFUSED = ShmUnreachable(-Errno.ECONNREFUSED)

        /**
         * The endpoint's process is gone: the same answer as a send to a connected peer that died, whether or not this
         * endpoint ever sent to it.
         */
        val DOWN = ShmUnreachable(-Errno.EHOSTDOWN)
    }
}
