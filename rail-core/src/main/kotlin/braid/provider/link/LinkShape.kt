package braid.provider.link

import braid.core.Braid

/**
 * The rules of a link's shape, declared once (fi_lnx(7)'s rules for which rails a link joins, and Braid's for several
 * network rails): a link has at least one rail; shm appears at most once and has one domain, `shm`; a link is not a
 * rail of a link; every other rail is one of [NETWORK_RAILS]; no two network rails of one provider open the same
 * interface (or both the provider's first); every weight is finite and > 0; the policy is one of [POLICIES], and under
 * [LOCALITY] a link joins at most one network rail (several need a policy that spreads traffic over them, [PER_PEER],
 * [ROUND_ROBIN] or [STRIPE], and the last two only rails that carry sequence numbers, [SEQUENCED_RAILS]); and shm goes
 * first ([ordered]). A striping threshold is at least the eager size ([thresholdProblem]).
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
        provider in NETWORK_RAILS || (provider != SHM && provider != LINK && Braid.hasProvider(provider))

    /** shm for peers on this host, the one network rail for every other (LNX's shape: one network rail only). */
    public const val LOCALITY: String = "LOCALITY"

    /**
     * shm for peers on this host; every other peer is pinned to one network rail, the peers spread over the rails in
     * proportion to their weights (a rail of weight 2 is given twice the peers of a rail of weight 1). One peer's
     * messages travel one rail, so they keep their order; a peer whose rail fails moves to another for the operations
     * posted after the failure. With one network rail it is [LOCALITY].
     */
    public const val PER_PEER: String = "PER_PEER"

    /**
     * shm for peers on this host; every message to another host goes whole over the next network rail in a weighted
     * round robin (a rail of weight 2 carries two messages for each one of a rail of weight 1), with the link's
     * per-sender sequence numbers, so that the receiver's reorder stage keeps MPI's order. For small messages.
     */
    public const val ROUND_ROBIN: String = "ROUND_ROBIN"

    /**
     * [ROUND_ROBIN] for messages up to the link's striping threshold (`BRAID_LINK_STRIPE_THRESHOLD`); a larger message
     * is split into one part per network rail, each rail's part in proportion to its weight, and each part lands
     * straight in the matched receive's buffer.
     */
    public const val STRIPE: String = "STRIPE"

    /** The policies a link may name, as `BRAID_LINK_POLICY` and a topology's `policy` write them. */
    @JvmField public val POLICIES: List<String> = listOf(LOCALITY, PER_PEER, ROUND_ROBIN, STRIPE)

    /** Whether [policy] spreads one peer's messages over several rails (and so sequences them). */
    @JvmStatic public fun spreadsMessages(policy: String): Boolean = policy == ROUND_ROBIN || policy == STRIPE

    /** The network rails that carry a link's sequence numbers, which [ROUND_ROBIN] and [STRIPE] need on every rail. */
    @JvmField public val SEQUENCED_RAILS: Set<String> = setOf("tcp")

    /**
     * The rule for the striping threshold: a message is striped only when it is larger than [threshold] bytes, and each
     * part travels as a rendezvous, so [threshold] may not be below the rails' eager size [eagerSize]. Null when
     * [threshold] is sound; [path] is where it was set (`BRAID_LINK_STRIPE_THRESHOLD`, `links[0].stripeThreshold`).
     */
    @JvmStatic
    public fun thresholdProblem(threshold: Long, eagerSize: Int, path: String): LinkShapeProblem? =
        if (threshold >= eagerSize) null
        else
            LinkShapeProblem(
                LinkShapeProblem.Kind.STRIPE_THRESHOLD,
                path,
                -1,
                "has a striping threshold of $threshold bytes, below the eager size of its network rails ($eagerSize bytes)",
                "set $path to at least $eagerSize (parts of a striped message travel as rendezvous, larger than the eager size)",
            )

    /** [text] as one of [POLICIES] (case and `-` for `_` ignored), or null if it names none. */
    @JvmStatic
    public fun policyOf(text: String): String? = text.trim().uppercase().replace('-', '_').takeIf { it in POLICIES }

    /**
     * One rail of a link as its writer named it: [name] for messages (a DSL rail's name, or the rail as written in a
     * link string), its [provider], the [domains] it asks for (empty: the provider's), and its [weight].
     */
    public class Rail
    @JvmOverloads
    constructor(
        public val name: String,
        public val provider: String,
        public val domains: List<String> = emptyList(),
        public val weight: Double = 1.0,
    ) {
        /** The rail as a link string writes it: `tcp:eth0`. */
        public val part: String
            get() = if (domains.isEmpty()) provider else "$provider:${domains.joinToString(",")}"

        override fun toString(): String = "rail '$name' ($part)"
    }

    /**
     * Every rule [rails] break under [policy] (one of [POLICIES]; default [LOCALITY]), in the order of the rails; empty
     * when the link's shape is sound.
     */
    @JvmStatic
    @JvmOverloads
    public fun problems(rails: List<Rail>, policy: String = LOCALITY): List<LinkShapeProblem> {
        val out = ArrayList<LinkShapeProblem>()
        val chosen = policyOf(policy)
        if (chosen == null) {
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.UNKNOWN_POLICY,
                    "policy",
                    -1,
                    "has an unknown policy '$policy'",
                    "use one of ${POLICIES.joinToString()}",
                )
        }
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
            if (!r.weight.isFinite() || r.weight <= 0.0) {
                out +=
                    LinkShapeProblem(
                        LinkShapeProblem.Kind.WEIGHT,
                        "rails[$i].weight",
                        i,
                        "weight ${number(r.weight)} must be > 0",
                        "set a positive relative weight, e.g. 1",
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
        val network = rails.withIndex().filter { it.value.provider != SHM && it.value.provider != LINK }
        for ((k, b) in network.withIndex()) {
            val a = network.subList(0, k).firstOrNull { (_, r) -> sameInterface(r, b.value) } ?: continue
            val where =
                if (b.value.domains.isEmpty()) "${b.value.provider}'s first interface"
                else "interface ${b.value.domains.joinToString(",")}"
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.SAME_INTERFACE,
                    "rails[${b.index}].domain",
                    b.index,
                    "joins 2 network rails on the same interface ('${a.value.name}' and '${b.value.name}' both open $where)",
                    "give each network rail its own interface, e.g. \"shm+${b.value.provider}:eth0+${b.value.provider}:eth1\"",
                )
        }
        if (network.size > 1 && chosen == LOCALITY) {
            out +=
                LinkShapeProblem(
                    LinkShapeProblem.Kind.NETWORK_RAILS,
                    "rails",
                    -1,
                    "has ${network.size} inter-node rails (${network.joinToString { "'${it.value.name}'" }}) but policy $LOCALITY sends to other hosts over one " +
                        "(it joins ${network.size} network rails; under $LOCALITY a link joins shm with at most one)",
                    "choose policy $PER_PEER to spread peers over them, keep one, or make each its own link (\"${network.joinToString("|") { "shm+${it.value.part}" }}\")",
                )
        }
        if (network.size > 1 && chosen != null && spreadsMessages(chosen)) {
            for ((i, r) in network) {
                if (r.provider in SEQUENCED_RAILS) continue
                out +=
                    LinkShapeProblem(
                        LinkShapeProblem.Kind.UNSEQUENCED_RAIL,
                        "rails[$i].provider",
                        i,
                        "provider '${r.provider}' cannot carry the sequence numbers that keep one peer's messages in order under policy $chosen",
                        "use policy $PER_PEER with this rail, or only ${SEQUENCED_RAILS.joinToString()} rails",
                    )
            }
        }
        return out
    }

    /** Whether two network rails open the same interface: the same provider and domains, or both none. */
    private fun sameInterface(a: Rail, b: Rail): Boolean =
        a.provider == b.provider && (a.domains.isEmpty() && b.domains.isEmpty() || a.domains.any { it in b.domains })

    /** -1.0 → "-1"; other values as Kotlin prints them. */
    private fun number(d: Double): String =
        if (d.isFinite() && d == Math.rint(d) && kotlin.math.abs(d) < 1e15) d.toLong().toString() else d.toString()

    /** [rails] in the order a link holds them: shm first, then the network rails in the order written. */
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
        SAME_INTERFACE,
        WEIGHT,
        UNKNOWN_POLICY,
        UNSEQUENCED_RAIL,
        STRIPE_THRESHOLD,
    }

    /** Whether [problem] is said of the link (its rails together), not of rail [rail] alone. */
    public val ofLink: Boolean
        get() =
            kind == Kind.NO_RAIL ||
                kind == Kind.SHM_TWICE ||
                kind == Kind.NETWORK_RAILS ||
                kind == Kind.SAME_INTERFACE ||
                kind == Kind.UNKNOWN_POLICY ||
                kind == Kind.STRIPE_THRESHOLD

    /**
     * The problem with its subject: `link 'x' has …`, or `rail 'r' in link 'x': …` (rails as given to
     * [LinkShape.problems]).
     */
    public fun message(link: String, rails: List<LinkShape.Rail>): String =
        if (ofLink) "link '$link' $problem" else "rail '${rails[rail].name}' in link '$link': $problem"

    override fun toString(): String = "$path: $problem; $hint"
}
