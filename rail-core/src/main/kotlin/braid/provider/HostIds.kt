package braid.provider

import braid.core.FabricException
import braid.provider.link.LinkAddressDescriptor
import braid.provider.shm.ShmAddressDescriptor
import braid.provider.tcp.TcpAddressDescriptor

/**
 * Host identities for layers above the rails (a collective offload provider groups a
 * collective's members by host): this process's, and the one any Braid address blob carries.
 * Two endpoints are on one host when their identities are equal ([HostIdentity]: `BRAID_HOST_ID`,
 * else hostname and boot id).
 */
public object HostIds {
    /** This process's host identity. */
    @JvmStatic
    public fun local(): Long = HostIdentity.id

    /**
     * The host identity in [address] (an shm, tcp or link address blob, as `Endpoint.address`
     * gives it), or null if it is not a well-formed Braid address.
     */
    @JvmStatic
    public fun of(address: ByteArray): Long? = try {
        when (if (address.size >= AddressHeader.LENGTH) address[AddressHeader.KIND_OFFSET].toInt() and 0xff else -1) {
            AddressHeader.KIND_SHM -> ShmAddressDescriptor.parse(address).hostId
            AddressHeader.KIND_TCP -> TcpAddressDescriptor.parse(address).hostId
            AddressHeader.KIND_LINK -> LinkAddressDescriptor.parse(address) { _, _ -> null }.hostId
            else -> null
        }
    } catch (e: FabricException) {
        null
    }
}
