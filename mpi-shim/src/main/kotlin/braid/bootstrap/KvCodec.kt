package braid.bootstrap

import java.util.Base64

/**
 * How a value of any length and any bytes becomes launcher keys no longer than the launcher allows. PMI launchers take
 * printable values of limited length (Hydra: 1024 bytes per value, silently truncated to 1023), and one key space per
 * job, so:
 * ```
 * key          launcher key     launcher value
 * (rank r)     KEY@r            PARTS.BYTES.CHUNK0   PARTS: decimal count of chunks (≥ 1)
 *                                                    BYTES: the value's length in bytes
 *              KEY@r#1 .. KEY@r#(PARTS-1)  CHUNK1 .. CHUNK(PARTS-1)
 * ```
 *
 * The bytes are base64url without padding (no space, `=`, `;` or `.`, which PMI-1 lines and PMI-2 frames treat
 * specially); the chunks are the encoded text cut into pieces of at most [maxValueChars] characters, the first piece's
 * header included. Nothing is truncated: [decode] refuses a value whose parts are missing or whose bytes do not add up
 * to BYTES.
 */
internal object KvCodec {
    private val encoder = Base64.getUrlEncoder().withoutPadding()
    private val decoder = Base64.getUrlDecoder()
    private val keyPattern = Regex("[A-Za-z0-9_.:/+-]+")

    /** Characters a suffix `@rank#part` may add to a key, for the key-length check. */
    private const val SUFFIX_ROOM = 18

    /** Throws [BootstrapException] unless [key] is usable with a launcher whose keys hold [maxKeyLength] characters. */
    fun checkKey(key: String, maxKeyLength: Int) {
        if (!keyPattern.matches(key)) {
            throw BootstrapException(
                "key '$key': use letters, digits and _ . : / + - only (launchers split on spaces, '=' and ';')"
            )
        }
        if (key.length + SUFFIX_ROOM > maxKeyLength) {
            throw BootstrapException(
                "key '$key' is ${key.length} characters; this launcher takes keys of ${maxKeyLength - SUFFIX_ROOM} at most"
            )
        }
    }

    fun launcherKey(key: String, rank: Int): String = "$key@$rank"

    private fun partKey(key: String, rank: Int, part: Int): String = "$key@$rank#$part"

    /** The launcher (key, value) pairs holding [value] put by [rank] under [key]. */
    fun encode(key: String, rank: Int, value: ByteArray, maxValueChars: Int): List<Pair<String, String>> {
        require(maxValueChars >= 16) { "launcher value limit $maxValueChars is too small" }
        val text = encoder.encodeToString(value)
        // The header "PARTS." takes room in the first chunk; find the part count that fits.
        var parts = 1
        while (true) {
            val header = "$parts.${value.size}.".length
            val capacity = (maxValueChars - header) + (parts - 1).toLong() * maxValueChars
            if (capacity >= text.length) break
            parts++
        }
        val header = "$parts.${value.size}."
        val out = ArrayList<Pair<String, String>>(parts)
        val firstLength = minOf(text.length, maxValueChars - header.length)
        out += launcherKey(key, rank) to header + text.substring(0, firstLength)
        var at = firstLength
        for (p in 1 until parts) {
            val n = minOf(maxValueChars, text.length - at)
            out += partKey(key, rank, p) to text.substring(at, at + n)
            at += n
        }
        return out
    }

    /**
     * Joins the value [rank] put under [key]; [lookup] returns a launcher key's value, or null if the launcher has
     * none. Throws [BootstrapException] naming the rank and key when it is missing or malformed.
     */
    fun decode(key: String, rank: Int, lookup: KeyLookup): ByteArray {
        val head =
            lookup.valueOf(launcherKey(key, rank))
                ?: throw BootstrapException("rank $rank put nothing under key '$key' (or has not fenced since)")
        val dot = head.indexOf('.')
        val dot2 = if (dot > 0) head.indexOf('.', dot + 1) else -1
        val parts = if (dot > 0) head.substring(0, dot).toIntOrNull() else null
        val bytes = if (dot2 > 0) head.substring(dot + 1, dot2).toIntOrNull() else null
        if (parts == null || parts < 1 || bytes == null || bytes < 0) {
            throw BootstrapException("rank $rank's value under key '$key' is not in Braid's form: '${head.take(40)}'")
        }
        val text = StringBuilder(head.length * parts).append(head, dot2 + 1, head.length)
        for (p in 1 until parts) {
            text.append(
                lookup.valueOf(partKey(key, rank, p))
                    ?: throw BootstrapException("rank $rank's value under key '$key': part $p of $parts is missing")
            )
        }
        val value =
            try {
                decoder.decode(text.toString())
            } catch (e: IllegalArgumentException) {
                throw BootstrapException(
                    "rank $rank's value under key '$key' does not decode (truncated by the launcher?): ${e.message}",
                    e,
                )
            }
        if (value.size != bytes) {
            throw BootstrapException(
                "rank $rank's value under key '$key' does not decode to its $bytes bytes but ${value.size} (truncated by the launcher?)"
            )
        }
        return value
    }

    /** A launcher key-value read: the value, or null when the launcher has none under [launcherKey]. */
    fun interface KeyLookup {
        fun valueOf(launcherKey: String): String?
    }
}
