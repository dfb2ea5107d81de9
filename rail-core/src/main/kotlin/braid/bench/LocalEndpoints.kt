package braid.bench

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CompletionQueue
import braid.core.CqFormat
import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.Fabric
import braid.core.Hints
import braid.core.Info
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.core.Settings
import braid.provider.link.LinkParams

/**
 * Endpoints of this process that know each other, for the benchmark programs that measure a path without a second
 * process (a CPU cost per message, an idle duty cycle, held bytes under a flood): one domain, tagged completion queue
 * and address vector per endpoint, every endpoint in every other's address vector ([addr]). Built from the public API
 * only, from [infos] (one per endpoint; [info] gives a provider's first offer).
 */
public class LocalEndpoints(infos: List<Info>) : AutoCloseable {
    /** [count] endpoints of [info]. */
    public constructor(count: Int, info: Info) : this(List(count) { info })

    public val fabric: Fabric = Braid.fabric(infos.first())
    public val nodes: List<Node> = infos.map { Node(fabric.domain(it)) }
    private val addrs: List<LongArray>

    init {
        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(nodes.size) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    /** Endpoint [to]'s address in endpoint [from]'s address vector. */
    public fun addr(from: Int, to: Int): Long = addrs[from][to]

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }

    /** One endpoint with its domain, completion queue and address vector. */
    public class Node internal constructor(public val domain: Domain) {
        public val cq: CompletionQueue = domain.completionQueue(CqFormat.TAGGED)
        public val av: braid.core.AddressVector = domain.addressVector()
        public val ep: Endpoint =
            domain.endpoint().also {
                it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                it.bind(av)
            }
        private val entry = Completion()
        private val error = CompletionError()

        /**
         * Reads completions until [n] arrived, driving [others]' progress meanwhile; fails on an error completion, or
         * after 30 s without them.
         */
        public fun await(n: Int, vararg others: Node) {
            var got = 0
            val deadline = System.nanoTime() + STALL_NANOS
            while (got < n) {
                for (o in others) o.domain.progress()
                when (val rc = cq.read(entry)) {
                    1 -> got++
                    -Errno.EAGAIN ->
                        check(System.nanoTime() < deadline) {
                            "$got of $n completions after 30 s on ${ep.info.provider}"
                        }
                    -Errno.EAVAIL -> {
                        cq.readErr(error)
                        error("an operation failed: ${Errno.name(error.err)}: ${error.message}")
                    }
                    else -> error("reading the completion queue failed: ${Errno.name(rc)}")
                }
            }
        }
    }

    public companion object {
        private const val STALL_NANOS = 30_000_000_000L

        /**
         * [provider]'s first offer under [settings] (this process's environment by default), progressed by the caller
         * ([ProgressModel.MANUAL]: no engine thread): tcp on loopback, the link as [links] (shm+tcp on loopback unless
         * given).
         */
        @JvmStatic
        @JvmOverloads
        public fun info(provider: String, settings: Settings = Settings.DEFAULT, links: String? = null): Info =
            offer(provider, settings, links).let {
                it.copy(domainAttr = it.domainAttr.copy(progress = ProgressModel.MANUAL))
            }

        private fun offer(provider: String, settings: Settings, links: String?): Info =
            when (provider) {
                "tcp" -> Braid.getInfo(Hints(provider = "tcp", domainName = "lo", settings = settings)).first()
                "link" ->
                    Braid.getInfo(
                            Hints(provider = "link", settings = settings.with(LinkParams.LINKS, links ?: "shm+tcp:lo"))
                        )
                        .first()
                else -> Braid.getInfo(Hints(provider = provider, settings = settings)).first()
            }
    }
}
