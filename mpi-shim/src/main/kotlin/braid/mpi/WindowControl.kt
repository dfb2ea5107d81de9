package braid.mpi

/**
 * The control region every process of a window registers beside its window memory: the words peers take locks in, the
 * set of ranks holding a shared lock (so a waiter can ask whether they live), and a dynamic window's attach table,
 * which peers read before addressing attached memory. It lives in the window's host segment
 * ([WindowCreation.hostPart]), so processes of the same host take its words by the CPU's atomics and the others by the
 * rail's, which apply the same compare-and-swap ([braid.core.AtomicOps]).
 *
 * ```
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  LOCK: passive-target lock word (INT64): shared holders in    |  0
 *  |  the low 32 bits; the exclusive holder's rank + 1 in the high |
 *  +---------------------------------------------------------------+
 *  |  ACC_LOCK (INT64): 0 free, else the holder's rank + 1         |  8
 *  +---------------------------------------------------------------+
 *  |  ATTACH_COUNT (INT64), written last (release order)           | 16
 *  +---------------------------------------------------------------+
 *  |  VERSION (INT64) = 1                                          | 24
 *  +---------------------------------------------------------------+
 *  |  ATTACH_MAX entries: address, length, key (3 × INT64)         | 32
 *  +---------------------------------------------------------------+
 *  |  SHARED_HOLDERS: one bit per rank holding a shared lock here, | 1568
 *  |  ceil(n / 64) INT64 words (rank r: bit r % 64 of word r / 64) |
 *  +---------------------------------------------------------------+
 * ```
 */
internal object WindowControl {
    const val LOCK = 0
    const val ACC_LOCK = 8
    const val ATTACH_COUNT = 16
    const val VERSION = 24
    const val ATTACH = 32
    const val ENTRY = 24
    const val ATTACH_MAX = 64
    const val SHARED_HOLDERS = ATTACH + ATTACH_MAX * ENTRY

    /** Words of the shared-holder set for [n] ranks. */
    fun holderWords(n: Int): Int = (n + 63) / 64

    /** Bytes of the control region of a window of [n] ranks, rounded to a cache line. */
    fun length(n: Int): Int = (SHARED_HOLDERS + 8 * holderWords(n) + 63) and 63.inv()
}
