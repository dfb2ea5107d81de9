package braid.provider

import braid.core.Braid

/**
 * Host identities for layers above the rails (a collective offload provider groups a collective's members by host):
 * this process's, and the one any Braid address blob carries. Two endpoints are on one host when their identities are
 * equal ([HostIdentity]: `BRAID_HOST_ID`, else hostname and boot id). Each provider reads its own address format
 * ([Provider.hostIdOf]), so a rail registered later answers too.
 */
public object HostIds {
    /** This process's host identity. */
    @JvmStatic public fun local(): Long = HostIdentity.id

    /**
     * The host identity in [address] (an shm, tcp or link address blob, as `Endpoint.address` gives it), or null if it
     * is not a well-formed Braid address.
     */
    @JvmStatic public fun of(address: ByteArray): Long? = Braid.hostIdOf(address)

    /**
     * The process that owns the endpoint [address] names (its pid and start time), where the address carries it (an shm
     * address, or a link address with an shm part), else null: a layer that waits on a peer of this host through shared
     * memory of its own (a collective offload) probes it with [ProcessIdentity.alive].
     */
    @JvmStatic public fun processOf(address: ByteArray): braid.core.shm.ProcessIdentity? = Braid.processOf(address)
}
