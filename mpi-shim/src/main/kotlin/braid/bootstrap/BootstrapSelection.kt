package braid.bootstrap

/** How [Bootstrap.detect] reads the environment; one place that knows every launcher's variables. */
internal object BootstrapSelection {
    /** The bootstrap kind [env] calls for, without connecting: `pmi1`, `pmi2`, `pmix`, `braid-run` or `singleton`. */
    fun kindOf(env: Map<String, String>): String {
        env["BRAID_BOOTSTRAP"]?.takeIf { it.isNotEmpty() }?.let { forced ->
            if (forced !in FORCED) throw BootstrapException("BRAID_BOOTSTRAP='$forced': give one of ${FORCED.joinToString()}")
            return forced
        }
        if (env["PMIX_NAMESPACE"] != null && env["PMIX_RANK"] != null) return "pmix"
        if (env["PMI_FD"] != null || env["PMI_PORT"] != null) {
            return when (env["BRAID_PMI_VERSION"] ?: if (env["PMI_JOBID"] != null) "2" else "1") {
                "1" -> if (env["BRAID_RUN"] != null) "braid-run" else "pmi1"
                "2" -> "pmi2"
                else -> throw BootstrapException("BRAID_PMI_VERSION='${env["BRAID_PMI_VERSION"]}': give 1 or 2")
            }
        }
        return "singleton"
    }

    fun open(env: Map<String, String>): Bootstrap = when (val kind = kindOf(env)) {
        "singleton" -> SingletonBootstrap()
        "pmix" -> PmixBootstrap()
        "pmi1", "braid-run" -> {
            val stream = stream(env)
            if (env["PMI_FD"] != null) {
                Pmi1Bootstrap(stream, int(env, "PMI_RANK"), int(env, "PMI_SIZE"), null, kind)
            } else {
                Pmi1Bootstrap(stream, null, null, int(env, "PMI_ID"), kind)
            }
        }
        "pmi2" -> {
            val rank = env["PMI_RANK"]?.let { int(env, "PMI_RANK") } ?: int(env, "PMI_ID")
            // Slurm's pmi2 plugin sets PMI_JOBID and ends the step on an abort frame; Hydra sets neither.
            val slurm = env["PMI_JOBID"] != null || env["SLURM_JOB_ID"] != null
            Pmi2Bootstrap(stream(env), rank, env["PMI_JOBID"], abortFrame = slurm)
        }
        else -> throw BootstrapException("unknown bootstrap kind '$kind'")
    }

    private fun stream(env: Map<String, String>): PmiStream {
        env["PMI_FD"]?.let { return FdPmiStream(int(env, "PMI_FD")) }
        val port = env["PMI_PORT"] ?: throw BootstrapException("neither PMI_FD nor PMI_PORT is set: no PMI launcher to talk to")
        return SocketPmiStream(port)
    }

    private fun int(env: Map<String, String>, name: String): Int {
        val text = env[name] ?: throw BootstrapException("$name is not set, but the launcher's other variables are")
        return text.toIntOrNull() ?: throw BootstrapException("$name='$text' is not a number")
    }

    private val FORCED = listOf("pmi1", "pmi2", "pmix", "singleton")
}
