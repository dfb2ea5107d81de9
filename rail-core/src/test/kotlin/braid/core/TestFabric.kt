package braid.core

import braid.provider.shm.ShmParams
import braid.provider.tcp.TcpParams
import braid.testsupport.Deadline
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The one test fabric: [count] endpoints of [rail] in this process (one per link string when [rail] lists them), each
 * with its own domain, CQ, AV and event queue, all in each other's AV (`addrs[i][j]` is node j in node i's AV). What
 * the contracts run on.
 * - [eagerSize]: every rail's eager limit; [ringCapacity]: the shm rings (a link's shm rail too); [bufferSize]: tcp's
 *   connection buffers (tcp only; a link's tcp rail keeps its default).
 * - [unexpectedLimit] / [unexpectedBytes]: the receive context's bounds (0 bytes: the default).
 * - [progress], [idle], [txSize]: each domain's progress model, idle policy and tx queue depth ([ProgressModel.AUTO]
 *   starts an engine thread per domain); [counters] binds a receive counter to each node ([recvCounters]).
 * - [settings]: what every endpoint gets; by default [SETTINGS], which ignore this process's environment. [keys]: each
 *   node's job key (rails that authenticate their peers check it).
 */
class TestFabric(
    count: Int = 2,
    val rail: Rail = Rail.SHM,
    eagerSize: Int = 1024,
    ringCapacity: Int = 1 shl 16,
    bufferSize: Int = 1 shl 16,
    unexpectedLimit: Int = CoreParams.UNEXPECTED_LIMIT.default,
    unexpectedBytes: Long = 0L,
    format: CqFormat = CqFormat.TAGGED,
    progress: ProgressModel = ProgressModel.MANUAL,
    idle: IdlePolicy = IdlePolicy(),
    txSize: Int = 1 shl 16,
    counters: Boolean = false,
    settings: Settings = SETTINGS,
    keys: List<String>? = null,
    /** Each node's eager size, where they differ (else [eagerSize] for all). */
    eagerSizes: List<Int>? = null,
) : AutoCloseable {
    private val size =
        ((rail as? Rail.Link)?.perNode?.size ?: count).also { n ->
            require(n == count || count == 2) {
                "TestFabric: count $count, but $rail lists $n link strings; give one per node and leave count out"
            }
            require(keys == null || keys.size == n) {
                "TestFabric: ${keys?.size} job keys for $n nodes; give one per node"
            }
        }

    /** Each node's info: the rail's offer, tuned as asked. */
    val infos: List<Info> =
        List(size) { i ->
            val offer = rail.info(i, settings)
            val tuned =
                when (rail) {
                    is Rail.Link ->
                        offer.copy(
                            rails =
                                offer.rails.map { r ->
                                    (if (r.provider == "shm") r.with(ShmParams.RING_SIZE, ringCapacity) else r).copy(
                                        endpointAttr = r.endpointAttr.copy(eagerSize = eagerSizes?.get(i) ?: eagerSize)
                                    )
                                }
                        )
                    else ->
                        (if (rail is Rail.Tcp) offer.with(TcpParams.BUFFER_SIZE, bufferSize)
                            else offer.with(ShmParams.RING_SIZE, ringCapacity))
                            .let {
                                it.copy(
                                    endpointAttr = it.endpointAttr.copy(eagerSize = eagerSizes?.get(i) ?: eagerSize)
                                )
                            }
                }.with(CoreParams.UNEXPECTED_BYTES, unexpectedBytes)
            val keyed = if (keys == null) tuned else tuned.with(CoreParams.JOB_KEY, keys[i])
            keyed.copy(
                rxAttr = keyed.rxAttr.copy(unexpectedLimit = unexpectedLimit),
                domainAttr = keyed.domainAttr.copy(idle = idle, progress = progress),
                txAttr = keyed.txAttr.copy(size = txSize),
            )
        }
    /** Node 0's info (every node's but for [keys] and a link's per-node string). */
    val info: Info = infos.first()
    val fabric: Fabric = Braid.fabric(info)
    val nodes: List<Node> = infos.map { Node(fabric.domain(it), format) }
    /** Each node's event queue (PEER_DOWN and connection errors). */
    val eqs: List<EventQueue> = nodes.map { n -> fabric.eventQueue().also { n.ep.bind(it) } }
    /** Each node's receive counter when [counters], else nulls. */
    val recvCounters: List<Counter?> =
        nodes.map { n -> if (counters) n.domain.counter().also { n.ep.bind(it, OpFlags.RECV) } else null }
    /** addrs[i][j]: node j's fabric address in node i's AV. */
    val addrs: List<LongArray>

    init {

        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(size) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    /** One endpoint with its domain, CQ and AV, and a reused completion and error entry. */
    class Node(val domain: Domain, format: CqFormat) {
        val cq = domain.completionQueue(format)
        val av = domain.addressVector()
        val ep =
            domain.endpoint().also {
                it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                it.bind(av)
            }
        val entry = Completion()
        val error = CompletionError()

        /**
         * Reads completions until [n] arrive (errors included as [CompletionError]s), driving [others] too; fails after
         * [millis].
         */
        fun await(n: Int, millis: Long = 10_000, others: List<Node> = emptyList()): List<Any> {
            val out = ArrayList<Any>()
            val deadline = Deadline.of("$n completions", Duration.ofMillis(millis))
            while (out.size < n) {
                others.forEach { it.domain.progress() }
                when (cq.readFrom(entry)) {
                    1 ->
                        out +=
                            Completion().also { c ->
                                c.context = entry.context
                                c.flags = entry.flags
                                c.len = entry.len
                                c.data = entry.data
                                c.tag = entry.tag
                                c.source = entry.source
                            }
                    -Errno.EAVAIL -> {
                        val e = CompletionError()
                        check(cq.readErr(e) == 1)
                        out += e
                    }
                }
                deadline.check { "${out.size}: $out" }
            }
            return out
        }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }

    companion object {
        /**
         * The settings test endpoints get unless told otherwise: the defaults, whatever this process's environment
         * says.
         */
        @JvmField val SETTINGS: Settings = Settings.ofEnvironment(emptyMap())
    }
}

/** Drives [nodes]' progress until [done], failing after [millis] with [what] and what [seen] reads then. */
fun driveUntil(
    what: String,
    nodes: List<TestFabric.Node>,
    millis: Long = 10_000,
    seen: (() -> Any?)? = null,
    done: () -> Boolean,
) {
    val deadline = Deadline.of(what, Duration.ofMillis(millis))
    while (!done()) {
        nodes.forEach { it.domain.progress() }
        if (seen == null) deadline.check() else deadline.check(seen)
    }
}

fun bytes(vararg values: Int): UnsafeBuffer = UnsafeBuffer(ByteArray(values.size) { values[it].toByte() })

fun UnsafeBuffer.text(len: Int = capacity()): String = String(ByteArray(len).also { getBytes(0, it) })

fun buf(text: String): UnsafeBuffer = UnsafeBuffer(text.toByteArray())
