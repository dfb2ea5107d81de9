package braid.mpi

import braid.core.Info
import braid.core.Settings

/**
 * How [Mpi.init] opens its endpoint. The provider is [provider] ([MpiParams.PROVIDER]: the `BRAID_MPI_PROVIDER`
 * environment variable, else [AUTO]); [links] selects the link's rails (`BRAID_LINKS` syntax; [MpiParams.LINK]: the
 * `BRAID_MPI_LINK` environment variable, else the link's own default `shm+tcp`); [info] replaces the provider lookup
 * altogether (a tuned `Info`, taken as it is); [shmEagerSize] sets the shm rail's eager limit (also a link's shm rail).
 * Every value is read through [settings] (by default this process's environment), which also go to the providers as the
 * hints' settings. Fluent for Java: `new MpiOptions().provider("shm")`.
 *
 * [AUTO] decides from the hosts of the job's ranks, exchanged through the bootstrap before any endpoint is opened (each
 * rank puts rail-core's `HostIdentity`, which `BRAID_HOST_ID` overrides): `shm` when every rank is on this host, the
 * `link` provider (shm to same-host ranks, the network rail to the others) when they span several. Set
 * `BRAID_MPI_PROVIDER=link` to use the link on one host too, or `BRAID_MPI_PROVIDER=tcp` to use tcp everywhere.
 */
public class MpiOptions {
    /**
     * The settings [Mpi.init] resolves [MpiParams] and the providers' parameters from: this process's environment
     * ([Settings.DEFAULT]) unless [settings] gives others; [provider] and [links] set theirs here, through the API.
     */
    public var settings: Settings = Settings.DEFAULT
        private set

    /**
     * The provider name given to `Braid.getInfo` ([MpiParams.PROVIDER]); a bad value is a
     * [braid.core.SettingsException].
     */
    public val provider: String
        get() = settings[MpiParams.PROVIDER].trim()

    /** The link string for the `link` provider ([MpiParams.LINK]); null: its default. */
    public val links: String?
        get() = settings[MpiParams.LINK].trim().ifEmpty { null }

    /** An `Info` to open instead of looking one up. */
    public var info: Info? = null
        private set

    /** The completion queue's capacity. */
    public var cqSize: Int = 16384
        private set

    /**
     * The shm rail's eager limit for this process, in bytes: larger messages wait for their receive and are pulled
     * (rendezvous). Null: `BRAID_SHM_EAGER_SIZE` if set, else [DEFAULT_SHM_EAGER_SIZE], what one cell of MPICH's shm
     * queue carries — the rail's own default (16 KiB) sends 16–64 KiB messages through a rendezvous round trip that
     * MPICH does not make.
     */
    public var shmEagerSize: Int? = null
        private set

    public fun provider(name: String): MpiOptions = apply { settings = settings.with(MpiParams.PROVIDER, name) }

    public fun links(links: String?): MpiOptions = apply { settings = settings.with(MpiParams.LINK, links ?: "") }

    /** These options reading their values from [settings] (what [settings] sets wins, [Settings.overlay]). */
    public fun settings(settings: Settings): MpiOptions = apply { this.settings = this.settings.overlay(settings) }

    public fun info(info: Info?): MpiOptions = apply { this.info = info }

    public fun cqSize(size: Int): MpiOptions = apply { cqSize = size }

    public fun shmEagerSize(bytes: Int?): MpiOptions = apply { shmEagerSize = bytes }

    public companion object {
        /** [provider]'s default: shm for a one-host job, the link for one over several hosts. */
        public const val AUTO: String = "auto"

        /** The MPI layer's default shm eager limit: 64 KiB (MPICH's CH4 shm cell is 64 KiB of data plus its header). */
        public const val DEFAULT_SHM_EAGER_SIZE: Int = 64 shl 10
    }
}
