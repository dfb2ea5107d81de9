package braid.provider.shm

import braid.core.Caps
import braid.core.Domain
import braid.core.DomainAttr
import braid.core.Endpoint
import braid.core.EndpointAttr
import braid.core.EndpointType
import braid.core.FabricException
import braid.core.Info
import braid.core.RxAttr
import braid.core.TxAttr
import braid.provider.DomainProvider
import braid.provider.HostIdentity
import braid.provider.PeerAddress
import braid.provider.Provider
import braid.provider.RailAv
import braid.provider.Transport

/**
 * The shared-memory rail: processes on one host exchange messages through memory-mapped files
 * and Agrona ring buffers: one channel file per sender and receiver holding three single-producer
 * rings (message heads, rendezvous fragments and RMA requests, control back to the sender), with
 * no system call on the fast path. Messages up to the eager size travel whole; larger ones wait
 * for their receive (rendezvous) and are then pulled with one copy (`process_vm_readv`) or
 * streamed in fragments through the bulk ring, so a message of any size needs no ring as large
 * as itself.
 *
 * Tuning (environment, read when [infos] is called): `BRAID_SHM_RING_SIZE` (bytes per channel
 * ring, a power of two, default 4 MiB), `BRAID_SHM_EAGER_SIZE` (default 16 KiB),
 * `BRAID_SHM_DIR` (default /dev/shm).
 */
internal object ShmProvider : Provider {
    override val name: String = "shm"

    const val DEFAULT_RING = 4 * 1024 * 1024
    const val DEFAULT_EAGER = 16 * 1024
    const val INJECT_SIZE = 4096

    /** The identity of this host ([HostIdentity]): shm reaches only endpoints with the same one. */
    val hostId: Long get() = HostIdentity.id

    override val canBePeer: Boolean get() = true

    override fun infos(): List<Info> {
        val ring = envInt("BRAID_SHM_RING_SIZE", DEFAULT_RING)
        val eager = envInt("BRAID_SHM_EAGER_SIZE", DEFAULT_EAGER)
        return listOf(
            Info(
                provider = name,
                fabricName = "shm",
                domainName = "shm",
                caps = Caps.MSG or Caps.TAGGED or Caps.SEND or Caps.RECV or Caps.RMA_ALL or Caps.TRIGGER or Caps.SOURCE or Caps.DIRECTED_RECV or Caps.LOCAL_COMM,
                mode = 0,
                endpointType = EndpointType.RDM,
                domainAttr = DomainAttr(),
                endpointAttr = EndpointAttr(protocol = "BRAID_SHM", maxMsgSize = Int.MAX_VALUE.toLong(), eagerSize = eager, ringCapacity = ring),
                txAttr = TxAttr(injectSize = minOf(INJECT_SIZE, eager, ring / 8 - FrameDescriptor.HEADER_LENGTH)),
                rxAttr = RxAttr(),
            ),
        )
    }

    override fun openDomain(domain: Domain, info: Info): DomainProvider = ShmDomain(domain)

    private fun envInt(name: String, default: Int): Int {
        val v = System.getenv(name) ?: return default
        return v.trim().toIntOrNull() ?: throw FabricException.invalid("environment $name='$v' is not an integer")
    }
}

internal class ShmDomain(private val domain: Domain) : DomainProvider {
    init {
        ShmDirectory.reclaim()
    }

    override fun parseAddress(raw: ByteArray): PeerAddress = ShmAddressDescriptor.parse(raw)

    override fun openEndpoint(endpoint: Endpoint, info: Info, av: RailAv): Transport =
        ShmTransport(endpoint.sink, info, av, HostIdentity.id, ShmJobKey(ShmJobKey.resolve(info.domainAttr.jobKey, domain.info.domainAttr.jobKey)))

    override fun close() {}
}
