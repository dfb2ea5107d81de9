package braid.core

/**
 * One way to reach the fabric: a provider, its fabric and domain, and the capabilities, mode
 * bits and attributes it grants (`struct fi_info`). [Braid.getInfo] returns these ordered from
 * most to least desirable; pass one (or a [copy] with adjusted attributes) to [Braid.fabric] and
 * on to [Fabric.domain] and [Domain.endpoint].
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
     * For a `link` entry, the Info of each linked rail (shm first, then the network rail with
     * its interface as domain); copy them with other attributes to tune a rail. Empty otherwise.
     */
    val rails: List<Info> = emptyList(),
) {
    // For Java callers, who have no named arguments to `copy`: one attribute changed each.
    public fun withDomainAttr(attr: DomainAttr): Info = copy(domainAttr = attr)
    public fun withEndpointAttr(attr: EndpointAttr): Info = copy(endpointAttr = attr)
    public fun withTxAttr(attr: TxAttr): Info = copy(txAttr = attr)
    public fun withRxAttr(attr: RxAttr): Info = copy(rxAttr = attr)
    public fun withRails(rails: List<Info>): Info = copy(rails = rails)

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
        appendLine("        ring_capacity: ${endpointAttr.ringCapacity}")
        appendLine("    tx_attr:")
        appendLine("        op_flags: [ ${OpFlags.toString(txAttr.opFlags)} ]")
        appendLine("        inject_size: ${txAttr.injectSize}")
        appendLine("        size: ${txAttr.size}")
        appendLine("    rx_attr:")
        appendLine("        op_flags: [ ${OpFlags.toString(rxAttr.opFlags)} ]")
        appendLine("        size: ${rxAttr.size}")
        append("        unexpected_limit: ${rxAttr.unexpectedLimit}")
        for (rail in rails) {
            appendLine()
            append("    link_rail:\n" + rail.describe().lines().drop(1).joinToString("\n") { "    $it" })
        }
    }
}

/**
 * `fi_domain_attr`: how the domain is driven and what memory registration needs. [progress]
 * [ProgressModel.AUTO] starts a [ProgressEngine] thread with the domain; [idle] is what waiting
 * costs (see [IdlePolicy]). [jobKey] is the job's shared secret that rails which authenticate
 * their peers (tcp) present; null means the environment's `BRAID_JOB_KEY` (else empty). It is
 * never printed.
 */
public data class DomainAttr @JvmOverloads constructor(
    val threading: Threading = Threading.SAFE,
    val progress: ProgressModel = ProgressModel.MANUAL,
    val avType: AvType = AvType.TABLE,
    val mrMode: Int = 0,
    val mrKeySize: Int = 8,
    val cqDataSize: Int = 8,
    val idle: IdlePolicy = IdlePolicy(),
    val jobKey: String? = null,
) {
    override fun toString(): String =
        "DomainAttr(threading=$threading, progress=$progress, avType=$avType, mrMode=$mrMode, mrKeySize=$mrKeySize, " +
            "cqDataSize=$cqDataSize, idle=$idle, jobKey=${if (jobKey == null) "null" else "<set>"})"
}

/**
 * `fi_ep_attr`, with the two transport limits an operator tunes: [eagerSize], the largest
 * message sent in one piece (larger ones wait for the matching receive, rendezvous), and
 * [ringCapacity], the bytes of one peer-to-peer ring (shm) or socket buffer (tcp).
 */
public data class EndpointAttr(
    val protocol: String,
    val protocolVersion: Int = 1,
    val maxMsgSize: Long,
    val eagerSize: Int,
    val ringCapacity: Int,
)

/** `fi_tx_attr`: default operation flags, inject limit and queue depth of the transmit side. */
public data class TxAttr(
    val opFlags: Long = 0,
    val injectSize: Int,
    val size: Int = 1 shl 16,
)

/**
 * `fi_rx_attr`, plus [unexpectedLimit]: how many messages may wait unexpected (arrived with no
 * matching receive posted) before senders are pushed back. Nothing is dropped past it.
 */
public data class RxAttr(
    val opFlags: Long = 0,
    val size: Int = 1 shl 16,
    val unexpectedLimit: Int = 1 shl 20,
)

/**
 * What the caller needs (`hints` to `fi_getinfo`). Zero and null mean "no preference"; [mode]
 * lists the mode bits the caller is prepared to honour.
 */
public data class Hints @JvmOverloads constructor(
    val caps: Long = 0,
    val mode: Long = 0,
    val endpointType: EndpointType = EndpointType.RDM,
    val provider: String? = null,
    val domainName: String? = null,
    val threading: Threading = Threading.UNSPEC,
    val progress: ProgressModel = ProgressModel.UNSPEC,
    val avType: AvType = AvType.UNSPEC,
    val txOpFlags: Long = 0,
    /**
     * Which links the `link` provider offers, in `FI_LNX_PROV_LINKS` syntax (`shm+tcp`,
     * `shm+tcp:eth0`, several separated by `|`). Null: the `BRAID_LINKS` environment variable,
     * else `shm+tcp`.
     */
    val links: String? = null,
    /**
     * Whether the link leaves shm out; null: the `BRAID_LINK_DISABLE_SHM` environment variable.
     * A caller that has resolved the environment itself (the DSL) passes its answer here.
     */
    val linkDisableShm: Boolean? = null,
)
