package braid.core

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Which memory a buffer is (libfabric's `enum fi_hmem_iface`): [SYSTEM] (heap arrays, direct buffers, `malloc`), an
 * accelerator's ([CUDA], [ROCR], [ZE], [NEURON], [SYNAPSEAI], libfabric's numbers), or one the application [define]s.
 * Memory of any interface but [SYSTEM] is reached only through the copy functions ([HmemOp]): rails never read or write
 * it themselves, they stage it through host bounce buffers.
 */
public class HmemIface private constructor(public val id: Int, public val name: String) {
    /** Whether this is host memory that rails may address directly. */
    public val isSystem: Boolean
        get() = id == 0

    override fun toString(): String = name

    public companion object {
        @JvmField public val SYSTEM: HmemIface = HmemIface(0, "SYSTEM")
        @JvmField public val CUDA: HmemIface = HmemIface(1, "CUDA")
        @JvmField public val ROCR: HmemIface = HmemIface(2, "ROCR")
        @JvmField public val ZE: HmemIface = HmemIface(3, "ZE")
        @JvmField public val NEURON: HmemIface = HmemIface(4, "NEURON")
        @JvmField public val SYNAPSEAI: HmemIface = HmemIface(5, "SYNAPSEAI")

        private val defined = ConcurrentHashMap<String, HmemIface>()
        private val nextId = AtomicInteger(FIRST_USER_ID)

        /** The first id [define] hands out; libfabric's own interfaces stay below it. */
        public const val FIRST_USER_ID: Int = 1000

        /**
         * An interface of the application's own (a device no built-in copy knows): its memory moves only through the
         * override functions set with `setOp`. The same [name] returns the same interface.
         */
        @JvmStatic
        public fun define(name: String): HmemIface {
            if (name.isBlank())
                throw FabricException.invalid("HmemIface.define: the name is blank; give the device a name")
            if (name in BUILT_IN.map { it.name }) {
                throw FabricException.invalid("HmemIface.define: '$name' is built in; use HmemIface.$name")
            }
            return defined.computeIfAbsent(name) { HmemIface(nextId.getAndIncrement(), it) }
        }

        private val BUILT_IN = listOf(SYSTEM, CUDA, ROCR, ZE, NEURON, SYNAPSEAI)
    }
}

/**
 * The operations an application may override (the per-operation form of the OFIWG proposal; libfabric's
 * `FI_SET_OPS_HMEM_OVERRIDE` sets both at once). Set with [Domain.setOp] or [Endpoint.setOp].
 */
public enum class HmemOp {
    /** Copies host bytes into device memory (`copy_to_hmem_iov`). */
    COPY_TO_HMEM_IOV,

    /** Copies device bytes into host memory (`copy_from_hmem_iov`). */
    COPY_FROM_HMEM_IOV,
}

/**
 * A copy between host memory and an interface's memory, the signature of the seed's `copy_{to,from}_hmem_iov`:
 * - [iface] and [device]: whose memory;
 * - [iov] and [iovCount]: the device side as `iovCount` pieces, piece i at address `iov[2*i]` of length `iov[2*i+1]`;
 * - [iovOffset]: where in the pieces the copy starts;
 * - [host] and [size]: the native address of the host side (always off-heap) and the bytes to copy.
 *
 * Which way it copies is the [HmemOp] it was set for. Returns the bytes copied (all of [size]), or a negated errno
 * (`-Errno.EIO`): the operation that needed it then completes in error with that errno. Runs under the domain's lock on
 * the thread driving progress: keep it short and never call back into the domain.
 */
public fun interface HmemCopyFunction {
    public fun copy(
        iface: HmemIface,
        device: Long,
        iov: LongArray,
        iovCount: Int,
        iovOffset: Long,
        host: Long,
        size: Long,
    ): Long
}

/**
 * The overrides set on one object (a domain, or an endpoint over its domain's): an endpoint's own function for an
 * operation wins, else its domain's, read at each copy, so what the domain sets later reaches its endpoints.
 */
internal class HmemOverrides(private val parent: HmemOverrides?) {
    @Volatile private var toHmem: HmemCopyFunction? = null
    @Volatile private var fromHmem: HmemCopyFunction? = null

    fun set(op: HmemOp, fn: HmemCopyFunction?) {
        when (op) {
            HmemOp.COPY_TO_HMEM_IOV -> toHmem = fn
            HmemOp.COPY_FROM_HMEM_IOV -> fromHmem = fn
        }
    }

    fun toHmem(): HmemCopyFunction? = toHmem ?: parent?.toHmem()

    fun fromHmem(): HmemCopyFunction? = fromHmem ?: parent?.fromHmem()

    companion object {
        /** Whether a rail offering [caps] can honour an override: it stages device memory through the copy service. */
        fun honoured(caps: Long): Boolean = caps and Caps.HMEM != 0L
    }
}
