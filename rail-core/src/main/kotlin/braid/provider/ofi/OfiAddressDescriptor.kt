package braid.provider.ofi

import braid.core.FabricException
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * A native rail's address blob: the native provider's name, so an address of another native provider is refused by name
 * instead of handed to `fi_av_insert`, and the address `fi_getname` returned, byte for byte.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |  version (1)  |   kind (4)    |
 * +-------------------------------+---------------+---------------+
 * |                         host id (64 bits)                     |
 * |                                                               |
 * +-------------------------------+-------------------------------+
 * |   provider name length (P)    |   native address length (N)   |
 * +-------------------------------+-------------------------------+
 * |          native address format (fi_info addr_format)         |
 * +---------------------------------------------------------------+
 * |         provider name (P bytes, ASCII: "tcp;ofi_rxm")        ...
 * +---------------------------------------------------------------+
 * |         native address (N bytes, as fi_getname gave it)      ...
 * +---------------------------------------------------------------+
 * ```
 *
 * Little-endian.
 */
internal object OfiAddressDescriptor {
    const val VERSION = 1
    const val HOST_ID_OFFSET = 4
    const val PROV_LENGTH_OFFSET = 12
    const val ADDR_LENGTH_OFFSET = 14
    const val FORMAT_OFFSET = 16
    const val PROV_OFFSET = 20

    fun encode(hostId: Long, provName: String, format: Int, native: ByteArray): ByteArray {
        val prov = provName.toByteArray(Charsets.US_ASCII)
        val raw = ByteArray(PROV_OFFSET + prov.size + native.size)
        val b = UnsafeBuffer(raw)
        AddressHeader.write(b, VERSION, AddressHeader.KIND_OFI)
        b.putLong(HOST_ID_OFFSET, hostId, ByteOrder.LITTLE_ENDIAN)
        b.putShort(PROV_LENGTH_OFFSET, prov.size.toShort(), ByteOrder.LITTLE_ENDIAN)
        b.putShort(ADDR_LENGTH_OFFSET, native.size.toShort(), ByteOrder.LITTLE_ENDIAN)
        b.putInt(FORMAT_OFFSET, format, ByteOrder.LITTLE_ENDIAN)
        b.putBytes(PROV_OFFSET, prov)
        b.putBytes(PROV_OFFSET + prov.size, native)
        return raw
    }

    fun parse(raw: ByteArray): OfiAddress {
        val b = AddressHeader.check(raw, AddressHeader.KIND_OFI, PROV_OFFSET, "the fixed part is $PROV_OFFSET bytes")
        val provLength = b.getShort(PROV_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
        val addrLength = b.getShort(ADDR_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
        if (raw.size != PROV_OFFSET + provLength + addrLength)
            throw FabricException.invalid(
                "ofi address (${raw.size} bytes): lengths at offsets $PROV_LENGTH_OFFSET and $ADDR_LENGTH_OFFSET say " +
                    "${PROV_OFFSET + provLength + addrLength} bytes"
            )
        val prov = String(raw, PROV_OFFSET, provLength, Charsets.US_ASCII)
        val native = raw.copyOfRange(PROV_OFFSET + provLength, raw.size)
        return OfiAddress(
            raw,
            b.getLong(HOST_ID_OFFSET, ByteOrder.LITTLE_ENDIAN),
            prov,
            b.getInt(FORMAT_OFFSET, ByteOrder.LITTLE_ENDIAN),
            native,
        )
    }

    /** The peer address a native rail of [provName] reaches [raw] by, or a FabricException naming both providers. */
    fun parseFor(raw: ByteArray, provName: String): OfiAddress {
        val a = parse(raw)
        if (a.provName != provName)
            throw FabricException.invalid(
                "ofi:$provName: the address is for native provider '${a.provName}', not '$provName' " +
                    "(${a.native.size} bytes of ${a.provName} address); insert it into an ofi:${a.provName} domain's AV"
            )
        return a
    }
}

/** A parsed native rail address ([OfiAddressDescriptor]). */
internal class OfiAddress(
    override val raw: ByteArray,
    val hostId: Long,
    val provName: String,
    /** The native address format (`FI_SOCKADDR_IN` is 2), as fi_info's `addr_format` gives it. */
    val format: Int,
    /** The native address bytes, for `fi_av_insert`. */
    val native: ByteArray,
) : PeerAddress {
    override val key: String = "ofi:$provName:" + native.joinToString("") { "%02x".format(it) }

    override fun render(): String = "ofi:$provName:${native.size}B:${key.substringAfterLast(':').take(48)}"

    override fun toString(): String = render()
}
