package braid.dsl

import braid.core.IdleKind
import braid.core.ProgressModel
import java.nio.file.Path
import java.nio.file.Paths
import java.util.function.Consumer

/** The marker of Braid's DSL: an inner block cannot call an outer block's builders by accident. */
@DslMarker @Target(AnnotationTarget.CLASS) public annotation class BraidDsl

/** The base of every DSL receiver. */
@BraidDsl public interface BraidScope

/**
 * Builds a [TopologySpec]:
 * ```
 * val spec = topology {
 *     file("/etc/braid/topology.conf")        // optional base layer
 *     link("shm+tcp:eth0") {
 *         rail("tcp") { injectSize = 4096 }
 *         unexpectedLimit = 8192
 *     }
 *     progress { model = ProgressModel.AUTO; idle(IdleKind.SPIN) }
 *     jobKey { env = "MY_JOB_KEY" }
 * }
 * ```
 *
 * Precedence, lowest first: the [file], then the environment ([environment], see [EnvironmentLayer]), then what the
 * block says, applied in the order it says it. [link] refines the link of that name (or adds one); [links] replaces the
 * list of links.
 *
 * From Java: [Topology.spec] with `Consumer` blocks, `Topology.spec(t -> t.link("shm+tcp:lo", l ->
 * l.setUnexpectedLimit(4096)))`.
 */
@JvmSynthetic // Java has Topology.spec(Consumer): a Kotlin receiver lambda is no Java shape
public fun topology(block: TopologyScope.() -> Unit): TopologySpec = TopologyScope().apply(block).build()

/** The top-level block of [topology]. */
public class TopologyScope internal constructor() : BraidScope {
    private var file: Path? = null
    private val edits = ArrayList<(Draft) -> Unit>()

    /**
     * The environment layer's variables: null (the default) for this process's, read through [braid.core.Settings]; a
     * map instead of them (`emptyMap()` to ignore the environment).
     */
    public var environment: Map<String, String>? = null

    /** Reads [path] (`.json`, `.conf` or `.hocon`) as the base layer. */
    public fun file(path: Path) {
        file = path
    }

    public fun file(path: String): Unit = file(Paths.get(path))

    /**
     * Replaces the links with those of [text] in `BRAID_LINKS` syntax (`shm+tcp|tcp`); a link already present by the
     * same name keeps its settings.
     */
    public fun links(text: String) {
        val parsed = LinkStrings.parse(text, "links(\"$text\")").map { LinkScope.parse(it.name, "links") }
        edits += { d -> d.replaceLinks(parsed) }
    }

    /** The link [linkString] (`shm+tcp:lo`), refined by [block]: merged into the link of that name, or added. */
    @JvmSynthetic
    public fun link(linkString: String, block: LinkScope.() -> Unit = {}) {
        val link = LinkScope.parse(linkString, "link(\"$linkString\")").apply(block)
        edits += { d -> d.mergeLink(link) }
    }

    /**
     * A link described rail by rail ([LinkScope.rail], [LinkScope.shm]); named by [LinkScope.name] or its link string.
     */
    @JvmSynthetic
    public fun link(block: LinkScope.() -> Unit) {
        val link = LinkScope().apply(block)
        edits += { d -> d.mergeLink(link) }
    }

    @JvmSynthetic
    public fun progress(block: ProgressScope.() -> Unit) {
        val p = ProgressScope().apply(block)
        edits += { d -> d.progress.merge(p) }
    }

    /**
     * Pairs a collective offload provider with a link ([OffloadScope.link], by name): groups joined on that link's
     * endpoint run the operations it takes through it ([OffloadSpec]). A second block for the same link replaces the
     * first.
     */
    @JvmSynthetic
    public fun offload(block: OffloadScope.() -> Unit) {
        val o = OffloadScope().apply(block)
        edits += { d -> d.offloads += o }
    }

    @JvmSynthetic
    public fun jobKey(block: JobKeyScope.() -> Unit) {
        val k = JobKeyScope().apply(block)
        edits += { d -> d.jobKey = k.toSpec() }
    }

    /**
     * Sets the provider parameter [param] (`TcpParams.TIMEOUT_MS`, see `braid info -e`) for every link, over the
     * environment and the file ([LinkScope.setting] sets it for one link).
     */
    public fun <T : Any> setting(param: braid.core.Param<T>, value: T) {
        edits += { d -> d.settings.getOrPut(param.provider) { LinkedHashMap() }[param.name] = value.toString() }
    }

    // ## The same blocks for Java callers: Consumer instead of a Kotlin receiver lambda ##

    /** [link] for Java: the link [linkString], refined by [block]. */
    public fun link(linkString: String, block: Consumer<LinkScope>): Unit = link(linkString) { block.accept(this) }

    /** [link] for Java: the link [linkString] as it is. */
    public fun link(linkString: String): Unit = link(linkString) {}

    /** [link] for Java: a link described rail by rail. */
    public fun link(block: Consumer<LinkScope>): Unit = link { block.accept(this) }

    /** [progress] for Java. */
    public fun progress(block: Consumer<ProgressScope>): Unit = progress { block.accept(this) }

    /** [offload] for Java. */
    public fun offload(block: Consumer<OffloadScope>): Unit = offload { block.accept(this) }

    /** [jobKey] for Java. */
    public fun jobKey(block: Consumer<JobKeyScope>): Unit = jobKey { block.accept(this) }

    /** Adds an edit of the draft (tests reach rules the DSL cannot break). */
    @JvmSynthetic
    internal fun edit(change: (Draft) -> Unit) {
        edits += change
    }

    /** The file, then the environment, then this block's edits; validated ([SpecException]). */
    public fun build(): TopologySpec {
        val draft = Draft()
        file?.let { draft.absorb(TopologyFiles.read(it)) }
        EnvironmentLayer.apply(
            draft,
            environment?.let { braid.core.Settings.ofEnvironment(it) } ?: braid.core.Settings.DEFAULT,
        )
        edits.forEach { it(draft) }
        return draft.toSpec()
    }
}

/** The block of [TopologyScope.progress]: the progress model and the idle strategy. */
public class ProgressScope internal constructor() : BraidScope {
    public var model: ProgressModel? = null
    @set:JvmSynthetic @get:JvmSynthetic internal var idle: IdleScope? = null

    /** The idle strategy's kind, with its default parameters. */
    public fun idle(kind: IdleKind) {
        idle(block = { this.kind = kind })
    }

    /** The idle strategy, field by field. */
    @JvmSynthetic
    public fun idle(block: IdleScope.() -> Unit) {
        val i = idle ?: IdleScope().also { idle = it }
        i.block()
    }

    /** [idle] for Java. */
    public fun idle(block: Consumer<IdleScope>): Unit = idle { block.accept(this) }

    @JvmSynthetic
    internal fun merge(o: ProgressScope) {
        o.model?.let { model = it }
        o.idle?.let { other -> idle { merge(other) } }
    }

    @JvmSynthetic
    internal fun toSpec(): ProgressSpec {
        val d = ProgressSpec()
        return ProgressSpec(model ?: d.model, idle?.toSpec(d.idle) ?: d.idle)
    }

    internal companion object {
        @JvmSynthetic
        fun of(s: ProgressSpec) =
            ProgressScope().also { p ->
                p.model = s.model
                p.idle =
                    IdleScope().also {
                        it.kind = s.idle.kind
                        it.maxSpins = s.idle.maxSpins
                        it.maxYields = s.idle.maxYields
                        it.minParkNanos = s.idle.minParkNanos
                        it.maxParkNanos = s.idle.maxParkNanos
                    }
            }
    }
}

/** The block of [ProgressScope.idle]: [braid.core.IdlePolicy]'s fields. */
public class IdleScope internal constructor() : BraidScope {
    public var kind: IdleKind? = null
    public var maxSpins: Int? = null
    public var maxYields: Int? = null
    public var minParkNanos: Long? = null
    /**
     * The longest park under BACKOFF (default 1 ms; see [braid.core.IdlePolicy.maxParkNanos]). Below 1 ms it costs the
     * `suspend` API dearly: a coroutine cannot park for less than 1 ms, so once this much time has passed it waits in
     * whole milliseconds.
     */
    public var maxParkNanos: Long? = null

    @JvmSynthetic
    internal fun merge(o: IdleScope) {
        o.kind?.let { kind = it }
        o.maxSpins?.let { maxSpins = it }
        o.maxYields?.let { maxYields = it }
        o.minParkNanos?.let { minParkNanos = it }
        o.maxParkNanos?.let { maxParkNanos = it }
    }

    @JvmSynthetic
    internal fun toSpec(d: IdleSpec) =
        IdleSpec(
            kind ?: d.kind,
            maxSpins ?: d.maxSpins,
            maxYields ?: d.maxYields,
            minParkNanos ?: d.minParkNanos,
            maxParkNanos ?: d.maxParkNanos,
        )
}

/** The block of [TopologyScope.jobKey]: set exactly one of [value], [env] or [file]. */
public class JobKeyScope internal constructor() : BraidScope {
    /** The key itself. Prefer [env] or [file]: a literal key ends up in every file the spec is written to. */
    public var value: String? = null

    /** The environment variable that holds the key. */
    public var env: String? = null

    /** The file that holds the key (trailing whitespace is not part of it). */
    public var file: String? = null

    @JvmSynthetic internal fun toSpec() = JobKeySpec(value, env, file)
}

/**
 * The topology while its layers are applied: links by name (null until a layer names some, then [TopologySpec]'s
 * default applies), progress, job key.
 */
internal class Draft {
    var links: MutableList<LinkScope>? = null
    val progress = ProgressScope()
    var jobKey: JobKeySpec? = null
    /** Offload pairings from the file, then the DSL's blocks (a later one for the same link replaces an earlier). */
    val fileOffloads = ArrayList<OffloadSpec>()
    val offloads = ArrayList<OffloadScope>()

    /** Rail limits from the environment, by provider: under what the DSL sets, over the file. */
    val envLimits = HashMap<String, Limits>()

    /** BRAID_LINK_DISABLE_SHM applies to the default links too. */
    var dropShmFromDefault = false

    /** Provider parameters the DSL sets for every link, by provider, then name, as text. */
    val settings = LinkedHashMap<String, MutableMap<String, String>>()

    fun absorb(spec: TopologySpec) {
        links = spec.links.mapTo(ArrayList()) { LinkScope.of(it) }
        progress.merge(ProgressScope.of(spec.progress))
        jobKey = spec.jobKey
        fileOffloads.clear()
        fileOffloads += spec.offloads
    }

    fun replaceLinks(next: List<LinkScope>) {
        val old = links.orEmpty()
        links =
            next.mapTo(ArrayList()) { n ->
                val kept = old.firstOrNull { it.name == n.name } ?: return@mapTo n
                kept.also { it.merge(n) }
            }
    }

    fun mergeLink(link: LinkScope) {
        val all = links ?: ArrayList<LinkScope>().also { links = it }
        val name = link.name ?: LinkStrings.format(link.rails.map { it.toSpec() })
        val mine = all.firstOrNull { (it.name ?: LinkStrings.format(it.rails.map { r -> r.toSpec() })) == name }
        if (mine == null) all += link else mine.merge(link)
    }

    fun toSpec(): TopologySpec {
        val all =
            links
                ?: TopologySpec.defaultLinks()
                    .mapTo(ArrayList()) { LinkScope.of(it) }
                    .onEach { l ->
                        if (dropShmFromDefault) l.rails.removeAll { it.providerName == SHM }
                        l.name = null
                    }
        all.forEach { l -> l.rails.forEach { it.underlay(envLimits[it.providerName]) } }
        all.forEach { l -> settings.forEach { (p, m) -> l.settings.getOrPut(p) { LinkedHashMap() }.putAll(m) } }
        val links = all.map { it.toSpec() }
        val paired = LinkedHashMap<String, OffloadSpec>()
        for (o in fileOffloads + offloads.map { it.toSpec(links) }) {
            paired.remove(o.link)
            paired[o.link] = o
        }
        return TopologySpec(links, progress.toSpec(), jobKey, paired.values.toList())
    }
}
