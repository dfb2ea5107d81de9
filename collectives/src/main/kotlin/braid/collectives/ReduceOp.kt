package braid.collectives

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The built-in reduction operations (MPI's predefined ops); all are commutative and associative (floating-point sums
 * and products only up to rounding, which is why a reduction's result may differ with the algorithm's order).
 * [Datatype.supports] says which apply to which type.
 */
public enum class ReduceOp {
    SUM,
    PROD,
    MIN,
    MAX,
    LAND,
    LOR,
    LXOR,
    BAND,
    BOR,
    BXOR,
    MINLOC,
    MAXLOC;

    /**
     * Combines locally, `inout[i] = input[i] op inout[i]` for [count] elements of [datatype] in native byte order — the
     * same kernel a collective's reduction steps run (`MPI_Reduce_local` for a layer above). Throws
     * [braid.core.FabricException] (EINVAL) if this op is not defined on [datatype]; the caller checks the ranges.
     */
    public fun reduceLocal(
        input: DirectBuffer,
        inputOffset: Int,
        inout: MutableDirectBuffer,
        inoutOffset: Int,
        count: Int,
        datatype: Datatype,
    ) {
        Kernels.builtin(datatype, this).reduce(input, inputOffset, inout, inoutOffset, count, true)
    }

    /**
     * [reduceLocal] over ByteBuffers (heap or direct), from their positions; elements are read in native byte order
     * whatever order the buffers are set to. Refuses a read-only [inout].
     */
    public fun reduceLocal(input: ByteBuffer, inout: ByteBuffer, count: Int, datatype: Datatype) {
        require(!inout.isReadOnly) { "the inout ByteBuffer is read-only; the result cannot be written into it" }
        reduceLocal(
            UnsafeBuffer(input, input.position(), input.remaining()),
            0,
            UnsafeBuffer(inout, inout.position(), inout.remaining()),
            0,
            count,
            datatype,
        )
    }
}

/**
 * A reduction the application supplies (MPI's `MPI_Op_create`): [reduce] combines `count` elements of [Datatype] as
 * `inout[i] = input[i] ∘ inout[i]`, where `input` holds the contribution of lower ranks — the order MPI defines, so a
 * non-commutative ∘ gets the ranks' values combined in rank order. It runs under the endpoint's domain lock on
 * whichever thread drives progress: it must not block or use the group.
 *
 * [isCommutative] false restricts the algorithms to order-preserving ones (recursive doubling, binomial trees over
 * ranks in order).
 */
public interface UserReduction {
    public fun reduce(
        input: DirectBuffer,
        inputOffset: Int,
        inout: MutableDirectBuffer,
        inoutOffset: Int,
        count: Int,
        datatype: Datatype,
    )

    /**
     * [reduce] over ByteBuffers, from their positions (a convenience for callers, as rail-core's `LocalReduction` has
     * one; it allocates two views, so schedules call the form above).
     */
    public fun reduce(input: ByteBuffer, inout: ByteBuffer, count: Int, datatype: Datatype) {
        require(!inout.isReadOnly) { "the inout ByteBuffer is read-only; the result cannot be written into it" }
        reduce(
            UnsafeBuffer(input, input.position(), input.remaining()),
            0,
            UnsafeBuffer(inout, inout.position(), inout.remaining()),
            0,
            count,
            datatype,
        )
    }

    public fun isCommutative(): Boolean
}
