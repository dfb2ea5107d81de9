package braid.provider.shm

import braid.core.Caps
import braid.core.CoreParams
import braid.core.Domain
import braid.core.EndpointAttr
import braid.core.EndpointType
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info
import braid.core.Param
import braid.core.RailLimit
import braid.core.RxAttr
import braid.core.TxAttr
import braid.core.shm.JobKeyProof
import braid.provider.DomainProvider
import braid.provider.HostIdentity
import braid.provider.PeerAddress
import braid.provider.Provider
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport

/**
 * The shared-memory rail: processes on one host exchange messages through memory-mapped files and Agrona ring buffers:
 * one channel file per sender and receiver holding three single-producer rings (message heads, rendezvous fragments and
 * RMA requests, control back to the sender), with no system call on the fast path. Messages up to the eager size travel
 * whole; larger ones wait for their receive (rendezvous) and are then pulled with one copy (`process_vm_readv`; large
 * ones split between receiver and sender, who copy chunks at once: [ShmSplitCopy]) or streamed in fragments through the
 * bulk ring, so a message of any size needs no ring as large as itself.
 *
 * Tuning: the parameters of [ShmParams] (ring size, eager size, directory, single-copy pulls and their sharing,
 * liveness), resolved from the hints' [braid.core.Settings] when [infos] is called and from the Info's when an endpoint
 * opens.
 */
internal object ShmProvider : Provider {
    override val name: String = "shm"

    /**
     * The largest inject: the default eager size. An inject is an eager message copied into the ring at its post, as
     * any eager send is, only with no completion entry; up to here a caller (braid.mpi's small sends) completes at its
     * post instead of at a later completion-queue read.
     */
    const val INJECT_SIZE = 16384

    override val parameters: List<Param<*>>
        get() = ShmParams.ALL

    override fun limitParameter(limit: RailLimit): Param<Int> =
        when (limit) {
            RailLimit.EAGER_SIZE -> ShmParams.EAGER_SIZE
            RailLimit.RING_CAPACITY -> ShmParams.RING_SIZE
        }

    /** The identity of this host ([HostIdentity]): shm reaches only endpoints with the same one. */
    val hostId: Long
        get() = HostIdentity.id

    override val canBePeer: Boolean
        get() = true

    override fun infos(): List<Info> = infos(Hints())

    override fun hostIdOf(address: ByteArray): Long? =
        try {
            ShmAddressDescriptor.parse(address).hostId
        } catch (e: FabricException) {
            null
        }

    override fun processOf(address: ByteArray): braid.core.shm.ProcessIdentity? =
        try {
            ShmDirectory.identity(ShmAddressDescriptor.parse(address).name)
        } catch (e: FabricException) {
            null
        }

    override fun infos(hints: Hints): List<Info> {
        val settings = hints.settings.check(ShmParams.ALL + CoreParams.ALL)
        val ring = settings[ShmParams.RING_SIZE]
        val eager = settings[ShmParams.EAGER_SIZE]
        return listOf(
            Info(
                provider = name,
                fabricName = "shm",
                domainName = "shm",
                caps =
                    Caps.MSG or
                        Caps.TAGGED or
                        Caps.SEND or
                        Caps.RECV or
                        Caps.RMA_ALL or
                        Caps.HMEM or // device memory staged through bounce buffers (HmemStaging)
                        Caps.TRIGGER or
                        Caps.SOURCE or
                        Caps.DIRECTED_RECV or
                        Caps.LOCAL_COMM,
                mode = 0,
                endpointType = EndpointType.RDM,
                domainAttr = CoreParams.domainAttr(settings),
                endpointAttr =
                    EndpointAttr(protocol = "BRAID_SHM", maxMsgSize = Int.MAX_VALUE.toLong(), eagerSize = eager),
                txAttr = TxAttr(injectSize = minOf(INJECT_SIZE, eager, ring / 8 - FrameDescriptor.HEADER_LENGTH)),
                rxAttr = RxAttr(unexpectedLimit = settings[CoreParams.UNEXPECTED_LIMIT]),
                settings = hints.settings,
            )
        )
    }

    override fun openDomain(domain: Domain, info: Info): DomainProvider = ShmDomain(domain)
}

internal class ShmDomain(private val domain: Domain) : DomainProvider {
    init {
        ShmDirectory.reclaim()
    }

    override fun parseAddress(raw: ByteArray): PeerAddress = ShmAddressDescriptor.parse(raw)

    // The endpoint's rail Info's own settings over its domain's (a link's rail over the link).
    override fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport {
        val settings = domain.info.settings.overlay(info.settings)
        return ShmTransport(
            host,
            info.withSettings(settings),
            av,
            HostIdentity.id,
            JobKeyProof(settings[CoreParams.JOB_KEY]),
        )
    }

    override fun close() {}
}
