package braid.core

/**
 * Atomic operations (`enum fi_op`, libfabric's values). [Endpoint.tryAtomic] takes the updating ones,
 * [Endpoint.tryFetchAtomic] those and [ATOMIC_READ] (and [ATOMIC_WRITE] there is a swap: it returns the old value),
 * [Endpoint.tryCompareAtomic] only [CSWAP]. The target applies `new = old OP operand` element by element and, when
 * fetching, returns `old`.
 */
public enum class AtomicOp(public val code: Int) {
    MIN(0),
    MAX(1),
    SUM(2),
    PROD(3),
    /** Logical or, and, xor: the result is 1 or 0. */
    LOR(4),
    LAND(5),
    BOR(6),
    BAND(7),
    LXOR(8),
    BXOR(9),
    /** Reads the target (fetching forms only). */
    ATOMIC_READ(10),
    /** Replaces the target with the operand; fetched, a swap. */
    ATOMIC_WRITE(11),
    /** Compare-and-swap: `if (old == compare) new = operand`; returns `old`. */
    CSWAP(12);

    /** Whether the operation applies to [type]: logical and bitwise ones only to integers. */
    public fun appliesTo(type: AtomicDatatype): Boolean =
        when (this) {
            LOR,
            LAND,
            LXOR,
            BOR,
            BAND,
            BXOR -> !type.floating
            else -> true
        }

    internal companion object {
        private val byCode = entries.associateBy { it.code }

        @JvmSynthetic fun of(code: Int): AtomicOp? = byCode[code]
    }
}

/**
 * Element types of atomic operations (`enum fi_datatype`, libfabric's values).
 *
 * **Byte order.** Elements are in the platform's native byte order (`ByteOrder.nativeOrder()`, little-endian on x86 and
 * ARM) in every buffer: operands, compare values, fetched results and the target's registered memory. Agrona buffers
 * already read and write that order. A `java.nio.ByteBuffer` passed to an atomic must be set to it
 * (`buffer.order(ByteOrder.nativeOrder())`; a new ByteBuffer is big-endian): one in another order is refused (`-EINVAL`
 * from a `try…` form, a [FabricException] naming the buffer and the order from the others) instead of silently giving a
 * wrong counter. [MemoryRegion.byteBuffer] returns registered memory in native order.
 */
public enum class AtomicDatatype(
    public val code: Int,
    public val size: Int,
    @get:JvmSynthetic internal val floating: Boolean,
    @get:JvmSynthetic internal val unsigned: Boolean,
) {
    INT32(4, 4, false, false),
    UINT32(5, 4, false, true),
    INT64(6, 8, false, false),
    UINT64(7, 8, false, true),
    FLOAT(8, 4, true, false),
    DOUBLE(9, 8, true, false);

    internal companion object {
        private val byCode = entries.associateBy { it.code }

        @JvmSynthetic fun of(code: Int): AtomicDatatype? = byCode[code]
    }
}

/** The three atomic call forms, for validity checks. */
internal enum class AtomicForm(val label: String) {
    UPDATE("fi_atomic"),
    FETCH("fi_fetch_atomic"),
    COMPARE("fi_compare_atomic");

    /** Whether [op] may be posted through this form. */
    fun admits(op: AtomicOp): Boolean =
        when (this) {
            UPDATE -> op != AtomicOp.ATOMIC_READ && op != AtomicOp.CSWAP
            FETCH -> op != AtomicOp.CSWAP
            COMPARE -> op == AtomicOp.CSWAP
        }
}
