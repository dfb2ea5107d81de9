package braid.collectives

/**
 * What a cached schedule was built for: the operation, algorithm, datatype, reduction, counts and root. A group keeps
 * one mutable probe and fills it per call, so looking a schedule up allocates nothing; a miss stores a copy.
 */
internal class ShapeKey {
    var op: CollectiveOp = CollectiveOp.BARRIER
    var algorithm: CollectiveAlgorithm = CollectiveAlgorithm.AUTO
    var datatype: Datatype? = null
    /** A [ReduceOp] or a [UserReduction] (by identity), or null. */
    var reduction: Any? = null
    var count = 0
    var root = 0
    var inPlace = false
    var a: IntArray? = null
    var b: IntArray? = null
    var c: IntArray? = null
    var d: IntArray? = null

    fun set(
        op: CollectiveOp,
        algorithm: CollectiveAlgorithm,
        datatype: Datatype?,
        reduction: Any?,
        count: Int,
        root: Int,
        inPlace: Boolean,
        a: IntArray? = null,
        b: IntArray? = null,
        c: IntArray? = null,
        d: IntArray? = null,
    ): ShapeKey {
        this.op = op
        this.algorithm = algorithm
        this.datatype = datatype
        this.reduction = reduction
        this.count = count
        this.root = root
        this.inPlace = inPlace
        this.a = a
        this.b = b
        this.c = c
        this.d = d
        return this
    }

    fun copy(): ShapeKey =
        ShapeKey()
            .set(
                op,
                algorithm,
                datatype,
                reduction,
                count,
                root,
                inPlace,
                a?.copyOf(),
                b?.copyOf(),
                c?.copyOf(),
                d?.copyOf(),
            )

    override fun equals(other: Any?): Boolean {
        if (other !is ShapeKey) return false
        return op == other.op &&
            algorithm == other.algorithm &&
            datatype == other.datatype &&
            reduction === other.reduction &&
            count == other.count &&
            root == other.root &&
            inPlace == other.inPlace &&
            a.contentEquals(other.a) &&
            b.contentEquals(other.b) &&
            c.contentEquals(other.c) &&
            d.contentEquals(other.d)
    }

    override fun hashCode(): Int {
        var h = op.ordinal
        h = h * 31 + algorithm.ordinal
        h = h * 31 + (datatype?.ordinal ?: -1)
        h = h * 31 + System.identityHashCode(reduction)
        h = h * 31 + count
        h = h * 31 + root
        h = h * 31 + (if (inPlace) 1 else 0)
        h = h * 31 + a.contentHashCode()
        h = h * 31 + b.contentHashCode()
        h = h * 31 + c.contentHashCode()
        h = h * 31 + d.contentHashCode()
        return h
    }
}
