package braid.mpi

/**
 * What a completed operation reports (`MPI_Status`): the [source] rank and [tag] of a receive or probe, the bytes it
 * carried ([getCount] turns them into elements), whether it was cancelled, and its error class. In the any/some forms,
 * [index] is the request's position.
 *
 * The calls that take a `Status` argument ([Request.waitFor], [Comm.recv]) fill the caller's object instead of
 * returning a new one, as C's `MPI_Status *` does: make one with `Status()` and reuse it, and a warm receive loop
 * allocates nothing.
 */
public class Status
internal constructor(source: Int, tag: Int, bytes: Long, isCancelled: Boolean, error: Int, index: Int) {
    /** An empty status to pass to the calls that fill one. */
    public constructor() : this(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, ErrorClass.SUCCESS, -1)

    /** The sender's rank in the communicator (its remote group for an intercommunicator). */
    @get:JvmName("getSource")
    public var source: Int = source
        private set

    public var tag: Int = tag
        private set

    /** Bytes received (or sent). */
    public var bytes: Long = bytes
        private set

    /** Whether the operation was cancelled (`MPI_Test_cancelled`). */
    @get:JvmName("isCancelled")
    public var isCancelled: Boolean = isCancelled
        private set

    /** `ErrorClass.SUCCESS`, or the class of the error that ended the operation. */
    public var error: Int = error
        private set

    /** The index of the request in the array given to an any/some call; -1 otherwise. */
    public var index: Int = index
        private set

    @JvmSynthetic
    internal fun set(source: Int, tag: Int, bytes: Long, isCancelled: Boolean, error: Int, index: Int) {
        this.source = source
        this.tag = tag
        this.bytes = bytes
        this.isCancelled = isCancelled
        this.error = error
        this.index = index
    }

    @JvmSynthetic internal fun set(s: Status) = set(s.source, s.tag, s.bytes, s.isCancelled, s.error, s.index)

    /** The number of [type] elements received (`MPI_Get_count`), or [Mpi.UNDEFINED] if not a whole number. */
    public fun getCount(type: Datatype): Int =
        when {
            type.size == 0L -> if (bytes == 0L) 0 else Mpi.UNDEFINED
            bytes % type.size != 0L -> Mpi.UNDEFINED
            else -> (bytes / type.size).toInt()
        }

    /**
     * The number of basic elements received (`MPI_Get_elements`), or [Mpi.UNDEFINED]; for a struct that mixes element
     * kinds, the whole elements of [type] (as [getCount]).
     */
    public fun getElements(type: Datatype): Int {
        val b = type.basic ?: return getCount(type)
        return if (bytes % b.size == 0L) (bytes / b.size).toInt() else Mpi.UNDEFINED
    }

    @JvmSynthetic internal fun withIndex(i: Int): Status = Status(source, tag, bytes, isCancelled, error, i)

    override fun toString(): String =
        "Status(source=$source, tag=$tag, bytes=$bytes, cancelled=$isCancelled, error=${ErrorClass.name(error)}${if (index >= 0) ", index=$index" else ""})"

    internal companion object {
        @get:JvmSynthetic val EMPTY = Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, 0, false, ErrorClass.SUCCESS, -1)
        @get:JvmSynthetic val PROC_NULL = Status(Mpi.PROC_NULL, Mpi.ANY_TAG, 0, false, ErrorClass.SUCCESS, -1)
        /** Where statuses nobody asked for are written (`MPI_STATUS_IGNORE`): written from any thread, never read. */
        @get:JvmSynthetic val IGNORED = Status()
    }
}
