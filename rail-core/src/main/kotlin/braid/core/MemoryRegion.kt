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
 */
public class MemoryRegion
internal constructor(
    public val domain: Domain,
    public val buffer: UnsafeBuffer,
    public val access: Int,
    public val key: Long,
    /** The provider's own registration of this memory ([braid.provider.DomainProvider.registerMemory]), or null. */
    @get:JvmSynthetic internal val native: braid.provider.ProviderRegion? = null,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : AutoCloseable {
    /** The native address of the region's first byte. */
    public val address: Long
        get() = buffer.addressOffset()

    public val length: Int
        get() = buffer.capacity()

    /**
     * The region as a direct [ByteBuffer] in the native byte order (position 0, limit [length]), sharing its memory:
     * what peers write appears in it, and atomics' elements read correctly with `getLong`/`getInt` (atomics use the
     * native order; a plain `ByteBuffer.allocateDirect` is big-endian). Each call returns a new view with its own
     * position.
     */
    public fun byteBuffer(): ByteBuffer {
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

    override fun toString(): String = "MemoryRegion(key=$key, length=$length, access=0x${Integer.toHexString(access)})"

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
