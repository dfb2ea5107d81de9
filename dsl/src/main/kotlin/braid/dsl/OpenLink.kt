package braid.dsl

import braid.core.AddressVector
import braid.core.Braid
import braid.core.CompletionQueue
import braid.core.CqFormat
import braid.core.Domain
import braid.core.Endpoint
import braid.core.EventQueue
import braid.core.Fabric
import braid.core.Info
import braid.core.OpFlags

/**
 * The rail-core objects of one open link: [fabric], [domain], an [endpoint] bound to the completion queues, the [av]
 * and the [eq] and enabled. [txCq] and [rxCq] are one queue unless the link was opened with separate ones. [resolved]
 * says which rails were opened and which were left out (null when opened from a bare [Info]). Closing closes the fabric
 * and all of it.
 */
public class OpenLink
private constructor(
    public val info: Info,
    public val resolved: ResolvedLink?,
    public val fabric: Fabric,
    public val domain: Domain,
    public val txCq: CompletionQueue,
    public val rxCq: CompletionQueue,
    public val av: AddressVector,
    public val eq: EventQueue,
    public val endpoint: Endpoint,
) : AutoCloseable {
    /** The completion queue of both directions (the transmit one when they are split). */
    public val cq: CompletionQueue
        get() = txCq

    /** This endpoint's address blob, for the peers' address vectors. */
    public val address: ByteArray
        get() = endpoint.address

    override fun close() {
        fabric.close()
    }

    internal companion object {
        @JvmSynthetic
        fun open(info: Info, resolved: ResolvedLink?, split: Boolean): OpenLink {
            val fabric = Braid.fabric(info)
            try {
                val domain = fabric.domain(info)
                val size = info.txAttr.size.coerceIn(1, 1 shl 16)
                val txCq = domain.completionQueue(CqFormat.TAGGED, size)
                val rxCq =
                    if (split) domain.completionQueue(CqFormat.TAGGED, info.rxAttr.size.coerceIn(1, 1 shl 16)) else txCq
                val av = domain.addressVector()
                val eq = fabric.eventQueue()
                val ep = domain.endpoint(info)
                if (split) {
                    ep.bind(txCq, OpFlags.TRANSMIT)
                    ep.bind(rxCq, OpFlags.RECV)
                } else {
                    ep.bind(txCq, OpFlags.TRANSMIT or OpFlags.RECV)
                }
                ep.bind(av)
                ep.bind(eq)
                ep.enable()
                return OpenLink(info, resolved, fabric, domain, txCq, rxCq, av, eq, ep)
            } catch (e: Throwable) {
                runCatching { fabric.close() }.exceptionOrNull()?.let { e.addSuppressed(it) }
                throw e
            }
        }
    }
}
