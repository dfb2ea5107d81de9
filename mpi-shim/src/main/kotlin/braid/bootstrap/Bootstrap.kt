package braid.bootstrap

import braid.core.Settings

/**
 * How the processes of one job find each other: the key-value store and barrier of the launcher that started them
 * (PMI-1 under Hydra's `mpiexec`, PMI-2 under Slurm's `srun --mpi=pmi2`, PMIx under Open MPI's `mpirun`, `braid run` on
 * one machine), or a singleton world of one when no launcher started the process.
 *
 * The pattern is the one every MPI uses at start-up:
 * ```
 * Bootstrap.detect().use { boot ->
 *     boot.put("addr", endpoint.address)   // publish this rank's endpoint address blob
 *     boot.fence()                         // every rank's puts are visible after this
 *     val peer = boot.get(1, "addr")       // read another rank's
 * }
 * ```
 *
 * Values of any length are accepted: an implementation splits a value longer than its launcher's limit into several
 * launcher keys and joins them on [get]; nothing is truncated.
 *
 * Implementations live beside this file; [detect] picks the one the environment calls for.
 */
public interface Bootstrap : AutoCloseable {
    /** This process's rank in the job, 0 until [size] − 1. */
    public val rank: Int

    /** The number of processes in the job. */
    public val size: Int

    /** Which mechanism this is: `pmi1`, `pmi2`, `pmix`, `braid-run`, `file` or `singleton`. */
    public val kind: String

    /** The launcher's application number (MPI's `MPI_APPNUM`); 0 when it has none. */
    public val appnum: Int
        get() = 0

    /** The launcher's universe size (MPI's `MPI_UNIVERSE_SIZE`); [size] when it says nothing. */
    public val universeSize: Int
        get() = size

    /** Publishes [value] under [key] for this rank; visible to the others after the next [fence]. */
    public fun put(key: String, value: ByteArray)

    /** Commits this rank's puts and waits until every rank has done the same (a barrier). */
    public fun fence()

    /**
     * The value [rank] put under [key] before the last [fence]; throws [BootstrapException] naming the rank and key
     * when there is none.
     */
    public fun get(rank: Int, key: String): ByteArray

    /** Ends the whole job with [exitCode] through the launcher, after printing [message]. */
    public fun abort(exitCode: Int, message: String): Nothing

    /** Leaves the job's key-value store (PMI finalize); the process may go on without it. */
    override fun close()

    public companion object {
        /**
         * The bootstrap the environment calls for, connected and initialised:
         * - `BRAID_BOOTSTRAP=pmi1|pmi2|pmix|singleton` ([BootstrapParams.KIND]) forces one;
         * - `PMIX_NAMESPACE` and `PMIX_RANK` (Open MPI's `mpirun`, `srun --mpi=pmix`): PMIx through `libpmix.so.2`;
         * - `PMI_FD` (Hydra's default, Slurm's pmi2 plugin) or `PMI_PORT` (Hydra's `-pmi-port`, `braid run`): PMI-2
         *   when `PMI_JOBID` is set (Slurm) or `BRAID_PMI_VERSION=2`, else PMI-1; `braid run` (which sets `BRAID_RUN`)
         *   reports itself as `braid-run`;
         * - otherwise a singleton world of one.
         *
         * Throws [BootstrapException] when the launcher's variables are there but it cannot be reached.
         */
        @JvmStatic public fun detect(): Bootstrap = detect(Settings.DEFAULT)

        /** [detect] over the variables [env] rather than this process's environment. */
        @JvmStatic public fun detect(env: Map<String, String>): Bootstrap = detect(Settings.ofEnvironment(env))

        /**
         * [detect] under [settings]: [BootstrapParams] set through the API win over the environment, and
         * [Settings.ofEnvironment] stands in for the launcher's variables too.
         */
        @JvmStatic public fun detect(settings: Settings): Bootstrap = BootstrapSelection(settings).open()

        /**
         * The [kind] [detect] would open (`pmi1`, `pmi2`, `pmix`, `braid-run` or `singleton`), read from the
         * environment without connecting: for a program that lets another layer (`MPI.Init`) open the bootstrap itself.
         */
        @JvmStatic
        @JvmOverloads
        public fun detectedKind(settings: Settings = Settings.DEFAULT): String = BootstrapSelection(settings).kind()
    }
}

/** A bootstrap that failed: the launcher's answer, a missing key, a lost connection. */
public class BootstrapException @JvmOverloads public constructor(message: String, cause: Throwable? = null) :
    RuntimeException(message, cause)
