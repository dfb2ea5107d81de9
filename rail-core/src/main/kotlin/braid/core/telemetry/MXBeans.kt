package braid.core.telemetry

/**
 * One endpoint as JMX shows it (`io.braid:type=Endpoint,provider=…,id=…`): what it carried over all its rails, the
 * depths of its shared receive context, and its domain's deferred-work queue. Every read takes the endpoint's
 * statistics view ([braid.core.Endpoint.stats]) under the domain lock; nothing is counted for JMX on the data path. A
 * closed (or collected) endpoint's bean is unregistered; until then a read after close answers zeros.
 */
public interface EndpointMXBean {
    /** The provider (`shm`, `tcp`, `link`). */
    public val provider: String

    /** The domain's name. */
    public val domain: String

    /** The rails, as their [RailMXBean]s name them. */
    public val rails: List<String>

    public val messagesSent: Long
    public val bytesSent: Long
    public val messagesReceived: Long
    public val bytesReceived: Long

    /** Receives posted and not yet matched, now and at most. */
    public val postedReceives: Int
    public val postedReceivesMax: Int

    /** Unexpected messages held (arrived before a receive matched them), now and at most. */
    public val unexpectedHeld: Int
    public val unexpectedHeldMax: Int

    /** Deferred work (triggered operations) queued on the domain and not yet fired, and fired but not complete. */
    public val deferredWorkQueued: Int
    public val deferredWorkInFlight: Int

    /** Credit this endpoint's tcp rails have committed to their senders now, in bytes (0 without tcp). */
    public val creditCommitted: Long

    /**
     * Split copies of large shm messages this endpoint received (the sender copying part of each at once), the chunks
     * it pulled of them, and the chunks it pushed into its receivers' memory as a sender.
     */
    public val splitCopies: Long
    public val splitChunksPulled: Long
    public val splitChunksPushed: Long

    /** Collective calls the offload provider carried for the groups over this endpoint ([Telemetry.addCounter]). */
    public val offloadCalls: Long

    /** Messages re-sent by the link's rails (their stats' `retransmissions`, 0 where they count none). */
    public val retransmissions: Long

    /** Peers moved off a rail because they were gone on it, over every rail. */
    public val failovers: Long
}

/** One rail of an endpoint (`io.braid:type=Rail,endpoint=…,rail=…`): what it carried. */
public interface RailMXBean {
    public val rail: String
    public val messagesSent: Long
    public val bytesSent: Long
    public val messagesReceived: Long
    public val bytesReceived: Long

    /** Messages this rail re-sent (its stats' `retransmissions`, 0 where it counts none). */
    public val retransmissions: Long

    /** Peers moved off this rail because they were gone on it. */
    public val failovers: Long
}
