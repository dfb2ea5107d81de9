package braid.mpi

/**
 * The element kinds MPI's built-in datatypes are made of, which reduction ops understand. A derived datatype whose
 * elements are all of one kind carries it ([Datatype.basic]), so built-in ops apply to it element by element. The pair
 * kinds are `MPI_MAXLOC`/`MPI_MINLOC`'s (value, int index) pairs, laid out packed: the value, then a 4-byte int.
 */
public enum class BasicType(
    /** Bytes per element. */
    public val size: Int,
    /** Integer kinds take the bitwise ops. */
    public val integer: Boolean,
    public val unsigned: Boolean = false,
    public val floating: Boolean = false,
    /** A (value, index) pair of MAXLOC/MINLOC; [pairValue] is the value's kind. */
    public val pairValue: BasicType? = null,
) {
    INT8(1, true),
    INT16(2, true),
    INT32(4, true),
    INT64(8, true),
    UINT8(1, true, unsigned = true),
    UINT16(2, true, unsigned = true),
    UINT32(4, true, unsigned = true),
    UINT64(8, true, unsigned = true),
    FLOAT32(4, false, floating = true),
    FLOAT64(8, false, floating = true),
    /** Java `boolean` as one byte, 0 or 1. */
    BOOL(1, false),
    /** Java `char`: two bytes, compared unsigned. */
    CHAR16(2, true, unsigned = true),
    /** Opaque bytes (`MPI_PACKED`): no op but REPLACE and NO_OP applies. */
    OPAQUE(1, false),
    PAIR_INT_INT(8, false, pairValue = INT32),
    PAIR_SHORT_INT(6, false, pairValue = INT16),
    PAIR_LONG_INT(12, false, pairValue = INT64),
    PAIR_FLOAT_INT(8, false, pairValue = FLOAT32),
    PAIR_DOUBLE_INT(12, false, pairValue = FLOAT64),
}
