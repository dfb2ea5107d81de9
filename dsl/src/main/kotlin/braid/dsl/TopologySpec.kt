package braid.dsl

import braid.core.IdleKind
import braid.core.IdlePolicy
import braid.core.ProgressModel
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.SerialInfo
import kotlinx.serialization.Serializable

/**
 * A machine's topology, validated: the links a process may open, how their domains make progress, and the job key. The
 * [topology] DSL builds one; [TopologyFiles] reads one from a JSON or HOCON file and writes one back; [Topology.open]
 * turns one into working rail-core objects. Both routes end in this class, so a Kotlin program and an operator's file
 * cannot drift apart.
 *
 * Every instance is valid: the constructor runs every rule (see [SpecException]), also when a file is decoded or a
 * [copy] is made.
 *
 * [links] are alternatives, as the links of `BRAID_LINKS` (`FI_LNX_PROV_LINKS`) are: [Topology.open] opens the first
 * one this host can open, or the one named.
 *
 * [offloads] pair collective offload providers with links, naming each link by [LinkSpec.name] ([OffloadSpec]). A link
 * with several inter-node rails names how it spreads traffic over them in [LinkSpec.policy].
 */
@Serializable
@ConsistentCopyVisibility
public data class TopologySpec
internal constructor(
    /** Candidate links, most preferred first. The default is the link provider's: `shm+tcp`. */
    val links: List<LinkSpec> = defaultLinks(),
    val progress: ProgressSpec = ProgressSpec(),
    /** Where the job key comes from; null: the rails' own default (`BRAID_JOB_KEY`, else empty). */
    val jobKey: JobKeySpec? = null,
    /** Collective offload providers paired with links; groups joined on a paired link use its offload. */
    val offloads: List<OffloadSpec> = emptyList(),
) {
    init {
        SpecRules.check(this)
    }

    /** The link named [name]; throws [SpecException] naming the links there are. */
    /** The offload paired with the link named [name], or null. */
    public fun offloadFor(name: String): OffloadSpec? = offloads.firstOrNull { it.link == name }

    public fun link(name: String): LinkSpec =
        links.firstOrNull { it.name == name }
            ?: throw SpecException(
                listOf(
                    SpecProblem("links", "no link named '$name'", "use one of ${links.joinToString { "'${it.name}'" }}")
                )
            )

    public companion object {
        /** What the link provider opens when nothing is configured. */
        public const val DEFAULT_LINKS: String = "shm+tcp"

        @JvmSynthetic internal fun defaultLinks(): List<LinkSpec> = LinkStrings.parse(DEFAULT_LINKS)
    }
}

/**
 * One link: shm for peers on this host plus the inter-node rails for the others, as LNX links them. [name] identifies
 * the link in errors and in [Topology.open]; the link string form (`shm+tcp:lo`) is its default name. [limits] apply to
 * the link itself (the unexpected-message bound of its one shared receive queue) and are the defaults of every rail's
 * limits.
 */
@Serializable
@ConsistentCopyVisibility
public data class LinkSpec
internal constructor(
    val name: String,
    val rails: List<RailSpec>,
    val limits: LimitsSpec = LimitsSpec(),
    val policy: RailPolicy = RailPolicy.LOCALITY,
    /**
     * Provider parameters ([braid.core.Param], `braid info -e`) for this link, by provider, then name, as text:
     * `settings { tcp.timeout_ms = 300, shm.liveness_ms = 20 }`. Each must be a parameter this build declares, with a
     * value its rule accepts; the environment overrides a file's value (as it does every file value), the DSL overrides
     * both, and the link opened uses them.
     */
    val settings: Map<String, Map<String, String>> = emptyMap(),
) {
    /** The link in `BRAID_LINKS` syntax (`shm+tcp:lo`): what the link provider is asked for. */
    public val linkString: String
        get() = LinkStrings.format(rails)

    /** The rail named [name], or null. */
    public fun rail(name: String): RailSpec? = rails.firstOrNull { it.name == name }
}

/**
 * One rail of a link: its [name] (its identity in the link: peers pair their rails by it, and statistics and errors
 * name it), [provider] (`shm`, `tcp`, …), the [domain] it opens (for tcp the network interface, `lo` or `eth0`; null:
 * the provider's first), its relative [weight] among the inter-node rails (under [RailPolicy.PER_PEER] a rail of weight
 * 2 is given twice the peers of a rail of weight 1), its [limits], and whether it is [optional]: a host without it
 * opens the link without it, and the result says so, instead of failing.
 */
@Serializable
@ConsistentCopyVisibility
public data class RailSpec
internal constructor(
    val name: String,
    val provider: String,
    val domain: String? = null,
    val weight: Double = 1.0,
    val optional: Boolean = false,
    val limits: LimitsSpec = LimitsSpec(),
) {
    /** This rail in link-string syntax: `provider` or `provider:domain`. */
    public val linkPart: String
        get() = if (domain == null) provider else "$provider:$domain"

    /** Whether this is the shared-memory rail, which reaches only peers on this host. */
    public val isShm: Boolean
        get() = provider == SHM
}

/**
 * Transport limits; null means the provider's default (which its environment variables set, e.g.
 * `BRAID_SHM_EAGER_SIZE`). On a [LinkSpec] they are defaults for its rails, and [unexpectedLimit] bounds the link's
 * shared unexpected queue; on a [RailSpec] they override the link's for that rail.
 */
@Serializable
public data class LimitsSpec(
    /** Largest message sent by inject (copied at once, no completion), in bytes. */
    @ByteCount val injectSize: Int? = null,
    /** Largest message sent in one piece; larger ones wait for their receive (rendezvous). */
    @ByteCount val eagerSize: Int? = null,
    /** Bytes of one peer-to-peer ring (shm) or connection buffer (tcp). */
    @ByteCount val ringCapacity: Int? = null,
    /** Messages that may wait unexpected before senders are pushed back. */
    val unexpectedLimit: Int? = null,
) {
    /** These limits, each unset one taken from [defaults]. */
    public fun orElse(defaults: LimitsSpec): LimitsSpec =
        LimitsSpec(
            injectSize ?: defaults.injectSize,
            eagerSize ?: defaults.eagerSize,
            ringCapacity ?: defaults.ringCapacity,
            unexpectedLimit ?: defaults.unexpectedLimit,
        )

    @get:JvmSynthetic
    internal val isEmpty: Boolean
        get() = this == NONE

    internal companion object {
        @get:JvmSynthetic val NONE = LimitsSpec()
    }
}

/**
 * How the link's domain makes progress ([ProgressModel.MANUAL]: reading a completion queue drives it;
 * [ProgressModel.AUTO]: a progress thread does) and what waiting costs ([idle]).
 */
@Serializable
public data class ProgressSpec(val model: ProgressModel = ProgressModel.MANUAL, val idle: IdleSpec = IdleSpec())

/** The domain's [IdlePolicy], field for field. */
@Serializable
public data class IdleSpec(
    val kind: IdleKind = IdleKind.BACKOFF,
    val maxSpins: Int = 100,
    val maxYields: Int = 100,
    val minParkNanos: Long = 1_000,
    val maxParkNanos: Long = 1_000_000,
) {
    /** The rail-core policy (valid: [SpecRules] checked these fields). */
    public fun toPolicy(): IdlePolicy = IdlePolicy(kind, maxParkNanos, maxSpins, maxYields, minParkNanos)
}

/**
 * Where the job key comes from: exactly one of a literal [value], an environment variable [env], or a [file] whose
 * contents (trailing whitespace removed) are the key. Every process of a job must end up with the same key; tcp refuses
 * peers whose key differs.
 */
@Serializable
@ConsistentCopyVisibility
public data class JobKeySpec
internal constructor(val value: String? = null, val env: String? = null, val file: String? = null) {
    /** Never prints the key itself. */
    override fun toString(): String =
        when {
            value != null -> "JobKeySpec(value=<set>)"
            env != null -> "JobKeySpec(env=$env)"
            else -> "JobKeySpec(file=$file)"
        }
}

/**
 * How a link spreads traffic over its rails (rail-core's `LinkShape.POLICIES`, `BRAID_LINK_POLICY`). shm always carries
 * the peers on this host.
 */
public enum class RailPolicy {
    /** shm for peers on this host, the link's one inter-node rail for every other peer (LNX): one network rail only. */
    LOCALITY,

    /**
     * Each peer on another host pinned to one network rail, the peers spread over the rails in proportion to their
     * [RailSpec.weight]s; a peer whose rail fails moves to another for the operations posted after the failure.
     */
    PER_PEER,

    /**
     * Each message to another host whole over the next network rail, in a round robin weighted by the rails'
     * [RailSpec.weight]s; the receiver's reorder stage keeps each sender's order. For small messages.
     */
    ROUND_ROBIN,

    /**
     * [ROUND_ROBIN], and a message larger than the link's striping threshold (`settings { link.stripe_threshold = ...
     * }`, at least the eager size) split over the network rails in proportion to their weights.
     */
    STRIPE,
}

/**
 * Marks an integer field that holds a number of bytes: files may write it as a number or as a size string (`"64 KiB"`,
 * `"4m"`, `"16k"`; units are powers of 1024).
 */
@OptIn(ExperimentalSerializationApi::class)
@SerialInfo
@Target(AnnotationTarget.PROPERTY)
internal annotation class ByteCount

internal const val SHM: String = "shm"
