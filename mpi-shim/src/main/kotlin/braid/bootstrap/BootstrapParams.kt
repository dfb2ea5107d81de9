package braid.bootstrap

import braid.core.ModuleParams
import braid.core.Param
import braid.core.ParamRule
import braid.core.ParamViolation

/**
 * The bootstrap's parameters, read through [braid.core.Settings] by [Bootstrap.detect] and [AddressBook.open]; `braid
 * info -e` lists them. The variables a launcher sets for its ranks (`PMI_FD`, `PMI_PORT`, `PMI_RANK`, `PMIX_NAMESPACE`,
 * `SLURM_JOB_ID`, …) are its protocol, not settings: [BootstrapSelection] reads them, in that one place, through
 * [braid.core.Settings.environmentValue], so a caller's [braid.core.Settings.ofEnvironment] map stands in for them as
 * well.
 */
public class BootstrapParams : ModuleParams {
    override fun parameters(): List<Param<*>> = ALL

    public companion object {
        /** `BRAID_BOOTSTRAP`: forces a bootstrap; empty: the one the launcher's variables call for. */
        @JvmField
        public val KIND: Param<String> =
            Param.string(
                "bootstrap",
                "kind",
                "BRAID_BOOTSTRAP",
                "",
                "forces the bootstrap: pmi1, pmi2, pmix or singleton (empty: the one the launcher's variables call for)",
                oneOf("", "pmi1", "pmi2", "pmix", "singleton"),
            )

        /**
         * `BRAID_PMI_VERSION`: the PMI wire protocol over `PMI_FD`/`PMI_PORT`; empty: 2 under Slurm (`PMI_JOBID`),
         * else 1.
         */
        @JvmField
        public val PMI_VERSION: Param<String> =
            Param.string(
                "bootstrap",
                "pmi_version",
                "BRAID_PMI_VERSION",
                "",
                "the PMI protocol spoken over PMI_FD or PMI_PORT: 1 or 2 (empty: 2 when Slurm's PMI_JOBID is set, else 1)",
                oneOf("", "1", "2"),
            )

        /**
         * `BRAID_ADDRESS_DIR`: the directory [AddressBook.open] keeps names in when no launcher started the process.
         */
        @JvmField
        public val ADDRESS_DIR: Param<String> =
            Param.string(
                "bootstrap",
                "address_dir",
                "BRAID_ADDRESS_DIR",
                "",
                "the directory AddressBook.open() keeps published names in when no launcher started the process " +
                    "(empty: a singleton job's own store)",
            )

        /** `BRAID_PMIX_LIBRARY`: the libpmix to load, tried before `pmix` and `libpmix.so.2`. */
        @JvmField
        public val PMIX_LIBRARY: Param<String> =
            Param.string(
                "bootstrap",
                "pmix_library",
                "BRAID_PMIX_LIBRARY",
                "",
                "the PMIx library (a name or a path) tried first under a PMIx launcher, before pmix and libpmix.so.2",
            )

        /** `BRAID_RUN`: set by `braid run` for its ranks (the job's name); part of that launcher's protocol. */
        @JvmField
        public val RUN: Param<String> =
            Param.string(
                "bootstrap",
                "run",
                "BRAID_RUN",
                "",
                "set by `braid run` for the ranks it starts (the job's name): PMI-1 over PMI_PORT reports itself as braid-run; " +
                    "not for users to set",
            )

        /** Every bootstrap parameter. */
        @JvmField public val ALL: List<Param<*>> = listOf(KIND, PMI_VERSION, ADDRESS_DIR, PMIX_LIBRARY, RUN)

        private fun oneOf(vararg values: String): ParamRule<String> = ParamRule { v ->
            val shown = values.filter { it.isNotEmpty() }.joinToString()
            if (v.trim() in values) null
            else ParamViolation("is not one of $shown", "set {name} to one of $shown, or unset it")
        }
    }
}
