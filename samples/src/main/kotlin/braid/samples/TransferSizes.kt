package braid.samples

/**
 * The message sizes a pingpong runs, and how `-S` spells them.
 *
 * As in fi_pingpong (libfabric `generate_test_sizes`): without `-S` the sizes are [DEFAULT]; `-S all` runs 0, 1, then
 * every power of two and the size half-way above it (2, 3, 4, 6, 8, 12, …, 4m, 6m) up to [ALL_MAX], fi_pingpong's
 * largest message (4 MiB + 2 MiB). Braid also accepts a byte count with a binary suffix (`4k`, `1m`) and a
 * comma-separated list (`64,4k,1m`).
 */
internal object TransferSizes {
    /** fi_pingpong's default sizes: 64, 256, 1k, 4k, 64k, 1m. */
    val DEFAULT: List<Int> = listOf(64, 256, 1024, 4096, 65536, 1048576)

    /** The largest size of `-S all`: fi_pingpong's `PP_MAX_DATA_MSG`, 6 MiB. */
    const val ALL_MAX: Int = (1 shl 22) + (1 shl 21)

    /** Every size of `-S all`, in order. */
    fun all(max: Int = ALL_MAX): List<Int> {
        val sizes = ArrayList<Int>()
        var i = 0
        while (true) {
            val powerOfTwo = if (i == 0) 0 else 1 shl i
            val halfUp = if (i == 0) 1 else powerOfTwo + powerOfTwo / 2
            if (powerOfTwo > max) break
            sizes += powerOfTwo
            if (halfUp > max) break
            sizes += halfUp
            i++
        }
        return sizes
    }

    /**
     * Parses a `-S` value: `all`, a byte count (`64`, `4k`, `1m`, `1g`; suffixes are binary), or a comma-separated list
     * of byte counts. Throws [UsageException] for [command] naming [option].
     */
    fun parse(command: String, option: String, spec: String): List<Int> {
        if (spec.equals("all", ignoreCase = true)) return all()
        val items = spec.split(',')
        return items.map { item -> parseOne(command, option, spec, item.trim()) }
    }

    /** The form [parse] reads back: sizes as plain byte counts, comma-separated. */
    fun format(sizes: List<Int>): String = sizes.joinToString(",")

    private fun parseOne(command: String, option: String, spec: String, item: String): Int {
        fun bad(why: String): Nothing =
            throw UsageException(
                command,
                "option '$option': '$spec': $why; give a byte count such as 64, 4k or 1m, a comma-separated list, or 'all'",
            )
        if (item.isEmpty()) bad("empty size")
        val multiplier =
            when (item.last().lowercaseChar()) {
                'k' -> 1L shl 10
                'm' -> 1L shl 20
                'g' -> 1L shl 30
                else -> 1L
            }
        val digits = if (multiplier == 1L) item else item.dropLast(1)
        val n = digits.toLongOrNull() ?: bad("'$item' is not a size")
        if (n < 0) bad("'$item' is negative")
        val bytes = n * multiplier
        if (bytes > Int.MAX_VALUE) bad("'$item' is larger than ${Int.MAX_VALUE} bytes")
        return bytes.toInt()
    }
}
