package braid.provider.tcp

import braid.core.Braid
import braid.core.CqFormat
import braid.core.Endpoint
import braid.core.EventQueue
import braid.core.Fabric
import braid.core.Hints
import braid.core.Info
import braid.core.RailFabric
import braid.core.CoreParams
import braid.core.Settings
import braid.core.TestFabric

/**
 * Two or more tcp endpoints in this process on 127.0.0.1 (port 0), each with its own domain,
 * CQ and AV, all in each other's AV — the tcp twin of [TestFabric]. [settings] are what the
 * endpoints get (job key, time-out, window; by default [SETTINGS], which ignore the environment),
 * [keys] each node's job key; [iface] is the interface they listen on.
 */
internal class TcpTestFabric(
    count: Int = 2,
    bufferSize: Int = 1 shl 16,
    eagerSize: Int = 1024,
    unexpectedLimit: Int = 1 shl 20,
    format: CqFormat = CqFormat.TAGGED,
    settings: Settings = SETTINGS,
    keys: List<String>? = null,
    iface: String = "lo",
    unexpectedBytes: Long = 0L,
) : RailFabric {
    override val info: Info = Braid.getInfo(Hints(provider = "tcp", domainName = iface, settings = settings)).first().let {
        it.with(TcpParams.BUFFER_SIZE, bufferSize).with(CoreParams.UNEXPECTED_BYTES, unexpectedBytes).copy(
            endpointAttr = it.endpointAttr.copy(eagerSize = eagerSize),
            rxAttr = it.rxAttr.copy(unexpectedLimit = unexpectedLimit),
        )
    }
    override val fabric: Fabric = Braid.fabric(info)
    override val nodes: List<TestFabric.Node> = List(count) { i ->
        TestFabric.Node(fabric.domain(if (keys == null) info else info.with(CoreParams.JOB_KEY, keys[i])), format)
    }
    /** Each node's event queue (PEER_DOWN and connection errors). */
    val eqs: List<EventQueue> = nodes.map { n -> fabric.eventQueue().also { n.ep.bind(it) } }
    /** addrs[i][j]: node j's fabric address in node i's AV. */
    override val addrs: List<LongArray>

    init {
        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(count) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }

    companion object {
        /** The settings test endpoints get unless told otherwise: the defaults, whatever this process's environment says. */
        val SETTINGS: Settings = Settings.ofEnvironment(emptyMap())

        fun loopbackInfo(): Info = Braid.getInfo(Hints(provider = "tcp", domainName = "lo", settings = SETTINGS)).first()
    }
}

/** The tcp transport behind an endpoint, for tests that look inside. */
internal val Endpoint.tcp: TcpTransport get() = transport as TcpTransport
