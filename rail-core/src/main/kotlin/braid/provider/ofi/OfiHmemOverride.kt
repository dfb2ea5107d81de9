package braid.provider.ofi

import braid.core.Errno
import braid.core.HmemCopyFunction
import braid.core.HmemIface
import braid.core.HmemOverrides
import com.sun.jna.Callback
import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * A native domain's side of `Domain.setOp`: libfabric's `FI_SET_OPS_HMEM_OVERRIDE` (`fi_set_ops(&domain->fid,
 * "hmem_override_ops", 0, &ops, NULL)`) takes both copies at once, per domain. [set] hands the provider a `struct
 * fi_hmem_override_ops` whose two functions call the domain's overrides ([ops]), read at each copy, and answers what
 * the provider said: 0 where it took them (cxi), the native `-FI_ENOSYS` elsewhere (every provider of Debian's 1.17).
 * The table and its callbacks live as long as this object, which the domain keeps.
 */
internal class OfiHmemOverride(private val domainFid: Long, private val ops: HmemOverrides) {
    /** `ssize_t (*copy_from_hmem_iov)(void *dest, size_t size, iface, uint64_t device, iov, count, offset)`. */
    fun interface CopyFrom : Callback {
        fun invoke(dest: Long, size: Long, iface: Int, device: Long, iov: Long, count: Long, offset: Long): Long
    }

    /** `ssize_t (*copy_to_hmem_iov)(iface, uint64_t device, iov, count, offset, const void *src, size_t size)`. */
    fun interface CopyTo : Callback {
        fun invoke(iface: Int, device: Long, iov: Long, count: Long, offset: Long, src: Long, size: Long): Long
    }

    private val from = CopyFrom { dest, size, iface, device, iov, count, offset ->
        copy(ops.fromHmem(), iface, device, iov, count, offset, dest, size)
    }
    private val to = CopyTo { iface, device, iov, count, offset, src, size ->
        copy(ops.toHmem(), iface, device, iov, count, offset, src, size)
    }

    private val table =
        Memory(24).also {
            it.setLong(0, 24)
            it.setPointer(8, com.sun.jna.CallbackReference.getFunctionPointer(from))
            it.setPointer(16, com.sun.jna.CallbackReference.getFunctionPointer(to))
        }

    /** Whether the provider took the table: null until [set] was first asked. */
    private var answer: Int? = null

    /** Offers the table to the native domain once; its answer (0 or a negated errno) stands for every later call. */
    fun set(): Int =
        answer
            ?: OfiOps.setOps(domainFid, HMEM_OVERRIDE_OPS, 0, Pointer.nativeValue(table), 0).let { rc ->
                (if (rc == 0) 0 else if (rc == -OfiOps.FI_ENOSYS) -Errno.ENOSYS else rc).also { answer = it }
            }

    private fun copy(
        fn: HmemCopyFunction?,
        iface: Int,
        device: Long,
        iov: Long,
        count: Long,
        offset: Long,
        host: Long,
        size: Long,
    ): Long {
        val f = fn ?: return -OfiOps.FI_ENOSYS.toLong()
        val n = count.toInt()
        val pieces = LongArray(2 * n) { OfiOps.getLong(iov + 8L * it) } // struct iovec { base; len } is two longs
        return try {
            f.copy(HmemIface.byId(iface) ?: return -Errno.EINVAL.toLong(), device, pieces, n, offset, host, size)
        } catch (t: Throwable) {
            -Errno.EIO.toLong()
        }
    }

    companion object {
        /** `FI_SET_OPS_HMEM_OVERRIDE` (`rdma/fi_domain.h`). */
        const val HMEM_OVERRIDE_OPS = "hmem_override_ops"
    }
}
