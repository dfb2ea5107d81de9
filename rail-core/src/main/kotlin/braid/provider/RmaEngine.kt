package braid.provider

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Errno
import braid.core.HmemCopy
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.OpFlags
import braid.provider.RmaDescriptor.FLAG_FETCH
import braid.provider.RmaDescriptor.KIND_ATOMIC
import braid.provider.RmaDescriptor.KIND_READ
import braid.provider.RmaDescriptor.KIND_WRITE
import braid.provider.RmaDescriptor.MAX_ATOMIC_BYTES
import braid.provider.RmaDescriptor.REASON_ACCESS
import braid.provider.RmaDescriptor.REASON_BOUNDS
import braid.provider.RmaDescriptor.REASON_COPY
import braid.provider.RmaDescriptor.REASON_MALFORMED
import braid.provider.RmaDescriptor.REASON_NO_KEY
import braid.provider.RmaDescriptor.REASON_UNSUPPORTED
import braid.provider.RmaDescriptor.REPLY
import braid.provider.RmaDescriptor.REPLY_HEADER
import braid.provider.RmaDescriptor.REQUEST_HEADER
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.UnsafeBuffer

/** One direction of a peer connection as a rail offers it to RMA: room for records of at most [maxRecord] bytes. */
internal interface RmaOutlet {
    val maxRecord: Int

    /** The buffer [claim] indexes into. */
    val buffer: MutableDirectBuffer

    /** Room for a record of [length] bytes: its index in [buffer], or -1 if there is none now. */
    fun claim(length: Int): Int

    fun commit(index: Int, length: Int)
}

/**
 * What RMA keeps per peer connection (shm: per channel direction): requests and replies that wait for room in its
 * [outlet]. [peer] names the other end in messages (its `toString`, read when a message is written, so a name learnt
 * later shows); nothing else reads it.
 */
internal class RmaPath(val outlet: RmaOutlet, private val peer: PeerName) {
    /** The other end, in words. */
    val peerName: String
        get() = peer.render()

    internal val requests = ArrayDeque<RmaOp>()
    internal val replies = ArrayDeque<RmaReply>()
    val idle: Boolean
        get() = requests.isEmpty() && replies.isEmpty()
}

/**
 * The rail-neutral part of RMA and atomics ([RmaDescriptor]) for one endpoint's rail: the initiator (requests out,
 * replies matched to their operation by id, completions through the endpoint) and the target (every request checked for
 * its key, its bounds and the access the region grants, then carried out on the registered memory; a refusal travels
 * back and becomes an error completion at the initiator). A rail supplies [RmaPath]s and feeds in what arrives.
 *
 * The target runs inside its rail's progress, under the domain lock, so an atomic from any process is applied whole
 * before the next one through that domain starts (see [AtomicOps]).
 *
 * Not thread-safe: callers hold the domain lock.
 */
internal class RmaEngine(
    private val ep: RailHost,
    private val rail: String,
    /** The largest request record this rail's outlets take. */
    requestMax: Int,
    private val maxOutstanding: Int,
) {
    private val pending = Long2ObjectHashMap<RmaOp>()
    private var nextId = 1L
    private val opPool = ArrayDeque<RmaOp>()
    private val replyPool = ArrayDeque<RmaReply>()
    private val atomicBytes = minOf(MAX_ATOMIC_BYTES, requestMax - REQUEST_HEADER)
    private var checked: MemoryRegion? = null
    private var checkDetail = 0L
    /** The copy service's iov scratch, and where an atomic on device memory is applied host-side. */
    private val hmemIov = LongArray(2)
    private val atomicHost = org.agrona.concurrent.UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(MAX_ATOMIC_BYTES))

    /** Operations started and not yet complete. */
    val outstanding: Int
        get() = pending.size

    /** The most elements of [type] one atomic of [form] carries (`fi_atomicvalid`). */
    fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int =
        (if (form == AtomicForm.COMPARE) atomicBytes / 2 else atomicBytes) / type.size

    // ## Initiator ##

    fun write(
        path: RmaPath,
        dest: Long,
        src: DirectBuffer,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val op = newOp(path, KIND_WRITE, dest, remoteOffset, key, flags, context) ?: return -Errno.EAGAIN
        op.local.wrap(src, 0, src.capacity())
        op.length = src.capacity().toLong()
        return start(op)
    }

    fun read(
        path: RmaPath,
        src: Long,
        dst: MutableDirectBuffer,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val op = newOp(path, KIND_READ, src, remoteOffset, key, flags, context) ?: return -Errno.EAGAIN
        op.local.wrap(dst, 0, dst.capacity())
        op.length = dst.capacity().toLong()
        return start(op)
    }

    /** An atomic of [count] elements; [result] set: fetching; [compare] set: compare-and-swap. */
    fun atomic(
        path: RmaPath,
        dest: Long,
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        aop: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int {
        val form =
            if (compare != null) AtomicForm.COMPARE else if (result != null) AtomicForm.FETCH else AtomicForm.UPDATE
        if (count > maxAtomicCount(type, form)) return -Errno.EMSGSIZE
        val op = newOp(path, KIND_ATOMIC, dest, remoteOffset, key, flags, context) ?: return -Errno.EAGAIN
        val n = count * type.size
        op.local.wrap(operand, 0, n)
        if (compare != null) op.compare.wrap(compare, 0, n)
        if (result != null) op.result.wrap(result, 0, n)
        op.hasCompare = compare != null
        op.fetch = result != null
        op.type = type
        op.aop = aop
        op.count = count
        op.length = n.toLong()
        return start(op)
    }

    private fun newOp(
        path: RmaPath,
        kind: Int,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): RmaOp? {
        if (pending.size >= maxOutstanding) return null
        val op = opPool.removeLastOrNull() ?: RmaOp()
        op.kind = kind
        op.id = nextId++
        op.path = path
        op.dest = dest
        op.remoteOffset = remoteOffset
        op.key = key
        op.flags = flags
        op.context = context
        op.sent = 0
        op.received = 0
        op.queued = false
        op.fetch = false
        op.hasCompare = false
        op.count = 0
        return op
    }

    private fun start(op: RmaOp): Int {
        pending.put(op.id, op)
        val path = op.path!!
        if (path.requests.isEmpty() && writeRequest(op)) return 0
        op.queued = true
        path.requests.addLast(op)
        return 0
    }

    /** Writes what [op] still has to send; true once all of it is out. */
    private fun writeRequest(op: RmaOp): Boolean {
        val out = op.path!!.outlet
        when (op.kind) {
            KIND_WRITE ->
                do {
                    val n = minOf((out.maxRecord - REQUEST_HEADER).toLong(), op.length - op.sent).toInt()
                    val i = out.claim(REQUEST_HEADER + n)
                    if (i < 0) return false
                    RmaDescriptor.putRequest(
                        out.buffer,
                        i,
                        KIND_WRITE,
                        0,
                        0,
                        0,
                        0,
                        op.id,
                        op.key,
                        op.remoteOffset,
                        op.length,
                        op.sent,
                    )
                    if (n > 0) out.buffer.putBytes(i + REQUEST_HEADER, op.local, op.sent.toInt(), n)
                    out.commit(i, REQUEST_HEADER + n)
                    op.sent += n
                } while (op.sent < op.length)
            KIND_READ -> {
                val i = out.claim(REQUEST_HEADER)
                if (i < 0) return false
                RmaDescriptor.putRequest(
                    out.buffer,
                    i,
                    KIND_READ,
                    0,
                    0,
                    0,
                    0,
                    op.id,
                    op.key,
                    op.remoteOffset,
                    op.length,
                    0,
                )
                out.commit(i, REQUEST_HEADER)
            }
            else -> {
                val n = op.length.toInt()
                val total = REQUEST_HEADER + if (op.hasCompare) 2 * n else n
                val i = out.claim(total)
                if (i < 0) return false
                RmaDescriptor.putRequest(
                    out.buffer,
                    i,
                    KIND_ATOMIC,
                    op.type.code,
                    op.aop.code,
                    if (op.fetch) FLAG_FETCH else 0,
                    op.count,
                    op.id,
                    op.key,
                    op.remoteOffset,
                    op.length,
                    0,
                )
                out.buffer.putBytes(i + REQUEST_HEADER, op.local, 0, n)
                if (op.hasCompare) out.buffer.putBytes(i + REQUEST_HEADER + n, op.compare, 0, n)
                out.commit(i, total)
            }
        }
        return true
    }

    /**
     * A reply arrived on [path]. Returns false if it is malformed (a reply to an operation of another path, a piece out
     * of place): the rail treats that as a corrupt stream.
     */
    fun onReply(path: RmaPath, b: DirectBuffer, i: Int, length: Int): Boolean {
        if (length < REPLY_HEADER) return false
        val kind = RmaDescriptor.kind(b, i)
        if (kind and REPLY == 0) return false
        val op =
            pending.get(RmaDescriptor.requestId(b, i)) ?: return true // refused at an earlier piece, and failed then
        if (op.path !== path || op.kind != kind and REPLY.inv()) return false
        val status = RmaDescriptor.status(b, i)
        if (status != 0) {
            fail(op, status, refusal(op, RmaDescriptor.reason(b, i), RmaDescriptor.detail(b, i)))
            return true
        }
        val n = length - REPLY_HEADER
        when (op.kind) {
            KIND_WRITE -> {
                if (n != 0 || op.queued) return false
                complete(op)
            }
            KIND_READ -> {
                val at = RmaDescriptor.replyPieceOffset(b, i)
                if (at != op.received || at + n > op.length || (n == 0 && op.length != 0L)) return false
                if (n > 0) op.local.putBytes(at.toInt(), b, i + REPLY_HEADER, n)
                op.received += n
                if (op.received == op.length) complete(op)
            }
            else -> {
                if (n != (if (op.fetch) op.length.toInt() else 0)) return false
                if (n > 0) op.result.putBytes(0, b, i + REPLY_HEADER, n)
                complete(op)
            }
        }
        return true
    }

    /** Writes the replies and requests waiting for room on [path]; returns how many went. */
    fun pump(path: RmaPath): Int {
        var work = 0
        while (path.replies.isNotEmpty()) {
            val r = path.replies.first()
            if (!writeReply(path, r)) break
            path.replies.removeFirst()
            releaseReply(r)
            work++
        }
        while (path.requests.isNotEmpty()) {
            val op = path.requests.first()
            if (!writeRequest(op)) break
            path.requests.removeFirst()
            op.queued = false
            work++
        }
        return work
    }

    /** [path]'s peer is gone: its operations fail with [err], naming [why]; replies owed to it are dropped. */
    fun failPath(path: RmaPath, err: Int, why: String) {
        for (r in path.replies) releaseReply(r)
        path.replies.clear()
        if (pending.isEmpty()) return
        val doomed = pending.values.filter { it.path === path }
        for (op in doomed) fail(op, err, "$why; ${describe(op)} did not complete")
    }

    private fun complete(op: RmaOp) {
        pending.remove(op.id)
        val context = op.context
        val flags = completionFlags(op)
        val len = op.length
        release(op)
        ep.rmaComplete(context, flags, len)
    }

    private fun fail(op: RmaOp, err: Int, message: String) {
        pending.remove(op.id)
        if (op.queued) {
            op.path!!.requests.remove(op)
            op.queued = false
        }
        val context = op.context
        val flags = completionFlags(op)
        release(op)
        ep.rmaError(context, flags, 0, err, message)
    }

    private fun completionFlags(op: RmaOp): Long =
        (op.flags and OpFlags.COMPLETION) or
            when (op.kind) {
                KIND_WRITE -> OpFlags.RMA or OpFlags.WRITE
                KIND_READ -> OpFlags.RMA or OpFlags.READ
                else -> OpFlags.ATOMIC or if (op.fetch) OpFlags.READ else OpFlags.WRITE
            }

    private fun describe(op: RmaOp): String {
        val what =
            when (op.kind) {
                KIND_WRITE -> "RMA write of ${op.length} bytes to"
                KIND_READ -> "RMA read of ${op.length} bytes from"
                else ->
                    "${if (op.hasCompare) "compare-atomic" else if (op.fetch) "fetch-atomic" else "atomic"} ${op.aop} of ${op.count} ${op.type} on"
            }
        return "$rail: $what peer ${op.dest} (${op.path!!.peerName}) at key ${op.key}, offset ${op.remoteOffset}"
    }

    private fun refusal(op: RmaOp, reason: Int, detail: Long): String =
        describe(op) +
            ": " +
            when (reason) {
                REASON_NO_KEY -> "the target has no memory region registered under key ${op.key}"
                REASON_BOUNDS ->
                    "bytes [${op.remoteOffset}, ${op.remoteOffset + op.length}) lie outside the target's region of $detail bytes"
                REASON_ACCESS ->
                    "the target's region grants ${accessNames(detail.toInt())}; this needs ${accessNames(needed(op.kind, op.aop, op.fetch))}"
                REASON_UNSUPPORTED -> "the target does not support this operation on this type"
                REASON_COPY ->
                    "the target's copy of its device memory failed with errno $detail (${Errno.name(detail.toInt())})"
                else -> "the target refused the request as malformed"
            }

    private fun release(op: RmaOp) {
        op.context = null
        op.path = null
        op.local.wrap(0L, 0)
        op.compare.wrap(0L, 0)
        op.result.wrap(0L, 0)
        opPool.addLast(op)
    }

    // ## Target ##

    /**
     * A request arrived on [path]: carry it out, or refuse it, and reply on [path]. Returns false only if it is not a
     * request at all (the rail treats that as a corrupt stream).
     */
    fun serve(path: RmaPath, b: DirectBuffer, i: Int, length: Int): Boolean {
        if (length < REQUEST_HEADER) return false
        val id = RmaDescriptor.requestId(b, i)
        val key = RmaDescriptor.key(b, i)
        val offset = RmaDescriptor.remoteOffset(b, i)
        val total = RmaDescriptor.length(b, i)
        val payload = length - REQUEST_HEADER
        when (val kind = RmaDescriptor.kind(b, i)) {
            KIND_WRITE -> {
                val piece = RmaDescriptor.pieceOffset(b, i)
                if (piece < 0 || total < 0 || piece > total - payload)
                    return refuse(path, kind, id, REASON_MALFORMED, 0)
                val reason = check(key, offset, total, MrAccess.REMOTE_WRITE)
                if (reason != 0) return refuse(path, kind, id, reason, checkDetail)
                if (payload > 0) {
                    val rc =
                        HmemCopy.toRegion(
                            ep.hmemOps,
                            checked!!,
                            offset + piece,
                            b,
                            i + REQUEST_HEADER,
                            payload,
                            hmemIov,
                        )
                    if (rc < 0) return refuse(path, kind, id, REASON_COPY, -rc)
                }
                if (piece + payload == total) {
                    ep.remoteAccess(OpFlags.REMOTE_WRITE)
                    reply(path, kind, 0, id, 0)
                }
            }
            KIND_READ -> {
                if (payload != 0) return refuse(path, kind, id, REASON_MALFORMED, 0)
                val reason = check(key, offset, total, MrAccess.REMOTE_READ)
                if (reason != 0) return refuse(path, kind, id, reason, checkDetail)
                ep.remoteAccess(OpFlags.REMOTE_READ)
                val r = newReply(kind, 0, id, 0)
                r.region = checked
                r.key = key
                r.offset = offset
                r.length = total
                r.sent = 0
                if (!(path.replies.isEmpty() && writeReply(path, r))) path.replies.addLast(r) else releaseReply(r)
            }
            KIND_ATOMIC -> serveAtomic(path, b, i, id, key, offset, total, payload)
            else -> return false
        }
        return true
    }

    private fun serveAtomic(
        path: RmaPath,
        b: DirectBuffer,
        i: Int,
        id: Long,
        key: Long,
        offset: Long,
        total: Long,
        payload: Int,
    ) {
        val type = AtomicDatatype.of(RmaDescriptor.datatype(b, i))
        val aop = AtomicOp.of(RmaDescriptor.op(b, i))
        val count = RmaDescriptor.count(b, i)
        val fetch = RmaDescriptor.flags(b, i) and FLAG_FETCH != 0
        if (type == null || aop == null || !aop.appliesTo(type)) {
            refuse(path, KIND_ATOMIC, id, REASON_UNSUPPORTED, 0)
            return
        }
        val n = count.toLong() * type.size
        val compare = aop == AtomicOp.CSWAP
        if (count <= 0 || n > MAX_ATOMIC_BYTES || total != n || payload.toLong() != (if (compare) 2 * n else n)) {
            refuse(path, KIND_ATOMIC, id, REASON_MALFORMED, 0)
            return
        }
        val reason = check(key, offset, n, needed(KIND_ATOMIC, aop, fetch))
        if (reason != 0) {
            refuse(path, KIND_ATOMIC, id, reason, checkDetail)
            return
        }
        // Device memory: fetched into host memory, applied there, copied back (hmemBack) before the reply.
        val mr = checked!!
        val bytes = n.toInt()
        val region = if (mr.iface.isSystem) mr.buffer else atomicHost
        val at = if (mr.iface.isSystem) offset.toInt() else 0
        if (!mr.iface.isSystem) {
            val rc = HmemCopy.fromRegion(ep.hmemOps, mr, offset, atomicHost, 0, bytes, hmemIov)
            if (rc < 0) {
                refuse(path, KIND_ATOMIC, id, REASON_COPY, -rc)
                return
            }
        }
        val cmpAt = i + REQUEST_HEADER + bytes
        ep.remoteAccess(if (aop == AtomicOp.ATOMIC_READ) OpFlags.REMOTE_READ else OpFlags.REMOTE_WRITE)
        val replyLength = REPLY_HEADER + if (fetch) bytes else 0
        if (path.replies.isEmpty()) {
            val out = path.outlet
            val j = out.claim(replyLength)
            if (j >= 0) {
                // The old values go straight into the reply record.
                AtomicOps.execute(
                    region,
                    at,
                    b,
                    i + REQUEST_HEADER,
                    if (compare) b else null,
                    cmpAt,
                    if (fetch) out.buffer else null,
                    j + REPLY_HEADER,
                    type,
                    aop,
                    count,
                )
                val back = hmemBack(mr, offset, bytes)
                RmaDescriptor.putReply(
                    out.buffer,
                    j,
                    KIND_ATOMIC,
                    if (back == 0) 0 else REASON_COPY,
                    back,
                    id,
                    back.toLong(),
                    0,
                )
                out.commit(j, replyLength)
                return
            }
        }
        // No room to reply now: the operation still happens now, in arrival order; its reply waits.
        val r = newReply(KIND_ATOMIC, 0, id, 0)
        AtomicOps.execute(
            region,
            at,
            b,
            i + REQUEST_HEADER,
            if (compare) b else null,
            cmpAt,
            if (fetch) r.bytes else null,
            0,
            type,
            aop,
            count,
        )
        r.byteCount = if (fetch) bytes else 0
        val back = hmemBack(mr, offset, bytes)
        if (back != 0) {
            r.reason = REASON_COPY
            r.status = back
            r.detail = back.toLong()
            r.byteCount = 0
        }
        path.replies.addLast(r)
    }

    /** After an atomic applied host-side, copies the result back to [mr]'s device memory: 0, or the copy's errno. */
    private fun hmemBack(mr: MemoryRegion, offset: Long, bytes: Int): Int {
        if (mr.iface.isSystem) return 0
        val rc = HmemCopy.toRegion(ep.hmemOps, mr, offset, atomicHost, 0, bytes, hmemIov)
        return if (rc < 0) (-rc).toInt() else 0
    }

    /**
     * 0 if [key]'s region holds [offset, offset+length) and grants [needed], else the reason ([checked], [checkDetail]
     * set).
     */
    private fun check(key: Long, offset: Long, length: Long, needed: Int): Int {
        val mr = ep.region(key) ?: return REASON_NO_KEY
        checked = mr
        if (offset < 0 || length < 0 || offset > mr.length - length) {
            checkDetail = mr.length.toLong()
            return REASON_BOUNDS
        }
        if (mr.access and needed != needed) {
            checkDetail = mr.access.toLong()
            return REASON_ACCESS
        }
        return 0
    }

    private fun refuse(path: RmaPath, kind: Int, id: Long, reason: Int, detail: Long): Boolean {
        val status =
            when (reason) {
                REASON_BOUNDS -> Errno.EINVAL
                REASON_UNSUPPORTED -> Errno.EOPNOTSUPP
                REASON_MALFORMED -> Errno.EIO
                REASON_COPY -> detail.toInt()
                else -> Errno.EACCES
            }
        val r = newReply(kind, reason, id, detail)
        r.status = status
        if (path.replies.isEmpty() && writeReply(path, r)) releaseReply(r) else path.replies.addLast(r)
        return true
    }

    private fun reply(path: RmaPath, kind: Int, reason: Int, id: Long, detail: Long) {
        val r = newReply(kind, reason, id, detail)
        if (path.replies.isEmpty() && writeReply(path, r)) releaseReply(r) else path.replies.addLast(r)
    }

    /** Writes [r] (or what is left of a read); true once all of it is out. */
    private fun writeReply(path: RmaPath, r: RmaReply): Boolean {
        val out = path.outlet
        if (r.region == null) {
            val i = out.claim(REPLY_HEADER + r.byteCount)
            if (i < 0) return false
            RmaDescriptor.putReply(out.buffer, i, r.kind, r.reason, r.status, r.id, r.detail, 0)
            if (r.byteCount > 0) out.buffer.putBytes(i + REPLY_HEADER, r.bytes, 0, r.byteCount)
            out.commit(i, REPLY_HEADER + r.byteCount)
            return true
        }
        do {
            if (ep.region(r.key) !== r.region) {
                // Deregistered while the read was going out: the rest is refused.
                r.region = null
                r.reason = REASON_NO_KEY
                r.status = Errno.EACCES
                r.byteCount = 0
                return writeReply(path, r)
            }
            val n = minOf((out.maxRecord - REPLY_HEADER).toLong(), r.length - r.sent).toInt()
            val i = out.claim(REPLY_HEADER + n)
            if (i < 0) return false
            RmaDescriptor.putReply(out.buffer, i, KIND_READ, 0, 0, r.id, 0, r.sent)
            if (n > 0) {
                val rc =
                    HmemCopy.fromRegion(
                        ep.hmemOps,
                        r.region!!,
                        r.offset + r.sent,
                        out.buffer,
                        i + REPLY_HEADER,
                        n,
                        hmemIov,
                    )
                if (rc < 0) { // the record claimed carries the refusal instead; the read ends here
                    RmaDescriptor.putReply(out.buffer, i, KIND_READ, REASON_COPY, (-rc).toInt(), r.id, -rc, r.sent)
                    out.commit(i, REPLY_HEADER + n)
                    return true
                }
            }
            out.commit(i, REPLY_HEADER + n)
            r.sent += n
        } while (r.sent < r.length)
        return true
    }

    private fun newReply(kind: Int, reason: Int, id: Long, detail: Long): RmaReply {
        val r = replyPool.removeLastOrNull() ?: RmaReply()
        r.kind = kind
        r.reason = reason
        r.status = 0
        r.id = id
        r.detail = detail
        r.region = null
        r.byteCount = 0
        return r
    }

    private fun releaseReply(r: RmaReply) {
        r.region = null
        replyPool.addLast(r)
    }

    private companion object {
        fun needed(kind: Int, aop: AtomicOp, fetch: Boolean): Int =
            when {
                kind == KIND_WRITE -> MrAccess.REMOTE_WRITE
                kind == KIND_READ || aop == AtomicOp.ATOMIC_READ -> MrAccess.REMOTE_READ
                fetch || aop == AtomicOp.CSWAP -> MrAccess.REMOTE_READ or MrAccess.REMOTE_WRITE
                else -> MrAccess.REMOTE_WRITE
            }

        fun accessNames(access: Int): String {
            val names =
                listOf(MrAccess.REMOTE_READ to "REMOTE_READ", MrAccess.REMOTE_WRITE to "REMOTE_WRITE")
                    .filter { access and it.first != 0 }
                    .map { it.second }
            return if (names.isEmpty()) "no remote access" else names.joinToString("|")
        }
    }
}

/** An RMA or atomic operation in flight at the initiator. */
internal class RmaOp {
    var kind = 0
    var id = 0L
    var path: RmaPath? = null
    var dest = 0L
    /** Write source, read destination, atomic operands. */
    val local = UnsafeBuffer(0L, 0)
    val compare = UnsafeBuffer(0L, 0)
    val result = UnsafeBuffer(0L, 0)
    var hasCompare = false
    var fetch = false
    var type = AtomicDatatype.INT64
    var aop = AtomicOp.SUM
    var count = 0
    var length = 0L
    var key = 0L
    var remoteOffset = 0L
    var flags = 0L
    var context: Any? = null
    var sent = 0L
    var received = 0L
    /** Waiting in its path's request queue for room. */
    var queued = false
}

/** A reply the target owes: a status, fetched values, or a read still streaming out. */
internal class RmaReply {
    var kind = 0
    var reason = 0
    var status = 0
    var id = 0L
    var detail = 0L
    val bytes = UnsafeBuffer(ByteArray(MAX_ATOMIC_BYTES))
    var byteCount = 0
    var region: MemoryRegion? = null
    var key = 0L
    var offset = 0L
    var length = 0L
    var sent = 0L
}
