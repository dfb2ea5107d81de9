package braid.provider

import braid.core.FabricException
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * The first four bytes of every Braid address blob, whatever the rail, so that any node can tell a Braid address from
 * noise and one rail's address from another's before reading the rest.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |    version    |     kind      |
 * +-------------------------------+---------------+---------------+
 * ```
 *
 * Little-endian. Kinds: 1 shm, 2 tcp, 3 link, 4 ofi (a native libfabric rail); each `*AddressDescriptor` draws what
 * follows.
 */
internal object AddressHeader {
    const val MAGIC: Int = 0x4252
    const val MAGIC_OFFSET = 0
    const val VERSION_OFFSET = 2
    const val KIND_OFFSET = 3
    const val LENGTH = 4

    const val KIND_SHM: Int = 1
    const val KIND_TCP: Int = 2
    const val KIND_LINK: Int = 3
    const val KIND_OFI: Int = 4

    /** The address kind of rail [provider], or -1. */
    fun kindOf(provider: String): Int =
        when (provider) {
            "shm" -> KIND_SHM
            "tcp" -> KIND_TCP
            "link" -> KIND_LINK
            else -> if (braid.provider.ofi.OfiInfos.isNativeName(provider)) KIND_OFI else -1
        }

    /** The rail whose addresses have [kind], or null. */
    fun nameOf(kind: Int): String? =
        when (kind) {
            KIND_SHM -> "shm"
            KIND_TCP -> "tcp"
            KIND_LINK -> "link"
            KIND_OFI -> "ofi"
            else -> null
        }

    fun write(b: UnsafeBuffer, version: Int, kind: Int) {
        b.putShort(MAGIC_OFFSET, MAGIC.toShort(), ByteOrder.LITTLE_ENDIAN)
        b.putByte(VERSION_OFFSET, version.toByte())
        b.putByte(KIND_OFFSET, kind.toByte())
    }

    /**
     * Checks [raw]'s header for a [kind] address at least [minLength] bytes long ([tooShort] says why that length) and
     * returns a view of it; otherwise throws [FabricException] naming the offset and the field that are wrong.
     */
    fun check(raw: ByteArray, kind: Int, minLength: Int, tooShort: String): UnsafeBuffer {
        val rail = nameOf(kind) ?: "kind $kind"
        fun bad(what: String): Nothing = throw FabricException.invalid("$rail address (${raw.size} bytes): $what")
        if (raw.size < LENGTH) bad("too short: ${raw.size} bytes, $tooShort")
        val b = UnsafeBuffer(raw)
        val magic = b.getShort(MAGIC_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
        if (magic != MAGIC)
            bad(
                "magic at offset 0 is 0x${Integer.toHexString(magic)}, expected 0x${Integer.toHexString(MAGIC)}; not a Braid address"
            )
        val version = b.getByte(VERSION_OFFSET).toInt() and 0xff
        if (version < 1) bad("version $version at offset $VERSION_OFFSET is not valid")
        val found = b.getByte(KIND_OFFSET).toInt() and 0xff
        if (found != kind) {
            val other = nameOf(found)
            bad(
                "kind $found at offset $KIND_OFFSET is not $rail ($kind)" +
                    if (other != null) "; it is an $other address: insert it into an $other domain's AV" else ""
            )
        }
        if (raw.size < minLength) bad("too short: ${raw.size} bytes, $tooShort")
        return b
    }
}
