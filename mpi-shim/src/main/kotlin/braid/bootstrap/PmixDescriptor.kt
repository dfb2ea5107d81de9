package braid.bootstrap

import com.sun.jna.Memory
import com.sun.jna.Pointer

/**
 * The PMIx structures Braid passes to `libpmix.so.2` (PMIx 4.2, Debian's `libpmix2`), as laid out on x86-64/aarch64
 * Linux by `pmix_common.h` (checked with `sizeof`/`offsetof` against the installed headers of `libpmix-dev`):
 * ```
 * pmix_proc_t (260 bytes)
 *  0                                                        256      260
 * +----------------------------------------------------------+--------+
 * | nspace: char[256] (PMIX_MAX_NSLEN 255 + NUL)             | rank   |
 * +----------------------------------------------------------+--------+
 *                                                             uint32; PMIX_RANK_WILDCARD = 2^32-2
 *
 * pmix_value_t (32 bytes)
 *  0        2                 8                16               24      32
 * +--------+-----------------+----------------+----------------+-------+
 * | type   | (padding)       | data (union, 24 bytes, 8-aligned)        |
 * +--------+-----------------+----------------+----------------+-------+
 *   uint16                     PMIX_BYTE_OBJECT (27): bytes char* @8, size size_t @16
 *                              PMIX_UINT32 (14): uint32 @8;  PMIX_BOOL (1): bool @8
 *
 * pmix_info_t (552 bytes)
 *  0                                   512      516  520                     552
 * +------------------------------------+--------+----+-----------------------+
 * | key: char[512] (PMIX_MAX_KEYLEN+1) | flags  |pad | value: pmix_value_t   |
 * +------------------------------------+--------+----+-----------------------+
 * ```
 *
 * [PmixBootstrap] builds these in JNA [Memory] and reads what `PMIx_Get` returns.
 */
internal object PmixDescriptor {
    const val NSPACE_LENGTH: Int = 256
    const val PROC_RANK_OFFSET: Long = 256
    const val PROC_SIZE: Int = 260

    const val VALUE_TYPE_OFFSET: Long = 0
    const val VALUE_DATA_OFFSET: Long = 8
    const val BYTE_OBJECT_SIZE_OFFSET: Long = 16
    const val VALUE_SIZE: Int = 32

    const val KEY_LENGTH: Int = 512
    const val INFO_FLAGS_OFFSET: Long = 512
    const val INFO_VALUE_OFFSET: Long = 520
    const val INFO_SIZE: Int = 552

    // pmix_data_type_t values
    const val PMIX_BOOL: Short = 1
    const val PMIX_UINT32: Short = 14
    const val PMIX_BYTE_OBJECT: Short = 27

    const val PMIX_GLOBAL: Byte = 3
    const val PMIX_SUCCESS: Int = 0
    const val PMIX_ERR_NOT_FOUND: Int = -46
    const val RANK_WILDCARD: Int = -2 // UINT32_MAX - 1 as a signed int

    const val KEY_COLLECT_DATA: String = "pmix.collect"
    const val KEY_JOB_SIZE: String = "pmix.job.size"
    const val KEY_UNIV_SIZE: String = "pmix.univ.size"
    const val KEY_APPNUM: String = "pmix.appnum"

    /** A zeroed `pmix_proc_t`. */
    fun newProc(): Memory = Memory(PROC_SIZE.toLong()).apply { clear() }

    fun nspace(proc: Pointer): String = proc.getString(0)

    fun rank(proc: Pointer): Int = proc.getInt(PROC_RANK_OFFSET)

    /** A `pmix_proc_t` naming [rank] in [nspace]. */
    fun proc(nspace: String, rank: Int): Memory {
        val bytes = nspace.toByteArray(Charsets.UTF_8)
        require(bytes.size < NSPACE_LENGTH) { "PMIx namespace '$nspace' is longer than ${NSPACE_LENGTH - 1} bytes" }
        return newProc().apply {
            write(0, bytes, 0, bytes.size)
            setInt(PROC_RANK_OFFSET, rank)
        }
    }

    /**
     * A `pmix_value_t` of type PMIX_BYTE_OBJECT over [bytes]; the returned pair keeps the bytes' native copy alive as
     * long as the value.
     */
    fun byteObject(bytes: ByteArray): Pair<Memory, Memory?> {
        val data = if (bytes.isEmpty()) null else Memory(bytes.size.toLong()).apply { write(0, bytes, 0, bytes.size) }
        val value =
            Memory(VALUE_SIZE.toLong()).apply {
                clear()
                setShort(VALUE_TYPE_OFFSET, PMIX_BYTE_OBJECT)
                setPointer(VALUE_DATA_OFFSET, data)
                setLong(BYTE_OBJECT_SIZE_OFFSET, bytes.size.toLong())
            }
        return value to data
    }

    /** One `pmix_info_t` holding the boolean [flag] under [key]. */
    fun boolInfo(key: String, flag: Boolean): Memory =
        Memory(INFO_SIZE.toLong()).apply {
            clear()
            val k = key.toByteArray(Charsets.UTF_8)
            write(0, k, 0, k.size)
            setShort(INFO_VALUE_OFFSET + VALUE_TYPE_OFFSET, PMIX_BOOL)
            setByte(INFO_VALUE_OFFSET + VALUE_DATA_OFFSET, if (flag) 1 else 0)
        }

    fun type(value: Pointer): Short = value.getShort(VALUE_TYPE_OFFSET)

    /** The bytes of a PMIX_BYTE_OBJECT value. */
    fun bytesOf(value: Pointer): ByteArray {
        val size = value.getLong(BYTE_OBJECT_SIZE_OFFSET)
        val data = value.getPointer(VALUE_DATA_OFFSET) ?: return ByteArray(0)
        require(size in 0..Int.MAX_VALUE) { "PMIx byte object of $size bytes" }
        return data.getByteArray(0, size.toInt())
    }

    fun uint32Of(value: Pointer): Int = value.getInt(VALUE_DATA_OFFSET)
}
