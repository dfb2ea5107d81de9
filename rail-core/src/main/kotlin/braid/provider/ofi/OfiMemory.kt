package braid.provider.ofi

import braid.core.Errno
import braid.core.FabricException
import braid.provider.ProviderRegion
import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * Native memory registration (`fi_mr_reg` through the domain's `fi_ops_mr` table) for one native domain, as its
 * provider's `mr_mode` asks:
 * - FI_MR_PROV_KEY: the provider makes the key (`fi_mr_key`, the `key` word of `struct fid_mr`); a key the caller asked
 *   for is refused, naming the mode. Otherwise Braid's key is the native requested key, and it must fit `mr_key_size`.
 * - FI_MR_VIRT_ADDR: peers address the memory by its virtual address, not an offset into it. Braid's RMA addresses by
 *   offset, so a native rail whose provider needs it does not claim RMA ([OfiProvider]); registrations still work.
 * - FI_MR_ALLOCATED: only allocated memory may be registered, which Braid's regions always are (direct buffers).
 *
 * ```
 *  struct fid_mr (40 bytes)            struct fi_ops_mr
 *  0      24          32     40        0      8     16     24
 *  +------+-----------+------+         +------+-----+------+---------+
 *  | fid  | mem_desc  | key  |         | size | reg | regv | regattr |
 *  +------+-----------+------+         +------+-----+------+---------+
 * ```
 *
 * Every call is made under the domain lock.
 */
internal class OfiMemory(private val native: OfiNativeDomain) {
    private val prov = native.provName
    private val out = Memory(8)
    private val outAt = Pointer.nativeValue(out)
    private val mrMode = native.mrMode
    private val keyBits = (native.mrKeySize * 8).toInt()

    /**
     * The next key for a local registration (the cache's): from the top half of the provider's key space, where Braid's
     * own keys (counted up from 1) do not reach, since a provider that takes requested keys refuses a key twice.
     */
    private var nextLocal = if (keyBits in 2..63) 1L shl (keyBits - 1) else 1L shl 62

    /** A registration for local use only (descriptors of send, receive and RMA buffers), under a key of its own. */
    fun registerLocal(address: Long, len: Long, access: Int): OfiRegion =
        register(address, len, access, nextLocal++, false)

    /** Native registrations made so far (what the registration cache saves shows here). */
    var registrations: Long = 0
        private set

    /**
     * Registers [len] bytes at [address] for libfabric [access] (`FI_READ`…`FI_REMOTE_WRITE`, `FI_SEND`, `FI_RECV`,
     * Braid's [braid.core.MrAccess] values), under [key] unless the provider makes its own ([requested]: the caller
     * asked for that key). Throws naming the provider, the range and libfabric's text.
     */
    fun register(address: Long, len: Long, access: Int, key: Long, requested: Boolean): OfiRegion {
        val provKey = mrMode and OfiInfoDescriptor.FI_MR_PROV_KEY != 0
        if (provKey && requested)
            throw FabricException(
                Errno.ENOKEY,
                "ofi:$prov: the native provider makes its own memory keys (FI_MR_PROV_KEY), so key $key cannot be " +
                    "requested; pass 0 and give peers the region's key",
            )
        if (!provKey && keyBits in 1..63 && key ushr keyBits != 0L)
            throw FabricException(
                Errno.ENOKEY,
                "ofi:$prov: memory key $key does not fit the native provider's $keyBits-bit keys (mr_key_size " +
                    "${native.mrKeySize}); request a smaller key",
            )
        val reg =
            OfiOps.function(native.domain, OfiOps.DOMAIN_MR, OfiOps.MR_REG)
                ?: throw FabricException.unsupported("ofi:$prov: the native domain has no fi_mr_reg")
        OfiOps.putLong(outAt, 0)
        val rc =
            reg.invokeInt(
                arrayOf<Any>(native.domain, address, len, access.toLong(), 0L, if (provKey) 0L else key, 0L, outAt, 0L)
            )
        if (rc != 0)
            throw FabricException(
                if (rc < 0) -rc else rc,
                "ofi:$prov: fi_mr_reg of $len bytes at 0x${address.toString(16)} (access 0x${access.toString(16)}" +
                    ", key $key) failed: ${OfiLibrary.strerror(rc)} ($rc)",
            )
        registrations++
        val mr = OfiOps.getLong(outAt)
        return OfiRegion(mr, OfiOps.getLong(mr + OfiOps.MR_KEY), OfiOps.getLong(mr + OfiOps.MR_DESC))
    }
}

/** One native registration (`struct fid_mr`): its key, its local descriptor, closed once. */
internal class OfiRegion(private var mr: Long, override val key: Long, override val descriptor: Long) : ProviderRegion {
    val open: Boolean
        get() = mr != 0L

    override fun close() {
        val m = mr
        if (m == 0L) return
        mr = 0
        OfiOps.close(m)
    }
}
