package braid.provider.link

import braid.core.Braid
import braid.core.CqFormat
import braid.core.Fabric
import braid.core.Hints
import braid.core.Info
import braid.core.RailFabric
import braid.core.TestFabric

/**
 * Link endpoints in this process, each with its own domain, CQ and AV, all in each other's AV.
 * [links] gives each node's link string (all on loopback); nodes with shm reach each other over
 * it (one process, one host), a node without shm is reached over tcp.
 */
internal class LinkTestFabric(
    links: List<String> = listOf("shm+tcp:lo", "shm+tcp:lo"),
    eagerSize: Int = 1024,
    format: CqFormat = CqFormat.TAGGED,
    /** The link's own bounds on its one shared unexpected queue (messages; bytes, 0 for the default); its rails keep their defaults. */
    unexpectedLimit: Int = braid.core.CoreParams.UNEXPECTED_LIMIT.default,
    unexpectedBytes: Long = 0L,
) : RailFabric {
    val infos: List<Info> = links.map {
        tuned(linkInfo(it), eagerSize).with(braid.core.CoreParams.UNEXPECTED_BYTES, unexpectedBytes).let { i ->
            i.copy(rxAttr = i.rxAttr.copy(unexpectedLimit = unexpectedLimit))
        }
    }
    override val info: Info = infos.first()
    override val fabric: Fabric = Braid.fabric(info)
    override val nodes: List<TestFabric.Node> = infos.map { TestFabric.Node(fabric.domain(it), format) }
    override val addrs: List<LongArray>

    init {
        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(nodes.size) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }

    companion object {
        fun linkInfo(links: String): Info = Braid.getInfo(Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, links)).first()

        private fun tuned(info: Info, eager: Int): Info = info.copy(
            rails = info.rails.map { r ->
                (if (r.provider == "shm") r.with(braid.provider.shm.ShmParams.RING_SIZE, 1 shl 16) else r).copy(endpointAttr = r.endpointAttr.copy(eagerSize = eager))
            },
        )
    }
}
