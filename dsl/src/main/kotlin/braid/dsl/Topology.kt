package braid.dsl

import braid.core.Braid
import braid.core.CoreParams
import braid.core.Errno
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info
import braid.core.ParamSource
import braid.core.RailAttr
import braid.core.Settings
import braid.provider.link.LinkParams
import braid.provider.link.LinkShape
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Paths

/**
 * From a [TopologySpec] to working rail-core objects: the one path every sample (and the MPI shim) takes.
 *
 * ```
 * Topology.open(topology { file("braid.conf") }).use { link ->
 *     val peer = link.av.insert(peerAddress)
 *     link.endpoint.tryTsend(buffer, 0, n, peer, tag = 7, context = null)
 * }
 * ```
 *
 * [survey] asks this host which rails of each link it has; [resolve] picks a link (the one named, else the first this
 * host can open) and computes its `link` provider [Info] — a link of the rails present, per-rail limits, the link's
 * unexpected bound, progress model, idle policy and job key applied; [open] opens fabric, domain, completion queues,
 * address vector, event queue and endpoint from it. A required rail the host lacks is a [FabricException]
 * ([Errno.ENODEV]) naming the rail and what is present; an optional one is left out and [ResolvedLink.leftOut] says so.
 */
public object Topology {
    /**
     * Capabilities asked for when the caller names none: none in particular, so the link is granted every capability
     * all its rails carry (messages, tagged messages, RMA, atomics, triggered operations). An endpoint refuses an
     * operation outside its granted capabilities with `EOPNOTSUPP` (as libfabric's caps mean): pass `Caps.MSG or
     * Caps.TAGGED` to open a link for messages only, and its RMA writes and atomics are refused.
     */
    public const val DEFAULT_CAPS: Long = 0L

    /**
     * A [TopologySpec] built by [block], for Java callers (Kotlin has [topology]):
     * ```java
     * TopologySpec spec = Topology.spec(t -> {
     *     t.link("shm+tcp:lo", l -> { l.rail("tcp", r -> r.setInjectSize(2048)); l.setUnexpectedLimit(65536); });
     *     t.progress(p -> p.idle(IdleKind.BACKOFF));
     * });
     * ```
     */
    @JvmStatic
    @Throws(SpecException::class)
    public fun spec(block: java.util.function.Consumer<TopologyScope>): TopologySpec = topology { block.accept(this) }

    /** Which rails of each link of [spec] this host can open, and why not. */
    @JvmStatic
    @JvmOverloads
    public fun survey(spec: TopologySpec, caps: Long = DEFAULT_CAPS): List<LinkSurvey> =
        spec.links.map { HostSurvey.link(it, caps) }

    /**
     * The link to open: [link] by name, else the first one this host can open. Throws [FabricException]
     * ([Errno.ENODEV]) when it cannot be opened here, naming every rail that is missing and what is present.
     */
    @JvmStatic
    @JvmOverloads
    @Throws(FabricException::class)
    public fun resolve(spec: TopologySpec, link: String? = null, caps: Long = DEFAULT_CAPS): ResolvedLink {
        val candidates = if (link != null) listOf(spec.link(link)) else spec.links
        val surveys = candidates.map { HostSurvey.link(it, caps) }
        val chosen =
            surveys.firstOrNull { it.openable }
                ?: throw FabricException(
                    Errno.ENODEV,
                    surveys.joinToString(
                        "; ",
                        prefix = if (surveys.size == 1) "" else "no link of the topology can be opened here: ",
                    ) {
                        "link '${it.link.name}': ${it.problem}"
                    },
                )
        return ResolvedLink(spec, chosen, infoFor(spec, chosen, caps))
    }

    /** Resolves [spec] ([resolve]) and opens the link; a [FabricException] says why it cannot be opened here. */
    @JvmStatic
    @JvmOverloads
    @Throws(FabricException::class)
    public fun open(
        spec: TopologySpec,
        link: String? = null,
        caps: Long = DEFAULT_CAPS,
        splitCompletionQueues: Boolean = false,
    ): OpenLink {
        val resolved = resolve(spec, link, caps)
        return OpenLink.open(resolved.info, resolved, splitCompletionQueues).also(::pairOffload)
    }

    /** Pairs the link's offload, if the spec names one, with its domain: groups joined there use it. */
    private fun pairOffload(open: OpenLink) {
        val r = open.resolved ?: return
        r.spec.offloadFor(r.link.name)?.let {
            braid.collectives.CollectiveOffload.pairWith(open.domain, it.toOffload())
        }
    }

    /** Opens a resolved link. */
    @JvmStatic
    @JvmOverloads
    public fun open(resolved: ResolvedLink, splitCompletionQueues: Boolean = false): OpenLink =
        OpenLink.open(resolved.info, resolved, splitCompletionQueues).also(::pairOffload)

    /** Opens the objects for a provider's [info] as it is, without a spec (`braid pingpong -p`). */
    @JvmStatic
    @JvmOverloads
    public fun open(info: Info, splitCompletionQueues: Boolean = false): OpenLink =
        OpenLink.open(info, null, splitCompletionQueues)

    /** The job key [spec] names, read now; null when the spec leaves it to the rails' default. */
    @JvmStatic
    public fun jobKey(spec: TopologySpec): String? {
        val k = spec.jobKey ?: return null
        k.value?.let {
            return it
        }
        k.env?.let { name ->
            return Settings.DEFAULT.environmentValue(name)
                ?: throw FabricException(
                    Errno.ENOKEY,
                    "job key: environment variable $name is not set;" +
                        " export it in every process of the job, or change jobKey in the topology",
                )
        }
        val file = Paths.get(k.file!!)
        val key =
            try {
                Files.readString(file).trimEnd()
            } catch (e: IOException) {
                throw FabricException(
                    Errno.ENOKEY,
                    "job key: cannot read file '$file' (${e.javaClass.simpleName}: ${e.message}); create it with the job's key, readable by this user",
                )
            }
        if (key.isEmpty())
            throw FabricException(Errno.ENOKEY, "job key: file '$file' is empty; write the job's key into it")
        return key
    }

    /** [info] and its rails with [link]'s settings over their own (checked already: [SpecRules]). */
    private fun withSettings(link: LinkSpec, info: Info): Info {
        if (link.settings.isEmpty()) return info
        val byKey = Braid.parameters().associateBy { it.key }
        var extra = Settings.DEFAULT
        for ((provider, values) in link.settings) for ((name, text) in values) {
            extra =
                extra.withText(
                    byKey.getValue("$provider.$name"),
                    text,
                    ParamSource.FILE,
                    "topology settings.$provider.$name",
                )
        }
        fun applied(i: Info): Info = i.copy(settings = i.settings.overlay(extra), rails = i.rails.map { applied(it) })
        return applied(info)
    }

    /**
     * The Info of [survey]'s link, through the link provider (a single rail is a link too): its rails the ones present,
     * each with its limits; the link's own limits the tightest of its rails', its unexpected bound the spec's;
     * progress, idle policy and job key from the spec.
     */
    private fun infoFor(spec: TopologySpec, survey: LinkSurvey, caps: Long): Info {
        val present = survey.present
        val linkString =
            present.joinToString("+") { if (it.rail.isShm) SHM else "${it.rail.provider}:${it.info!!.domainName}" }
        val offer =
            Braid.getInfo(
                    Hints(caps = caps, provider = LINK)
                        .with(LinkParams.LINKS, linkString)
                        .with(LinkParams.DISABLE_SHM, false)
                        .with(LinkParams.POLICY, survey.link.policy.name)
                )
                .first()
        // The offer holds the rails in the link's order (shm first, the others as written): each is named and weighed
        // as the spec says, so that peers pair their rails by the spec's names.
        val ordered = LinkShape.ordered(present) { it.rail.provider }
        val rails =
            offer.rails.mapIndexed { i, railInfo ->
                val rail = ordered[i].rail
                Limited.apply(railInfo, rail.limits.orElse(survey.link.limits.copy(unexpectedLimit = null)))
                    .copy(rail = RailAttr(rail.name, rail.weight))
            }
        val key = jobKey(spec)
        val progress = spec.progress
        val info =
            withSettings(
                survey.link,
                offer.copy(
                    rails = rails,
                    endpointAttr = offer.endpointAttr.copy(eagerSize = rails.minOf { it.endpointAttr.eagerSize }),
                    txAttr = offer.txAttr.copy(injectSize = rails.minOf { it.txAttr.injectSize }),
                    rxAttr =
                        offer.rxAttr.copy(
                            unexpectedLimit = survey.link.limits.unexpectedLimit ?: offer.rxAttr.unexpectedLimit
                        ),
                    domainAttr = offer.domainAttr.copy(progress = progress.model, idle = progress.idle.toPolicy()),
                ),
            )
        return if (key == null) info else info.with(CoreParams.JOB_KEY, key)
    }
}

/**
 * A link of a topology, resolved on this host: the [survey] of its rails, the rails that will be [opened], the optional
 * ones [leftOut] and why, and the [info] that opens it.
 */
public class ResolvedLink
internal constructor(public val spec: TopologySpec, public val survey: LinkSurvey, public val info: Info) {
    public val link: LinkSpec
        get() = survey.link

    public val opened: List<RailSurvey>
        get() = survey.present

    public val leftOut: List<RailSurvey>
        get() = survey.leftOut

    /** What was opened and what was left out, one line each. */
    public fun describe(): String = buildString {
        append("link '")
            .append(link.name)
            .append("' as ")
            .append(info.provider)
            .append(' ')
            .append(info.domainName)
            .append('\n')
        survey.rails.forEach {
            append("  rail ").append(it.describe()).append(if (it.present) "" else " (left out)").append('\n')
        }
    }
}
