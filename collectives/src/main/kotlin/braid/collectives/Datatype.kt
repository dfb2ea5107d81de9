package braid.collectives

/**
 * The element types a collective moves and reduces, the built-in datatypes an MPI layer maps its own onto. Elements are
 * packed in native byte order (Agrona's buffers); the pair types of MINLOC and MAXLOC are a value followed by an `int`
 * index, packed with no padding (`DOUBLE_INT` is 12 bytes: a `double` at 0, an `int` at 8).
 */
public enum class Datatype(
    /** The size of one element in bytes. */
    @get:JvmName("size") public val size: Int,
    @get:JvmSynthetic internal val family: Family,
) {
    /** Opaque bytes: moved, and reduced only by the bitwise operations. */
    BYTE(1, Family.BYTE),
    INT8(1, Family.SIGNED),
    UINT8(1, Family.UNSIGNED),
    INT16(2, Family.SIGNED),
    UINT16(2, Family.UNSIGNED),
    INT32(4, Family.SIGNED),
    UINT32(4, Family.UNSIGNED),
    INT64(8, Family.SIGNED),
    UINT64(8, Family.UNSIGNED),
    FLOAT(4, Family.FLOATING),
    DOUBLE(8, Family.FLOATING),
    /** A one-byte truth value (0 false, anything else true): the logical operations. */
    BOOL(1, Family.LOGICAL),
    /** `short` value + `int` index (MINLOC/MAXLOC). */
    SHORT_INT(6, Family.PAIR),
    /** `int` value + `int` index (MPI's `2INT`). */
    INT_INT(8, Family.PAIR),
    /** `long` value + `int` index. */
    LONG_INT(12, Family.PAIR),
    /** `float` value + `int` index. */
    FLOAT_INT(8, Family.PAIR),
    /** `double` value + `int` index. */
    DOUBLE_INT(12, Family.PAIR);

    internal enum class Family {
        BYTE,
        SIGNED,
        UNSIGNED,
        FLOATING,
        LOGICAL,
        PAIR,
    }

    /** Whether [op] is defined on this type (MPI's table of operations and types). */
    public fun supports(op: ReduceOp): Boolean =
        when (op) {
            ReduceOp.SUM,
            ReduceOp.PROD,
            ReduceOp.MIN,
            ReduceOp.MAX -> family == Family.SIGNED || family == Family.UNSIGNED || family == Family.FLOATING
            ReduceOp.LAND,
            ReduceOp.LOR,
            ReduceOp.LXOR -> family == Family.SIGNED || family == Family.UNSIGNED || family == Family.LOGICAL
            ReduceOp.BAND,
            ReduceOp.BOR,
            ReduceOp.BXOR -> family == Family.SIGNED || family == Family.UNSIGNED || family == Family.BYTE
            ReduceOp.MINLOC,
            ReduceOp.MAXLOC -> family == Family.PAIR
        }
}
