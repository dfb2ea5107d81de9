package braid.core.telemetry

import jdk.jfr.Category
import jdk.jfr.Description
import jdk.jfr.Event
import jdk.jfr.Label
import jdk.jfr.Name
import jdk.jfr.StackTrace
import jdk.jfr.Threshold

/**
 * A wait through a domain (`Domain.driveUntil`: the blocking and future forms, MPI requests, collective requests) that
 * had to idle and lasted longer than the threshold (10 ms unless the recording says otherwise, e.g. `jcmd PID JFR.start
 * settings=profile +io.braid.SlowWait#threshold=1ms`). Its stack trace says which operation waited.
 */
@Name("io.braid.SlowWait")
@Label("Slow wait")
@Category("Braid")
@Description("A wait for a Braid operation that idled longer than the threshold")
@Threshold("10 ms")
public class SlowWaitEvent : Event() {
    @Label("Domain") @JvmField public var domain: String? = null
}

/** A peer found dead by an endpoint (once per peer, whichever rail found it): what `PEER_DOWN` reports. */
@Name("io.braid.PeerDown")
@Label("Peer down")
@Category("Braid")
@Description("An endpoint found a peer process dead")
@StackTrace(false)
public class PeerDownEvent : Event() {
    @Label("Endpoint") @JvmField public var endpoint: String? = null
    @Label("Peer address") @JvmField public var peer: Long = 0
    @Label("Reason") @JvmField public var reason: String? = null
}

/**
 * Traffic moved off a failed rail onto another: a link that resends the messages a dead rail had not had acknowledged
 * reports each run of them through [Telemetry.failover].
 */
@Name("io.braid.Failover")
@Label("Failover")
@Category("Braid")
@Description("A link moved traffic for a peer off a failed rail")
@StackTrace(false)
public class FailoverEvent : Event() {
    @Label("Endpoint") @JvmField public var endpoint: String? = null
    @Label("Peer address") @JvmField public var peer: Long = 0
    @Label("From rail") @JvmField public var fromRail: String? = null
    @Label("To rail") @JvmField public var toRail: String? = null
    @Label("Operations re-sent") @JvmField public var resent: Long = 0
}
