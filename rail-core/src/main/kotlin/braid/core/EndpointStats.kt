package braid.core

/**
 * Traffic one rail of an endpoint carried: messages and bytes it sent (counted when the send is started) and received
 * (counted when the message arrives, expected or not), and, on a link of several network rails, how many times a peer
 * was moved off this rail because it was gone there ([failovers]). [rail] is the rail's identity in its link
 * ([RailAttr.name]: `shm`, `tcp`, `tcp:eth0`, a topology's rail name). Read under the domain lock through
 * [Endpoint.stats]; a snapshot, not a live view.
 */
public data class RailStats
@JvmOverloads
constructor(
    val rail: String,
    val messagesSent: Long,
    val bytesSent: Long,
    val messagesReceived: Long,
    val bytesReceived: Long,
    val failovers: Long = 0,
    /** Parts of striped messages this rail sent (each also counts as a message sent), and their bytes. */
    val fragments: Long = 0,
    val fragmentBytes: Long = 0,
    /**
     * Message heads this rail received that a link's reorder stage held for their turn (early ones and parts of striped
     * messages), and the most it held at once.
     */
    val reordered: Long = 0,
    val reorderDepthMax: Long = 0,
)

/**
 * What an endpoint carried and how deep its queues got: one [RailStats] per rail (one for a plain provider, one per
 * linked rail for a `link` endpoint), and the depths of the shared receive context (posted receives and unexpected
 * messages: now, maximum, average).
 */
public data class EndpointStats(val rails: List<RailStats>, val queues: SrxStats) {
    /** The rail named [rail], or null. */
    public fun rail(rail: String): RailStats? = rails.firstOrNull { it.rail == rail }

    /** The table `BRAID_LINK_DUMP_STATS` prints. */
    public fun render(): String = buildString {
        val name = "%-" + maxOf(8, rails.maxOfOrNull { it.rail.length } ?: 0) + "s"
        val failovers = rails.any { it.failovers != 0L }
        val spread = rails.any { it.fragments != 0L || it.reordered != 0L }
        append(String.format("$name %12s %14s %12s %14s", "rail", "msgs sent", "bytes sent", "msgs recv", "bytes recv"))
        append(if (failovers) String.format(" %9s", "failovers") else "")
        appendLine(if (spread) String.format(" %9s %9s %9s", "fragments", "reordered", "depth max") else "")
        for (r in rails) {
            append(
                String.format(
                    "$name %12d %14d %12d %14d",
                    r.rail,
                    r.messagesSent,
                    r.bytesSent,
                    r.messagesReceived,
                    r.bytesReceived,
                )
            )
            append(if (failovers) String.format(" %9d", r.failovers) else "")
            appendLine(if (spread) String.format(" %9d %9d %9d", r.fragments, r.reordered, r.reorderDepthMax) else "")
        }
        appendLine(String.format("posted receives:     max %d, average %.2f", queues.postedMax, queues.postedAverage))
        append(
            String.format("unexpected messages: max %d, average %.2f", queues.unexpectedMax, queues.unexpectedAverage)
        )
    }
}

/** The counters behind one [RailStats]; a transport bumps them, under the domain lock. */
internal class RailCounters(private val rail: String) {
    var messagesSent = 0L
    var bytesSent = 0L
    var messagesReceived = 0L
    var bytesReceived = 0L
    /** Peers moved off this rail because they were gone on it (a link's failover). */
    var failovers = 0L
    /** Parts of striped messages sent on this rail, and their bytes. */
    var fragments = 0L
    var fragmentBytes = 0L

    fun sent(bytes: Int) {
        messagesSent++
        bytesSent += bytes
    }

    fun received(bytes: Long) {
        messagesReceived++
        bytesReceived += bytes
    }

    fun snapshot(): RailStats =
        RailStats(rail, messagesSent, bytesSent, messagesReceived, bytesReceived, failovers, fragments, fragmentBytes)

    private var paused: RailStats? = null

    /**
     * [pause]: from now until the matching resume, traffic is not counted (the counts go back to what they were at the
     * pause). Costs nothing per message: the counters run on and are reset.
     */
    fun pause(pause: Boolean) {
        if (pause) {
            if (paused == null) paused = snapshot()
            return
        }
        val p = paused ?: return
        messagesSent = p.messagesSent
        bytesSent = p.bytesSent
        messagesReceived = p.messagesReceived
        bytesReceived = p.bytesReceived
        failovers = p.failovers
        fragments = p.fragments
        fragmentBytes = p.fragmentBytes
        paused = null
    }
}
