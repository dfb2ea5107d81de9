package braid.mpi

/**
 * The control region every process of a window registers beside its window memory: the words peers take locks in, and a
 * dynamic window's attach table, which peers read before addressing attached memory.
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
    const val LENGTH = ATTACH + ATTACH_MAX * ENTRY
}
