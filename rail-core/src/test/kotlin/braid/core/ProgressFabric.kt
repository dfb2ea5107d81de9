package braid.core

import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import java.lang.management.ManagementFactory
import java.util.concurrent.Executors

/**
 * Like [TestFabric], with the progress knobs: each node's domain gets [idle] and [progress]
 * ([ProgressModel.AUTO] starts an engine thread per domain); [counters] binds a receive counter.
 */
class ProgressFabric(
    count: Int = 2,
    eagerSize: Int = 1024,
    ringCapacity: Int = 1 shl 16,
    idle: IdlePolicy = IdlePolicy(),
    progress: ProgressModel = ProgressModel.MANUAL,
    txSize: Int = 1 shl 16,
    counters: Boolean = false,
) : AutoCloseable {
    val info: Info = Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm")).first().let {
        it.with(braid.provider.shm.ShmParams.RING_SIZE, ringCapacity).copy(
            endpointAttr = it.endpointAttr.copy(eagerSize = eagerSize),
            domainAttr = it.domainAttr.copy(idle = idle, progress = progress),
            txAttr = it.txAttr.copy(size = txSize),
        )
    }
    val fabric: Fabric = Braid.fabric(info)
    val nodes: List<TestFabric.Node> = List(count) { TestFabric.Node(fabric.domain(info), CqFormat.TAGGED) }
    val recvCounters: List<Counter?> = nodes.map { n -> if (counters) n.domain.counter().also { n.ep.bind(it, OpFlags.RECV) } else null }
    /** addrs[i][j]: node j's fabric address in node i's AV. */
    val addrs: List<LongArray>

    init {
        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(count) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }
}

/** A single-thread dispatcher with a known thread, closed by [use]. */
class OneThread(name: String) : AutoCloseable {
    @Volatile lateinit var thread: Thread
    private val executor = Executors.newSingleThreadExecutor { r -> Thread(r, name).also { it.isDaemon = true; thread = it } }
    val dispatcher: ExecutorCoroutineDispatcher = executor.asCoroutineDispatcher()

    init {
        executor.submit {}.get() // start the thread now, so [thread] is set
    }

    override fun close() {
        dispatcher.close()
        executor.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)
    }
}

private val threadBean = ManagementFactory.getThreadMXBean()

/** CPU time [t] used, in nanoseconds. */
fun cpuNanos(t: Thread): Long = threadBean.getThreadCpuTime(t.id)

/** Spins (with a deadline) until [condition] holds, failing with [what] after [millis]. */
fun awaitTrue(what: String, millis: Long = 10_000, condition: () -> Boolean) {
    val deadline = System.nanoTime() + millis * 1_000_000
    while (!condition()) {
        check(System.nanoTime() < deadline) { "timed out after $millis ms waiting for $what" }
        Thread.sleep(1)
    }
}

/** The domain's count of pending suspend/future operations, read under its lock. */
val Domain.pendingOps: Int get() = synchronized(lock) { hub.pendingCount }

/** Coroutines suspended in operations of this domain. */
val Domain.suspendedOps: Int get() = hub.suspendedWaiters

/** Posted receives in [ep]'s SRX, read under the domain lock. */
val Endpoint.postedReceives: Int get() = synchronized(domain.lock) { srx.postedCount }

/** Unexpected messages in [ep]'s SRX, read under the domain lock. */
val Endpoint.unexpectedMessages: Int get() = synchronized(domain.lock) { srx.unexpectedCount }
