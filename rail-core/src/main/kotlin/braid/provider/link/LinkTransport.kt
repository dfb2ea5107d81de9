package braid.provider.link

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.EndpointStats
import braid.core.Errno
import braid.core.Info
import braid.core.RailCounters
import braid.core.RailStats
import braid.core.RxEntry
import braid.provider.AddressHeader
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap

/**
 * A link's part of one endpoint: the rails' transports side by side. Sends pass through to the rail the destination's
 * locality picks — shm when the peer's host identity is this host's and both have shm, else the network rail — so one
 * peer is always reached over one rail and its messages keep their order. Receives never pass through here: each rail
 * matches against the endpoint's shared receive context and completes into its CQ, so an any-source receive is matched
 * exactly once whichever rail's message arrives first (both run under the domain lock).
 */
internal class LinkTransport(
    private val host: RailHost,
    private val av: RailAv,
    private val info: Info,
    private val hostId: Long,
    private val rails: List<Pair<String, Transport>>,
    private val useSrq: Boolean,
    private val dumpStats: Boolean,
) : Transport {
    private val shm: Transport? = rails.firstOrNull { it.first == LinkProvider.SHM }?.second
    private val network: Pair<String, Transport>? = rails.firstOrNull { it.first != LinkProvider.SHM }
    private val net: Transport? = network?.second
    private val routes = Long2ObjectHashMap<Transport>()
    private var routesGeneration = -1L

    override val address: ByteArray =
        LinkAddressDescriptor.encode(hostId, rails.map { (name, t) -> AddressHeader.kindOf(name) to t.address })

    override val counters: RailCounters = RailCounters("link")

    override val acceptsAnySource: Boolean
        get() = useSrq

    override fun railStats(): List<RailStats> = rails.flatMap { it.second.railStats() }

    override fun pauseStats(pause: Boolean) {
        counters.pause(pause)
        rails.forEach { it.second.pauseStats(pause) }
    }

    override fun enable() {
        for ((_, t) in rails) t.enable()
    }

    /**
     * Polls shm every time and the network rail when [schedule] says (every time while it is busy, else about once per
     * [NetworkPollSchedule.IDLE_POLL_NANOS]), reading the clock only when the schedule's countdown runs out.
     */
    override fun progress(): Int {
        val shm = shm
        val net = net
        if (shm == null || net == null) return (shm ?: net)?.progress() ?: 0
        val work = shm.progress()
        if (--schedule.countdown > 0) return work
        val now = System.nanoTime()
        if (!schedule.due(now)) return work
        val w = net.progress()
        schedule.polled(now, w)
        return work + w
    }

    private val schedule = NetworkPollSchedule()

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val rail = railFor(dest) ?: return unrouted(dest)
        return rail.send(buffer, dest, tag, data, flags, context)
    }

    // ## RMA and atomics: to the rail the destination's locality picks, as sends go; the target's
    // rail serves them against the endpoint's domain, whichever rail they arrive on ##

    override val rmaCaps: Long
        get() = rails.fold(Caps.RMA_ALL) { caps, (_, t) -> caps and t.rmaCaps }

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int =
        rails.minOf { it.second.maxAtomicCount(type, form) }

    override fun write(
        buffer: DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = railFor(dest)?.write(buffer, dest, remoteOffset, key, flags, context) ?: unrouted(dest)

    override fun read(
        buffer: MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = railFor(src)?.read(buffer, src, remoteOffset, key, flags, context) ?: unrouted(src)

    override fun atomic(
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int =
        railFor(dest)?.atomic(operand, compare, result, dest, remoteOffset, key, type, op, count, flags, context)
            ?: unrouted(dest)

    /** [route], and the network rail counts as busy (polled every time) once given work. */
    private fun railFor(dest: Long): Transport? {
        val rail = route(dest)
        if (rail != null && rail !== shm) schedule.kick()
        return rail
    }

    /**
     * The rail that reaches [dest] (shm for a peer on this host that has shm, else the network rail), or null if none
     * does ([unrouted] says why).
     */
    private fun route(dest: Long): Transport? {
        if (!av.bound) return null
        if (av.generation != routesGeneration) {
            routes.clear()
            routesGeneration = av.generation
        }
        routes.get(dest)?.let {
            return it
        }
        val peer = av.peer(dest) as? LinkAddress ?: return null
        val rail =
            when {
                shm != null && peer.hostId == hostId && peer.part(LinkProvider.SHM) != null -> shm
                network != null && peer.part(network.first) != null -> network.second
                else -> return null
            }
        routes.put(dest, rail)
        return rail
    }

    /**
     * Why [route] found no rail for [dest]: `-EINVAL` (no AV, not a link address) or `-EHOSTUNREACH` (none reaches it).
     */
    private fun unrouted(dest: Long): Int =
        if (av.bound && av.peer(dest) is LinkAddress) -Errno.EHOSTUNREACH else -Errno.EINVAL

    // The link never queues an entry of its own: each rail queues its unexpected messages
    // with itself as the entry's peer, and the receive context calls that rail back.
    override fun startMsg(entry: RxEntry): Unit = notOwned(entry)

    override fun startTag(entry: RxEntry): Unit = notOwned(entry)

    override fun discardMsg(entry: RxEntry): Unit = notOwned(entry)

    override fun discardTag(entry: RxEntry): Unit = notOwned(entry)

    private fun notOwned(entry: RxEntry): Nothing =
        throw IllegalStateException("link: entry $entry was queued by a rail, not by the link")

    override fun abort(err: Int, why: String) {
        for ((_, t) in rails) t.abort(err, why)
    }

    override fun close() {
        if (dumpStats)
            System.err.println(
                "braid link '${info.domainName}' endpoint closing:\n" +
                    EndpointStats(railStats(), host.srx.stats()).render()
            )
        var first: Exception? = null
        for ((_, t) in rails) try {
            t.close()
        } catch (e: Exception) {
            if (first == null) first = e
        }
        first?.let { throw it }
    }

    override fun toString(): String =
        "link '${info.domainName}'\n" + rails.joinToString("\n") { (name, t) -> "  $name: $t" }
}
