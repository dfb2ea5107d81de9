package braid.dsl

import braid.core.Braid
import braid.core.ByteSize
import braid.core.IdlePolicy
import braid.core.ParamSource
import braid.core.ProgressModel
import braid.core.Settings
import braid.provider.link.LinkParams
import braid.provider.link.LinkShape
import braid.provider.link.LinkShapeProblem

/**
 * Every rule a [TopologySpec] obeys, checked at once so that one error lists every problem. Each problem names the link
 * or rail, the value and the fix, at the path a config file spells (`links[0].rails[1].weight`). The rules of
 * rail-core's own values (a rail's ring size, the idle policy) are rail-core's ([braid.core.Param] rules,
 * [IdlePolicy.violations]): this object only places their problems at the spec's paths. Rules about this host (is there
 * such an interface? does the provider exist in this build?) are not here: they are checked when the topology is
 * opened, and for files when they are read ([TopologyFiles]).
 */
internal object SpecRules {
    private val NAME = Regex("[A-Za-z0-9_.:+@-]{1,64}")
    private val PROVIDER = Regex("[a-z][a-z0-9_]{0,31}")
    private val DOMAIN = Regex("[A-Za-z0-9_.@/-]{1,64}")
    private val ENV_NAME = Regex("[A-Za-z_][A-Za-z0-9_]*")

    fun check(spec: TopologySpec) {
        val problems = ArrayList<SpecProblem>()
        Collector(problems).topology(spec)
        if (problems.isNotEmpty()) throw SpecException(problems)
    }

    private class Collector(val out: MutableList<SpecProblem>) {
        fun add(path: String, message: String, hint: String) {
            out += SpecProblem(path, message, hint)
        }

        fun topology(spec: TopologySpec) {
            if (spec.links.isEmpty())
                add("links", "no link is given", "name at least one link, e.g. \"${TopologySpec.DEFAULT_LINKS}\"")
            spec.links.forEachIndexed { i, link -> link(link, "links[$i]") }
            spec.links
                .groupBy { it.name }
                .filter { it.value.size > 1 }
                .keys
                .forEach { name ->
                    val at = spec.links.indexOfLast { it.name == name }
                    add("links[$at].name", "link '$name' is named twice", "give each link its own name")
                }
            progress(spec.progress)
            spec.jobKey?.let { jobKey(it) }
            spec.offloads.forEachIndexed { i, o -> OffloadSpec.check(o, spec, "offloads[$i]", ::add) }
            spec.offloads
                .groupBy { it.link }
                .filter { it.value.size > 1 }
                .keys
                .forEach { name ->
                    add(
                        "offloads[${spec.offloads.indexOfLast { it.link == name }}].link",
                        "link '$name' is paired with two offloads",
                        "pair each link with one offload",
                    )
                }
        }

        /**
         * Each setting names a parameter rail-core declares and obeys its rule (rail-core's check, placed at the spec's
         * path).
         */
        fun settings(settings: Map<String, Map<String, String>>, at: String) {
            val params = Braid.parameters().associateBy { it.key }
            val none = Settings.ofEnvironment(emptyMap())
            for ((provider, values) in settings) for ((name, text) in values) {
                val key = "$provider.$name"
                val path = "$at.$key"
                val param = params[key]
                if (param == null) {
                    add(
                        path,
                        "no parameter '$key'",
                        ConfigTree.suggestion(key, params.keys.sorted(), "parameters (braid info -e)"),
                    )
                    continue
                }
                none.withText(param, text, ParamSource.FILE, path).problems(listOf(param)).forEach { p ->
                    add(
                        path,
                        "setting $key '${if (param.secret) "<set>" else text}' ${p.violation.problem}",
                        p.violation.fixFor(key),
                    )
                }
            }
        }

        fun link(link: LinkSpec, at: String) {
            val who = "link '${link.name}'"
            if (!NAME.matches(link.name)) {
                add("$at.name", "link name '${link.name}' is not 1..64 letters, digits or _.:+@-", "rename the link")
            }
            link.rails
                .groupBy { it.name }
                .filter { it.value.size > 1 }
                .keys
                .forEach { name ->
                    add(
                        "$at.rails[${link.rails.indexOfLast { it.name == name }}].name",
                        "$who names two rails '$name'",
                        "give each rail of a link its own name",
                    )
                }
            shape(link, at)
            limitsSigns(link.limits, "$at.limits", who)
            settings(link.settings, "$at.settings")
            link.rails.forEachIndexed { j, rail -> rail(rail, link, "$at.rails[$j]") }
        }

        fun rail(rail: RailSpec, link: LinkSpec, at: String) {
            val who = "rail '${rail.name}' in link '${link.name}'"
            if (!NAME.matches(rail.name))
                add("$at.name", "$who: name is not 1..64 letters, digits or _.:+@-", "rename the rail")
            if (!PROVIDER.matches(rail.provider)) {
                add(
                    "$at.provider",
                    "$who: provider '${rail.provider}' is not a provider name",
                    "use a lower-case name such as \"shm\" or \"tcp\" (see 'braid info -l')",
                )
            }
            val domain = rail.domain
            if (domain != null && !DOMAIN.matches(domain)) {
                add(
                    "$at.domain",
                    "$who: domain '$domain' is not 1..64 letters, digits or _.@/-",
                    "name an interface such as \"lo\" or \"eth0\", or leave domain out for the provider's first",
                )
            }
            weight(rail, link, at)
            limitsSigns(rail.limits, "$at.limits", who)
            rail.limits.unexpectedLimit?.let {
                add(
                    "$at.limits.unexpectedLimit",
                    "$who: unexpectedLimit $it bounds the link's one shared unexpected queue, not a rail's",
                    "set it in the limits of link '${link.name}'",
                )
            }
            combinations(rail, link, at, who)
        }

        /**
         * rail-core's rules of a link's shape under its policy ([LinkShape]: shm once, no two network rails on one
         * interface, weights > 0, one network rail under [RailPolicy.LOCALITY]), placed at the spec's paths. Which
         * providers this build's link joins is checked when the topology opens (a rail may be optional, or absent
         * here).
         */
        fun shape(link: LinkSpec, at: String) {
            val rails = link.rails.map { LinkShape.Rail(it.name, it.provider, listOfNotNull(it.domain), it.weight) }
            for (p in LinkShape.problems(rails, link.policy.name)) {
                // Weights are reported with the rest of their rail's problems ([weight]).
                if (p.kind == LinkShapeProblem.Kind.UNKNOWN_PROVIDER || p.kind == LinkShapeProblem.Kind.WEIGHT) continue
                add("$at.${p.path}", p.message(link.name, rails), p.hint)
            }
            if (link.policy == RailPolicy.STRIPE) threshold(link, at)
        }

        /**
         * [LinkShape.thresholdProblem] for a striping link: its threshold (`settings { link.stripe_threshold }`, else
         * the default) against the eager size of its network rails (their limits, else the link's, else tcp's default).
         */
        fun threshold(link: LinkSpec, at: String) {
            val param = LinkParams.STRIPE_THRESHOLD
            val text = link.settings[param.provider]?.get(param.name)
            val threshold = (text?.let { param.parse(it) } ?: param.default).toLong()
            val eager =
                link.rails
                    .filter { it.provider != LinkShape.SHM }
                    .maxOfOrNull { r ->
                        (r.limits.eagerSize ?: link.limits.eagerSize ?: RailParams.eager(r.provider)?.default ?: 0)
                    } ?: return
            LinkShape.thresholdProblem(threshold, eager, "$at.settings.${param.key}")?.let {
                add(it.path, "link '${link.name}' ${it.problem}", it.hint)
            }
        }

        /** [LinkShape]'s rule for [rail]'s weight (finite, > 0), at the rail's path. */
        fun weight(rail: RailSpec, link: LinkSpec, at: String) {
            val one = listOf(LinkShape.Rail(rail.name, rail.provider, listOfNotNull(rail.domain), rail.weight))
            for (p in LinkShape.problems(one, LinkShape.PER_PEER)) {
                if (p.kind == LinkShapeProblem.Kind.WEIGHT) add("$at.weight", p.message(link.name, one), p.hint)
            }
        }

        /** Rules between limits, on the rail's effective limits (its own, else the link's). */
        fun combinations(rail: RailSpec, link: LinkSpec, at: String, who: String) {
            val own = rail.limits
            val eff = own.orElse(link.limits)
            fun pathOf(field: String, ownValue: Int?) =
                if (ownValue != null) "$at.limits.$field" else "${at.substringBeforeLast(".rails")}.limits.$field"
            val inject = eff.injectSize
            val eager = eff.eagerSize
            if (inject != null && eager != null && inject >= 0 && eager >= 0 && inject > eager) {
                add(
                    pathOf("injectSize", own.injectSize),
                    "$who: injectSize ${bytes(inject)} exceeds eagerSize ${bytes(eager)}; an injected message travels eager, in one piece",
                    "set injectSize ≤ ${bytes(eager)} or raise eagerSize",
                )
            }
            // The provider's own rules for the values behind eagerSize and ringCapacity.
            for ((field, param, value) in
                listOf(
                    Triple("eagerSize", RailParams.eager(rail.provider), eager to own.eagerSize),
                    Triple("ringCapacity", RailParams.ring(rail.provider), eff.ringCapacity to own.ringCapacity),
                )) {
                val v = value.first ?: continue
                if (param == null || v <= 0) continue
                val broken = param.violation(v) ?: continue
                add(pathOf(field, value.second), "$who: $field ${bytes(v)} ${broken.problem}", broken.fixFor(field))
            }
        }

        fun limitsSigns(limits: LimitsSpec, at: String, who: String) {
            limits.injectSize?.let {
                if (it < 0)
                    add(
                        "$at.injectSize",
                        "$who: injectSize $it must be ≥ 0",
                        "set injectSize ≥ 0, or leave it out for the provider's default",
                    )
            }
            limits.eagerSize?.let {
                if (it < 0)
                    add(
                        "$at.eagerSize",
                        "$who: eagerSize $it must be ≥ 0",
                        "set eagerSize ≥ 0, or leave it out for the provider's default",
                    )
            }
            limits.ringCapacity?.let {
                if (it <= 0)
                    add(
                        "$at.ringCapacity",
                        "$who: ringCapacity $it must be > 0",
                        "set a ring capacity in bytes, e.g. 4 MiB",
                    )
            }
            limits.unexpectedLimit?.let {
                if (it <= 0)
                    add(
                        "$at.unexpectedLimit",
                        "$who: unexpectedLimit $it must be > 0",
                        "set how many messages may wait unexpected, e.g. 1024",
                    )
            }
        }

        fun progress(p: ProgressSpec) {
            if (p.model == ProgressModel.UNSPEC)
                add("progress.model", "progress model UNSPEC is not a choice", "choose MANUAL or AUTO")
            val idle = p.idle
            val values =
                mapOf(
                    "maxSpins" to idle.maxSpins,
                    "maxYields" to idle.maxYields,
                    "maxParkNanos" to idle.maxParkNanos,
                    "minParkNanos" to idle.minParkNanos,
                )
            for ((field, v) in
                IdlePolicy.violations(idle.maxParkNanos, idle.maxSpins, idle.maxYields, idle.minParkNanos)) {
                add("progress.idle.$field", "idle $field ${values[field]} ${v.problem}", v.fix)
            }
        }

        fun jobKey(k: JobKeySpec) {
            val set = listOfNotNull(k.value?.let { "value" }, k.env?.let { "env" }, k.file?.let { "file" })
            if (set.size != 1) {
                add(
                    "jobKey",
                    "jobKey sets ${if (set.isEmpty()) "none" else set.joinToString(" and ")} of value, env and file",
                    "set exactly one: the key itself, the environment variable holding it, or the file holding it",
                )
            }
            k.value?.let {
                if (it.isEmpty())
                    add(
                        "jobKey.value",
                        "jobKey value is empty",
                        "leave jobKey out for the empty key, or set a non-empty one",
                    )
            }
            k.env?.let {
                if (!ENV_NAME.matches(it))
                    add(
                        "jobKey.env",
                        "jobKey env '$it' is not an environment variable name",
                        "use letters, digits and _, e.g. \"BRAID_JOB_KEY\"",
                    )
            }
            k.file?.let {
                if (it.isBlank()) add("jobKey.file", "jobKey file is blank", "name the file that holds the key")
            }
        }
    }

    /** 4096 → "4 KiB"; other values in bytes. */
    fun bytes(n: Int): String = ByteSize.render(n)

    fun number(d: Double): String =
        if (d.isFinite() && d == Math.rint(d) && kotlin.math.abs(d) < 1e15) d.toLong().toString() else d.toString()
}

internal const val LINK: String = "link"
