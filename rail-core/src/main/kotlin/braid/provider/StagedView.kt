package braid.provider

import org.agrona.concurrent.UnsafeBuffer

/**
 * A send buffer whose bytes are not all in host memory yet: a device message staged through one bounded bounce chunk
 * (`braid.core.HmemStaging`). It shows the message's whole length, but only the window `[windowStart, staged)` is in
 * place; the [MessageEngine] stages the next window ([stageNext]) once the rail has taken the last one, so the copy of
 * chunk k+1 out of the device overlaps chunk k on the wire (in the peer's ring, the socket, the receiver's copy).
 *
 * Such a message is streamed as rendezvous fragments, never written whole into an eager record nor published for a
 * pull: an outlet that cannot promise that ([SendOutlet.streamsStaged] false) gets it staged whole first ([stageAll]),
 * as does a link that cuts it into stripes.
 */
internal abstract class StagedView : UnsafeBuffer(0L, 0) {
    /** Bytes from the start of the message that have been staged (the window ends here). */
    abstract val staged: Long

    /** Whether every byte is in place (a message staged whole, or the last window). */
    val whole: Boolean
        get() = staged >= capacity()

    /**
     * Stages the next window after [staged] into the chunk the previous one used (the rail has copied that one out).
     * Returns the new [staged], or a negated errno: the copy failed, the window holds nothing meaningful, and the
     * message still goes (so the stream to the peer stays intact) and completes in error at the sender.
     */
    abstract fun stageNext(): Long

    /**
     * Stages the whole message at once (a whole-size pooled bounce buffer replaces the chunk); this view then shows it.
     * Returns the length, or a negated errno (the copy failed: the send completes in error).
     */
    abstract fun stageAll(): Long
}
