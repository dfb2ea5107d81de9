package braid.provider.ofi

import braid.core.FabricException
import com.sun.jna.Memory

/**
 * `fi_getinfo` for the native rail: hints allocated by libfabric (`fi_dupinfo(NULL)`, the header's `fi_allocinfo`),
 * filled through [OfiInfoDescriptor], the list read into [OfiInfoDescriptor.Entry] values and freed, or one entry
 * duplicated for opening.
 */
internal object OfiGetInfo {
    /** The capabilities Braid asks every native provider for: what its rail builds on. */
    const val BASE_CAPS: Long = (1L shl 1) or (1L shl 3) or (1L shl 10) or (1L shl 11) or (1L shl 57)

    /** Native RMA: FI_RMA, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE (Braid's [braid.core.Caps] values). */
    const val RMA_CAPS: Long = (1L shl 2) or (1L shl 8) or (1L shl 9) or (1L shl 12) or (1L shl 13)

    /** Native atomics: FI_ATOMIC. */
    const val ATOMIC_CAPS: Long = 1L shl 4

    /**
     * The native entries for [provName] (null: all) and [domainName] (null: all), in libfabric's order; an empty list
     * when none match (`-FI_ENODATA`). Other failures throw, naming the call and libfabric's text.
     */
    fun query(provName: String?, domainName: String?, caps: Long = BASE_CAPS): List<OfiInfoDescriptor.Entry> {
        val out = ArrayList<OfiInfoDescriptor.Entry>()
        withList(provName, domainName, caps) { head ->
            OfiInfoDescriptor.forEach(head) { out += OfiInfoDescriptor.read(it) }
        }
        return out
    }

    /**
     * A private copy (`fi_dupinfo`) of the first native entry for [provName] on [domainName] whose fabric is
     * [fabricName]; the caller frees it with `fi_freeinfo`. Throws ENODATA naming what is missing.
     */
    fun dup(provName: String, domainName: String, fabricName: String, caps: Long = BASE_CAPS): Long {
        var found = 0L
        withList(provName, domainName, caps) { head ->
            OfiInfoDescriptor.forEach(head) { p ->
                if (found == 0L) {
                    val e = OfiInfoDescriptor.read(p)
                    if (e.provName == provName && e.fabricName == fabricName) found = OfiLibrary.Fi.fi_dupinfo(p)
                }
            }
        }
        if (found == 0L)
            throw FabricException.noData(
                "ofi:$provName: native provider '$provName' has no domain '$domainName' on fabric '$fabricName' now " +
                    "(fi_info -p '$provName' lists what it has)"
            )
        return found
    }

    private fun withList(provName: String?, domainName: String?, caps: Long, body: (Long) -> Unit) {
        OfiLibrary.require()
        val hints = OfiLibrary.Fi.fi_dupinfo(0)
        if (hints == 0L)
            throw FabricException(braid.core.Errno.ENOMEM, "ofi: fi_dupinfo(NULL) could not allocate hints")
        val out = Memory(8)
        out.setLong(0, 0)
        try {
            OfiInfoDescriptor.forApi(OfiLibrary.API_VERSION).fillHints(hints, caps, provName, domainName)
            val rc = OfiLibrary.Fi.fi_getinfo(OfiLibrary.API_VERSION, null, null, 0, hints, Pointer.of(out))
            if (rc == -OfiOps.FI_ENODATA) return
            if (rc != 0)
                throw FabricException(
                    -rc,
                    "ofi: fi_getinfo(${provName ?: "any provider"}) failed: ${OfiLibrary.strerror(rc)} ($rc)",
                )
            val head = out.getLong(0)
            try {
                body(head)
            } finally {
                OfiLibrary.Fi.fi_freeinfo(head)
            }
        } finally {
            OfiLibrary.Fi.fi_freeinfo(hints)
        }
    }

    /** The native address of JNA memory, as the direct-mapped calls take it. */
    internal object Pointer {
        fun of(m: Memory): Long = com.sun.jna.Pointer.nativeValue(m)
    }
}
