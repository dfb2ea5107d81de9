package braid.provider.link

import braid.core.FabricException
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * The address blob of a link endpoint: the host identity and every rail's own address blob, each with its kind and
 * length, so that a reader skips the parts it does not know (a rail a newer node added) and a malformed blob is refused
 * with the part and offset that are wrong.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |  version = 1  | kind = 3 link |
 * +-------------------------------+---------------+---------------+
 * |                        host id (64 bits)                      |
 * |                                                               |
 * +---------------+---------------+-------------------------------+
 * |  part count   |   reserved    |           reserved            |
 * +---------------+---------------+-------------------------------+
 * |  part kind    |   reserved    |       part length (16)        |  } part count
 * +---------------+---------------+-------------------------------+  } times
 * |  the rail's own address blob (its header first) ...           |  }
 * +---------------------------------------------------------------+
 * ```
 *
 * Little-endian. Part kinds are [AddressHeader]'s (1 shm, 2 tcp). Version 1 readers read any version ≥ 1: fields a
 * later version appends go after the last part and are ignored.
 */
internal object LinkAddressDescriptor {
    const val VERSION: Int = 1
    const val HOST_OFFSET = AddressHeader.LENGTH
    const val COUNT_OFFSET = 12
    const val PARTS_OFFSET = 16
    const val PART_KIND_OFFSET = 0
    const val PART_LENGTH_OFFSET = 2
    const val PART_HEADER_LENGTH = 4
    const val MAX_PARTS = 16

    fun encode(hostId: Long, parts: List<Pair<Int, ByteArray>>): ByteArray {
        require(parts.size in 1..MAX_PARTS)
        val out = ByteArray(PARTS_OFFSET + parts.sumOf { PART_HEADER_LENGTH + it.second.size })
        val b = UnsafeBuffer(out)
        AddressHeader.write(b, VERSION, AddressHeader.KIND_LINK)
        b.putLong(HOST_OFFSET, hostId, ByteOrder.LITTLE_ENDIAN)
        b.putByte(COUNT_OFFSET, parts.size.toByte())
        var at = PARTS_OFFSET
        for ((kind, blob) in parts) {
            require(blob.size <= 0xffff)
            b.putByte(at + PART_KIND_OFFSET, kind.toByte())
            b.putShort(at + PART_LENGTH_OFFSET, blob.size.toShort(), ByteOrder.LITTLE_ENDIAN)
            b.putBytes(at + PART_HEADER_LENGTH, blob)
            at += PART_HEADER_LENGTH + blob.size
        }
        return out
    }

    /**
     * Parses [raw]; [parsePart] turns a part of a kind this node has a rail for into that rail's address (throwing if
     * malformed) and returns null for kinds it has no rail for.
     */
    fun parse(raw: ByteArray, parsePart: (kind: Int, blob: ByteArray) -> PeerAddress?): LinkAddress {
        fun bad(what: String): Nothing = throw FabricException.invalid("link address (${raw.size} bytes): $what")
        val b = AddressHeader.check(raw, AddressHeader.KIND_LINK, PARTS_OFFSET, "the header alone is $PARTS_OFFSET")
        val hostId = b.getLong(HOST_OFFSET, ByteOrder.LITTLE_ENDIAN)
        val count = b.getByte(COUNT_OFFSET).toInt() and 0xff
        if (count == 0 || count > MAX_PARTS) bad("part count $count at offset $COUNT_OFFSET must be 1..$MAX_PARTS")
        // Small arrays, not a map: an AV insert parses every address it files.
        val seen = IntArray(count)
        val kinds = IntArray(count)
        val parts = arrayOfNulls<PeerAddress>(count)
        var known = 0
        var at = PARTS_OFFSET
        for (i in 0 until count) {
            if (at + PART_HEADER_LENGTH > raw.size) bad("part $i: its header at offset $at runs past the end")
            val kind = b.getByte(at + PART_KIND_OFFSET).toInt() and 0xff
            val length = b.getShort(at + PART_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN).toInt() and 0xffff
            val start = at + PART_HEADER_LENGTH
            if (start + length > raw.size)
                bad(
                    "part $i (kind $kind): length $length at offset ${at + PART_LENGTH_OFFSET} runs past the end (${raw.size - start} bytes left)"
                )
            for (j in 0 until i) if (seen[j] == kind) bad("part $i: kind $kind appears twice")
            seen[i] = kind
            val blob = raw.copyOfRange(start, start + length)
            val parsed =
                try {
                    parsePart(kind, blob)
                } catch (e: FabricException) {
                    bad("part $i at offset $start: ${e.message}")
                }
            if (parsed != null) {
                kinds[known] = kind
                parts[known++] = parsed
            }
            at = start + length
        }
        return LinkAddress(hostId, kinds, parts, known, raw.copyOf(at))
    }
}

/**
 * A parsed link address: the host it lives on and the rail addresses this node can use ([count] of them, in blob
 * order).
 */
internal class LinkAddress(
    val hostId: Long,
    private val kinds: IntArray,
    private val parts: Array<PeerAddress?>,
    private val count: Int,
    override val raw: ByteArray,
) : PeerAddress {
    /** Built when asked (the AV files a link address under its parts' keys, and inserts must stay cheap). */
    override val key: String
        get() = "link-" + (0 until count).joinToString("+") { parts[it]!!.key }

    /** Built when asked, as [key] is: the AV files a link address by [indexKeyHash], which builds no string. */
    override val partKeys: List<String>
        get() = List(count) { parts[it]!!.key }

    override val indexKeyCount: Int
        get() = maxOf(1, count)

    override fun indexKeyHash(i: Int): Long = if (count == 0) keyHash() else parts[i]!!.keyHash()

    override fun part(provider: String): PeerAddress? {
        val kind = AddressHeader.kindOf(provider)
        for (i in 0 until count) if (kinds[i] == kind) return parts[i]
        return null
    }

    override fun render(): String =
        "fi_link://${java.lang.Long.toHexString(hostId)}/" + (0 until count).joinToString("+") { parts[it]!!.render() }

    override fun toString(): String = render()
}
