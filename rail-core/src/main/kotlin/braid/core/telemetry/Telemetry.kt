package braid.core.telemetry

import braid.core.CoreParams
import braid.core.Endpoint
import java.lang.management.ManagementFactory
import java.lang.ref.WeakReference
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.function.LongSupplier
import javax.management.InstanceAlreadyExistsException
import javax.management.InstanceNotFoundException
import javax.management.ObjectName
import jdk.jfr.EventType

/**
 * Braid's counters in the JVM's own tools. Each enabled endpoint is published on the platform MBean server under domain
 * `io.braid` ([EndpointMXBean], one [RailMXBean] per rail) while [CoreParams.TELEMETRY] is on (the default), and
 * unregistered when it closes; the beans hold the endpoint weakly, so an endpoint never closed is collected and its
 * beans removed at the next registration. The MBean server starts no thread: registration keeps no JVM alive. JDK
 * Flight Recorder events: [SlowWaitEvent], [PeerDownEvent], [FailoverEvent].
 *
 * ```
 * jconsole PID                                   # MBeans tab, io.braid
 * jcmd PID JFR.start duration=60s filename=braid.jfr
 * jfr print --categories Braid braid.jfr
 * ```
 */
public object Telemetry {
    /** The JMX domain of every Braid bean. */
    public const val DOMAIN: String = "io.braid"

    /** Names of the counters a rail keeps beyond its [braid.core.RailStats] (`Transport.telemetry`). */
    internal const val CREDIT: String = "CreditCommitted"
    internal const val SPLIT_COPIES: String = "SplitCopies"
    internal const val SPLIT_CHUNKS_PULLED: String = "SplitChunksPulled"
    internal const val SPLIT_CHUNKS_PUSHED: String = "SplitChunksPushed"

    /** The counter name under which the collectives' offload pairing reports its calls ([addCounter]). */
    public const val OFFLOAD_CALLS: String = "OffloadCalls"

    /** Counters other modules attach to an endpoint's bean: by endpoint, each with its owner and name. */
    private val attached = java.util.WeakHashMap<Endpoint, MutableList<Attached>>()

    private class Attached(val owner: Any, val name: String, val counter: LongSupplier)

    /**
     * Adds [counter] under [name] to [endpoint]'s bean (summed with the other counters of that name; [OFFLOAD_CALLS] is
     * one the bean shows), until [removeCounters] for [owner]. For a layer above rail-core that counts work done over
     * an endpoint, as the collectives' offload pairing counts its calls: nothing is added to its data path, the counter
     * is read when JMX asks.
     */
    @JvmStatic
    public fun addCounter(endpoint: Endpoint, name: String, owner: Any, counter: LongSupplier) {
        synchronized(attached) { attached.getOrPut(endpoint) { ArrayList() } += Attached(owner, name, counter) }
    }

    /** Removes the counters [owner] added to [endpoint]'s bean. */
    @JvmStatic
    public fun removeCounters(endpoint: Endpoint, owner: Any) {
        synchronized(attached) { attached[endpoint]?.removeAll { it.owner === owner } }
    }

    private fun attachedSum(endpoint: Endpoint, name: String): Long =
        synchronized(attached) { attached[endpoint]?.filter { it.name == name }?.sumOf { it.counter.asLong } ?: 0 }

    /** [RailStats]' counter [name] (a getter the rail helper's stats may add), or 0 where it has none. */
    private fun byName(stats: braid.core.RailStats, name: String): Long {
        val getter = "get" + name.replaceFirstChar { it.uppercase() }
        val m = runCatching { stats.javaClass.getMethod(getter) }.getOrNull() ?: return 0
        return (runCatching { m.invoke(stats) }.getOrNull() as? Number)?.toLong() ?: 0
    }

    private val ids = AtomicLong()
    private val registered = HashMap<ObjectName, WeakReference<Endpoint>>()
    private val byEndpoint = java.util.WeakHashMap<Endpoint, List<ObjectName>>()

    /**
     * The name of [endpoint]'s bean, or null when it is not published (telemetry off, not enabled, closed, or not yet:
     * publishing follows `enable()` by a moment).
     */
    @JvmStatic
    public fun objectName(endpoint: Endpoint): ObjectName? = synchronized(this) { byEndpoint[endpoint]?.firstOrNull() }

    /** The thread that registers and unregisters, in the order asked; it ends after 2 s without work. */
    private val worker =
        ThreadPoolExecutor(0, 1, 2, TimeUnit.SECONDS, LinkedBlockingQueue()) { r ->
            Thread(r, "io.braid.telemetry").apply { isDaemon = true }
        }

    /** Publishes [endpoint] soon (called when it is enabled). */
    @JvmSynthetic
    internal fun endpointEnabled(endpoint: Endpoint) {
        if (!endpoint.info.settings[CoreParams.TELEMETRY]) return
        worker.execute { publish(endpoint) }
    }

    private fun publish(endpoint: Endpoint) {
        val server = ManagementFactory.getPlatformMBeanServer()
        // Before this object's lock: the domain lock comes first. A closed endpoint has nothing to publish.
        val rails = runCatching { endpoint.stats().rails.map { it.rail } }.getOrNull() ?: return
        synchronized(this) {
            sweep()
            val id = ids.incrementAndGet()
            val ref = WeakReference(endpoint)
            val names = ArrayList<ObjectName>()
            val name = ObjectName("$DOMAIN:type=Endpoint,provider=${ObjectName.quote(endpoint.info.provider)},id=$id")
            register(server, EndpointView(ref), name, names, ref)
            for (rail in rails) {
                val railName = ObjectName("$DOMAIN:type=Rail,endpoint=$id,rail=${ObjectName.quote(rail)}")
                register(server, RailView(ref, rail), railName, names, ref)
            }
            byEndpoint[endpoint] = names
        }
    }

    /** Withdraws [endpoint]'s beans soon (called when it closes), after its registration if that is still to come. */
    @JvmSynthetic
    internal fun endpointClosed(endpoint: Endpoint) {
        if (!endpoint.info.settings[CoreParams.TELEMETRY]) return
        worker.execute { synchronized(this) { byEndpoint.remove(endpoint)?.forEach(::unregister) } }
    }

    /**
     * Records a [PeerDownEvent] when a recording has it on (called once per dead peer of an endpoint, where PEER_DOWN
     * is written).
     */
    @JvmSynthetic
    internal fun peerDown(endpoint: Endpoint, peer: Long, reason: String) {
        if (!PEER_DOWN.isEnabled) return
        val e = PeerDownEvent()
        e.endpoint = endpoint.toString()
        e.peer = peer
        e.reason = reason
        e.commit()
    }

    /**
     * The hook for multi-rail failover: a link that moves [resent] operations for [peer] off [fromRail] onto [toRail]
     * calls this, and a [FailoverEvent] is recorded when a recording has it on.
     */
    @JvmStatic
    public fun failover(endpoint: Endpoint, peer: Long, fromRail: String, toRail: String, resent: Long) {
        if (!FAILOVER.isEnabled) return
        val e = FailoverEvent()
        e.endpoint = endpoint.toString()
        e.peer = peer
        e.fromRail = fromRail
        e.toRail = toRail
        e.resent = resent
        e.commit()
    }

    /** A [SlowWaitEvent] begun when a wait first idles, or null when no recording has it on (nothing allocated). */
    @JvmSynthetic
    internal fun slowWaitBegin(domain: String): SlowWaitEvent? {
        if (!SLOW_WAIT.isEnabled) return null
        return SlowWaitEvent().also {
            it.domain = domain
            it.begin()
        }
    }

    /** Ends [event] when the wait ends; recorded if it lasted past the recording's threshold. */
    @JvmSynthetic
    internal fun slowWaitEnd(event: SlowWaitEvent) {
        event.end()
        if (event.shouldCommit()) event.commit()
    }

    private val SLOW_WAIT: EventType = EventType.getEventType(SlowWaitEvent::class.java)
    private val PEER_DOWN: EventType = EventType.getEventType(PeerDownEvent::class.java)
    private val FAILOVER: EventType = EventType.getEventType(FailoverEvent::class.java)

    private fun register(
        server: javax.management.MBeanServer,
        bean: Any,
        name: ObjectName,
        names: MutableList<ObjectName>,
        ref: WeakReference<Endpoint>,
    ) {
        try {
            server.registerMBean(bean, name)
            registered[name] = ref
            names += name
        } catch (_: InstanceAlreadyExistsException) {}
    }

    private fun unregister(name: ObjectName) {
        registered.remove(name)
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name)
        } catch (_: InstanceNotFoundException) {}
    }

    /** Unregisters the beans of endpoints collected without being closed. */
    private fun sweep() {
        registered.entries.filter { it.value.get() == null }.map { it.key }.forEach(::unregister)
    }

    private class EndpointView(private val ref: WeakReference<Endpoint>) : EndpointMXBean {
        private fun stats() = ref.get()?.let { runCatching { it.stats() }.getOrNull() }

        override val provider: String
            get() = ref.get()?.info?.provider ?: ""

        override val domain: String
            get() = ref.get()?.domain?.name ?: ""

        override val rails: List<String>
            get() = stats()?.rails?.map { it.rail } ?: emptyList()

        override val messagesSent: Long
            get() = stats()?.rails?.sumOf { it.messagesSent } ?: 0

        override val bytesSent: Long
            get() = stats()?.rails?.sumOf { it.bytesSent } ?: 0

        override val messagesReceived: Long
            get() = stats()?.rails?.sumOf { it.messagesReceived } ?: 0

        override val bytesReceived: Long
            get() = stats()?.rails?.sumOf { it.bytesReceived } ?: 0

        override val postedReceives: Int
            get() = stats()?.queues?.posted ?: 0

        override val postedReceivesMax: Int
            get() = stats()?.queues?.postedMax ?: 0

        override val unexpectedHeld: Int
            get() = stats()?.queues?.unexpected ?: 0

        override val unexpectedHeldMax: Int
            get() = stats()?.queues?.unexpectedMax ?: 0

        override val deferredWorkQueued: Int
            get() = ref.get()?.domain?.let { d -> synchronized(d.lock) { d.deferredWork.queued } } ?: 0

        override val deferredWorkInFlight: Int
            get() = ref.get()?.domain?.let { d -> synchronized(d.lock) { d.deferredWork.inFlight } } ?: 0

        /** The rails' own counters, by name (`Transport.telemetry`), under the domain lock. */
        private fun railCounters(): Map<String, Long> =
            ref.get()?.let { ep ->
                runCatching { synchronized(ep.domain.lock) { ep.transport.telemetry() } }.getOrNull()
            } ?: emptyMap()

        override val creditCommitted: Long
            get() = railCounters()[CREDIT] ?: 0

        override val splitCopies: Long
            get() = railCounters()[SPLIT_COPIES] ?: 0

        override val splitChunksPulled: Long
            get() = railCounters()[SPLIT_CHUNKS_PULLED] ?: 0

        override val splitChunksPushed: Long
            get() = railCounters()[SPLIT_CHUNKS_PUSHED] ?: 0

        override val offloadCalls: Long
            get() = ref.get()?.let { attachedSum(it, OFFLOAD_CALLS) } ?: 0

        override val retransmissions: Long
            get() = stats()?.rails?.sumOf { byName(it, "retransmissions") } ?: 0

        override val failovers: Long
            get() = stats()?.rails?.sumOf { it.failovers } ?: 0
    }

    private class RailView(private val ref: WeakReference<Endpoint>, override val rail: String) : RailMXBean {
        private fun stats() = ref.get()?.let { runCatching { it.stats() }.getOrNull() }?.rail(rail)

        override val messagesSent: Long
            get() = stats()?.messagesSent ?: 0

        override val bytesSent: Long
            get() = stats()?.bytesSent ?: 0

        override val messagesReceived: Long
            get() = stats()?.messagesReceived ?: 0

        override val bytesReceived: Long
            get() = stats()?.bytesReceived ?: 0

        override val retransmissions: Long
            get() = stats()?.let { byName(it, "retransmissions") } ?: 0

        override val failovers: Long
            get() = stats()?.failovers ?: 0
    }
}
