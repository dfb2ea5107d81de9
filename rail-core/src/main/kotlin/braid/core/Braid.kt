package braid.core

import braid.provider.Provider
import braid.provider.Providers
import java.util.ServiceLoader

/**
 * Entry point of the object model (`fi_getinfo`, `fi_fabric`).
 *
 * ```
 * val info = Braid.getInfo(Hints(caps = Caps.TAGGED, provider = "shm")).first()
 * val fabric = Braid.fabric(info)
 * val domain = fabric.domain(info)
 * ```
 */
public object Braid {
    public const val VERSION: String = "0.1.0"

    private val providers: MutableList<Provider> = Providers.builtIn().toMutableList()

    /** Names of the providers this build carries, most desirable first. */
    @JvmStatic public fun providerNames(): List<String> = synchronized(providers) { providers.map { it.name } }

    /**
     * Whether a provider of this build answers to [name]: its own name, or for the native rail `ofi:PROV[:DOMAIN]` and
     * a native provider's own name (`verbs`) where Braid has no provider of that name and libfabric has one here.
     */
    @JvmStatic
    public fun hasProvider(name: String): Boolean =
        synchronized(providers) { providers.toList() }.any { it.answersTo(name) }

    /**
     * Every provider entry that satisfies [hints], most desirable first. Providers that need a mode bit the caller did
     * not set, or lack a requested capability, are left out; when nothing is left, throws [FabricException] with
     * [Errno.ENODATA] naming why each one was refused.
     */
    @JvmStatic
    @JvmOverloads
    public fun getInfo(hints: Hints = Hints()): List<Info> {
        val accepted = ArrayList<Info>()
        val refused = ArrayList<String>()
        val snapshot = synchronized(providers) { providers.toList() }
        for (provider in snapshot) {
            if (hints.provider != null && !provider.answersTo(hints.provider)) continue
            val offers =
                try {
                    provider.infos(hints)
                } catch (e: FabricException) {
                    if (hints.provider != null) throw e
                    refused += "${provider.name}: ${e.message}"
                    continue
                }
            for (offer in offers) {
                val why = refusal(offer, hints)
                if (why == null) accepted += grant(offer, hints) else refused += "${offer.provider}: $why"
            }
        }
        if (accepted.isEmpty()) {
            val known = snapshot.joinToString { it.name }
            val detail =
                if (refused.isEmpty()) "no provider named '${hints.provider}' (known: $known)"
                else refused.joinToString("; ")
            throw FabricException.noData("getInfo: no provider satisfies the hints: $detail")
        }
        return accepted
    }

    /** Opens the fabric [info] names (`fi_fabric`). */
    @JvmStatic
    public fun fabric(info: Info): Fabric {
        return Fabric(info, provider(info.provider))
    }

    /**
     * Every parameter Braid declares, as `fi_getparams` lists libfabric's: [CoreParams] first, then each provider's,
     * then those of the modules on the class path ([ModuleParams]: collectives, `braid.mpi`, the bootstrap, the `braid`
     * command). Resolve their values with [Settings].
     */
    @JvmStatic
    public fun parameters(): List<Param<*>> =
        CoreParams.ALL + synchronized(providers) { providers.flatMap { it.parameters } } + moduleParams

    /** The parameter whose [Param.key] is [key] (`tcp.timeout_ms`, `mpi.provider`), or null. */
    @JvmStatic public fun parameter(key: String): Param<*>? = parameters().firstOrNull { it.key == key }

    /**
     * The parameter behind [limit] for rails of [provider] (`shm.ring_size` and `tcp.buffer_size` are both a rail's
     * [RailLimit.RING_CAPACITY]), or null when that provider has none or is not registered. Layers above rail-core ask
     * this instead of naming a provider's parameters.
     */
    @JvmStatic
    public fun limitParameter(provider: String, limit: RailLimit): Param<Int>? =
        synchronized(providers) { providers.firstOrNull { it.name == provider } }?.limitParameter(limit)

    /** The modules' parameters, loaded once; a key or variable declared twice is a build error, reported here. */
    private val moduleParams: List<Param<*>> by lazy {
        val loaded =
            ServiceLoader.load(ModuleParams::class.java, Braid::class.java.classLoader).flatMap { it.parameters() }
        val builtIn = CoreParams.ALL + Providers.builtIn().flatMap { it.parameters }
        val all = builtIn + loaded
        all.groupBy { it.key }
            .values
            .firstOrNull { it.size > 1 }
            ?.let { error("parameter ${it[0].key} is declared twice") }
        all.groupBy { it.env }
            .values
            .firstOrNull { it.size > 1 }
            ?.let { twice -> error("variable ${twice[0].env} is declared by ${twice.joinToString { it.key }}") }
        loaded
    }

    /** The provider named [name], or a FabricException naming the known ones. */
    @JvmSynthetic
    internal fun provider(name: String): Provider =
        synchronized(providers) { providers.toList() }.firstOrNull { it.answersTo(name) }
            ?: throw FabricException.invalid("no provider '$name' (known: ${providerNames()})")

    /** The host identity in [address], asked of every provider; null when none recognises it. */
    @JvmSynthetic
    internal fun hostIdOf(address: ByteArray): Long? =
        synchronized(providers) { providers.toList() }.firstNotNullOfOrNull { it.hostIdOf(address) }

    /** The process owning the endpoint [address] names, asked of every provider; null when none can tell. */
    @JvmSynthetic
    internal fun processOf(address: ByteArray): braid.core.shm.ProcessIdentity? =
        synchronized(providers) { providers.toList() }.firstNotNullOfOrNull { it.processOf(address) }

    /** Adds a provider at the end of the preference order (tests and plug-ins). */
    @JvmSynthetic
    internal fun register(provider: Provider) {
        synchronized(providers) {
            providers.removeAll { it.name == provider.name }
            providers += provider
        }
    }

    @JvmSynthetic
    internal fun unregister(name: String) {
        synchronized(providers) { providers.removeAll { it.name == name } }
    }

    private fun refusal(offer: Info, hints: Hints): String? {
        if (offer.endpointType != hints.endpointType)
            return "endpoint type ${offer.endpointType} (asked for ${hints.endpointType})"
        val missing = hints.caps and offer.caps.inv()
        if (missing != 0L) return "lacks capabilities ${Caps.toString(missing)}"
        val needsMode = offer.mode and hints.mode.inv()
        if (needsMode != 0L) return "requires mode bits ${Mode.toString(needsMode)} that the hints do not set"
        if (hints.domainName != null && hints.domainName != offer.domainName)
            return "domain '${offer.domainName}' (asked for '${hints.domainName}')"
        return null
    }

    private fun grant(offer: Info, hints: Hints): Info {
        val primary =
            if (hints.caps and Caps.PRIMARY == 0L) offer.caps and Caps.PRIMARY else hints.caps and Caps.PRIMARY
        val secondary = offer.caps and Caps.PRIMARY.inv()
        val attr = offer.domainAttr
        return offer.copy(
            caps = primary or secondary,
            mode = offer.mode and hints.mode,
            domainAttr =
                attr.copy(
                    threading = if (hints.threading == Threading.UNSPEC) attr.threading else hints.threading,
                    progress = if (hints.progress == ProgressModel.UNSPEC) attr.progress else hints.progress,
                    avType = if (hints.avType == AvType.UNSPEC) attr.avType else hints.avType,
                ),
            txAttr = offer.txAttr.copy(opFlags = offer.txAttr.opFlags or hints.txOpFlags),
        )
    }
}
