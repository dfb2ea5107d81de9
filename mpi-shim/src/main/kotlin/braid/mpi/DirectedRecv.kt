package braid.mpi

import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr

/**
 * A receive that may name its source: a host receive ([RecvOp]) or one into a memory region ([RegionRecvOp]). While it
 * is posted with a named source ([sourceAddr] not `FiAddr.UNSPEC`) it sits in [Mpi]'s list of directed receives
 * ([prevDirected], [nextDirected]), so the source's death fails it whenever it comes: before the post ([posted] looks)
 * or after (the endpoint's PEER_DOWN report cancels it, and the cancellation completes as `MPIX_ERR_PROC_FAILED`).
 */
internal abstract class DirectedRecv(mpi: Mpi, comm: Comm?) : Request(mpi, comm) {
    /** The sender's fabric address when the receive names one, else `FiAddr.UNSPEC`. */
    var sourceAddr: Long = FiAddr.UNSPEC
        protected set

    /** Set when the sender died: the cancellation that follows completes as ERR_PROC_FAILED. */
    var failedPeer: String? = null

    // Links of Mpi's intrusive list of posted directed receives (under Mpi.locked).
    var prevDirected: DirectedRecv? = null
    var nextDirected: DirectedRecv? = null
    var inDirected = false

    /** The endpoint took this receive (alone, or in a batch): what follows a post. Caller: locked. */
    fun posted() {
        if (sourceAddr != FiAddr.UNSPEC) {
            mpi.postedDirected(this)
            // A rail reports a peer dead (or closed: it finished) only after delivering all it had
            // sent, so a receive from it that matched none of that cannot complete: fail it
            // (the cancel is refused, 0 aside, when the receive already matched a message).
            val why = mpi.deadPeer(sourceAddr)
            if (why != null) {
                failedPeer = why
                mpi.ep.cancel(this)
            }
        }
    }

    /**
     * At the error completion [e]: leaves the directed list, and if the sender's death cancelled this receive,
     * completes it as ERR_PROC_FAILED (naming the rank and tag of [bits]) and answers true.
     */
    protected fun failedBySender(e: CompletionError, bits: Long): Boolean {
        mpi.finishedDirected(this)
        val failed = failedPeer ?: return false
        if (e.err != Errno.ECANCELED) return false
        complete(
            MatchBitsDescriptor.rank(bits),
            MatchBitsDescriptor.tag(bits),
            0,
            ErrorClass.ERR_PROC_FAILED,
            message = "the sender failed: $failed",
        )
        return true
    }
}
