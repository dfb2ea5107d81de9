package braid.core

import org.agrona.DirectBuffer

/**
 * PEEK, CLAIM and DISCARD (fi_tagged(3)) on the shared receive context: report the earliest unexpected message that
 * matches without taking it (or ENOMSG), reserve it for a context, drop it, or receive or drop the message reserved
 * earlier. Outcomes go to [sink]'s receive CQ. Returns 0, `-EINVAL` (CLAIM without a context) or `-ENOENT` (nothing
 * claimed for it). Caller holds the lock.
 */
internal fun SharedReceiveContext.probe(
    sink: EndpointSink,
    tagged: Boolean,
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long,
    flags: Long,
    context: Any?,
): Int {
    val base = EndpointSink.recvFlags(tagged, flags)
    if (flags and OpFlags.PEEK != 0L) {
        val e = peek(tagged, src, tag, ignore)
        if (e == null) {
            sink.rxError(
                context,
                base,
                0,
                0,
                tag,
                0,
                Errno.ENOMSG,
                FiAddr.NOTAVAIL,
                "no unexpected message matches tag 0x${java.lang.Long.toHexString(tag)} from source $src",
            )
            return 0
        }
        val dataFlag = e.flags and OpFlags.REMOTE_CQ_DATA
        val size = e.size
        val t = e.tag
        val a = e.addr
        val d = e.data
        if (flags and OpFlags.CLAIM != 0L) {
            if (context == null) return -Errno.EINVAL
            claim(e, context)
        } else if (flags and OpFlags.DISCARD != 0L) {
            remove(e)
            discard(e)
        }
        sink.rxCq!!.write(context, base or dataFlag, size, d, t, a)
        return 0
    }
    // CLAIM without PEEK: take the message reserved for this context.
    if (context == null) return -Errno.EINVAL
    val e = takeClaimed(context) ?: return -Errno.ENOENT
    if (flags and OpFlags.DISCARD != 0L) {
        val dataFlag = e.flags and OpFlags.REMOTE_CQ_DATA
        val size = e.size
        val t = e.tag
        val a = e.addr
        val d = e.data
        discard(e)
        sink.rxCq!!.write(context, base or dataFlag, size, d, t, a)
        return 0
    }
    e.context = context
    e.flags = e.flags or flags
    e.buffer.wrap(buffer, offset, length)
    start(e)
    return 0
}
