package braid.provider

import braid.provider.link.LinkProvider
import braid.provider.ofi.OfiProvider
import braid.provider.shm.ShmProvider
import braid.provider.tcp.TcpProvider

/**
 * The registry of the providers this build carries, most desirable first: core ([braid.core.Braid]) reads it and names
 * no provider itself. A new rail (the native libfabric rail, say) is one entry here, or is registered at run time with
 * `Braid.register`; nothing in `braid.core` changes. A provider that serves as a link's rail is found by name through
 * the same registry, so no provider imports another's package.
 */
internal object Providers {
    fun builtIn(): List<Provider> = listOf(ShmProvider, TcpProvider, LinkProvider, OfiProvider)
}
