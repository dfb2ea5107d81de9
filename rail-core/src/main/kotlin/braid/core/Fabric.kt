package braid.core

import braid.provider.Provider

/** An open fabric (`fid_fabric`): the root of one provider's objects. */
public class Fabric internal constructor(
    public val info: Info,
    internal val provider: Provider,
) : AutoCloseable {
    private val domains = ArrayList<Domain>()

    /** Opens a domain (`fi_domain`) with [info]'s domain attributes. */
    @JvmOverloads
    public fun domain(info: Info = this.info): Domain {
        if (info.provider != provider.name) {
            throw FabricException.invalid("fabric '${this.info.fabricName}': info is for provider '${info.provider}', not '${provider.name}'")
        }
        val d = Domain(this, info)
        synchronized(domains) { domains += d }
        return d
    }

    /** Opens an event queue (`fi_eq_open`). */
    public fun eventQueue(): EventQueue = EventQueue()

    override fun close() {
        val all = synchronized(domains) { domains.toList().also { domains.clear() } }
        all.forEach { it.close() }
    }
}
