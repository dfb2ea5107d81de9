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
}

/** One rail of an endpoint (`io.braid:type=Rail,endpoint=…,rail=…`): what it carried. */
public interface RailMXBean {
    public val rail: String
    public val messagesSent: Long
    public val bytesSent: Long
    public val messagesReceived: Long
    public val bytesReceived: Long
}
