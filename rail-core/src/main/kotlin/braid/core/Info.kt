package braid.core

/**
 * One way to reach the fabric: a provider, its fabric and domain, and the capabilities, mode bits and attributes it
 * grants (`struct fi_info`). [Braid.getInfo] returns these ordered from most to least desirable; pass one (or a [copy]
 * with adjusted attributes) to [Braid.fabric] and on to [Fabric.domain] and [Domain.endpoint].
 */
public data class Info(
    val provider: String,
    val fabricName: String,
    val domainName: String,
    val caps: Long,
    val mode: Long,
    val endpointType: EndpointType,
    val domainAttr: DomainAttr,
    val endpointAttr: EndpointAttr,
    val txAttr: TxAttr,
    val rxAttr: RxAttr,
    /**
     * For a `link` entry, the Info of each linked rail (shm first, then the network rail with its interface as domain);
     * copy them with other attributes to tune a rail. Empty otherwise.
     */
    val rails: List<Info> = emptyList(),
    /**
     * The providers' parameters the domain and endpoints opened from this Info use (ring and buffer sizes, time-outs,
     * the job key, …; see [Param]): the [Hints.settings] it was asked with. A rail of a link uses its own settings over
     * the link's.
     */
    val settings: Settings = Settings.DEFAULT,
    /** For an Info in a link's [rails]: the rail's identity and weight in that link ([RailAttr]); null otherwise. */
    val rail: RailAttr? = null,
) {
    // For Java callers, who have no named arguments to `copy`: one attribute changed each.
    public fun withDomainAttr(attr: DomainAttr): Info = copy(domainAttr = attr)

    public fun withEndpointAttr(attr: EndpointAttr): Info = copy(endpointAttr = attr)

    public fun withTxAttr(attr: TxAttr): Info = copy(txAttr = attr)

    public fun withRxAttr(attr: RxAttr): Info = copy(rxAttr = attr)

    public fun withRails(rails: List<Info>): Info = copy(rails = rails)

    public fun withSettings(settings: Settings): Info = copy(settings = settings)

    public fun withRail(rail: RailAttr?): Info = copy(rail = rail)

    /**
     * This Info with [param] set to [value] (through the API: over the environment), for its domain and, on a link, for
     * every rail: `info.with(TcpParams.TIMEOUT_MS, 300L)`.
     */
    public fun <T : Any> with(param: Param<T>, value: T): Info =
        copy(settings = settings.with(param, value), rails = rails.map { it.with(param, value) })

    /** Multi-line description in the style of `fi_info -v`. */
    public fun describe(): String = buildString {
        appendLine("fi_info:")
        appendLine("    caps: [ ${Caps.toString(caps)} ]")
        appendLine("    mode: [ ${Mode.toString(mode)} ]")
        appendLine("    ep_type: FI_EP_$endpointType")
        appendLine("    fabric_attr:")
        appendLine("        name: $fabricName")
        appendLine("        prov_name: $provider")
        appendLine("        prov_version: ${Braid.VERSION}")
        appendLine("    domain_attr:")
        appendLine("        name: $domainName")
        appendLine("        threading: FI_THREAD_${domainAttr.threading}")
        appendLine("        progress: FI_PROGRESS_${domainAttr.progress}")
        appendLine("        av_type: FI_AV_${domainAttr.avType}")
        appendLine("        mr_mode: [ ${MrMode.toString(domainAttr.mrMode)} ]")
        appendLine("        mr_key_size: ${domainAttr.mrKeySize}")
        appendLine("        cq_data_size: ${domainAttr.cqDataSize}")
        appendLine("    ep_attr:")
        appendLine("        type: FI_EP_$endpointType")
        appendLine("        protocol: ${endpointAttr.protocol}")
        appendLine("        protocol_version: ${endpointAttr.protocolVersion}")
        appendLine("        max_msg_size: ${endpointAttr.maxMsgSize}")
        appendLine("        eager_size: ${endpointAttr.eagerSize}")
        appendLine("    tx_attr:")
        appendLine("        op_flags: [ ${OpFlags.toString(txAttr.opFlags)} ]")
        appendLine("        inject_size: ${txAttr.injectSize}")
        appendLine("        size: ${txAttr.size}")
        appendLine("    rx_attr:")
        appendLine("        op_flags: [ ${OpFlags.toString(rxAttr.opFlags)} ]")
        appendLine("        size: ${rxAttr.size}")
        append("        unexpected_limit: ${rxAttr.unexpectedLimit}")
        rail?.let {
            appendLine()
            appendLine("    rail_attr:")
            appendLine("        name: ${it.name}")
            append("        weight: ${it.weight}")
        }
        for (rail in rails) {
            appendLine()
            append("    link_rail:\n" + rail.describe().lines().drop(1).joinToString("\n") { "    $it" })
        }
    }
}

/**
 * `fi_domain_attr`: how the domain is driven and what memory registration needs. [progress] [ProgressModel.AUTO] starts
 * a [ProgressEngine] thread with the domain; [idle] is what waiting costs (see [IdlePolicy]). The job key that rails
 * which authenticate their peers present is a setting ([CoreParams.JOB_KEY] in [Info.settings]), not an attribute.
 */
public data class DomainAttr
@JvmOverloads
constructor(
    val threading: Threading = Threading.SAFE,
    val progress: ProgressModel = ProgressModel.MANUAL,
    val avType: AvType = AvType.TABLE,
    val mrMode: Int = 0,
    val mrKeySize: Int = 8,
    val cqDataSize: Int = 8,
    val idle: IdlePolicy = IdlePolicy(),
) {
    // For Java callers: one field changed each.
    public fun withThreading(threading: Threading): DomainAttr = copy(threading = threading)

    public fun withProgress(progress: ProgressModel): DomainAttr = copy(progress = progress)

    public fun withAvType(avType: AvType): DomainAttr = copy(avType = avType)

    public fun withMrMode(mrMode: Int): DomainAttr = copy(mrMode = mrMode)

    public fun withMrKeySize(mrKeySize: Int): DomainAttr = copy(mrKeySize = mrKeySize)

    public fun withCqDataSize(cqDataSize: Int): DomainAttr = copy(cqDataSize = cqDataSize)

    public fun withIdle(idle: IdlePolicy): DomainAttr = copy(idle = idle)
}

/**
 * `fi_ep_attr`, with the largest message sent in one piece, [eagerSize] (larger ones wait for the matching receive,
 * rendezvous). What a rail's buffers hold (shm's ring, tcp's socket buffers) is the rail's own setting:
 * `ShmParams.RING_SIZE`, `TcpParams.BUFFER_SIZE`.
 */
public data class EndpointAttr
@JvmOverloads
constructor(val protocol: String, val protocolVersion: Int = 1, val maxMsgSize: Long, val eagerSize: Int) {
    public fun withProtocol(protocol: String): EndpointAttr = copy(protocol = protocol)

    public fun withProtocolVersion(protocolVersion: Int): EndpointAttr = copy(protocolVersion = protocolVersion)

    public fun withMaxMsgSize(maxMsgSize: Long): EndpointAttr = copy(maxMsgSize = maxMsgSize)

    public fun withEagerSize(eagerSize: Int): EndpointAttr = copy(eagerSize = eagerSize)
}

/** `fi_tx_attr`: default operation flags, inject limit and queue depth of the transmit side. */
public data class TxAttr
@JvmOverloads
constructor(val opFlags: Long = 0, val injectSize: Int, val size: Int = 1 shl 16) {
    public fun withOpFlags(opFlags: Long): TxAttr = copy(opFlags = opFlags)

    public fun withInjectSize(injectSize: Int): TxAttr = copy(injectSize = injectSize)

    public fun withSize(size: Int): TxAttr = copy(size = size)
}

/**
 * `fi_rx_attr`, plus [unexpectedLimit]: how many messages may wait unexpected (arrived with no matching receive posted)
 * before senders are pushed back. Nothing is dropped past it. The providers' entries take it from
 * [CoreParams.UNEXPECTED_LIMIT].
 */
public data class RxAttr
@JvmOverloads
constructor(
    val opFlags: Long = 0,
    val size: Int = 1 shl 16,
    val unexpectedLimit: Int = CoreParams.UNEXPECTED_LIMIT.default,
) {
    public fun withOpFlags(opFlags: Long): RxAttr = copy(opFlags = opFlags)

    public fun withSize(size: Int): RxAttr = copy(size = size)

    public fun withUnexpectedLimit(unexpectedLimit: Int): RxAttr = copy(unexpectedLimit = unexpectedLimit)
}

/**
 * What the caller needs (`hints` to `fi_getinfo`). Zero and null mean "no preference"; [mode] lists the mode bits the
 * caller is prepared to honour. [settings] are the providers' parameters (`LinkParams.LINKS` for the links the `link`
 * provider offers, ring and buffer sizes, time-outs, the job key, …) that the entries returned carry in
 * [Info.settings].
 *
 * From Java: `Hints.builder().caps(Caps.TAGGED).provider("tcp").set(TcpParams.TIMEOUT_MS, 300L).build()`, or `new
 * Hints().withProvider("tcp")`.
 */
public data class Hints(
    val caps: Long = 0,
    val mode: Long = 0,
    val endpointType: EndpointType = EndpointType.RDM,
    val provider: String? = null,
    val domainName: String? = null,
    val threading: Threading = Threading.UNSPEC,
    val progress: ProgressModel = ProgressModel.UNSPEC,
    val avType: AvType = AvType.UNSPEC,
    val txOpFlags: Long = 0,
    val settings: Settings = Settings.DEFAULT,
) {
    /** Hints asking for [caps] only (`new Hints(Caps.TAGGED)` from Java). */
    public constructor(caps: Long) : this(caps, 0)

    public fun withCaps(caps: Long): Hints = copy(caps = caps)

    public fun withMode(mode: Long): Hints = copy(mode = mode)

    public fun withEndpointType(endpointType: EndpointType): Hints = copy(endpointType = endpointType)

    public fun withProvider(provider: String?): Hints = copy(provider = provider)

    public fun withDomainName(domainName: String?): Hints = copy(domainName = domainName)

    public fun withThreading(threading: Threading): Hints = copy(threading = threading)

    public fun withProgress(progress: ProgressModel): Hints = copy(progress = progress)

    public fun withAvType(avType: AvType): Hints = copy(avType = avType)

    public fun withTxOpFlags(txOpFlags: Long): Hints = copy(txOpFlags = txOpFlags)

    public fun withSettings(settings: Settings): Hints = copy(settings = settings)

    /** These hints with [param] set to [value] in [settings]. */
    public fun <T : Any> with(param: Param<T>, value: T): Hints = copy(settings = settings.with(param, value))

    /** A builder starting from these hints. */
    public fun toBuilder(): Builder = Builder(this)

    /** Builds [Hints] one field at a time (for Java callers; Kotlin has named arguments). */
    public class Builder internal constructor(private var hints: Hints) {
        public fun caps(caps: Long): Builder = apply { hints = hints.copy(caps = caps) }

        public fun mode(mode: Long): Builder = apply { hints = hints.copy(mode = mode) }

        public fun endpointType(endpointType: EndpointType): Builder = apply {
            hints = hints.copy(endpointType = endpointType)
        }

        public fun provider(provider: String?): Builder = apply { hints = hints.copy(provider = provider) }

        public fun domainName(domainName: String?): Builder = apply { hints = hints.copy(domainName = domainName) }

        public fun threading(threading: Threading): Builder = apply { hints = hints.copy(threading = threading) }

        public fun progress(progress: ProgressModel): Builder = apply { hints = hints.copy(progress = progress) }

        public fun avType(avType: AvType): Builder = apply { hints = hints.copy(avType = avType) }

        public fun txOpFlags(txOpFlags: Long): Builder = apply { hints = hints.copy(txOpFlags = txOpFlags) }

        public fun settings(settings: Settings): Builder = apply { hints = hints.copy(settings = settings) }

        public fun <T : Any> set(param: Param<T>, value: T): Builder = apply { hints = hints.with(param, value) }

        public fun build(): Hints = hints
    }

    public companion object {
        /** A builder of hints with no preference. */
        @JvmStatic public fun builder(): Builder = Builder(Hints())
    }
}
