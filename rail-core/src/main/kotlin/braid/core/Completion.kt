package braid.core

/**
 * A completion read from a [CompletionQueue]: a reusable flyweight the caller owns and passes to every read, so reading
 * allocates nothing. Which fields are filled depends on the queue's [CqFormat]; the others read as zero.
 */
public class Completion {
    /** The context the operation was posted with (`op_context`). */
    public var context: Any? = null
    /** What completed: [OpFlags.SEND] or [OpFlags.RECV], with MSG or TAGGED, REMOTE_CQ_DATA, … */
    public var flags: Long = 0
    /** Bytes transferred (for a receive, the bytes placed in the buffer). */
    public var len: Long = 0
    /** Remote CQ data, when [flags] has [OpFlags.REMOTE_CQ_DATA]. */
    public var data: Long = 0
    /** The message's tag. */
    public var tag: Long = 0
    /** The sender (set by [CompletionQueue.readFrom]); [FiAddr.NOTAVAIL] if not in the AV. */
    public var source: Long = FiAddr.NOTAVAIL

    override fun toString(): String =
        "Completion(context=$context, flags=${OpFlags.toString(flags)}, len=$len, data=$data, tag=0x${java.lang.Long.toHexString(tag)}, source=$source)"
}

/**
 * An error completion (`struct fi_cq_err_entry`), read with [CompletionQueue.readErr] after a read returned `-EAVAIL`.
 * [err] is an [Errno] value; [olen] is how many bytes did not fit when [err] is [Errno.ETRUNC].
 */
public class CompletionError {
    public var context: Any? = null
    public var flags: Long = 0
    public var len: Long = 0
    public var data: Long = 0
    public var tag: Long = 0
    public var olen: Long = 0
    public var err: Int = 0
    public var provErrno: Int = 0
    public var source: Long = FiAddr.NOTAVAIL
    /** What went wrong, in words: names the peer, the sizes or the operation. */
    public var message: String = ""

    override fun toString(): String =
        "CompletionError(${Errno.name(err)}: $message; context=$context, flags=${OpFlags.toString(flags)}, len=$len, olen=$olen, tag=0x${java.lang.Long.toHexString(tag)}, source=$source)"
}

/** Completion formats (`fi_cq_format`): how much of each completion a queue reports. */
public enum class CqFormat {
    CONTEXT,
    MSG,
    DATA,
    TAGGED,
}
