package braid.core

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/** Where a [DeferredWork] request stands. */
public enum class WorkStatus {
    /** Never queued, or done and ready to be queued again. */
    IDLE,
    /** Waiting for its triggering counter to reach its threshold. */
    QUEUED,
    /** Its operation was issued and has not completed (or waits for the rail to have room). */
    FIRED,
    COMPLETED,
    /** Its operation failed: see [DeferredWork.error] and [DeferredWork.errorMessage]. */
    FAILED,
    /** Taken off the queue by [DeferredWorkQueue.cancel] or a flush before it fired. */
    CANCELLED,
}

/**
 * A deferred work request (`struct fi_deferred_work`): once [triggeringCounter]'s success plus error count reaches
 * [threshold], [op] is issued — reading its buffers then, not when it was queued — and when that operation completes
 * [completionCounter] is bumped by one (its error side if the operation failed). Queue it with
 * [DeferredWorkQueue.queue].
 *
 * No completion is written to the endpoint's CQ and no counter bound to the endpoint moves, unless [flags] has
 * [OpFlags.COMPLETION]: then the CQ gets a completion (or an error completion) whose context is this request.
 * [OpFlags.DELIVERY_COMPLETE] and the like pass on to the operation. Counter operations ([DeferredOp.CounterSet],
 * [DeferredOp.CounterAdd]) take no completion counter and write no completion.
 *
 * A request is reusable: once COMPLETED, FAILED or CANCELLED it may be queued again, with a new [threshold] — how a
 * schedule is re-armed without allocating.
 */
public class DeferredWork
@JvmOverloads
constructor(
    triggeringCounter: Counter,
    threshold: Long,
    op: DeferredOp,
    completionCounter: Counter? = null,
    flags: Long = 0,
    context: Any? = null,
) {
    // Reassigned only when a trigger-able endpoint refills one of its pooled requests.
    public var triggeringCounter: Counter = triggeringCounter
        @JvmSynthetic internal set

    public var op: DeferredOp = op
        @JvmSynthetic internal set

    public var completionCounter: Counter? = completionCounter
        @JvmSynthetic internal set

    public var flags: Long = flags
        @JvmSynthetic internal set

    /** The application's own context, for its bookkeeping. */
    public var context: Any? = context
        @JvmSynthetic internal set

    /** The success plus error count of [triggeringCounter] at which [op] is issued; fixed while QUEUED. */
    public var threshold: Long = threshold
        set(value) {
            if (status == WorkStatus.QUEUED)
                throw FabricException(
                    Errno.EBUSY,
                    "deferred work $this: cannot change the threshold while it is queued; cancel it first",
                )
            field = value
        }

    @Volatile
    public var status: WorkStatus = WorkStatus.IDLE
        @JvmSynthetic internal set

    /** The [Errno] of the failure, once FAILED; ECANCELED once CANCELLED. */
    public var error: Int = 0
        @JvmSynthetic internal set

    public var errorMessage: String = ""
        @JvmSynthetic internal set

    // ## The queue's bookkeeping, under the domain lock ##
    @get:JvmSynthetic @set:JvmSynthetic internal var seq = 0L
    @get:JvmSynthetic @set:JvmSynthetic internal var heapIndex = -1
    @get:JvmSynthetic @set:JvmSynthetic internal var retrying = false
    /** Issued through a trigger-able endpoint: completes like any operation of that endpoint, with [context]. */
    @get:JvmSynthetic @set:JvmSynthetic internal var triggered = false
    /**
     * Held by the provider's native queue too ([braid.provider.DomainProvider.queueWork]): the provider issues it when
     * its native counter reaches the threshold, so Braid, when its own counter does, only marks it FIRED; cancelling it
     * asks the provider ([braid.provider.DomainProvider.cancelWork]).
     */
    @get:JvmSynthetic @set:JvmSynthetic internal var native = false
    /** The trigger-able endpoint whose pool this request goes back to once it is done, if any. */
    @get:JvmSynthetic @set:JvmSynthetic internal var pool: TriggeredEndpoint? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var prevFlight: DeferredWork? = null
    @get:JvmSynthetic @set:JvmSynthetic internal var nextFlight: DeferredWork? = null

    override fun toString(): String =
        "DeferredWork(${op.describe()} at $threshold on $triggeringCounter, $status${if (error != 0) " ${Errno.name(error)}" else ""})"
}

/**
 * The operation of a [DeferredWork] (`enum fi_trigger_op` and its `fi_op_*` structures). Buffer views are read when the
 * request fires; offsets and lengths are checked when it is queued.
 */
public sealed class DeferredOp {
    /** The endpoint the operation is issued on; null for counter operations. */
    public abstract val endpoint: Endpoint?

    internal enum class Kind {
        TX,
        RX,
        RMA,
        COUNTER,
        LOCAL,
    }

    @get:JvmSynthetic internal abstract val kind: Kind

    /** The flags of its completions ([Completion.flags]). */
    @get:JvmSynthetic internal abstract val cqFlags: Long

    /** Throws [FabricException] if the operation cannot be issued as described. Under the domain lock. */
    @JvmSynthetic internal abstract fun check()

    /**
     * Issues the operation with [work] as its context; 0, -errno, or [DONE] when it completed at once. Under the domain
     * lock.
     */
    @JvmSynthetic internal abstract fun post(work: DeferredWork, flags: Long): Int

    @JvmSynthetic internal abstract fun describe(): String

    /** Sends `buffer[offset, offset+length)` to [dest] (`FI_OP_SEND`). */
    public class Send(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val dest: Long,
    ) : DeferredOp() {
        /** Sends [buffer]'s position..limit (read when the request fires). */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            dest: Long,
        ) : this(endpoint, ByteBuffers.viewOf(buffer, false, "send", endpoint), 0, buffer.remaining(), dest)

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.TX

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.SEND or OpFlags.MSG

        @JvmSynthetic override fun check(): Unit = checkRange(endpoint, buffer.capacity(), offset, length.toLong())

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.trySendmsg(buffer, offset, length, dest, 0, 0, flags and OpFlags.TAGGED.inv(), work)

        @JvmSynthetic override fun describe(): String = "send of $length bytes to $dest"
    }

    /**
     * Sends a tagged message (`FI_OP_TSEND`). [tag] may be changed while the request is not queued or in flight: a
     * re-armed schedule gives each run its own tags without allocating.
     */
    public class Tsend(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val dest: Long,
        public var tag: Long,
    ) : DeferredOp() {
        /** Sends [buffer]'s position..limit (read when the request fires). */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            dest: Long,
            tag: Long,
        ) : this(endpoint, ByteBuffers.viewOf(buffer, false, "tsend", endpoint), 0, buffer.remaining(), dest, tag)

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.TX

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.SEND or OpFlags.TAGGED

        @JvmSynthetic override fun check(): Unit = checkRange(endpoint, buffer.capacity(), offset, length.toLong())

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.trySendmsg(buffer, offset, length, dest, tag, 0, flags or OpFlags.TAGGED, work)

        @JvmSynthetic
        override fun describe(): String = "tsend of $length bytes to $dest, tag 0x${java.lang.Long.toHexString(tag)}"
    }

    /** Posts a receive (`FI_OP_RECV`). */
    public class Recv(
        override val endpoint: Endpoint,
        public val buffer: MutableDirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val src: Long,
    ) : DeferredOp() {
        /** Receives into [buffer]'s position..limit. */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            src: Long,
        ) : this(endpoint, ByteBuffers.viewOf(buffer, true, "recv", endpoint), 0, buffer.remaining(), src)

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RX

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.RECV or OpFlags.MSG

        @JvmSynthetic override fun check(): Unit = checkRange(endpoint, buffer.capacity(), offset, length.toLong())

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.postRecv(false, buffer, offset, length, src, 0, -1L, flags and RECV_FLAGS, work)

        @JvmSynthetic override fun describe(): String = "recv of up to $length bytes from $src"
    }

    /** Posts a tagged receive (`FI_OP_TRECV`). [tag] may be changed as [Tsend]'s may. */
    public class Trecv
    @JvmOverloads
    constructor(
        override val endpoint: Endpoint,
        public val buffer: MutableDirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val src: Long,
        public var tag: Long,
        public val ignore: Long = 0,
    ) : DeferredOp() {
        /** Receives into [buffer]'s position..limit. */
        @JvmOverloads
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            src: Long,
            tag: Long,
            ignore: Long = 0,
        ) : this(endpoint, ByteBuffers.viewOf(buffer, true, "trecv", endpoint), 0, buffer.remaining(), src, tag, ignore)

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RX

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.RECV or OpFlags.TAGGED

        @JvmSynthetic override fun check(): Unit = checkRange(endpoint, buffer.capacity(), offset, length.toLong())

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.postRecv(true, buffer, offset, length, src, tag, ignore, flags and RECV_FLAGS, work)

        @JvmSynthetic
        override fun describe(): String =
            "trecv of up to $length bytes from $src, tag 0x${java.lang.Long.toHexString(tag)}"
    }

    /** An RMA write (`FI_OP_WRITE`); see [Endpoint.tryWrite]. */
    public class Write(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val dest: Long,
        public val remoteOffset: Long,
        public val key: Long,
    ) : DeferredOp() {
        /** Writes [buffer]'s position..limit. */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            dest: Long,
            remoteOffset: Long,
            key: Long,
        ) : this(
            endpoint,
            ByteBuffers.viewOf(buffer, false, "write", endpoint),
            0,
            buffer.remaining(),
            dest,
            remoteOffset,
            key,
        )

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RMA

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.RMA or OpFlags.WRITE

        @JvmSynthetic
        override fun check() {
            checkRma(endpoint, Caps.WRITE, remoteOffset)
            checkRange(endpoint, buffer.capacity(), offset, length.toLong())
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.tryWrite(buffer, offset, length, dest, remoteOffset, key, work, flags)

        @JvmSynthetic
        override fun describe(): String = "RMA write of $length bytes to $dest at key $key, offset $remoteOffset"
    }

    /** An RMA read (`FI_OP_READ`); see [Endpoint.tryRead]. */
    public class Read(
        override val endpoint: Endpoint,
        public val buffer: MutableDirectBuffer,
        public val offset: Int,
        public val length: Int,
        public val src: Long,
        public val remoteOffset: Long,
        public val key: Long,
    ) : DeferredOp() {
        /** Reads into [buffer]'s position..limit. */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            src: Long,
            remoteOffset: Long,
            key: Long,
        ) : this(
            endpoint,
            ByteBuffers.viewOf(buffer, true, "read", endpoint),
            0,
            buffer.remaining(),
            src,
            remoteOffset,
            key,
        )

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RMA

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.RMA or OpFlags.READ

        @JvmSynthetic
        override fun check() {
            checkRma(endpoint, Caps.READ, remoteOffset)
            checkRange(endpoint, buffer.capacity(), offset, length.toLong())
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.tryRead(buffer, offset, length, src, remoteOffset, key, work, flags)

        @JvmSynthetic
        override fun describe(): String = "RMA read of $length bytes from $src at key $key, offset $remoteOffset"
    }

    /** An atomic update (`FI_OP_ATOMIC`); see [Endpoint.tryAtomic]. */
    public class Atomic(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val count: Int,
        public val dest: Long,
        public val remoteOffset: Long,
        public val key: Long,
        public val type: AtomicDatatype,
        public val op: AtomicOp,
    ) : DeferredOp() {
        /** The elements between [buffer]'s position and limit, in native byte order (see [AtomicDatatype]). */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            dest: Long,
            remoteOffset: Long,
            key: Long,
            type: AtomicDatatype,
            op: AtomicOp,
        ) : this(
            endpoint,
            ByteBuffers.atomicViewOf(buffer, type, 0, false, "operand", endpoint),
            0,
            buffer.remaining() / type.size,
            dest,
            remoteOffset,
            key,
            type,
            op,
        )

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RMA

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.ATOMIC or OpFlags.WRITE

        @JvmSynthetic
        override fun check() {
            checkAtomic(endpoint, AtomicForm.UPDATE, type, op, count, remoteOffset)
            checkRange(endpoint, buffer.capacity(), offset, count.toLong() * type.size)
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.tryAtomic(buffer, offset, count, dest, remoteOffset, key, type, op, work, flags)

        @JvmSynthetic
        override fun describe(): String = "atomic $op of $count $type to $dest at key $key, offset $remoteOffset"
    }

    /** A fetching atomic (`FI_OP_FETCH_ATOMIC`); see [Endpoint.tryFetchAtomic]. */
    public class FetchAtomic(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val count: Int,
        public val result: MutableDirectBuffer,
        public val resultOffset: Int,
        public val dest: Long,
        public val remoteOffset: Long,
        public val key: Long,
        public val type: AtomicDatatype,
        public val op: AtomicOp,
    ) : DeferredOp() {
        /**
         * With ByteBuffers in native byte order (see [AtomicDatatype]); old values go to [result] from its position.
         */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            result: ByteBuffer,
            dest: Long,
            remoteOffset: Long,
            key: Long,
            type: AtomicDatatype,
            op: AtomicOp,
        ) : this(
            endpoint,
            ByteBuffers.atomicViewOf(buffer, type, 0, false, "operand", endpoint),
            0,
            buffer.remaining() / type.size,
            ByteBuffers.atomicViewOf(result, type, buffer.remaining() / type.size, true, "result", endpoint),
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
        )

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RMA

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.ATOMIC or OpFlags.READ

        @JvmSynthetic
        override fun check() {
            checkAtomic(endpoint, AtomicForm.FETCH, type, op, count, remoteOffset)
            val bytes = count.toLong() * type.size
            checkRange(endpoint, buffer.capacity(), offset, bytes)
            checkRange(endpoint, result.capacity(), resultOffset, bytes)
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.tryFetchAtomic(
                buffer,
                offset,
                count,
                result,
                resultOffset,
                dest,
                remoteOffset,
                key,
                type,
                op,
                work,
                flags,
            )

        @JvmSynthetic
        override fun describe(): String = "fetch-atomic $op of $count $type to $dest at key $key, offset $remoteOffset"
    }

    /** A compare-and-swap (`FI_OP_COMPARE_ATOMIC`); see [Endpoint.tryCompareAtomic]. */
    public class CompareAtomic(
        override val endpoint: Endpoint,
        public val buffer: DirectBuffer,
        public val offset: Int,
        public val count: Int,
        public val compare: DirectBuffer,
        public val compareOffset: Int,
        public val result: MutableDirectBuffer,
        public val resultOffset: Int,
        public val dest: Long,
        public val remoteOffset: Long,
        public val key: Long,
        public val type: AtomicDatatype,
        public val op: AtomicOp,
    ) : DeferredOp() {
        /** With ByteBuffers in native byte order (see [AtomicDatatype]). */
        public constructor(
            endpoint: Endpoint,
            buffer: ByteBuffer,
            compare: ByteBuffer,
            result: ByteBuffer,
            dest: Long,
            remoteOffset: Long,
            key: Long,
            type: AtomicDatatype,
            op: AtomicOp,
        ) : this(
            endpoint,
            ByteBuffers.atomicViewOf(buffer, type, 0, false, "operand", endpoint),
            0,
            buffer.remaining() / type.size,
            ByteBuffers.atomicViewOf(compare, type, buffer.remaining() / type.size, false, "compare", endpoint),
            0,
            ByteBuffers.atomicViewOf(result, type, buffer.remaining() / type.size, true, "result", endpoint),
            0,
            dest,
            remoteOffset,
            key,
            type,
            op,
        )

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.RMA

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = OpFlags.ATOMIC or OpFlags.READ

        @JvmSynthetic
        override fun check() {
            checkAtomic(endpoint, AtomicForm.COMPARE, type, op, count, remoteOffset)
            val bytes = count.toLong() * type.size
            checkRange(endpoint, buffer.capacity(), offset, bytes)
            checkRange(endpoint, compare.capacity(), compareOffset, bytes)
            checkRange(endpoint, result.capacity(), resultOffset, bytes)
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int =
            endpoint.tryCompareAtomic(
                buffer,
                offset,
                count,
                compare,
                compareOffset,
                result,
                resultOffset,
                dest,
                remoteOffset,
                key,
                type,
                op,
                work,
                flags,
            )

        @JvmSynthetic
        override fun describe(): String =
            "compare-atomic $op of $count $type to $dest at key $key, offset $remoteOffset"
    }

    /** Sets [counter]'s success count to [value] (`FI_OP_CNTR_SET`). */
    public class CounterSet(public val counter: Counter, public val value: Long) : DeferredOp() {
        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.COUNTER

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic override fun check() {}

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            counter.set(value)
            return DONE
        }

        @JvmSynthetic override fun describe(): String = "counter set to $value on $counter"
    }

    /** Adds [value] to [counter]'s success count (`FI_OP_CNTR_ADD`). */
    public class CounterAdd(public val counter: Counter, public val value: Long) : DeferredOp() {
        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.COUNTER

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic override fun check() {}

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            counter.add(value)
            return DONE
        }

        @JvmSynthetic override fun describe(): String = "counter add of $value to $counter"
    }

    // ## Braid's extensions: local steps (libfabric's off_coll REDUCE and COPY work items) ##
    //
    // fi_trigger(3) defines no local operations; a collective built as a schedule of deferred
    // work needs them between its transfers. They run on the thread that fires them, under the
    // domain lock, when their threshold is met; they complete at once (bumping the completion
    // counter, or its error side when they fail) and never write a CQ entry, so OpFlags.COMPLETION
    // is refused for them. They have no endpoint; any domain's queue runs them.

    /**
     * Combines `count` elements: `dst[i] = src[i] ∘ dst[i]` when [srcFirst], else `dst[i] = dst[i] ∘ src[i]`, with ∘
     * the [reduction] (Braid's extension, off_coll's `UTIL_COLL_REDUCE`). The element size is the reduction's.
     */
    public class Reduce(
        public val reduction: LocalReduction,
        public val src: DirectBuffer,
        public val srcOffset: Int,
        public val dst: MutableDirectBuffer,
        public val dstOffset: Int,
        public val count: Int,
        public val srcFirst: Boolean,
    ) : DeferredOp() {
        /** Over ByteBuffers, from their positions: [count] elements of [src] into [dst]. */
        public constructor(
            reduction: LocalReduction,
            src: ByteBuffer,
            dst: ByteBuffer,
            count: Int,
            srcFirst: Boolean,
        ) : this(
            reduction,
            ByteBuffers.viewOf(src, false, "reduce source", "deferred reduce"),
            0,
            ByteBuffers.viewOf(dst, true, "reduce destination", "deferred reduce"),
            0,
            count,
            srcFirst,
        )

        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.LOCAL

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic
        override fun check() {
            val bytes = count.toLong() * reduction.elementSize()
            checkLocal("reduce", src.capacity(), srcOffset, bytes)
            checkLocal("reduce", dst.capacity(), dstOffset, bytes)
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            val rc = reduction.reduce(src, srcOffset, dst, dstOffset, count, srcFirst)
            return if (rc == 0) DONE else rc
        }

        @JvmSynthetic override fun describe(): String = "local reduce of $count elements by $reduction"
    }

    /** Copies `length` bytes from `src` to `dst` (Braid's extension, off_coll's `UTIL_COLL_COPY`). */
    public class Copy(
        public val src: DirectBuffer,
        public val srcOffset: Int,
        public val dst: MutableDirectBuffer,
        public val dstOffset: Int,
        public val length: Int,
    ) : DeferredOp() {
        /** Over ByteBuffers: [src]'s remaining bytes to [dst] from its position. */
        public constructor(
            src: ByteBuffer,
            dst: ByteBuffer,
        ) : this(
            ByteBuffers.viewOf(src, false, "copy source", "deferred copy"),
            0,
            ByteBuffers.viewOf(dst, true, "copy destination", "deferred copy"),
            0,
            src.remaining(),
        )

        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.LOCAL

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic
        override fun check() {
            checkLocal("copy", src.capacity(), srcOffset, length.toLong())
            checkLocal("copy", dst.capacity(), dstOffset, length.toLong())
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            if (length > 0) dst.putBytes(dstOffset, src, srcOffset, length)
            return DONE
        }

        @JvmSynthetic override fun describe(): String = "local copy of $length bytes"
    }

    /**
     * Copies `length` bytes between two registered regions of memory of any interface (device memory included), through
     * [via]'s copy service (its overrides, else its domain's, else the built-in copy): the staging step a schedule puts
     * before and after host-side work on device bytes. Device to device goes through a host buffer this step keeps. A
     * failed copy bumps the error side of the completion counter with its errno.
     */
    public class RegionCopy(
        public val via: Endpoint,
        public val src: MemoryRegion,
        public val srcOffset: Long,
        public val dst: MemoryRegion,
        public val dstOffset: Long,
        public val length: Int,
    ) : DeferredOp() {
        private val host = RegionHost(via, "deferred region copy")

        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.LOCAL

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic
        override fun check() {
            host.check(src, srcOffset, length.toLong())
            host.check(dst, dstOffset, length.toLong())
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            if (length == 0) return DONE
            val rc =
                when {
                    src.iface.isSystem -> via.copyToRegion(dst, dstOffset, src.buffer, srcOffset.toInt(), length)
                    dst.iface.isSystem -> via.copyFromRegion(src, srcOffset, dst.buffer, dstOffset.toInt(), length)
                    else -> {
                        val b = host.buffer(length)
                        val r = via.copyFromRegion(src, srcOffset, b, 0, length)
                        if (r != 0) r else via.copyToRegion(dst, dstOffset, b, 0, length)
                    }
                }
            return if (rc == 0) DONE else rc
        }

        @JvmSynthetic
        override fun describe(): String = "local copy of $length bytes from ${src.iface} to ${dst.iface} memory"
    }

    /**
     * [Reduce] on registered regions of memory of any interface (device memory included): `dst[i] = src[i] ∘ dst[i]`
     * when [srcFirst], else `dst[i] = dst[i] ∘ src[i]`. Device operands are staged through [via]'s copy service (its
     * overrides, else its domain's, else the built-in copy) into a host buffer this step keeps, the host reduction runs
     * there, and a device [dst] gets the result copied back; system memory is reduced in place. A failed copy bumps the
     * error side of the completion counter with its errno, and a device [dst] is then left as it was.
     */
    public class RegionReduce(
        public val via: Endpoint,
        public val reduction: LocalReduction,
        public val src: MemoryRegion,
        public val srcOffset: Long,
        public val dst: MemoryRegion,
        public val dstOffset: Long,
        public val count: Int,
        public val srcFirst: Boolean,
    ) : DeferredOp() {
        private val host = RegionHost(via, "deferred region reduce")

        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.LOCAL

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic
        override fun check() {
            val bytes = count.toLong() * reduction.elementSize()
            if (bytes > Int.MAX_VALUE / 2)
                throw FabricException.invalid(
                    "deferred region reduce: $count elements of $bytes bytes: too large; reduce in pieces"
                )
            host.check(src, srcOffset, bytes)
            host.check(dst, dstOffset, bytes)
        }

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            val n = count * reduction.elementSize()
            if (n == 0) return DONE
            val b = if (src.iface.isSystem && dst.iface.isSystem) null else host.buffer(2 * n)
            var rc = 0
            if (!src.iface.isSystem) rc = via.copyFromRegion(src, srcOffset, b!!, 0, n)
            if (rc == 0 && !dst.iface.isSystem) rc = via.copyFromRegion(dst, dstOffset, b!!, n, n)
            if (rc != 0) return rc
            val s: DirectBuffer = if (src.iface.isSystem) src.buffer else b!!
            val d: MutableDirectBuffer = if (dst.iface.isSystem) dst.buffer else b!!
            rc =
                reduction.reduce(
                    s,
                    if (src.iface.isSystem) srcOffset.toInt() else 0,
                    d,
                    if (dst.iface.isSystem) dstOffset.toInt() else n,
                    count,
                    srcFirst,
                )
            if (rc == 0 && !dst.iface.isSystem) rc = via.copyToRegion(dst, dstOffset, b!!, n, n)
            return if (rc == 0) DONE else rc
        }

        @JvmSynthetic
        override fun describe(): String =
            "local reduce of $count elements by $reduction, ${src.iface} into ${dst.iface} memory"
    }

    /**
     * Runs [step] (Braid's extension): what a schedule does between its transfers that is neither a reduction nor a
     * copy — noting its own end, checking that its earlier steps succeeded.
     */
    public class Local(public val step: LocalStep) : DeferredOp() {
        override val endpoint: Endpoint?
            get() = null

        @get:JvmSynthetic
        override val kind: Kind
            get() = Kind.LOCAL

        @get:JvmSynthetic
        override val cqFlags: Long
            get() = 0

        @JvmSynthetic override fun check() {}

        @JvmSynthetic
        override fun post(work: DeferredWork, flags: Long): Int {
            val rc = step.run(work)
            return if (rc == 0) DONE else rc
        }

        @JvmSynthetic override fun describe(): String = "local step $step"
    }

    internal companion object {
        /** [post]'s result for an operation that completed inside it. */
        const val DONE = 1
        private const val RECV_FLAGS = OpFlags.COMPLETION

        @JvmSynthetic
        fun checkRange(ep: Endpoint, capacity: Int, offset: Int, length: Long) {
            if (offset < 0 || length < 0 || offset + length > capacity) {
                throw FabricException.invalid(
                    "deferred work on $ep: [$offset, ${offset + length}) is not inside the buffer of $capacity bytes"
                )
            }
        }

        @JvmSynthetic
        fun checkLocal(what: String, capacity: Int, offset: Int, length: Long) {
            if (offset < 0 || length < 0 || offset + length > capacity) {
                throw FabricException.invalid(
                    "deferred local $what: [$offset, ${offset + length}) is not inside the buffer of $capacity bytes"
                )
            }
        }

        @JvmSynthetic
        fun checkRma(ep: Endpoint, direction: Long, remoteOffset: Long) {
            val caps = ep.transport.rmaCaps
            if (caps and Caps.RMA == 0L || caps and direction == 0L) {
                throw FabricException(
                    Errno.ENOSYS,
                    "deferred work on $ep: the ${ep.info.provider} rail carries no RMA ${if (direction == Caps.READ) "read" else "write"}; queue it on an endpoint whose rail offers Caps.RMA",
                )
            }
            notGranted(ep, Caps.RMA)
            if (remoteOffset < 0)
                throw FabricException.invalid("deferred work on $ep: remote offset $remoteOffset must be ≥ 0")
        }

        /** Refuses (EOPNOTSUPP) work of [cap] on an endpoint whose Info was not granted it, as its try… forms do. */
        private fun notGranted(ep: Endpoint, cap: Long) {
            if (ep.granted(cap)) return
            val name = if (cap == Caps.RMA) "RMA" else "ATOMIC"
            throw FabricException(
                Errno.EOPNOTSUPP,
                "deferred work on $ep: the endpoint was opened without Caps.$name; ask for Caps.$name in the hints",
            )
        }

        @JvmSynthetic
        fun checkAtomic(
            ep: Endpoint,
            form: AtomicForm,
            type: AtomicDatatype,
            op: AtomicOp,
            count: Int,
            remoteOffset: Long,
        ) {
            if (ep.transport.rmaCaps and Caps.ATOMIC == 0L) {
                throw FabricException(
                    Errno.ENOSYS,
                    "deferred work on $ep: the ${ep.info.provider} rail carries no atomics; queue it on an endpoint whose rail offers Caps.ATOMIC",
                )
            }
            notGranted(ep, Caps.ATOMIC)
            if (!form.admits(op) || !op.appliesTo(type)) {
                throw FabricException.unsupported("deferred work on $ep: ${form.label} does not take $op on $type")
            }
            val max = ep.atomicCount(form, type, op)
            if (count <= 0 || count > max)
                throw FabricException(
                    Errno.EMSGSIZE,
                    "deferred work on $ep: $count elements of $type; ${form.label} carries 1..$max",
                )
            if (remoteOffset < 0)
                throw FabricException.invalid("deferred work on $ep: remote offset $remoteOffset must be ≥ 0")
        }
    }
}

/**
 * The combining function of a [DeferredOp.Reduce] (Braid's extension): `dst[i] = src[i] ∘ dst[i]` when `srcFirst`, else
 * `dst[i] = dst[i] ∘ src[i]`, for `count` elements of [elementSize] bytes. Returns 0, or a negated errno that fails the
 * request. Runs under the domain lock: it must not block or call back into the domain.
 */
public interface LocalReduction {
    /** The size in bytes of one element. */
    public fun elementSize(): Int

    public fun reduce(
        src: DirectBuffer,
        srcOffset: Int,
        dst: MutableDirectBuffer,
        dstOffset: Int,
        count: Int,
        srcFirst: Boolean,
    ): Int

    /** [reduce] over ByteBuffers, from their positions (a convenience for callers; allocates two views). */
    public fun reduce(src: ByteBuffer, dst: ByteBuffer, count: Int, srcFirst: Boolean): Int =
        reduce(
            ByteBuffers.viewOf(src, false, "reduce source", this),
            0,
            ByteBuffers.viewOf(dst, true, "reduce destination", this),
            0,
            count,
            srcFirst,
        )
}

/**
 * The body of a [DeferredOp.Local] request: returns 0, or a negated errno that fails [work]. Runs under the domain lock
 * when the request fires; it may queue or cancel deferred work.
 */
public fun interface LocalStep {
    public fun run(work: DeferredWork): Int
}

/**
 * The host side of a deferred step on regions ([DeferredOp.RegionCopy], [DeferredOp.RegionReduce]): checks that a range
 * lies inside a region of [via]'s domain, and keeps the host buffer device bytes are staged in, allocated on the step's
 * first run and reused from then on.
 */
internal class RegionHost(private val via: Endpoint, private val what: String) {
    private var bounce: org.agrona.concurrent.UnsafeBuffer? = null

    fun check(r: MemoryRegion, at: Long, length: Long) {
        if (at < 0 || length < 0 || at + length > r.length) {
            throw FabricException.invalid(
                "$what: [$at, ${at + length}) is not inside memory region ${r.key} of ${r.length} bytes"
            )
        }
        if (r.domain !== via.domain) {
            throw FabricException.invalid(
                "$what: memory region ${r.key} belongs to domain '${r.domain.name}', not the endpoint's '${via.domain.name}'"
            )
        }
    }

    fun buffer(length: Int): org.agrona.concurrent.UnsafeBuffer =
        bounce?.takeIf { it.capacity() >= length }
            ?: org.agrona.concurrent.UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(length)).also { bounce = it }
}
