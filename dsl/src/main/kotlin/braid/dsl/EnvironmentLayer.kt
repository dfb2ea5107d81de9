package braid.dsl

import braid.core.Braid
import braid.core.CoreParams
import braid.core.Param
import braid.core.ParamType
import braid.core.Settings
import braid.provider.link.LinkParams

/**
 * The environment's layer of a topology, between the file and the DSL (see [topology]). The variables are the ones the
 * rails and the link declare as their parameters ([braid.core.Param]), so a topology means the same whether a process
 * gets a setting from the environment or from its spec:
 *
 * |variable                                       |effect on the spec                                                                             |
 * |-----------------------------------------------|-----------------------------------------------------------------------------------------------|
 * |`BRAID_LINKS`                                  |replaces the links (`shm+tcp\|tcp`); a link already present by the same name keeps its settings|
 * |`BRAID_LINK_DISABLE_SHM=1`                     |removes the shm rail from every link                                                           |
 * |`BRAID_JOB_KEY`                                |the job key is read from `BRAID_JOB_KEY`                                                       |
 * |`BRAID_SHM_EAGER_SIZE`, `BRAID_SHM_RING_SIZE`  |eagerSize and ringCapacity of every shm rail                                                   |
 * |`BRAID_TCP_EAGER_SIZE`, `BRAID_TCP_BUFFER_SIZE`|eagerSize and ringCapacity of every tcp rail                                                   |
 *
 * A malformed value is a [SpecException] at the variable's name.
 */
public object EnvironmentLayer {
    @JvmField public val LINKS: String = LinkParams.LINKS.env
    @JvmField public val DISABLE_SHM: String = LinkParams.DISABLE_SHM.env
    @JvmField public val JOB_KEY: String = CoreParams.JOB_KEY.env

    /** A rail limit the environment sets: rail-core's [param] for rails of [provider]. */
    private class RailLimit(val param: Param<Int>, val provider: String, val set: (Limits, Int) -> Unit)

    /** Every registered provider's limits (those it declares: [RailParams]). */
    private val RAIL_LIMITS
        get() =
            Braid.providerNames().flatMap { p ->
                listOfNotNull(
                    RailParams.eager(p)?.let { RailLimit(it, p) { l, v -> l.eagerSize = v } },
                    RailParams.ring(p)?.let { RailLimit(it, p) { l, v -> l.ringCapacity = v } },
                )
            }

    /** The variables this layer reads. */
    @JvmStatic
    public fun variables(): List<String> = listOf(LINKS, DISABLE_SHM, JOB_KEY) + RAIL_LIMITS.map { it.param.env }

    /**
     * [param]'s variable parsed (its rule is checked later, at the spec's path), or a [SpecException] at the variable.
     */
    private fun <T : Any> parsed(param: Param<T>, env: Settings): T? {
        val raw = env.environmentValue(param.env) ?: return null
        return param.parse(raw)
            ?: throw SpecException(
                listOf(
                    SpecProblem(
                        param.env,
                        "environment ${param.env}='$raw' ${if (param.type == ParamType.BOOL) "must be 0 or 1" else "is not an integer or a size"}",
                        "set it to ${if (param.type == ParamType.BOOL) "1 or 0" else "a number of bytes"}, or unset it",
                    )
                )
            )
    }

    /**
     * Applies the variables [env] sees ([Settings.environmentValue]: this process's, or a map a caller gave) to
     * [draft].
     */
    @JvmSynthetic
    internal fun apply(draft: Draft, env: Settings) {
        env.environmentValue(LINKS)?.let { text ->
            draft.replaceLinks(LinkStrings.parse(text, LINKS).map { LinkScope.parse(it.name, LINKS) })
        }
        if (parsed(LinkParams.DISABLE_SHM, env) == true) {
            draft.links?.forEach { l -> l.rails.removeAll { it.providerName == SHM } }
            draft.dropShmFromDefault = true
        }
        if (env.environmentValue(JOB_KEY) != null) draft.jobKey = JobKeySpec(env = JOB_KEY)
        // The environment over a file's settings, as over its other values.
        val byKey = Braid.parameters().associateBy { it.key }
        for ((provider, values) in draft.links.orEmpty().flatMap { it.settings.entries }) for (name in
            values.keys.toList()) {
            val param = byKey["$provider.$name"] ?: continue
            env.environmentValue(param.env)?.let { values[name] = it }
        }
        for (limit in RAIL_LIMITS) {
            val value = parsed(limit.param, env) ?: continue
            // Over the file's values now; under the DSL's, when the draft becomes a spec.
            draft.links
                ?.flatMap { it.rails }
                ?.filter { it.providerName == limit.provider }
                ?.forEach { limit.set(it.limits, value) }
            limit.set(draft.envLimits.getOrPut(limit.provider) { Limits() }, value)
        }
    }
}
