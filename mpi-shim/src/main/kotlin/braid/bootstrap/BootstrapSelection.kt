package braid.bootstrap

import braid.core.Settings
import braid.core.SettingsException

/**
 * How [Bootstrap.detect] reads the environment; one place that knows every launcher's variables. Braid's own
 * ([BootstrapParams]) resolve through [settings]; the launcher's protocol variables (`PMI_*`, `PMIX_*`, `SLURM_JOB_ID`)
 * through [Settings.environmentValue], so that a map given to [Settings.ofEnvironment] stands in for the process
 * environment as a whole.
 */
internal class BootstrapSelection(private val settings: Settings) {
    private fun env(name: String): String? = settings.environmentValue(name)

    /**
     * [param] through [settings]; a bad value is a [BootstrapException] naming the variable, the value and the rule.
     */
    private fun value(param: braid.core.Param<String>): String =
        try {
            settings[param].trim()
        } catch (e: SettingsException) {
            throw BootstrapException(e.message ?: param.env, e)
        }

    /**
     * The bootstrap kind the environment calls for, without connecting: `pmi1`, `pmi2`, `pmix`, `braid-run` or
     * `singleton`.
     */
    fun kind(): String {
        value(BootstrapParams.KIND)
            .takeIf { it.isNotEmpty() }
            ?.let {
                return it
            }
        if (env("PMIX_NAMESPACE") != null && env("PMIX_RANK") != null) return "pmix"
        if (env("PMI_FD") != null || env("PMI_PORT") != null) {
            return when (value(BootstrapParams.PMI_VERSION).ifEmpty { if (env("PMI_JOBID") != null) "2" else "1" }) {
                "2" -> "pmi2"
                else -> if (value(BootstrapParams.RUN).isNotEmpty()) "braid-run" else "pmi1"
            }
        }
        return "singleton"
    }

    fun open(): Bootstrap =
        when (val kind = kind()) {
            "singleton" -> SingletonBootstrap()
            "pmix" -> PmixBootstrap(value(BootstrapParams.PMIX_LIBRARY).ifEmpty { null })
            "pmi1",
            "braid-run" -> {
                val stream = stream()
                if (env("PMI_FD") != null) {
                    Pmi1Bootstrap(stream, int("PMI_RANK"), int("PMI_SIZE"), null, kind)
                } else {
                    Pmi1Bootstrap(stream, null, null, int("PMI_ID"), kind)
                }
            }
            "pmi2" -> {
                val rank = env("PMI_RANK")?.let { int("PMI_RANK") } ?: int("PMI_ID")
                // Slurm's pmi2 plugin sets PMI_JOBID and ends the step on an abort frame; Hydra sets neither.
                val slurm = env("PMI_JOBID") != null || env("SLURM_JOB_ID") != null
                Pmi2Bootstrap(stream(), rank, env("PMI_JOBID"), abortFrame = slurm)
            }
            else -> throw BootstrapException("unknown bootstrap kind '$kind'")
        }

    private fun stream(): PmiStream {
        env("PMI_FD")?.let {
            return FdPmiStream(int("PMI_FD"))
        }
        val port =
            env("PMI_PORT")
                ?: throw BootstrapException("neither PMI_FD nor PMI_PORT is set: no PMI launcher to talk to")
        return SocketPmiStream(port)
    }

    private fun int(name: String): Int {
        val text = env(name) ?: throw BootstrapException("$name is not set, but the launcher's other variables are")
        return text.toIntOrNull() ?: throw BootstrapException("$name='$text' is not a number")
    }
}
