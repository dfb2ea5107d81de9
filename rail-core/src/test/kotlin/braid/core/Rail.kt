package braid.core

import braid.provider.link.LinkParams

/**
 * The rail a [TestFabric]'s endpoints use: [SHM], [TCP] on loopback (or [tcp] on another interface), or [LINK] — shm +
 * tcp on loopback for every node, or [link] with one link string per node (a node without shm is reached over tcp).
 */
sealed class Rail(val provider: String) {
    class Shm internal constructor() : Rail("shm")

    class Tcp internal constructor(val iface: String) : Rail("tcp")

    class Link internal constructor(val perNode: List<String>?) : Rail("link")

    /** The native libfabric rail [name] (`ofi:tcp`, `ofi:shm`) on native domain [domain] (null: its first). */
    class Ofi internal constructor(val name: String, val domain: String?) : Rail("ofi")

    /** This rail's offer for node [node] before a [TestFabric] tunes it, with [settings]. */
    fun info(node: Int = 0, settings: Settings = TestFabric.SETTINGS): Info =
        when (this) {
            is Shm -> Braid.getInfo(Hints(provider = "shm", settings = settings)).first()
            is Tcp -> Braid.getInfo(Hints(provider = "tcp", domainName = iface, settings = settings)).first()
            is Ofi -> Braid.getInfo(Hints(provider = name, domainName = domain, settings = settings)).first()
            is Link ->
                Braid.getInfo(
                        Hints(
                            provider = "link",
                            settings = settings.with(LinkParams.LINKS, perNode?.get(node) ?: SHM_TCP),
                        )
                    )
                    .first()
        }

    override fun toString(): String =
        when (this) {
            is Shm -> "shm"
            is Tcp -> "tcp:$iface"
            is Link -> "link${perNode ?: ""}"
            is Ofi -> name + (domain?.let { ":$it" } ?: "")
        }

    companion object {
        private const val SHM_TCP = "shm+tcp:lo"

        @JvmField val SHM: Rail = Shm()
        @JvmField val TCP: Rail = Tcp("lo")
        @JvmField val LINK: Rail = Link(null)

        /** tcp on [iface] (a namespace's interface in the cross-host specs). */
        @JvmStatic fun tcp(iface: String): Rail = Tcp(iface)

        /** The native libfabric rail [name] on native domain [domain] (`ofi("ofi:tcp", "lo")`). */
        @JvmStatic @JvmOverloads fun ofi(name: String, domain: String? = null): Rail = Ofi(name, domain)

        /** A link per node, node i's link string [perNode] i: the fabric has one node per string. */
        @JvmStatic fun link(vararg perNode: String): Rail = Link(perNode.toList())

        /** As [link], from a list. */
        @JvmStatic fun link(perNode: List<String>): Rail = Link(perNode.toList())
    }
}
