package braid.collectives

import braid.core.Braid
import braid.core.Caps
import braid.core.CqFormat
import braid.core.Domain
import braid.core.Fabric
import braid.core.Hints
import braid.core.Info
import braid.core.OpFlags
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * [count] shm endpoints in this process, each with its own domain, CQ and AV holding every endpoint
 * (itself included). The defaults (1 KiB eager, 64 KiB rings) put every message past 1 KiB on the
 * rendezvous path, so the in-process specs cover it as well as the eager one.
 */
class LocalFabric(count: Int, ringCapacity: Int = 1 shl 16, eagerSize: Int = 1024) : AutoCloseable {
    val info: Info = Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm")).first().let {
        it.with(braid.provider.shm.ShmParams.RING_SIZE, ringCapacity).copy(endpointAttr = it.endpointAttr.copy(eagerSize = eagerSize))
    }
    val fabric: Fabric = Braid.fabric(info)
    val nodes: List<Node> = List(count) { Node(fabric.domain(info)) }

    init {
        nodes.forEach { it.ep.enable() }
        for (n in nodes) for (m in nodes) n.av.insert(m.ep.address)
    }

    class Node(val domain: Domain) {
        val cq = domain.completionQueue(CqFormat.TAGGED)
        val av = domain.addressVector()
        val ep = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av) }
        val set get() = av.avSet(*LongArray(av.count) { it.toLong() })
    }

    /** Joins every node's group over all nodes (driving all of them from this thread). */
    fun join(options: JoinOptions = JoinOptions.DEFAULT, members: List<Int> = nodes.indices.toList()): List<CollectiveGroup> {
        val joins = members.map { i -> Collectives.startJoin(nodes[i].ep, nodes[i].av.avSet(*members.map { it.toLong() }.toLongArray()), null, null, options) }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        val groups = arrayOfNulls<CollectiveGroup>(members.size)
        while (groups.any { it == null }) {
            for (i in members.indices) if (groups[i] == null) groups[i] = joins[i].test()
            check(System.nanoTime() < deadline) { "joins not complete after 30 s: ${groups.count { it != null }} of ${members.size} done" }
        }
        return groups.map { it!! }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }
}

/** Runs [body] for every group on its own thread, failing with the first failure (or after [seconds]). */
fun <T> onEveryRank(groups: List<CollectiveGroup>, seconds: Long = 300, body: (CollectiveGroup) -> T): List<T> {
    val pool = Executors.newFixedThreadPool(groups.size)
    try {
        val futures = groups.map { g -> pool.submit(Callable { body(g) }) }
        return futures.map { it.get(seconds, TimeUnit.SECONDS) }
    } finally {
        pool.shutdownNow()
        check(pool.awaitTermination(10, TimeUnit.SECONDS)) { "rank threads still running after the test" }
    }
}
