package braid.mpi

/**
 * How an MPI envelope (communicator context, source rank, tag) is carried in Braid's 64-bit message tag, and the ignore
 * masks that make `ANY_SOURCE` and `ANY_TAG` receives.
 *
 * ```
 *   6 6 5 5 5 5 5 5 5 5 5 5 4 4 4 4 4 4 4 4 4 4 3 3 3 3 3 3 3 3 3 3 2 2 2 2 2 2 2 2 2 2 1 1 ...   0
 *   3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0 ...   0
 *  +-+---------------------------+---+-----------------------------------------------+-----------+
 *  |R|   context id (13 bits)    |sub|            source rank (24 bits)              | tag (24)  |
 *  +-+---------------------------+---+-----------------------------------------------+-----------+
 *   R    bit 63, always 0: rail-core reserves it for peer-transfer traffic
 *   context id  bits 62..50: one per communicator, agreed by all its members
 *   sub  bits 49..48: which traffic of that communicator ([SUB_PT2PT] user point-to-point,
 *        [SUB_COLL] the collectives module, [SUB_INTERNAL] communicator management among the
 *        local group, [SUB_LEADERS] an intercommunicator's leaders and port connections)
 *   source rank bits 47..24: the sender's rank in its own (local) group
 *   tag  bits 23..0: the MPI tag, 0..[TAG_UB]
 * ```
 *
 * Every receive is posted with `FiAddr.UNSPEC` and matches its source through these bits, so a status names the
 * sender's rank without a reverse address lookup, and an intercommunicator's remote ranks need nothing special.
 * Version: this layout is version 1; ranks of different layouts never talk (they would not agree on the address blob
 * either).
 */
public object MatchBitsDescriptor {
    public const val VERSION: Int = 1
    public const val TAG_BITS: Int = 24
    public const val RANK_BITS: Int = 24
    public const val SUB_BITS: Int = 2
    public const val CONTEXT_BITS: Int = 13

    public const val TAG_SHIFT: Int = 0
    public const val RANK_SHIFT: Int = TAG_BITS
    public const val SUB_SHIFT: Int = RANK_SHIFT + RANK_BITS
    public const val CONTEXT_SHIFT: Int = SUB_SHIFT + SUB_BITS

    /** The largest tag (`MPI_TAG_UB`). */
    public const val TAG_UB: Int = (1 shl TAG_BITS) - 1
    /** The largest rank a communicator may have. */
    public const val RANK_MAX: Int = (1 shl RANK_BITS) - 1
    /** The number of context ids. */
    public const val CONTEXT_COUNT: Int = 1 shl CONTEXT_BITS

    public const val TAG_MASK: Long = TAG_UB.toLong() shl TAG_SHIFT
    public const val RANK_MASK: Long = RANK_MAX.toLong() shl RANK_SHIFT

    public const val SUB_PT2PT: Int = 0
    public const val SUB_COLL: Int = 1
    public const val SUB_INTERNAL: Int = 2
    public const val SUB_LEADERS: Int = 3

    /** The match bits of a message on [context] / [sub] from [rank] with [tag]. */
    @JvmStatic
    public fun bits(context: Int, sub: Int, rank: Int, tag: Int): Long =
        (context.toLong() shl CONTEXT_SHIFT) or
            (sub.toLong() shl SUB_SHIFT) or
            (rank.toLong() shl RANK_SHIFT) or
            (tag.toLong() and TAG_UB.toLong())

    /** The ignore mask of a receive: the rank bits for `ANY_SOURCE`, the tag bits for `ANY_TAG`. */
    @JvmStatic
    public fun ignore(anySource: Boolean, anyTag: Boolean): Long =
        (if (anySource) RANK_MASK else 0L) or (if (anyTag) TAG_MASK else 0L)

    @JvmStatic public fun context(bits: Long): Int = (bits ushr CONTEXT_SHIFT).toInt() and (CONTEXT_COUNT - 1)

    @JvmStatic public fun sub(bits: Long): Int = (bits ushr SUB_SHIFT).toInt() and 3

    @JvmStatic public fun rank(bits: Long): Int = ((bits and RANK_MASK) ushr RANK_SHIFT).toInt()

    @JvmStatic public fun tag(bits: Long): Int = (bits and TAG_MASK).toInt()
}
