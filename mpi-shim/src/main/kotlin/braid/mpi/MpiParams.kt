package braid.mpi

import braid.core.Braid
import braid.core.ModuleParams
import braid.core.Param
import braid.core.ParamRule
import braid.core.ParamViolation

/**
 * `braid.mpi`'s parameters, read through [braid.core.Settings] ([MpiOptions.settings]); `braid info -e` lists them.
 * [MpiOptions.provider] and [MpiOptions.links] set [PROVIDER] and [LINK] through the API, over the environment.
 */
public class MpiParams : ModuleParams {
    override fun parameters(): List<Param<*>> = ALL

    public companion object {
        private val NOT_NEGATIVE =
            ParamRule<Int> { v -> if (v < 0) ParamViolation("is negative", "set {name} ≥ 0") else null }

        /** `BRAID_MPI_PROVIDER`: the provider [Mpi.init] opens; [MpiOptions.AUTO] chooses by the job's hosts. */
        @JvmField
        public val PROVIDER: Param<String> =
            Param.string(
                "mpi",
                "provider",
                "BRAID_MPI_PROVIDER",
                MpiOptions.AUTO,
                "the provider MPI_Init opens: auto (shm when every rank is on this host, else the link) " +
                    "or a provider `braid info -l` lists",
                ParamRule { v ->
                    val known = Braid.providerNames()
                    if (v == MpiOptions.AUTO || v in known) {
                        null
                    } else {
                        ParamViolation(
                            "is not auto nor a provider",
                            "set {name} to auto or one of ${known.joinToString()}",
                        )
                    }
                },
            )

        /**
         * `BRAID_MPI_LINK`: the link's rails (`BRAID_LINKS` syntax) when MPI opens the link; empty: the link's own
         * default.
         */
        @JvmField
        public val LINK: Param<String> =
            Param.string(
                "mpi",
                "link",
                "BRAID_MPI_LINK",
                "",
                "the link's rails when MPI opens the link provider, in BRAID_LINKS syntax (empty: link.links, the link's default)",
            )

        /** `BRAID_MPI_SPIN_POLLS`: empty polls a blocking MPI call spins through before it yields. */
        @JvmField
        public val SPIN_POLLS: Param<Int> =
            Param.int(
                "mpi",
                "spin_polls",
                "BRAID_MPI_SPIN_POLLS",
                20_000,
                "polls",
                "empty progress polls a blocking MPI call spins through before it yields the core",
                NOT_NEGATIVE,
            )

        /** `BRAID_MPI_YIELD_POLLS`: empty polls a blocking MPI call yields through, after spinning, before it parks. */
        @JvmField
        public val YIELD_POLLS: Param<Int> =
            Param.int(
                "mpi",
                "yield_polls",
                "BRAID_MPI_YIELD_POLLS",
                2_000,
                "polls",
                "empty progress polls a blocking MPI call yields through, after spinning, before it parks",
                NOT_NEGATIVE,
            )

        /** `BRAID_MPI_NAME_DIR`: where `MPI_Publish_name` and `MPI_Lookup_name` keep names. */
        @JvmField
        public val NAME_DIR: Param<String> =
            Param.string(
                "mpi",
                "name_dir",
                "BRAID_MPI_NAME_DIR",
                "",
                "the directory MPI_Publish_name and MPI_Lookup_name share (empty: braid-mpi-names-<user> in java.io.tmpdir)",
            )

        /**
         * `BRAID_MPI_PARENT_PORT`: set by [Intracomm.spawn] for the processes it starts, the port their `MPI_Init`
         * connects to ([Mpi.parent]); empty in a process nothing spawned.
         */
        @JvmField
        public val PARENT_PORT: Param<String> =
            Param.string(
                "mpi",
                "parent_port",
                "BRAID_MPI_PARENT_PORT",
                "",
                "set by MPI_Comm_spawn for the processes it starts: the port MPI_Init connects to as the parent's intercommunicator (leave unset)",
            )

        /**
         * `BRAID_MPI_WIN_DIRECT`: whether a window reaches the memory and lock words of processes on this host directly
         * (copies and the CPU's atomics on the segment they share) rather than through the rail.
         */
        @JvmField
        public val WIN_DIRECT: Param<Boolean> =
            Param.bool(
                "mpi",
                "win_direct",
                "BRAID_MPI_WIN_DIRECT",
                true,
                "whether one-sided operations to a process on this host are done on the shared mapping of its window " +
                    "(copies, CPU atomics; no progress needed at the target) rather than through the rail",
            )

        /**
         * `BRAID_MPI_WIN_ACC_LOCK`: whether a window whose processes all map each other takes the target's accumulate
         * lock once per accumulate and combines with a plain loop, rather than one CPU compare-and-swap per element.
         * Every process of the window must ask for it (creation agrees on it); it wins from a few hundred bytes up (17×
         * at 1 MiB on the machine measured) and costs about a microsecond on 8 B operations.
         */
        @JvmField
        public val WIN_ACC_LOCK: Param<Boolean> =
            Param.bool(
                "mpi",
                "win_acc_lock",
                "BRAID_MPI_WIN_ACC_LOCK",
                false,
                "whether accumulates on a window whose processes all share one host take the target's lock once and " +
                    "combine with a plain loop (fast for large accumulates, slower for 8-byte ones) instead of one " +
                    "compare-and-swap per element; every process of the window must set it",
            )

        /**
         * `BRAID_MPI_COLL_OFFLOAD`: whether communicators' collectives go through the intra-node shared-memory offload
         * (`ShmOffload.DEFAULT`) where their ranks share a host.
         */
        @JvmField
        public val COLL_OFFLOAD: Param<Boolean> =
            Param.bool(
                "mpi",
                "coll_offload",
                "BRAID_MPI_COLL_OFFLOAD",
                true,
                "whether communicators' collectives go through the intra-node shared-memory offload where ranks " +
                    "share a host (false: point-to-point schedules only)",
            )

        /** Every `braid.mpi` parameter. */
        @JvmField
        public val ALL: List<Param<*>> =
            listOf(
                PROVIDER,
                LINK,
                SPIN_POLLS,
                YIELD_POLLS,
                NAME_DIR,
                PARENT_PORT,
                WIN_DIRECT,
                WIN_ACC_LOCK,
                COLL_OFFLOAD,
            )
    }
}
