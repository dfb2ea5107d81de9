package braid.provider.tcp

import braid.core.AddressTable
import braid.core.FabricException
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import java.net.Inet4Address
import java.net.Inet6Address
import java.net.InetAddress
import java.net.InetSocketAddress
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * The address blob of a tcp endpoint. Versioned, shares the magic of every Braid address (the kind byte tells the rails
 * apart), and a malformed one is refused naming the offset and field.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |  version = 1  |  kind = 2 tcp |  0
 * +-------------------------------+---------------+---------------+
 * |        port (16)              | family 4 or 6 |  reserved (8) |  4
 * +-------------------------------+---------------+---------------+
 * |                        host id (64)                           |  8
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                        endpoint id (64)                       | 16
 * |                                                               |
 * +---------------------------------------------------------------+
 * |  IPv4: address (32)                                           | 24
 * |  IPv6: address (128), then scope id (32), 0 for none          |
 * +---------------------------------------------------------------+
 * |  version 2: eager size (32): the largest message it sends and  | 28 (IPv6: 44)
 * |  takes whole, as it reckons it; the credit it keeps for a      |
 * |  link's resends covers one message of that size               |
 * +---------------------------------------------------------------+
 * ```
 *
 * All fields little-endian except the address, which is in network order as [InetAddress.getAddress] gives it. The host
 * id is the one the shm rail uses, so a link can tell which peers share this host. The endpoint id is random, non-zero
 * and unique to one endpoint's life: a process that restarts has new ids.
 */
internal object TcpAddressDescriptor {
    const val MAGIC: Int = AddressHeader.MAGIC
    const val VERSION: Int = 2
    const val KIND_TCP: Int = AddressHeader.KIND_TCP
    const val PORT_OFFSET = 4
    const val FAMILY_OFFSET = 6
    const val HOST_OFFSET = 8
    const val ID_OFFSET = 16
    const val ADDRESS_OFFSET = 24
    const val V4_LENGTH = ADDRESS_OFFSET + 4
    const val V6_LENGTH = ADDRESS_OFFSET + 16 + 4

    /** [eagerSize] below 0 writes version 1, which has none (a peer then assumes its own). */
    fun encode(hostId: Long, endpointId: Long, socket: InetSocketAddress, eagerSize: Int = -1): ByteArray {
        val ip = socket.address
        val v6 = ip is Inet6Address
        val base = if (v6) V6_LENGTH else V4_LENGTH
        val out = ByteArray(if (eagerSize >= 0) base + 4 else base)
        val b = UnsafeBuffer(out)
        AddressHeader.write(b, if (eagerSize >= 0) VERSION else 1, KIND_TCP)
        if (eagerSize >= 0) b.putInt(base, eagerSize, ByteOrder.LITTLE_ENDIAN)
        b.putShort(PORT_OFFSET, socket.port.toShort(), ByteOrder.LITTLE_ENDIAN)
        b.putByte(FAMILY_OFFSET, (if (v6) 6 else 4).toByte())
        b.putLong(HOST_OFFSET, hostId, ByteOrder.LITTLE_ENDIAN)
        b.putLong(ID_OFFSET, endpointId, ByteOrder.LITTLE_ENDIAN)
        b.putBytes(ADDRESS_OFFSET, ip.address)
        if (v6) b.putInt(ADDRESS_OFFSET + 16, (ip as Inet6Address).scopeId, ByteOrder.LITTLE_ENDIAN)
        return out
    }

    fun parse(raw: ByteArray): TcpAddress {
        fun bad(what: String): Nothing = throw FabricException.invalid("tcp address (${raw.size} bytes): $what")
        val b = AddressHeader.check(raw, KIND_TCP, V4_LENGTH, "an IPv4 address alone takes $V4_LENGTH")
        val port = b.getShort(PORT_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
        if (port == 0) bad("port 0 at offset $PORT_OFFSET: the endpoint was not listening")
        val family = b.getByte(FAMILY_OFFSET).toInt() and 0xff
        val id = b.getLong(ID_OFFSET, ByteOrder.LITTLE_ENDIAN)
        if (id == 0L) bad("endpoint id 0 at offset $ID_OFFSET is not valid")
        // A newer version may append fields: read what this version knows.
        val ip: InetAddress? =
            when (family) {
                4 -> {
                    // Checked from the bytes; the InetAddress is built when first needed (an AV insert never needs it).
                    if (b.getInt(ADDRESS_OFFSET) == 0)
                        bad("address 0.0.0.0 is the wildcard address; an endpoint must advertise a reachable one")
                    null
                }
                6 -> {
                    if (raw.size < V6_LENGTH) bad("an IPv6 address needs $V6_LENGTH bytes, the blob has ${raw.size}")
                    val scope = b.getInt(ADDRESS_OFFSET + 16, ByteOrder.LITTLE_ENDIAN)
                    if (scope == 0) InetAddress.getByAddress(raw.copyOfRange(ADDRESS_OFFSET, ADDRESS_OFFSET + 16))
                    else Inet6Address.getByAddress(null, raw.copyOfRange(ADDRESS_OFFSET, ADDRESS_OFFSET + 16), scope)
                }
                else -> bad("address family $family at offset $FAMILY_OFFSET is neither 4 (IPv4) nor 6 (IPv6)")
            }
        if (ip != null && ip.isAnyLocalAddress)
            bad("address ${ip.hostAddress} is the wildcard address; an endpoint must advertise a reachable one")
        var length = if (family == 6) V6_LENGTH else V4_LENGTH
        var eager = -1
        if ((b.getByte(AddressHeader.VERSION_OFFSET).toInt() and 0xff) >= 2 && raw.size >= length + 4) {
            eager = b.getInt(length, ByteOrder.LITTLE_ENDIAN)
            if (eager < 0) bad("eager size $eager at offset $length is negative")
            length += 4
        }
        return TcpAddress(b.getLong(HOST_OFFSET, ByteOrder.LITTLE_ENDIAN), id, port, ip, raw.copyOf(length), eager)
    }
}

/** A parsed tcp address: where the endpoint listens, and who it is. */
internal class TcpAddress(
    val hostId: Long,
    val endpointId: Long,
    private val port: Int,
    /** The IP address, or null for an IPv4 one not built yet (from [raw], on first use of [socket]). */
    private var ip: InetAddress?,
    override val raw: ByteArray,
    /** The endpoint's eager size (version 2), or -1 when its address does not say (version 1). */
    val eagerSize: Int = -1,
) : PeerAddress {
    private var cachedSocket: InetSocketAddress? = null

    /** Where the endpoint listens. */
    val socket: InetSocketAddress
        get() =
            cachedSocket
                ?: InetSocketAddress(
                        ip
                            ?: InetAddress.getByAddress(
                                    raw.copyOfRange(
                                        TcpAddressDescriptor.ADDRESS_OFFSET,
                                        TcpAddressDescriptor.ADDRESS_OFFSET + 4,
                                    )
                                )
                                .also { ip = it },
                        port,
                    )
                    .also { cachedSocket = it }

    override val key: String
        get() = keyOf(endpointId)

    /** The hash of [key], "tcp-" and the id in hex, computed without building it (every AV insert files one). */
    override fun keyHash(): Long {
        var h = AddressTable.KEY_HASH_SEED
        for (c in KEY_PREFIX) h = AddressTable.keyHashStep(h, c)
        var shift = maxOf(0, (63 - java.lang.Long.numberOfLeadingZeros(endpointId)) / 4 * 4)
        while (shift >= 0) {
            val nibble = ((endpointId ushr shift) and 0xf).toInt()
            h = AddressTable.keyHashStep(h, if (nibble < 10) '0' + nibble else 'a' + (nibble - 10))
            shift -= 4
        }
        return h
    }

    override fun render(): String {
        val ip = socket.address
        val host = if (ip is Inet4Address) ip.hostAddress else "[${ip.hostAddress}]"
        return "fi_tcp://$host:${socket.port}/${idString(endpointId)}"
    }

    override fun toString(): String = render()

    companion object {
        fun keyOf(endpointId: Long): String = KEY_PREFIX + idString(endpointId)

        const val KEY_PREFIX: String = "tcp-"

        fun idString(endpointId: Long): String = java.lang.Long.toHexString(endpointId)
    }
}
