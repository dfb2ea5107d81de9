package braid.provider.ofi

import braid.core.FabricException
import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * One native fabric and domain (`fi_fabric`, then `fi_domain` through the fabric's ops table), opened from a private
 * copy of their fi_info, which the endpoints of the domain open from too. Closed in reverse order.
 */
internal class OfiNativeDomain
private constructor(
    val provName: String,
    /** The private fi_info (freed on [close]). */
    val info: Long,
    val fabric: Long,
    val domain: Long,
) : AutoCloseable {
    private var closed = false

    /** The native info's capabilities: what the domain and its endpoints were opened for. */
    val caps: Long = OfiOps.getLong(info + OfiInfoDescriptor.CAPS)

    private val domainAttr = OfiOps.getLong(info + OfiInfoDescriptor.DOMAIN_ATTR)

    /** The provider's memory-registration modes (`domain_attr->mr_mode`). */
    val mrMode: Int = OfiOps.getInt(domainAttr + OfiInfoDescriptor.DOM_MR_MODE)

    /** Bytes of a native memory key (`domain_attr->mr_key_size`). */
    val mrKeySize: Long = OfiOps.getLong(domainAttr + OfiInfoDescriptor.DOM_MR_KEY_SIZE)

    override fun close() {
        if (closed) return
        closed = true
        OfiOps.close(domain)
        OfiOps.close(fabric)
        OfiLibrary.Fi.fi_freeinfo(info)
    }

    companion object {
        /** Opens the native domain of [provName] on [domainName] of [fabricName], asked for [caps] (native bits). */
        fun open(
            provName: String,
            domainName: String,
            fabricName: String,
            caps: Long = OfiGetInfo.BASE_CAPS,
        ): OfiNativeDomain = OfiSignals.keep { openGuarded(provName, domainName, fabricName, caps) }

        private fun openGuarded(provName: String, domainName: String, fabricName: String, caps: Long): OfiNativeDomain {
            val info = OfiGetInfo.dup(provName, domainName, fabricName, caps)
            val out = Memory(8)
            var fabric = 0L
            try {
                out.setLong(0, 0)
                val fabAttr = OfiOps.getLong(info + OfiInfoDescriptor.FABRIC_ATTR)
                check(provName, "fi_fabric", OfiLibrary.Fi.fi_fabric(fabAttr, Pointer.nativeValue(out), 0))
                fabric = out.getLong(0)
                val fiDomain =
                    OfiOps.function(fabric, OfiOps.FABRIC_OPS, OfiOps.FABRIC_DOMAIN)
                        ?: throw FabricException.unsupported("ofi:$provName: the native fabric has no fi_domain")
                out.setLong(0, 0)
                check(provName, "fi_domain", fiDomain.invokeInt(arrayOf(fabric, info, Pointer.nativeValue(out), 0L)))
                return OfiNativeDomain(provName, info, fabric, out.getLong(0))
            } catch (t: Throwable) {
                OfiOps.close(fabric)
                OfiLibrary.Fi.fi_freeinfo(info)
                throw t
            }
        }

        /** Throws a [FabricException] naming the native provider, the call and libfabric's text unless [rc] is 0. */
        fun check(provName: String, call: String, rc: Int) {
            if (rc == 0) return
            throw FabricException(
                if (rc < 0) -rc else rc,
                "ofi:$provName: $call failed: ${OfiLibrary.strerror(rc)} ($rc)",
            )
        }
    }
}
