package braid.core

import org.agrona.concurrent.UnsafeBuffer

/** Two or more shm endpoints in this process, each with its own domain, CQ and AV, all in each other's AV. */
class TestFabric(
    count: Int = 2,
    ringCapacity: Int = 1 shl 16,
    eagerSize: Int = 1024,
    unexpectedLimit: Int = 1 shl 20,
    format: CqFormat = CqFormat.TAGGED,
    unexpectedBytes: Long = 0L,
) : RailFabric {
    override val info: Info = Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm")).first().let {
        it.with(braid.provider.shm.ShmParams.RING_SIZE, ringCapacity).with(CoreParams.UNEXPECTED_BYTES, unexpectedBytes).copy(
            endpointAttr = it.endpointAttr.copy(eagerSize = eagerSize),
            rxAttr = it.rxAttr.copy(unexpectedLimit = unexpectedLimit),
        )
    }
    override val fabric: Fabric = Braid.fabric(info)
    override val nodes: List<Node> = List(count) { Node(fabric.domain(info), format) }
    /** addrs[i][j]: node j's fabric address in node i's AV. */
    override val addrs: List<LongArray>

    init {
        nodes.forEach { it.ep.enable() }
        addrs = nodes.map { n -> LongArray(count) { j -> n.av.insert(nodes[j].ep.address) } }
    }

    class Node(val domain: Domain, format: CqFormat) {
        val cq = domain.completionQueue(format)
        val av = domain.addressVector()
        val ep = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av) }
        val entry = Completion()
        val error = CompletionError()

        /** Reads completions until [n] arrive (errors included as -1 markers), failing after [millis]. */
        fun await(n: Int, millis: Long = 10_000, others: List<Node> = emptyList()): List<Any> {
            val out = ArrayList<Any>()
            val deadline = System.nanoTime() + millis * 1_000_000
            while (out.size < n) {
                others.forEach { it.domain.progress() }
                when (cq.readFrom(entry)) {
                    1 -> out += Completion().also { c ->
                        c.context = entry.context; c.flags = entry.flags; c.len = entry.len; c.data = entry.data; c.tag = entry.tag; c.source = entry.source
                    }
                    -Errno.EAVAIL -> { val e = CompletionError(); check(cq.readErr(e) == 1); out += e }
                }
                check(System.nanoTime() < deadline) { "timed out waiting for $n completions; got ${out.size}: $out" }
            }
            return out
        }
    }

    override fun close() {
        nodes.forEach { it.ep.close() }
        fabric.close()
    }
}

fun bytes(vararg values: Int): UnsafeBuffer = UnsafeBuffer(ByteArray(values.size) { values[it].toByte() })

fun UnsafeBuffer.text(len: Int = capacity()): String = String(ByteArray(len).also { getBytes(0, it) })

fun buf(text: String): UnsafeBuffer = UnsafeBuffer(text.toByteArray())
