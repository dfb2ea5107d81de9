package braid.provider.link

import braid.core.Braid

/**
 * The rules of a link's shape, declared once (fi_lnx(7)'s rules for which rails a link joins): a link has at least one
 * rail; shm appears at most once and has one domain, `shm`; besides shm, a link joins at most one network rail, because
 * the link's locality policy sends to other hosts over one; a link is not a rail of a link; the network rail is one of
 * [NETWORK_RAILS]; and shm goes first ([ordered]).
 *
 * The link provider checks link strings (`BRAID_LINKS`) with [problems]; the topology DSL checks its specs with the
 * same call and places each problem at its file path (`links[0]` + [LinkShapeProblem.path]). Rules that depend on the
 * build or the host (is there such a provider or interface here?) are [LinkShapeProblem.Kind.UNKNOWN_PROVIDER] or are
 * checked when the link is opened.
 */
public object LinkShape {
    /** The shared-memory rail's provider, and its one domain. */
    public const val SHM: String = "shm"

    /** The link provider's own name: not a rail of a link. */
    public const val LINK: String = "link"

    /** The providers a link may join as its network rail. */
    @JvmField public val NETWORK_RAILS: Set<String> = setOf("tcp")

    /**
     * Whether [provider] may be a link's network rail: one of [NETWORK_RAILS], or the native rail (`ofi`, `ofi:tcp`, or
     * a native provider's own name such as `verbs` where Braid has no provider of that name).
     */
    @JvmStatic
    public fun isNetworkRail(provider: String): Boolean =
        provider in NETWORK_RAILS ||
            provider == "ofi" ||
            provider.startsWith("ofi:") ||
            (provider != SHM && provider != LINK && Braid.hasProvider(provider))

    /** The one routing policy links have: shm for peers on this host, the one network rail for every other. */
    public const val LOCALITY: String = "LOCALITY"

    /**
     * One rail of a link as its writer named it: [name] for messages (a DSL rail's name, or the rail as written in a
     * link string), its [provider], and the [domains] it asks for (empty: the provider's).
     */
    public class Rail(
        public val name: String,
        public val provider: String,
        public val domains: List<String> = emptyList(),
    ) {
        /** The rail as a link string writes it: `tcp:eth0`. */
        public val part: String
            get() = if (domains.isEmpty()) provider else "$provider:${domains.joinToString(",")}"

        override fun toString(): String = "rail '$name' ($part)"
    }

    /** Every rule [rails] break, in the order of the rails; empty when the link's shape is sound. */
    @JvmStatic
    public fun problems(rails: List<Rail>): List<LinkShapeProblem> {
        val out = ArrayList<LinkShapeProblem>()
        if (rails.isEmpty()) {
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.NO_RAIL,
                    "rails",
                    -1,
                    "has no rail",
                    "give it at least one, e.g. \"shm+tcp\"",
                )
        }
        rails.forEachIndexed { i, r ->
            when {
                r.provider == LINK ->
                    out +=
                        LinkShapeProblem(
                            LinkShapeProblem.Kind.LINK_AS_RAIL,
                            "rails[$i].provider",
                            i,
                            "provider '$LINK' cannot be a rail of a link",
                            "name the link's rails, e.g. \"shm\" and \"tcp\"",
                        )
                r.provider != SHM && !isNetworkRail(r.provider) ->
                    out +=
                        LinkShapeProblem(
                            LinkShapeProblem.Kind.UNKNOWN_PROVIDER,
                            "rails[$i].provider",
                            i,
                            "unknown rail provider '${r.provider}' (known: ${(listOf(SHM) + NETWORK_RAILS.sorted()).joinToString()})",
                            "use one of those, e.g. \"shm+tcp\"",
                        )
            }
            if (r.provider == SHM && r.domains.any { it != SHM }) {
                out +=
                    LinkShapeProblem(
                        LinkShapeProblem.Kind.SHM_DOMAIN,
                        "rails[$i].domain",
                        i,
                        "shm has one domain, 'shm', not '${r.domains.joinToString(",")}' (the shm rail has one domain, on any host)",
                        "leave domain out (write shm without one)",
                    )
            }
        }
        val shm = rails.withIndex().filter { it.value.provider == SHM }
        if (shm.size > 1) {
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.SHM_TWICE,
                    "rails[${shm[1].index}]",
                    shm[1].index,
                    "has ${shm.size} shm rails (${shm.joinToString { "'${it.value.name}'" }}): shm appears twice",
                    "keep one: shm reaches every peer on this host",
                )
        }
        val network = rails.filter { it.provider != SHM && it.provider != LINK }
        if (network.size > 1) {
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.NETWORK_RAILS,
                    "rails",
                    -1,
                    "has ${network.size} inter-node rails (${network.joinToString { "'${it.name}'" }}) but policy $LOCALITY sends to other hosts over one " +
                        "(it joins ${network.size} network rails; a link joins shm with at most one)",
                    "keep one, or make each its own link (\"${network.joinToString("|") { "shm+${it.part}" }}\"); policies that use several rails at once do not exist yet",
                )
        }
        return out
    }

    /** [rails] in the order a link holds them: shm first, then the network rail. */
    @JvmStatic
    public fun <R> ordered(rails: List<R>, provider: java.util.function.Function<R, String>): List<R> =
        rails.sortedBy { if (provider.apply(it) == SHM) 0 else 1 }
}

/**
 * A rule of [LinkShape] a link breaks: which ([kind]), where relative to the link ([path]: `rails`, `rails[1]`,
 * `rails[0].domain`), which rail it points at ([rail], an index into the rails checked, or -1 for the link as a whole),
 * what is wrong ([problem]) and how to fix it ([hint]).
 *
 * [problem] is worded to follow its subject: the link's name for a problem of the link ([ofLink]: `link 'x' has no
 * rail`, `link 'x' has 2 shm rails …`), `rail 'r' in link 'x':` for a rail's; [message] puts them together.
 */
public class LinkShapeProblem
internal constructor(
    public val kind: Kind,
    public val path: String,
    public val rail: Int,
    public val problem: String,
    public val hint: String,
) {
    /**
     * The rules, for callers that apply some of them only (the DSL leaves [UNKNOWN_PROVIDER] to the host it opens on).
     */
    public enum class Kind {
        NO_RAIL,
        LINK_AS_RAIL,
        UNKNOWN_PROVIDER,
        SHM_DOMAIN,
        SHM_TWICE,
        NETWORK_RAILS,
    }

    /** Whether [problem] is said of the link (its rails together), not of rail [rail] alone. */
    public val ofLink: Boolean
        get() = kind == Kind.NO_RAIL || kind == Kind.SHM_TWICE || kind == Kind.NETWORK_RAILS

    /**
     * The problem with its subject: `link 'x' has …`, or `rail 'r' in link 'x': …` (rails as given to
     * [LinkShape.problems]).
     */
    public fun message(link: String, rails: List<LinkShape.Rail>): String =
        if (ofLink) "link '$link' $problem" else "rail '${rails[rail].name}' in link '$link': $problem"

    override fun toString(): String = "$path: $problem; $hint"
}
