package braid.dsl

/**
 * The environment's layer of a topology, between the file and the DSL (see [topology]). The
 * variables are the ones the rails and the link read themselves, so a topology means the same
 * whether a process gets a setting from the environment or from its spec:
 *
 * | variable | effect on the spec |
 * |---|---|
 * | `BRAID_LINKS` | replaces the links (`shm+tcp\|tcp`); a link already present by the same name keeps its settings |
 * | `BRAID_LINK_DISABLE_SHM=1` | removes the shm rail from every link |
 * | `BRAID_JOB_KEY` | the job key is read from `BRAID_JOB_KEY` |
 * | `BRAID_SHM_EAGER_SIZE`, `BRAID_SHM_RING_SIZE` | eagerSize and ringCapacity of every shm rail |
 * | `BRAID_TCP_EAGER_SIZE`, `BRAID_TCP_BUFFER_SIZE` | eagerSize and ringCapacity of every tcp rail |
 *
 * A malformed value is a [SpecException] at the variable's name.
 */
public object EnvironmentLayer {
    public const val LINKS: String = "BRAID_LINKS"
    public const val DISABLE_SHM: String = "BRAID_LINK_DISABLE_SHM"
    public const val JOB_KEY: String = "BRAID_JOB_KEY"

    private class RailLimit(val variable: String, val provider: String, val set: (Limits, Int) -> Unit)

    private val RAIL_LIMITS = listOf(
        RailLimit("BRAID_SHM_EAGER_SIZE", SHM) { l, v -> l.eagerSize = v },
        RailLimit("BRAID_SHM_RING_SIZE", SHM) { l, v -> l.ringCapacity = v },
        RailLimit("BRAID_TCP_EAGER_SIZE", TCP) { l, v -> l.eagerSize = v },
        RailLimit("BRAID_TCP_BUFFER_SIZE", TCP) { l, v -> l.ringCapacity = v },
    )

    /** The variables this layer reads. */
    @JvmStatic
    public fun variables(): List<String> = listOf(LINKS, DISABLE_SHM, JOB_KEY) + RAIL_LIMITS.map { it.variable }

    internal fun apply(draft: Draft, env: Map<String, String>) {
        env[LINKS]?.takeIf { it.isNotBlank() }?.let { text ->
            draft.replaceLinks(LinkStrings.parse(text, LINKS).map { LinkScope.parse(it.name, LINKS) })
        }
        if (env[DISABLE_SHM]?.trim() == "1") {
            draft.links?.forEach { l -> l.rails.removeAll { it.providerName == SHM } }
            draft.dropShmFromDefault = true
        }
        if (env[JOB_KEY] != null) draft.jobKey = JobKeySpec(env = JOB_KEY)
        for (limit in RAIL_LIMITS) {
            val raw = env[limit.variable] ?: continue
            val value = raw.trim().toIntOrNull()
                ?: throw SpecException(listOf(SpecProblem(limit.variable, "environment ${limit.variable}='$raw' is not an integer", "set it to a number of bytes, or unset it")))
            // Over the file's values now; under the DSL's, when the draft becomes a spec.
            draft.links?.flatMap { it.rails }?.filter { it.providerName == limit.provider }?.forEach { limit.set(it.limits, value) }
            limit.set(draft.envLimits.getOrPut(limit.provider) { Limits() }, value)
        }
    }
}
