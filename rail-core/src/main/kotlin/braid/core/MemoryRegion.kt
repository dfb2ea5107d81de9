package braid.core

import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/** Access rights of a [MemoryRegion] (`fi_mr_reg` access flags, libfabric's values). */
public object MrAccess {
    public const val SEND: Int = 1 shl 10
    public const val RECV: Int = 1 shl 11
    public const val READ: Int = 1 shl 8
    public const val WRITE: Int = 1 shl 9
    public const val REMOTE_READ: Int = 1 shl 12
    public const val REMOTE_WRITE: Int = 1 shl 13
    public const val REMOTE: Int = REMOTE_READ or REMOTE_WRITE
}

/**
 * Memory registered with a domain (`fid_mr`): a direct (off-heap) region with access rights and a key that remote peers
 * present to reach it. [descriptor] is what local operations pass as `desc`. Memory that peers may reach must be direct
 * so that the native rail can hand its address to a NIC without a copy.
 *
 * A region says where it lives ([iface], [device]): system memory, or an accelerator's (registered with
 * [Domain.registerMemory] given an interface). Device memory is (iface, device, [address], [length]) and nothing more:
 * rails never touch it, every byte in or out of it goes through the domain's copy service and its overrides
 * ([Domain.setOp]), staged through host bounce buffers. Its [buffer] is empty and [byteBuffer] refuses.
 */
public class MemoryRegion
internal constructor(
    public val domain: Domain,
    public val buffer: UnsafeBuffer,
    public val access: Int,
    public val key: Long,
    /** Which memory this is: [HmemIface.SYSTEM], or an accelerator's. */
    public val iface: HmemIface,
    /** The device of [iface] (a CUDA device ordinal, a ROCm GPU index…); 0 for system memory. */
    public val device: Long,
    private val deviceAddress: Long,
    private val deviceLength: Int,
    /** The provider's own registration of this memory ([braid.provider.DomainProvider.registerMemory]), or null. */
    @get:JvmSynthetic internal val native: braid.provider.ProviderRegion? = null,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : AutoCloseable {
    /** The native address of the region's first byte (a device address for device memory). */
    public val address: Long
        get() = if (iface.isSystem) buffer.addressOffset() else deviceAddress

    public val length: Int
        get() = if (iface.isSystem) buffer.capacity() else deviceLength

    /**
     * The region as a direct [ByteBuffer] in the native byte order (position 0, limit [length]), sharing its memory:
     * what peers write appears in it, and atomics' elements read correctly with `getLong`/`getInt` (atomics use the
     * native order; a plain `ByteBuffer.allocateDirect` is big-endian). Each call returns a new view with its own
     * position.
     */
    public fun byteBuffer(): ByteBuffer {
        if (!iface.isSystem) {
            throw FabricException.invalid(
                "memory region $key is $iface memory (device $device): it has no ByteBuffer; move its bytes with the data operations or the copy functions"
            )
        }
        val bb = buffer.byteBuffer()
        val view =
            if (bb != null) {
                val start = buffer.wrapAdjustment()
                bb.duplicate().clear().position(start).limit(start + length).slice()
            } else {
                com.sun.jna.Pointer(buffer.addressOffset()).getByteBuffer(0, length.toLong())
            }
        return view.order(ByteOrder.nativeOrder())
    }

    /** The local descriptor (`fi_mr_desc`). */
    public val descriptor: Any
        get() = this

    /** Whether [offset, offset+len) lies inside the region and [needed] access is granted. */
    public fun permits(offset: Long, len: Long, needed: Int): Boolean =
        offset >= 0 && len >= 0 && offset + len <= length && (access and needed) == needed

    override fun close() {
        domain.deregister(this)
    }

    override fun toString(): String =
        "MemoryRegion(key=$key, length=$length, access=0x${Integer.toHexString(access)}" +
            (if (iface.isSystem) ")" else ", iface=$iface, device=$device)")

    internal companion object {
        @JvmSynthetic
        fun viewOf(buffer: ByteBuffer, what: String): UnsafeBuffer {
            if (!buffer.isDirect) {
                throw FabricException.invalid(
                    "$what: a heap ByteBuffer cannot be registered; allocate it with ByteBuffer.allocateDirect"
                )
            }
            return UnsafeBuffer(buffer, buffer.position(), buffer.remaining())
        }
    }
}
