package braid.provider.ofi

import braid.core.Braid
import braid.core.Caps
import braid.core.CoreParams
import braid.core.Domain
import braid.core.EndpointAttr
import braid.core.EndpointType
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info
import braid.core.Param
import braid.core.RxAttr
import braid.core.TxAttr
import braid.provider.DomainProvider
import braid.provider.PeerAddress
import braid.provider.Provider
import braid.provider.ProviderRegion
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import java.util.concurrent.ConcurrentHashMap
import org.agrona.concurrent.UnsafeBuffer

/**
 * The native rail: libfabric itself, through JNA ([OfiLibrary], [OfiOps]), so that every provider libfabric drives
 * (tcp, shm, udp, sockets; verbs, efa, cxi where the hardware is) carries Braid traffic.
 *
 * Names: `ofi` is every native provider; `ofi:PROV` one of them (`ofi:tcp`, `ofi:tcp;ofi_rxm`, `ofi:shm`), and
 * `ofi:PROV:DOMAIN` one of its domains (`ofi:tcp:lo`, `ofi:verbs:mlx5_0`). A native provider's own name (`verbs`,
 * `efa`, `cxi:cxi0`) works too wherever Braid has no provider of that name; Braid's own `shm` and `tcp` keep theirs.
 * Each native entry becomes an [Info] of provider `ofi` with the native fabric and domain names, the native attributes,
 * its protocol `OFI_` and the native provider's name, and that name in its [OfiParams.PROVIDER] setting.
 *
 * A machine without libfabric lists nothing here and says why when asked by name ("install libfabric1"); the rest of
 * Braid never loads the library.
 */
internal object OfiProvider : Provider {
    override val name: String = "ofi"

    /** Capabilities the native rail carries when its native provider does ([OfiTransport]). */
    private const val CARRIED: Long =
        Caps.MSG or
            Caps.TAGGED or
            Caps.SEND or
            Caps.RECV or
            Caps.SOURCE or
            Caps.DIRECTED_RECV or
            Caps.LOCAL_COMM or
            Caps.REMOTE_COMM

    override val parameters: List<Param<*>>
        get() = OfiParams.ALL

    override val canBePeer: Boolean
        get() = true

    override fun hostIdOf(address: ByteArray): Long? =
        try {
            OfiAddressDescriptor.parse(address).hostId
        } catch (e: FabricException) {
            null
        }

    override fun capsAsRail(info: Info): Long = info.caps and (OfiGetInfo.RMA_CAPS or OfiGetInfo.ATOMIC_CAPS).inv()

    private val nativeNames = ConcurrentHashMap<String, Boolean>()

    override fun answersTo(name: String): Boolean {
        if (OfiInfos.isNativeName(name)) return true
        val prov = name.substringBefore(':')
        if (prov.isEmpty() || prov in Braid.providerNames()) return false
        if (!OfiLibrary.available) return false
        return nativeNames.computeIfAbsent(prov) { OfiGetInfo.query(it, null).isNotEmpty() }
    }

    /** The native provider and domain a Braid provider name selects: `ofi` → (null, null), `ofi:tcp:lo` → (tcp, lo). */
    fun selection(name: String?): Pair<String?, String?> {
        if (name == null || name == this.name) return null to null
        val rest = if (name.startsWith("ofi:")) name.removePrefix("ofi:") else name
        val prov = rest.substringBefore(':').ifEmpty { null }
        val domain = if (':' in rest) rest.substringAfter(':').ifEmpty { null } else null
        return prov to domain
    }

    override fun infos(): List<Info> = infos(Hints())

    /**
     * The native entries for [hints]: those of the native provider and domain the hints name (`ofi:tcp:lo`, `verbs`),
     * else those [OfiParams.PROVIDER] names, else every one. With no provider named, a machine without libfabric lists
     * none; named, it is told to install libfabric1.
     */
    override fun infos(hints: Hints): List<Info> {
        val settings = hints.settings.check(OfiParams.ALL + CoreParams.ALL)
        if (!OfiLibrary.available) {
            if (hints.provider == null) return emptyList()
            throw FabricException.noData(OfiLibrary.failure ?: "ofi: libfabric is not loaded")
        }
        val (prov, domain) =
            selection(hints.provider?.takeIf { it != name } ?: settings[OfiParams.PROVIDER].ifEmpty { null })
        val recvSize = settings[OfiParams.RECV_SIZE]
        val seen = HashSet<String>()
        val out = ArrayList<Info>()
        val wanted = domain ?: hints.domainName
        // A provider offers RMA and atomics only when asked for them: one query each says which entries have them.
        val rma = offering(prov, wanted, OfiGetInfo.BASE_CAPS or OfiGetInfo.RMA_CAPS)
        val atomic = offering(prov, wanted, OfiGetInfo.BASE_CAPS or OfiGetInfo.RMA_CAPS or OfiGetInfo.ATOMIC_CAPS)
        for (e in OfiGetInfo.query(prov, wanted)) {
            // rxm passes the domain hint to its core provider but 1.17 still lists every domain: filter here too.
            if (e.epType != OfiInfoDescriptor.FI_EP_RDM || (wanted != null && e.domainName != wanted)) continue
            val key = e.provName + "\u0000" + e.domainName
            if (!seen.add(key)) continue
            val extra =
                (if (key in rma) OfiGetInfo.RMA_CAPS else 0L) or (if (key in atomic) OfiGetInfo.ATOMIC_CAPS else 0L)
            out += info(e, recvSize, hints, extra)
        }
        if (out.isEmpty() && hints.provider != null)
            throw FabricException.noData(
                "ofi: no native provider" +
                    (prov?.let { " '$it'" } ?: "") +
                    ((domain ?: hints.domainName)?.let { " with domain '$it'" } ?: "") +
                    " offers a reliable-datagram endpoint with messages and tags here (fi_info -t FI_EP_RDM lists them)"
            )
        return out
    }

    /**
     * The entries (provider and domain) that offer [caps]. A provider whose `mr_mode` needs FI_MR_VIRT_ADDR (shm,
     * verbs) is addressed by Braid's offsets all the same: its regions are keyed by their address
     * ([OfiDomain.registerMemory]).
     */
    private fun offering(prov: String?, domain: String?, caps: Long): Set<String> =
        OfiGetInfo.query(prov, domain, caps)
            .filter { it.caps and caps == caps }
            .mapTo(HashSet()) { it.provName + "\u0000" + it.domainName }

    private fun info(e: OfiInfoDescriptor.Entry, recvSize: Int, hints: Hints, extra: Long): Info {
        val settings = hints.settings.with(OfiParams.PROVIDER, e.provName)
        val maxMsg = capped(e.maxMsgSize, recvSize.toLong())
        return Info(
            provider = name,
            fabricName = e.fabricName,
            domainName = e.domainName,
            // TRIGGER: deferred work goes to the native queue where the provider has one (sockets), else Braid's
            // serves.
            caps = e.caps and CARRIED or (Caps.SOURCE or Caps.DIRECTED_RECV or Caps.TRIGGER) or extra,
            mode = 0,
            endpointType = EndpointType.RDM,
            domainAttr = CoreParams.domainAttr(settings),
            endpointAttr =
                EndpointAttr(
                    protocol = "OFI_${e.provName.uppercase()}",
                    protocolVersion = e.protocolVersion,
                    maxMsgSize = maxMsg,
                    eagerSize = maxMsg.toInt(),
                ),
            txAttr =
                TxAttr(injectSize = capped(e.injectSize, maxMsg).toInt(), size = capped(e.txSize, 1L shl 16).toInt()),
            rxAttr =
                RxAttr(
                    size = capped(e.rxSize, 1L shl 16).toInt(),
                    unexpectedLimit = settings[CoreParams.UNEXPECTED_LIMIT],
                ),
            settings = settings,
        )
    }

    /** A native `size_t` [v] (SIZE_MAX reads as negative) no larger than [cap]. */
    private fun capped(v: Long, cap: Long): Long = if (v < 0 || v > cap) cap else v

    /** The native provider's full name in an Info this provider gave (`tcp;ofi_rxm`). */
    fun nativeName(info: Info): String = info.settings[OfiParams.PROVIDER].substringBefore(':')

    override fun openDomain(domain: Domain, info: Info): DomainProvider = OfiDomain(domain, info)
}

/** The native rail's part of one [Domain]: one native fabric and domain, opened from a private copy of its fi_info. */
internal class OfiDomain(private val domain: Domain, val info: Info) : DomainProvider {
    val provName: String = OfiProvider.nativeName(info)

    /**
     * Inside a link the native rail carries messages only: the link's regions are Braid's, not registered natively, so
     * native RMA could not find them.
     */
    private val inLink = domain.info.provider != OfiProvider.name

    val native: OfiNativeDomain =
        OfiNativeDomain.open(
            provName,
            info.domainName,
            info.fabricName,
            OfiGetInfo.BASE_CAPS or
                (if (!inLink && info.caps and Caps.RMA != 0L) OfiGetInfo.RMA_CAPS else 0L) or
                (if (!inLink && info.caps and Caps.ATOMIC != 0L) OfiGetInfo.RMA_CAPS or OfiGetInfo.ATOMIC_CAPS else 0L),
        )

    /** The RMA and atomic capabilities the native endpoints carry: what the native domain was opened for. */
    val rmaCaps: Long = if (inLink) 0L else native.caps and (OfiGetInfo.RMA_CAPS or OfiGetInfo.ATOMIC_CAPS)

    /**
     * FI_MR_VIRT_ADDR: the initiator names the target's virtual address. Braid's RMA names an offset into the region
     * under a key, so each region is keyed by its own address, and the native address is the key plus the offset.
     */
    val virtAddr: Boolean = native.mrMode and OfiInfoDescriptor.FI_MR_VIRT_ADDR != 0

    val memory: OfiMemory = OfiMemory(native)

    /** Whether local buffers need descriptors (FI_MR_LOCAL): then sends and RMA take them from [cache]. */
    val mrLocal: Boolean = native.mrMode and OfiInfoDescriptor.FI_MR_LOCAL != 0

    val cache: OfiMrCache = OfiMrCache(memory, info.settings[OfiParams.MR_CACHE_SIZE])

    /**
     * Native registration for the domain's regions when its endpoints carry native RMA (the peers' `fi_write` needs the
     * key); otherwise null, and Braid's keys serve as before. Deregistering drops the cache's registrations of the same
     * memory too.
     */
    override fun registerMemory(buffer: UnsafeBuffer, access: Int, key: Long, requested: Boolean): ProviderRegion? {
        if (rmaCaps == 0L) return null
        val start = buffer.addressOffset()
        if (virtAddr && requested)
            throw braid.core.FabricException(
                braid.core.Errno.ENOKEY,
                "ofi:$provName: the native provider addresses RMA by virtual address (FI_MR_VIRT_ADDR), so Braid keys " +
                    "each region by its address and key $key cannot be requested; pass 0 and give peers the region's key",
            )
        val r = memory.register(start, buffer.capacity().toLong(), access, if (virtAddr) start else key, requested)
        return object : ProviderRegion by r {
            override fun close() {
                cache.invalidate(start, start + buffer.capacity())
                r.close()
            }
        }
    }

    /** Native deferred work (FI_QUEUE_WORK), where the provider has it; never inside a link (its rails share work). */
    val work: OfiDeferredWork = OfiDeferredWork(this, domain, !inLink && info.settings[OfiParams.NATIVE_WORK])

    override fun queueWork(work: braid.core.DeferredWork): Boolean = this.work.queue(work)

    override fun cancelWork(work: braid.core.DeferredWork) = this.work.cancel(work)

    override fun parseAddress(raw: ByteArray): PeerAddress = OfiAddressDescriptor.parseFor(raw, provName)

    // Lazy: the domain's overrides are made after its provider.
    private val hmem by lazy { OfiHmemOverride(native.domain, domain.hmemOps) }

    /**
     * The native answer to `FI_SET_OPS_HMEM_OVERRIDE` for the domain (libfabric's scope): 0 where the provider took the
     * overrides, `-ENOSYS` where it did not (every Debian 1.17 provider). An endpoint alone cannot be overridden.
     */
    override fun hmemOverride(op: braid.core.HmemOp, info: Info, endpoint: Boolean): Int =
        if (endpoint) -braid.core.Errno.ENOSYS else hmem.set()

    override fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport {
        val settings = domain.info.settings.overlay(info.settings)
        return OfiTransport(host, info.withSettings(settings), av, this)
    }

    override fun close() {
        work.close()
        cache.close()
        native.close()
    }
}
