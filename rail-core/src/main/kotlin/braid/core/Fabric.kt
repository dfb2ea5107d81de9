package braid.core

import braid.provider.Provider

/** An open fabric (`fid_fabric`): the root of one provider's objects. */
public class Fabric
internal constructor(
    public val info: Info,
    @get:JvmSynthetic internal val provider: Provider,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : AutoCloseable {
    private val domains = ArrayList<Domain>()

    /** Opens a domain (`fi_domain`) with [info]'s domain attributes. */
    @JvmOverloads public fun domain(info: Info = this.info): Domain = open(info, null)

    /**
     * Opens [info]'s domain as a peer of [owner] (`fi_domain2` with `FI_PEER`): it shares the owner's lock, the owner's
     * progress drives it, and its endpoints may import the owner's completion queue ([Domain.importCompletionQueue]),
     * shared receive context ([Endpoint.bind]) and event queue ([importEventQueue]). A provider that cannot serve as a
     * peer is refused with EINVAL.
     */
    public fun domain(info: Info, owner: Domain): Domain {
        if (!provider.canBePeer) {
            throw FabricException.invalid(
                "fabric '${this.info.fabricName}': provider '${provider.name}' cannot be opened as a peer of domain '${owner.name}'"
            )
        }
        return open(info, owner)
    }

    private fun open(info: Info, owner: Domain?): Domain {
        if (info.provider != provider.name) {
            throw FabricException.invalid(
                "fabric '${this.info.fabricName}': info is for provider '${info.provider}', not '${provider.name}'"
            )
        }
        val d = Domain(this, info, owner)
        synchronized(domains) { domains += d }
        return d
    }

    /** Opens an event queue (`fi_eq_open`). */
    public fun eventQueue(): EventQueue = EventQueue()

    /** Opens an event queue that forwards every event to [owner] and refuses reads (the peer EQ). */
    public fun importEventQueue(owner: EventQueue): EventQueue = EventQueue(owner)

    override fun close() {
        val all = synchronized(domains) { domains.toList().also { domains.clear() } }
        all.forEach { it.close() }
    }
}
