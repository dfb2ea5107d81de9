package braid.dsl

import java.util.function.Consumer

/**
 * The limits every link and rail block can set ([LimitsSpec]); unset (null) means "inherit": a rail inherits its
 * link's, a link the providers' defaults.
 */
public interface LimitsScope : BraidScope {
    public var injectSize: Int?
    public var eagerSize: Int?
    public var ringCapacity: Int?

    /** Only on a link: it bounds the link's one shared unexpected queue. */
    public var unexpectedLimit: Int?
}

/** A [LimitsScope] over four nullable fields; [merge] takes the set fields of another. */
internal class Limits(
    override var injectSize: Int? = null,
    override var eagerSize: Int? = null,
    override var ringCapacity: Int? = null,
    override var unexpectedLimit: Int? = null,
) : LimitsScope {
    fun merge(o: LimitsScope) {
        o.injectSize?.let { injectSize = it }
        o.eagerSize?.let { eagerSize = it }
        o.ringCapacity?.let { ringCapacity = it }
        o.unexpectedLimit?.let { unexpectedLimit = it }
    }

    fun toSpec(): LimitsSpec = LimitsSpec(injectSize, eagerSize, ringCapacity, unexpectedLimit)

    companion object {
        fun of(s: LimitsSpec) = Limits(s.injectSize, s.eagerSize, s.ringCapacity, s.unexpectedLimit)
    }
}

/**
 * The block of one link. Rails come from the link string the link was opened with (`link("shm+tcp:lo")`) and from
 * [rail] and [shm] calls; [rail] with the name of a rail that is already there refines it. Limits set here are the
 * defaults of every rail of the link.
 *
 * ```
 * link {
 *     name = "fast"
 *     shm()
 *     rail("tcp1") { provider = "tcp"; domain = "eth0"; weight = 2.0; injectSize = 4096 }
 *     rail("cxi0") { provider = "cxi"; optional = true }
 *     unexpectedLimit = 4096
 * }
 * ```
 */
public class LinkScope
internal constructor(
    /** The link's name; unset, the link string of its rails (`shm+tcp:eth0`). */
    public var name: String? = null,
    @get:JvmSynthetic internal val limits: Limits = Limits(),
) : LimitsScope by limits {
    @get:JvmSynthetic internal val rails = ArrayList<RailScope>()

    /** How traffic is spread over the rails; unset: [RailPolicy.LOCALITY]. */
    public var policy: RailPolicy? = null

    @get:JvmSynthetic internal val settings = LinkedHashMap<String, MutableMap<String, String>>()

    /** Sets the provider parameter [param] (`TcpParams.TIMEOUT_MS`, see `braid info -e`) for this link. */
    public fun <T : Any> setting(param: braid.core.Param<T>, value: T) {
        settings.getOrPut(param.provider) { LinkedHashMap() }[param.name] = value.toString()
    }

    /** The rail named [name]: a new one (provider [name] unless set), or the one already there. */
    @JvmSynthetic
    public fun rail(name: String, block: RailScope.() -> Unit = {}) {
        val rail = rails.firstOrNull { it.name == name } ?: RailScope(name).also { rails += it }
        rail.block()
    }

    /** The shared-memory rail, named `shm`. */
    @JvmSynthetic
    public fun shm(block: RailScope.() -> Unit = {}): Unit =
        rail(SHM) {
            provider = SHM
            block()
        }

    /** [rail] for Java. */
    public fun rail(name: String, block: Consumer<RailScope>): Unit = rail(name) { block.accept(this) }

    /** [rail] for Java: the rail [name] as it is. */
    public fun rail(name: String): Unit = rail(name) {}

    /** [shm] for Java. */
    public fun shm(block: Consumer<RailScope>): Unit = shm { block.accept(this) }

    /** [shm] for Java: the shm rail as it is. */
    public fun shm(): Unit = shm {}

    /** Takes every field [o] sets; rails are matched by name, new ones appended. */
    @JvmSynthetic
    internal fun merge(o: LinkScope) {
        o.name?.let { name = it }
        o.policy?.let { policy = it }
        limits.merge(o.limits)
        o.settings.forEach { (p, m) -> settings.getOrPut(p) { LinkedHashMap() }.putAll(m) }
        for (r in o.rails) {
            val mine = rails.firstOrNull { it.name == r.name } ?: RailScope(r.name).also { rails += it }
            mine.merge(r)
        }
    }

    @JvmSynthetic
    internal fun toSpec(): LinkSpec {
        val railSpecs = rails.map { it.toSpec() }
        return LinkSpec(
            name = name ?: LinkStrings.format(railSpecs),
            rails = railSpecs,
            limits = limits.toSpec(),
            policy = policy ?: RailPolicy.LOCALITY,
            settings = settings.mapValues { (_, m) -> m.toMap() },
        )
    }

    internal companion object {
        /** Every field of [s], set. */
        @JvmSynthetic
        fun of(s: LinkSpec): LinkScope =
            LinkScope(s.name, Limits.of(s.limits)).also { l ->
                l.policy = s.policy
                s.settings.forEach { (p, m) -> l.settings[p] = LinkedHashMap(m) }
                s.rails.forEach { l.rails += RailScope.of(it) }
            }

        /** A link from a link string: name, and each rail's provider and domain, set; nothing else. */
        @JvmSynthetic
        fun parse(text: String, where: String): LinkScope {
            val spec = LinkStrings.parseOne(text, where)
            return LinkScope(spec.name).also { l ->
                spec.rails.forEach { r ->
                    l.rails +=
                        RailScope(r.name).also {
                            it.provider = r.provider
                            it.domain = r.domain
                        }
                }
            }
        }
    }
}

/**
 * The block of one rail: its [provider] (unset: the rail's name), the [domain] to open (for tcp the interface; unset:
 * the provider's first), its relative [weight], whether it is [optional], and its limits.
 */
public class RailScope
internal constructor(public val name: String, @get:JvmSynthetic internal val limits: Limits = Limits()) :
    LimitsScope by limits {
    public var provider: String? = null
    public var domain: String? = null
    public var weight: Double? = null
    public var optional: Boolean? = null

    @JvmSynthetic
    internal fun merge(o: RailScope) {
        o.provider?.let { provider = it }
        o.domain?.let { domain = it }
        o.weight?.let { weight = it }
        o.optional?.let { optional = it }
        limits.merge(o.limits)
    }

    @get:JvmSynthetic
    internal val providerName: String
        get() = provider ?: name

    /** Fills the limits this rail leaves unset from [under]. */
    @JvmSynthetic
    internal fun underlay(under: Limits?) {
        if (under == null) return
        val mine = limits.toSpec()
        limits.merge(under)
        limits.merge(Limits.of(mine))
    }

    @JvmSynthetic
    internal fun toSpec(): RailSpec =
        RailSpec(
            name = name,
            provider = providerName,
            domain = domain,
            weight = weight ?: 1.0,
            optional = optional ?: false,
            limits = limits.toSpec(),
        )

    internal companion object {
        @JvmSynthetic
        fun of(s: RailSpec): RailScope =
            RailScope(s.name, Limits.of(s.limits)).also {
                it.provider = s.provider
                it.domain = s.domain
                it.weight = s.weight
                it.optional = s.optional
            }
    }
}
