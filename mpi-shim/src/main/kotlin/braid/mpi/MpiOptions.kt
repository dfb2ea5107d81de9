package braid.mpi

import braid.core.Info

/**
 * How [Mpi.init] opens its endpoint. The provider is [provider] (default: the
 * `BRAID_MPI_PROVIDER` environment variable, else `link`, which reaches same-host ranks over shm
 * and the others over tcp); [links] selects the link's rails (`BRAID_LINKS` syntax); [info]
 * replaces the provider lookup altogether (a tuned `Info`). Fluent for Java:
 * `new MpiOptions().provider("shm")`.
 */
public class MpiOptions {
    /** The provider name given to `Braid.getInfo`. */
    public var provider: String = System.getenv("BRAID_MPI_PROVIDER") ?: "link"
        private set
    /** The link string for the `link` provider; null: its default. */
    public var links: String? = null
        private set
    /** An `Info` to open instead of looking one up. */
    public var info: Info? = null
        private set
    /** The completion queue's capacity. */
    public var cqSize: Int = 16384
        private set

    public fun provider(name: String): MpiOptions = apply { provider = name }
    public fun links(links: String?): MpiOptions = apply { this.links = links }
    public fun info(info: Info?): MpiOptions = apply { this.info = info }
    public fun cqSize(size: Int): MpiOptions = apply { cqSize = size }
}
