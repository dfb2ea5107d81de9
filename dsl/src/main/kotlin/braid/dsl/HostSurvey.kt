package braid.dsl

import braid.core.Braid
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info

/**
 * Whether this host can open one rail of a link: [info] is the provider's entry for it, with the rail's limits applied,
 * when it can; [absence] says why not when it cannot; [limitProblem] says when it can but the limits the spec asks for
 * do not fit the provider (an error even for an optional rail).
 */
public class RailSurvey
internal constructor(
    public val link: LinkSpec,
    public val rail: RailSpec,
    public val info: Info?,
    public val absence: String?,
    public val limitProblem: String?,
) {
    public val present: Boolean
        get() = info != null

    /**
     * One line: `tcp (tcp:lo): can open, domain lo, eager 16 KiB, inject 4 KiB`; a network rail of a link with several,
     * or of a weight other than 1, with its weight: `a (tcp:eth0), weight 2: can open, …`.
     */
    public fun describe(): String = buildString {
        append(rail.name).append(" (").append(rail.linkPart).append(')')
        if (rail.optional) append(", optional")
        // A weight matters where traffic is spread over several network rails, or where one was set.
        if (!rail.isShm && (link.rails.count { !it.isShm } > 1 || rail.weight != 1.0))
            append(", weight ").append(SpecRules.number(rail.weight))
        val i = info
        if (i == null) {
            append(": cannot open: ").append(absence)
        } else {
            append(": can open, domain ").append(i.domainName)
            append(", inject ").append(SpecRules.bytes(i.txAttr.injectSize))
            append(", eager ").append(SpecRules.bytes(i.endpointAttr.eagerSize))
            RailParams.ringOf(i)?.let { append(", ring ").append(SpecRules.bytes(it)) }
            if (limitProblem != null) append("; but ").append(limitProblem)
        }
    }
}

/** Whether this host can open [link]: every required rail present, at least one rail present, no limit problem. */
public class LinkSurvey internal constructor(public val link: LinkSpec, public val rails: List<RailSurvey>) {
    /** Why the link cannot be opened here, or null when it can. */
    public val problem: String? = run {
        val missing = rails.filter { !it.present && !it.rail.optional }
        val limits = rails.filter { it.limitProblem != null }
        when {
            missing.isNotEmpty() ->
                missing.joinToString("; ") {
                    "rail '${it.rail.name}' (${it.rail.linkPart}) is not on this host: ${it.absence}"
                } +
                    "; mark ${if (missing.size == 1) "it" else "them"} optional = true to open the link without ${if (missing.size == 1) "it" else "them"}, or choose another link"
            limits.isNotEmpty() -> limits.joinToString("; ") { it.limitProblem!! }
            rails.none { it.present } -> "none of its rails is on this host"
            else -> null
        }
    }

    public val openable: Boolean
        get() = problem == null

    /** The rails that will be opened. */
    public val present: List<RailSurvey>
        get() = rails.filter { it.present }

    /** The optional rails this host lacks. */
    public val leftOut: List<RailSurvey>
        get() = rails.filter { !it.present }
}

/** Asks the providers of this build, through [Braid.getInfo], for each rail of a spec. */
internal object HostSurvey {
    fun link(link: LinkSpec, caps: Long): LinkSurvey = LinkSurvey(link, link.rails.map { rail(link, it, caps) })

    private fun rail(link: LinkSpec, rail: RailSpec, caps: Long): RailSurvey {
        val known = Braid.providerNames().filter { it != LINK }
        if (rail.provider == LINK || !Braid.hasProvider(rail.provider)) {
            return RailSurvey(
                link,
                rail,
                null,
                "no provider '${rail.provider}' in this build (present: ${known.joinToString()})",
                null,
            )
        }
        val offers =
            try {
                Braid.getInfo(Hints(caps = caps, provider = rail.provider))
            } catch (e: FabricException) {
                return RailSurvey(
                    link,
                    rail,
                    null,
                    e.message ?: "provider '${rail.provider}' offers nothing here",
                    null,
                )
            }
        val offer =
            if (rail.domain == null) offers.first()
            else
                offers.firstOrNull { it.domainName == rail.domain }
                    ?: return RailSurvey(
                        link,
                        rail,
                        null,
                        "provider '${rail.provider}' has no domain '${rail.domain}' here (present: ${offers.joinToString { it.domainName }})",
                        null,
                    )
        val info = Limited.apply(offer, rail.limits.orElse(link.limits.copy(unexpectedLimit = null)))
        return RailSurvey(link, rail, info, null, Limited.problem(info, rail, link))
    }
}

/** Spec limits applied to a provider's [Info]. */
internal object Limited {
    fun apply(info: Info, limits: LimitsSpec): Info {
        val ring = RailParams.ring(info.provider)
        val ringed = if (ring != null && limits.ringCapacity != null) info.with(ring, limits.ringCapacity) else info
        return applyAttrs(ringed, limits)
    }

    private fun applyAttrs(info: Info, limits: LimitsSpec): Info =
        info.copy(
            endpointAttr = info.endpointAttr.copy(eagerSize = limits.eagerSize ?: info.endpointAttr.eagerSize),
            txAttr =
                info.txAttr.copy(
                    injectSize = limits.injectSize ?: minOf(info.txAttr.injectSize, limits.eagerSize ?: Int.MAX_VALUE)
                ),
            rxAttr = info.rxAttr.copy(unexpectedLimit = limits.unexpectedLimit ?: info.rxAttr.unexpectedLimit),
        )

    /** A limit of [info] the provider cannot honour, in words, or null. */
    fun problem(info: Info, rail: RailSpec, link: LinkSpec): String? {
        val inject = info.txAttr.injectSize
        val eager = info.endpointAttr.eagerSize
        if (inject > eager) {
            return "rail '${rail.name}' in link '${link.name}': injectSize ${SpecRules.bytes(inject)} exceeds the provider's eager size ${SpecRules.bytes(eager)}; set injectSize ≤ ${SpecRules.bytes(eager)} or raise eagerSize"
        }
        return null
    }
}
