package braid.provider.link

import braid.core.FabricException
import braid.provider.AddressHeader
import braid.provider.PeerAddress
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * The address blob of a link endpoint: the host identity and every rail's own address blob, each with its kind and
 * length, so that a reader skips the parts it does not know (a rail a newer node added) and a malformed blob is refused
 * with the part and offset that are wrong; then (version 2) the name of each part's rail, its identity in the link
 * ([braid.core.RailAttr.name]), by which peers pair their rails: `tcp:eth0` with `tcp:eth0`.
 *
 * ```
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-------------------------------+---------------+---------------+
 * |        magic 0x4252 "BR"      |  version = 2  | kind = 3 link |
 * +-------------------------------+---------------+---------------+
 * |                        host id (64 bits)                      |
 * |                                                               |
 * +---------------+---------------+-------------------------------+
 * |  part count   |   reserved    |           reserved            |
 * +---------------+---------------+-------------------------------+
 * |  part kind    |   reserved    |       part length (16)        |  } part count
 * +---------------+---------------+-------------------------------+  } times
 * |  the rail's own address blob (its header first) ...           |  }
 * +---------------+-----------------------------------------------+
 * |  name length  |  the part's rail name, UTF-8 ...              |  } part count times (version 2)
 * +---------------+-----------------------------------------------+
 * ```
 *
 * Little-endian. Part kinds are [AddressHeader]'s (1 shm, 2 tcp). The names come after the last part, where version 1
 * said a later version's fields go, so a version 1 reader still reads a version 2 blob of one rail per kind (and
 * refuses one with two parts of a kind: "kind 2 appears twice"). This reader reads a version 1 blob as if each part
 * were named by its provider, and refuses one it cannot pair unambiguously ([LinkDomain.parseAddress]) naming both
 * versions. Version 2 readers read any version ≥ 2: fields a later version appends go after the names and are ignored.
 */
internal object LinkAddressDescriptor {
    const val VERSION: Int = 2
    /** The version that carried no rail names. */
    const val VERSION_UNNAMED: Int = 1
    const val HOST_OFFSET = AddressHeader.LENGTH
    const val COUNT_OFFSET = 12
    const val PARTS_OFFSET = 16
    const val PART_KIND_OFFSET = 0
    const val PART_LENGTH_OFFSET = 2
    const val PART_HEADER_LENGTH = 4
    const val MAX_PARTS = 16
    const val MAX_NAME = 255

    /** A blob whose parts are named by their kinds' providers (`shm`, `tcp`): one rail per kind. */
    fun encode(hostId: Long, parts: List<Pair<Int, ByteArray>>): ByteArray =
        encode(hostId, parts.map { (kind, _) -> AddressHeader.nameOf(kind) ?: "kind$kind" }, parts)

    /** A blob of [parts] whose rails are named [names], in the same order. */
    fun encode(hostId: Long, names: List<String>, parts: List<Pair<Int, ByteArray>>): ByteArray {
        require(parts.size in 1..MAX_PARTS && names.size == parts.size)
        val encodedNames = names.map { it.toByteArray(Charsets.UTF_8).also { n -> require(n.size in 1..MAX_NAME) } }
        val out =
            ByteArray(
                PARTS_OFFSET + parts.sumOf { PART_HEADER_LENGTH + it.second.size } + encodedNames.sumOf { 1 + it.size }
            )
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
        for (n in encodedNames) {
            b.putByte(at, n.size.toByte())
            b.putBytes(at + 1, n)
            at += 1 + n.size
        }
        return out
    }

    /** [parse] with a [parsePart] that looks at the kind only. */
    fun parse(raw: ByteArray, parsePart: (kind: Int, blob: ByteArray) -> PeerAddress?): LinkAddress =
        parse(raw) { _: String, kind: Int, blob: ByteArray -> parsePart(kind, blob) }

    /**
     * Parses [raw]; [parsePart] turns a part of a rail this node can reach it by (its name, its kind) into that rail's
     * address (throwing if malformed) and returns null for parts it has no rail for.
     */
    fun parse(raw: ByteArray, parsePart: (name: String, kind: Int, blob: ByteArray) -> PeerAddress?): LinkAddress {
        fun bad(what: String): Nothing = throw FabricException.invalid("link address (${raw.size} bytes): $what")
        val b = AddressHeader.check(raw, AddressHeader.KIND_LINK, PARTS_OFFSET, "the header alone is $PARTS_OFFSET")
        val version = b.getByte(AddressHeader.VERSION_OFFSET).toInt() and 0xff
        val hostId = b.getLong(HOST_OFFSET, ByteOrder.LITTLE_ENDIAN)
        val count = b.getByte(COUNT_OFFSET).toInt() and 0xff
        if (count == 0 || count > MAX_PARTS) bad("part count $count at offset $COUNT_OFFSET must be 1..$MAX_PARTS")
        // Small arrays, not a map: an AV insert parses every address it files.
        val kinds = IntArray(count)
        val starts = IntArray(count)
        val lengths = IntArray(count)
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
            kinds[i] = kind
            starts[i] = start
            lengths[i] = length
            at = start + length
        }
        val names = arrayOfNulls<String>(count)
        for (i in 0 until count) {
            if (version <= VERSION_UNNAMED) {
                names[i] = AddressHeader.nameOf(kinds[i]) ?: "kind${kinds[i]}"
                continue
            }
            if (at >= raw.size)
                bad("part $i: its rail name at offset $at runs past the end (a version $version blob names every part)")
            val n = b.getByte(at).toInt() and 0xff
            if (n == 0 || at + 1 + n > raw.size)
                bad("part $i: its rail name of $n bytes at offset $at runs past the end")
            names[i] = String(raw, at + 1, n, Charsets.UTF_8)
            at += 1 + n
        }
        for (i in 0 until count) for (j in 0 until i) {
            if (names[j] == names[i]) bad("part $i: rail '${names[i]}' of kind ${kinds[i]} appears twice")
        }
        val known = IntArray(count)
        val parts = arrayOfNulls<PeerAddress>(count)
        val partNames = arrayOfNulls<String>(count)
        var n = 0
        for (i in 0 until count) {
            val blob = raw.copyOfRange(starts[i], starts[i] + lengths[i])
            val parsed =
                try {
                    parsePart(names[i]!!, kinds[i], blob)
                } catch (e: FabricException) {
                    bad("part $i at offset ${starts[i]}: ${e.message}")
                }
            if (parsed != null) {
                known[n] = kinds[i]
                partNames[n] = names[i]
                parts[n++] = parsed
            }
        }
        return LinkAddress(hostId, version, known, partNames, parts, n, raw.copyOf(at))
    }
}

/**
 * A parsed link address: the host it lives on, the blob's [version], and the rail addresses this node can use ([count]
 * of them, in blob order, each with its rail's name and kind).
 */
internal class LinkAddress(
    val hostId: Long,
    val version: Int,
    private val kinds: IntArray,
    private val names: Array<String?>,
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

    /**
     * The part of rail [provider] — a rail's name (`tcp:eth0`, a topology's `a`), or a provider (`shm`, `tcp`): the
     * part of that name, else, for a provider, its first part of that provider's kind.
     */
    override fun part(provider: String): PeerAddress? {
        for (i in 0 until count) if (names[i] == provider) return parts[i]
        val kind = AddressHeader.kindOf(provider)
        if (kind < 0) return null
        for (i in 0 until count) if (kinds[i] == kind) return parts[i]
        return null
    }

    /** How many parts of [kind] this node could parse. */
    fun partsOfKind(kind: Int): Int {
        var n = 0
        for (i in 0 until count) if (kinds[i] == kind) n++
        return n
    }

    /** The rail names of the parts this node could parse, in blob order. */
    val railNames: List<String>
        get() = List(count) { names[it]!! }

    override fun render(): String =
        "fi_link://${java.lang.Long.toHexString(hostId)}/" + (0 until count).joinToString("+") { parts[it]!!.render() }

    override fun toString(): String = render()
}
