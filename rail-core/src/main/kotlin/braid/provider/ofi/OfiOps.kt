package braid.provider.ofi

import com.sun.jna.Function
import com.sun.jna.Pointer
import org.agrona.UnsafeAccess

/**
 * The ops tables of libfabric's objects, read the way the headers' `static inline` functions read them (libfabric 1.17,
 * LP64; the API version is [OfiLibrary.API_VERSION]). Every object starts with a `struct fid`, whose third word points
 * at its `struct fi_ops`; the object's class-specific tables follow the fid. Every table starts with its own `size_t
 * size`, and an optional operation is called only when the table is long enough to hold it and its slot is set
 * (`FI_CHECK_OP`): [op] returns 0 otherwise, and the caller answers `-FI_ENOSYS` as the header does.
 *
 * ```
 *  struct fid                          struct fid_ep (fid_domain, fid_cq, ... follow the same pattern)
 *  0        8          16      24      24     32     40     48     56        64        72
 *  +--------+----------+-------+       +------+------+------+------+---------+---------+------------+
 *  | fclass | context  | ops --+-->fi_ops| ops  | cm   | msg  | rma  | tagged  | atomic  | collective |
 *  +--------+----------+-------+       +------+------+------+------+---------+---------+------------+
 * ```
 */
internal object OfiOps {
    // ## Where each class keeps its tables (offsets in the object) ##
    const val FID_OPS = 16
    const val FABRIC_OPS = 24
    const val DOMAIN_OPS = 24
    const val DOMAIN_MR = 32
    const val EP_OPS = 24
    const val EP_CM = 32
    const val EP_MSG = 40
    const val EP_RMA = 48
    const val EP_TAGGED = 56
    const val EP_ATOMIC = 64
    const val CQ_OPS = 24
    const val AV_OPS = 24
    const val CNTR_OPS = 24
    const val MR_DESC = 24
    const val MR_KEY = 32

    // ## struct fi_ops ##
    const val FI_CLOSE = 8
    const val FI_BIND = 16
    const val FI_CONTROL = 24
    const val FI_OPS_SET = 48

    // ## struct fi_ops_fabric ##
    const val FABRIC_DOMAIN = 8

    // ## struct fi_ops_domain ##
    const val DOMAIN_AV_OPEN = 8
    const val DOMAIN_CQ_OPEN = 16
    const val DOMAIN_ENDPOINT = 24
    const val DOMAIN_CNTR_OPEN = 40
    const val DOMAIN_QUERY_ATOMIC = 72

    // ## struct fi_ops_mr ##
    const val MR_REG = 8

    // ## struct fi_ops_cm ##
    const val CM_GETNAME = 16

    // ## struct fi_ops_msg and fi_ops_tagged (same shape) ##
    const val XFER_RECV = 8
    const val XFER_SEND = 32
    const val XFER_SENDMSG = 48
    const val XFER_INJECT = 56
    const val XFER_SENDDATA = 64
    const val XFER_INJECTDATA = 72

    // ## struct fi_ops_rma ##
    const val RMA_READ = 8
    const val RMA_WRITE = 32
    const val RMA_WRITEMSG = 48

    // ## struct fi_ops_atomic ##
    const val ATOMIC_WRITE = 8
    const val ATOMIC_WRITEMSG = 24
    const val ATOMIC_READWRITE = 40
    const val ATOMIC_COMPWRITE = 64
    const val ATOMIC_WRITEVALID = 88
    const val ATOMIC_READWRITEVALID = 96
    const val ATOMIC_COMPWRITEVALID = 104

    // ## struct fi_ops_av ##
    const val AV_INSERT = 8

    // ## struct fi_ops_cq ##
    const val CQ_READFROM = 16
    const val CQ_READERR = 24
    const val CQ_STRERROR = 56

    // ## struct fi_ops_cntr ##
    const val CNTR_READ = 8
    const val CNTR_READERR = 16
    const val CNTR_ADD = 24
    const val CNTR_SET = 32
    const val CNTR_ADDERR = 48
    const val CNTR_SETERR = 56

    // ## fi_control commands ##
    const val FI_ENABLE = 6
    const val FI_QUEUE_WORK = 11
    const val FI_CANCEL_WORK = 12

    private val unsafe = UnsafeAccess.UNSAFE

    fun getLong(address: Long): Long = unsafe.getLong(address)

    fun getInt(address: Long): Int = unsafe.getInt(address)

    fun putLong(address: Long, value: Long) = unsafe.putLong(address, value)

    fun putInt(address: Long, value: Int) = unsafe.putInt(address, value)

    /** The NUL-terminated string at [address], or null for a null pointer. */
    fun string(address: Long): String? = if (address == 0L) null else Pointer(address).getString(0)

    /**
     * The function in slot [offset] of the table [tableAt] bytes into [obj], or 0 when the table is too short to hold
     * it or the slot is empty (`FI_CHECK_OP(ops, type, op)`: `ops->size > offsetof(type, op) && ops->op`).
     */
    fun op(obj: Long, tableAt: Int, offset: Int): Long {
        if (obj == 0L) return 0
        val table = getLong(obj + tableAt)
        if (table == 0L) return 0
        if (getLong(table) <= offset) return 0
        return getLong(table + offset)
    }

    /** [op] as a callable [Function], or null when the provider does not implement it. */
    fun function(obj: Long, tableAt: Int, offset: Int): Function? {
        val fp = op(obj, tableAt, offset)
        return if (fp == 0L) null else Function.getFunction(Pointer(fp))
    }

    /** `fi_close(fid)`: 0 or a negated libfabric errno; a null [fid] is a no-op. */
    fun close(fid: Long): Int {
        if (fid == 0L) return 0
        val f = function(fid, FID_OPS, FI_CLOSE) ?: return -FI_ENOSYS
        return f.invokeInt(arrayOf(fid))
    }

    /** `fi_control(fid, command, arg)`. */
    fun control(fid: Long, command: Int, arg: Long): Int {
        val f = function(fid, FID_OPS, FI_CONTROL) ?: return -FI_ENOSYS
        return f.invokeInt(arrayOf(fid, command, arg))
    }

    /**
     * `fi_set_ops(fid, name, flags, ops, context)`: 0 if the provider took the ops table [ops] named [name], else a
     * negated libfabric errno (`-FI_ENOSYS` where the fid has no `ops_set` or the provider does not know [name]).
     */
    fun setOps(fid: Long, name: String, flags: Long, ops: Long, context: Long): Int {
        val f = function(fid, FID_OPS, FI_OPS_SET) ?: return -FI_ENOSYS
        return f.invokeInt(arrayOf(fid, name, flags, ops, context))
    }

    /** `fi_ep_bind(ep, bfid, flags)` (and `fi_cntr_bind`-style binds: the fid's own `bind`). */
    fun bind(fid: Long, bfid: Long, flags: Long): Int {
        val f = function(fid, FID_OPS, FI_BIND) ?: return -FI_ENOSYS
        return f.invokeInt(arrayOf(fid, bfid, flags))
    }

    // ## libfabric error numbers (fi_errno.h) where they differ from or add to the errno ones ##
    const val FI_EAGAIN = 11
    const val FI_ENOSYS = 38
    const val FI_ENODATA = 61
    const val FI_ETRUNC = 265
    const val FI_EAVAIL = 259
}
