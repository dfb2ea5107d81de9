@file:JvmName("EndpointCoroutines")
@file:JvmMultifileClass

package braid.core

import java.nio.ByteBuffer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

// The `suspend` forms of an endpoint's data operations: the convenient form beside each `try…`
// form. Each starts the operation with the operation itself as its context, so its completion
// comes straight back to the caller instead of into the bound CQ, and suspends until then.
//
// Progress. Under automatic progress (a ProgressEngine) the caller just suspends. Under manual
// progress the waiting caller drives progress itself: first inline without suspending, as a raw
// polling loop would, for the domain idle policy's spins — a quick reply costs no suspension, one
// lock per poll and, with a reused `into` completion, no allocation (operations are pooled per
// domain); then yielding for the policy's yields; then suspended, with one coroutine per domain
// driving progress on the dispatcher of the waiter that started it — however many coroutines
// wait, no thread is created and only one polls.
//
// Cancellation follows one rule (see Waiting): a receive withdrawn before it matched throws
// CancellationException and leaves the message for a later receive; a receive that matched
// first returns its message. A send the rail has taken is not withdrawn: a cancelled sender
// still waits for the send's completion (its buffer is in use until then). Closing the endpoint
// ends every waiting operation with FabricException(ESHUTDOWN).
//
// Buffers: every form takes an Agrona buffer region or a java.nio.ByteBuffer (heap or direct),
// whose position..limit it sends, or receives into; position and limit are left as they are. A
// ByteBuffer the operation cannot use (read-only where data is written, a read-only heap
// buffer; for atomics, see ByteBuffers) is refused with FabricException(EINVAL) before anything
// is posted.
//
// Failures: an error completion (truncation, a dead peer, a closed endpoint) is thrown as
// FabricException with its errno code; a refused start (-EINVAL, -EMSGSIZE, …) likewise. A
// rail's -EAGAIN is never thrown: the operation waits for resources and is started later, in
// order, by progress.

/**
 * Sends `buffer[offset, offset+length)` to [dest] and suspends until the send completes; returns its completion.
 * [buffer] must stay untouched until then.
 *
 * Every form that returns a completion takes an optional [into]: the completion is written into it and it is returned,
 * instead of a new one. A caller that reuses one allocates nothing for an operation that completes without suspending.
 */
public suspend fun Endpoint.send(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    into: Completion? = null,
): Completion = Waiting.run(this, PendingOp.SEND, buffer, offset, length, dest, 0, 0, into)

/** Sends a message tagged [tag] to [dest] and suspends until the send completes (`fi_tsend`); see [send] for [into]. */
public suspend fun Endpoint.tsend(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    dest: Long,
    tag: Long,
    into: Completion? = null,
): Completion = Waiting.run(this, PendingOp.TSEND, buffer, offset, length, dest, tag, 0, into)

/**
 * Receives an untagged message from [src] ([FiAddr.UNSPEC] for any) into `buffer[offset, offset+length)`; suspends
 * until it arrives and returns its completion ([Completion.len] bytes, [Completion.source] the sender); see [send] for
 * [into].
 */
public suspend fun Endpoint.recv(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    into: Completion? = null,
): Completion = Waiting.run(this, PendingOp.RECV, buffer, offset, length, src, 0, 0, into)

/**
 * Receives a message whose tag equals [tag] in every bit not set in [ignore], from [src] ([FiAddr.UNSPEC] for any),
 * into `buffer[offset, offset+length)`; suspends until it arrives (`fi_trecv`). [Completion.tag] is the message's tag;
 * see [send] for [into].
 */
public suspend fun Endpoint.trecv(
    buffer: MutableDirectBuffer,
    offset: Int,
    length: Int,
    src: Long,
    tag: Long,
    ignore: Long = 0,
    into: Completion? = null,
): Completion = Waiting.run(this, PendingOp.TRECV, buffer, offset, length, src, tag, ignore, into)

/**
 * Injects a small message to [dest] (`fi_inject`): returns once the rail has copied it, so [buffer] is reusable at
 * once; suspends only while the rail has no room. No completion follows.
 */
public suspend fun Endpoint.inject(buffer: DirectBuffer, offset: Int, length: Int, dest: Long) {
    Waiting.inject(this, PendingOp.INJECT, buffer, offset, length, dest, 0)
}

/** Injects a small tagged message (`fi_tinject`); see [inject]. */
public suspend fun Endpoint.tinject(buffer: DirectBuffer, offset: Int, length: Int, dest: Long, tag: Long) {
    Waiting.inject(this, PendingOp.TINJECT, buffer, offset, length, dest, tag)
}

/** [send] from [buffer]'s position..limit. */
public suspend fun Endpoint.send(buffer: ByteBuffer, dest: Long, into: Completion? = null): Completion =
    Waiting.runPrepared(Ops.bytes(this, PendingOp.SEND, buffer, dest, 0, false, true), into)

/** [tsend] from [buffer]'s position..limit. */
public suspend fun Endpoint.tsend(buffer: ByteBuffer, dest: Long, tag: Long, into: Completion? = null): Completion =
    Waiting.runPrepared(Ops.bytes(this, PendingOp.TSEND, buffer, dest, tag, false, true), into)

/** [recv] into [buffer]'s position..limit. */
public suspend fun Endpoint.recv(buffer: ByteBuffer, src: Long, into: Completion? = null): Completion =
    Waiting.runPrepared(Ops.bytes(this, PendingOp.RECV, buffer, src, 0, true, true), into)

/** [trecv] into [buffer]'s position..limit. */
public suspend fun Endpoint.trecv(
    buffer: ByteBuffer,
    src: Long,
    tag: Long,
    ignore: Long = 0,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.bytes(this, PendingOp.TRECV, buffer, src, tag, true, true).also { it.ignore = ignore },
        into,
    )

/** [inject] from [buffer]'s position..limit. */
public suspend fun Endpoint.inject(buffer: ByteBuffer, dest: Long) {
    Waiting.injectPrepared(Ops.bytes(this, PendingOp.INJECT, buffer, dest, 0, false, true))
}

/** [tinject] from [buffer]'s position..limit. */
public suspend fun Endpoint.tinject(buffer: ByteBuffer, dest: Long, tag: Long) {
    Waiting.injectPrepared(Ops.bytes(this, PendingOp.TINJECT, buffer, dest, tag, false, true))
}

/** [send] carrying [data] as remote CQ data (`fi_senddata`): the receiver's completion has it in [Completion.data]. */
public suspend fun Endpoint.senddata(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.withData(Ops.of(this, PendingOp.SENDDATA, buffer, offset, length, dest, 0, true), data),
        into,
    )

/** [senddata] from [buffer]'s position..limit. */
public suspend fun Endpoint.senddata(buffer: ByteBuffer, data: Long, dest: Long, into: Completion? = null): Completion =
    Waiting.runPrepared(Ops.withData(Ops.bytes(this, PendingOp.SENDDATA, buffer, dest, 0, false, true), data), into)

/** [tsend] carrying [data] as remote CQ data (`fi_tsenddata`). */
public suspend fun Endpoint.tsenddata(
    buffer: DirectBuffer,
    offset: Int,
    length: Int,
    data: Long,
    dest: Long,
    tag: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(
        Ops.withData(Ops.of(this, PendingOp.TSENDDATA, buffer, offset, length, dest, tag, true), data),
        into,
    )

/** [tsenddata] from [buffer]'s position..limit. */
public suspend fun Endpoint.tsenddata(
    buffer: ByteBuffer,
    data: Long,
    dest: Long,
    tag: Long,
    into: Completion? = null,
): Completion =
    Waiting.runPrepared(Ops.withData(Ops.bytes(this, PendingOp.TSENDDATA, buffer, dest, tag, false, true), data), into)
