package braid.collectives.offload

import braid.collectives.offload.OffloadSegmentDescriptor.CONSUMED
import braid.collectives.offload.OffloadSegmentDescriptor.FAILED
import braid.collectives.offload.OffloadSegmentDescriptor.PID
import braid.collectives.offload.OffloadSegmentDescriptor.POSTED
import braid.collectives.offload.OffloadSegmentDescriptor.REDUCED
import braid.collectives.offload.OffloadSegmentDescriptor.START
import braid.core.Errno
import braid.core.shm.JobKeyProof
import braid.core.shm.ProcessIdentity
import java.nio.file.Files
import java.nio.file.Path

/**
 * Carries one host group's [OffloadPhase]s through its [OffloadSegment], in the order the group's calls started (every
 * local rank starts the same calls in the same order, so every rank numbers the same pieces with the same epochs).
 *
 * The protocol of one piece (epoch e) for local rank i of L:
 * 1. free: wait until every rank's `consumed` has passed the last piece that used the part of the slots this piece
 *    writes, and e−2 (every rank has read our call word of e's parity); copy the input piece into slot i (a tiny piece,
 *    at most 8 bytes, into the tiny word of e's parity in our control block, beside `posted`, so one cache line carries
 *    both), write the call word of e's parity, then `posted[i] = e` (release).
 * 2. posted: wait until every rank's `posted` ≥ e. A small piece (at most [smallBytes]) is reduced whole by every rank
 *    that wants the result, in rank order, from the slots straight into its output, and the piece is done: one
 *    synchronisation per call. A larger one reduces elements `[i·n/L, (i+1)·n/L)` of every slot in place, in rank
 *    order, into the result area, then `reduced[i] = e`; a broadcast or allgather copies straight out of the slots.
 * 3. (larger reductions) reduced: wait until every rank's `reduced` ≥ e; copy the result area out; `consumed[i] = e`.
 *
 * Small pieces alternate between the lower and upper half of each slot by epoch parity, so a run of small calls never
 * waits for the slowest rank to have read the call before last: the ranks stay at most one call apart, as in a
 * dissemination barrier. A barrier writes no data and never waits to post.
 *
 * Messages larger than a slot go through in pieces of a slot each (pipelined through the slots at the pace of the
 * slowest rank). While it waits the engine checks, every liveness interval, that the ranks it waits for still run (pid
 * and start time from their control blocks) and have not failed; a dead or failed rank, a rank that never attaches, or
 * ranks that called different collectives (the call words differ) fail every phase here with an error naming the rank.
 * A failure is final: the segment's epochs can no longer be trusted, so every later phase fails too.
 */
internal class OffloadEngine(
    val localSize: Int,
    val localIndex: Int,
    /** The group rank of each local rank, for messages. */
    private val groupRanks: IntArray,
    private val path: Path,
    private val groupHash: Long,
    private val jobKey: JobKeyProof,
    val slotBytes: Int,
    private val attachTimeoutNs: Long,
    private val livenessNs: Long,
    /**
     * The process of each local rank as its address names it (null where the address does not tell): a rank that has
     * not mapped the segment yet has written no pid of its own, so this is how one that died before it did is found.
     */
    private val owners: Array<ProcessIdentity?> = arrayOfNulls(localSize),
) : AutoCloseable {
    private val lock = Any()
    private val pending = ArrayDeque<OffloadPhase>()
    private var segment: OffloadSegment? = null
    private var epoch = 0L
    private var attachStart = 0L
    private var unlinked = false
    private var lastAttachLiveness = 0L
    /** Whether [close] unmapped the segment. */
    @Volatile
    var closed = false
        private set

    /** Pieces of at most this many bytes use half a slot (by epoch parity) and a whole reduction per rank. */
    val smallBytes: Int = minOf(SMALL_MAX, slotBytes / 2 and 0x7fff_fff0)
    private val halfBytes = slotBytes / 2 and 0x7fff_fff0
    /**
     * The epoch of the last piece that put data in the lower and the upper half of the slots (a whole-slot piece:
     * both).
     */
    private val lastUse = LongArray(2)

    /** The failure that ended this engine, once it failed. */
    @Volatile
    var failure: String? = null
        private set

    private var failureCode = 0

    // Counters (read by [ShmOffloadBinding]).
    @Volatile
    var phases: Long = 0
        private set

    @Volatile
    var pieces: Long = 0
        private set

    @Volatile
    var bytesIn: Long = 0
        private set

    /**
     * A call's phases, in the order they will run; called as the call starts, before any of them can fire. [inline]:
     * the caller carries them itself by calling [step] until they are through (a blocking call's one phase, see
     * [braid.collectives.CollectiveRequest.waitFor]), so they count as fired already and never go through the deferred
     * work queue.
     */
    fun starting(callPhases: Array<OffloadPhase>, inline: Boolean) =
        synchronized(lock) {
            for (p in callPhases) {
                p.arm()
                p.fired = inline
                pending.addLast(p)
            }
        }

    /**
     * The phase's step: 0 once it is carried through, `-EAGAIN` until then, `-errno` if it failed. [spins] > 1 (a
     * caller carrying its own phase inline) tries that many times in a row, under one acquisition of the lock, before
     * it answers `-EAGAIN`. That is a bounded retry inside one step, not a wait: the caller's wait
     * ([braid.core.Domain.driveUntil]) decides when to back off between steps, and a spin-wait hint between two looks
     * at the other ranks' words is all a retry needs (yielding or parking while holding the lock would stall every
     * caller).
     */
    fun step(phase: OffloadPhase, spins: Int = 1): Int =
        synchronized(lock) {
            phase.fired = true
            if (phase.done) return 0
            if (closed) return -Errno.EOPBADSTATE
            if (failure == null) {
                try {
                    val now = System.nanoTime()
                    var left = spins
                    while (true) {
                        advance(now)
                        if (phase.done || failure != null || --left <= 0) break
                        Thread.onSpinWait()
                    }
                } catch (e: RuntimeException) {
                    fail(Errno.EIO, "the shared-memory phase failed: $e")
                }
            }
            when {
                phase.done -> 0
                failure != null -> -failureCode
                else -> OffloadPhase.EAGAIN
            }
        }

    private fun advance(now: Long) {
        val seg = segment ?: attach(now) ?: return
        while (failure == null) {
            val head = pending.firstOrNull() ?: return
            if (!head.fired) {
                if (head.abandoned)
                    fail(
                        Errno.ECANCELED,
                        "${head.name} was given up before its shared-memory phase (an earlier step failed or was cancelled), so the host's ranks can no longer agree on the segment",
                    )
                return
            }
            if (!carry(seg, head, now)) return
            pending.removeFirst()
            phases++
        }
    }

    // ## Attaching ##

    private fun attach(now: Long): OffloadSegment? {
        if (attachStart == 0L) attachStart = now
        val seg =
            if (localIndex == 0) {
                OffloadSegment.create(path, localSize, slotBytes, groupHash, jobKey, self)
            } else {
                val s = OffloadSegment.tryAttach(path, localSize, slotBytes, groupHash, jobKey)
                if (
                    s != null &&
                        !alive(
                            s.buffer.getLong(OffloadSegmentDescriptor.CREATOR_PID_OFFSET),
                            s.buffer.getLong(OffloadSegmentDescriptor.CREATOR_START_OFFSET),
                        )
                ) {
                    s.close()
                    null // a stale file of a dead creator: wait for the live one to replace it
                } else s
            }
        if (seg == null) {
            if (now - lastAttachLiveness >= livenessNs) {
                lastAttachLiveness = now
                if (diedUnattached(0)) return null
            }
            if (now - attachStart > attachTimeoutNs) {
                fail(
                    Errno.ETIMEDOUT,
                    "local rank 0 (group rank ${groupRanks[0]}) did not create the shared-memory segment $path within ${attachTimeoutNs / 1_000_000} ms",
                )
            }
            return null
        }
        val c = seg.control(localIndex)
        seg.buffer.putLong(c + PID, self.pid)
        seg.buffer.putLongVolatile(c + START, self.startMillis)
        seg.buffer.getAndAddInt(OffloadSegmentDescriptor.ATTACHED_OFFSET, 1)
        segment = seg
        return seg
    }

    // ## Carrying a phase ##

    /** Carries [p] as far as the other ranks let it; true once it is through. */
    private fun carry(seg: OffloadSegment, p: OffloadPhase, now: Long): Boolean {
        val b = seg.buffer
        val l = localSize
        val i = localIndex
        val me = seg.control(i)
        if (!unlinked && localIndex == 0 && seg.attachedCount() == l) {
            seg.unlink()
            unlinked = true
        }
        while (p.segment < p.segments) {
            val off = p.segment * p.chunk
            val len = minOf(p.chunk, p.bytes - off)
            val small = p.bytes <= smallBytes
            if (p.stage == 0) {
                val e = epoch + 1
                val half = (e and 1L).toInt()
                // A tiny piece travels in our control block's tiny word of e's parity, a small one in half our slot.
                val tiny = small && p.bytes <= OffloadSegmentDescriptor.TINY_BYTES
                val data = p.kind != OffloadPhase.Kind.BARRIER && !tiny
                // Our call word and tiny word of e's parity were last read for e−2; the slot area this piece writes was
                // last read for lastUse.
                var need = e - 2
                if (data) need = maxOf(need, if (small) lastUse[half] else maxOf(lastUse[0], lastUse[1]))
                if (!all(seg, CONSUMED, need)) return waiting(seg, p, now, CONSUMED, need)
                epoch = e
                p.epoch = e
                p.inControl = tiny
                p.at = if (tiny) OffloadSegmentDescriptor.tiny(e) else if (small) half * halfBytes else 0
                if (data) {
                    if (small) lastUse[half] = e
                    else {
                        lastUse[0] = e
                        lastUse[1] = e
                    }
                }
                val writes =
                    when (p.kind) {
                        OffloadPhase.Kind.ALLREDUCE,
                        OffloadPhase.Kind.REDUCE,
                        OffloadPhase.Kind.ALLGATHER,
                        OffloadPhase.Kind.GATHER -> true
                        OffloadPhase.Kind.BCAST,
                        OffloadPhase.Kind.PASS -> i == p.root
                        OffloadPhase.Kind.BARRIER -> false
                    }
                if (writes && len > 0) {
                    b.putBytes(dataOf(seg, i, p), p.input, p.inputOffset + off, len)
                    bytesIn += len
                }
                b.putLong(me + OffloadSegmentDescriptor.call(e), p.callWord)
                b.putLongVolatile(me + POSTED, e) // release: the piece and the call word are visible before the epoch
                p.waitingSince = 0
                // Done with this piece once posted: a broadcast's or pass's root, a pass's bystanders, a
                // gather's non-roots. Their slot stays as posted until every rank has consumed the piece
                // (the next piece's free-wait), so the readers still find it there.
                val postOnly =
                    when (p.kind) {
                        OffloadPhase.Kind.BCAST -> i == p.root
                        OffloadPhase.Kind.PASS -> i != p.target
                        OffloadPhase.Kind.GATHER -> i != p.root
                        else -> false
                    }
                if (postOnly) {
                    finishPiece(b, me, p, e)
                    continue
                }
                p.stage = 1
            }
            val e = p.epoch
            if (p.stage == 1) {
                when (p.kind) {
                    OffloadPhase.Kind.BCAST,
                    OffloadPhase.Kind.PASS -> {
                        val rc = seg.control(p.root)
                        if (b.getLongVolatile(rc + POSTED) < e) return waiting(seg, p, now, POSTED, e, p.root)
                        if (!sameCall(b, rc, p, e)) return false
                        if (len > 0) p.output.putBytes(p.outputOffset + off, b, dataOf(seg, p.root, p), len)
                        finishPiece(b, me, p, e)
                        continue
                    }
                    OffloadPhase.Kind.BARRIER,
                    OffloadPhase.Kind.ALLGATHER,
                    OffloadPhase.Kind.GATHER -> {
                        if (!all(seg, POSTED, e)) return waiting(seg, p, now, POSTED, e)
                        for (j in 0 until l) if (!sameCall(b, seg.control(j), p, e)) return false
                        if (p.kind != OffloadPhase.Kind.BARRIER && len > 0) {
                            for (j in 0 until l) p.output.putBytes(
                                p.outputOffset + j * p.bytes + off,
                                b,
                                dataOf(seg, j, p),
                                len,
                            )
                        }
                        finishPiece(b, me, p, e)
                        continue
                    }
                    else -> {
                        if (!all(seg, POSTED, e)) return waiting(seg, p, now, POSTED, e)
                        for (j in 0 until l) if (!sameCall(b, seg.control(j), p, e)) return false
                        val es = p.elementSize
                        val n = len / es
                        if (small) {
                            // Whole, by every rank that wants the result, in rank order: out = s0 ∘ (s1 ∘ (… ∘
                            // s(L−1))).
                            if ((p.kind == OffloadPhase.Kind.ALLREDUCE || i == p.root) && n > 0) {
                                p.output.putBytes(p.outputOffset + off, b, dataOf(seg, l - 1, p), len)
                                for (j in l - 2 downTo 0) p.kernel!!.reduce(
                                    b,
                                    dataOf(seg, j, p),
                                    p.output,
                                    p.outputOffset + off,
                                    n,
                                    true,
                                )
                            }
                            finishPiece(b, me, p, e)
                            continue
                        }
                        // Built-in ops: each rank reduces its 1/L of the piece. A user reduction sees the
                        // piece whole (it may treat consecutive elements as one value): local rank 0 reduces it.
                        val lo = if (p.splits) (i.toLong() * n / l).toInt() else 0
                        val hi = if (p.splits) ((i + 1).toLong() * n / l).toInt() else if (i == 0) n else 0
                        if (hi > lo) {
                            val at = lo * es
                            // In rank order: result = s0 ∘ (s1 ∘ (… ∘ s(L−1))), read from the peers' slots in place.
                            b.putBytes(seg.result + at, b, seg.slot(l - 1) + at, (hi - lo) * es)
                            for (j in l - 2 downTo 0) p.kernel!!.reduce(
                                b,
                                seg.slot(j) + at,
                                b,
                                seg.result + at,
                                hi - lo,
                                true,
                            )
                        }
                        b.putLongVolatile(me + REDUCED, e)
                        p.stage = 2
                        p.waitingSince = 0
                    }
                }
            }
            if (p.stage == 2) {
                if (!all(seg, REDUCED, e)) return waiting(seg, p, now, REDUCED, e)
                if ((p.kind == OffloadPhase.Kind.ALLREDUCE || i == p.root) && len > 0)
                    p.output.putBytes(p.outputOffset + off, b, seg.result, len)
                finishPiece(b, me, p, e)
            }
        }
        p.done = true
        return true
    }

    /** Where local rank [j]'s data of [p]'s current piece is: its control block's tiny word, or its slot. */
    private fun dataOf(seg: OffloadSegment, j: Int, p: OffloadPhase): Int =
        (if (p.inControl) seg.control(j) else seg.slot(j)) + p.at

    private fun finishPiece(b: org.agrona.concurrent.UnsafeBuffer, me: Int, p: OffloadPhase, e: Long) {
        b.putLongVolatile(me + REDUCED, e)
        b.putLongVolatile(me + CONSUMED, e)
        p.segment++
        p.stage = 0
        p.waitingSince = 0
        pieces++
    }

    private fun all(seg: OffloadSegment, field: Int, e: Long): Boolean {
        for (j in 0 until localSize) if (seg.buffer.getLongVolatile(seg.control(j) + field) < e) return false
        return true
    }

    private fun sameCall(b: org.agrona.concurrent.UnsafeBuffer, control: Int, p: OffloadPhase, e: Long): Boolean {
        val theirs = b.getLong(control + OffloadSegmentDescriptor.call(e))
        if (theirs == p.callWord) return true
        val j = (control - OffloadSegmentDescriptor.CONTROL_BASE) / OffloadSegmentDescriptor.CONTROL_BYTES
        fail(
            Errno.EINVAL,
            culprit = j,
            why =
                "local rank $j (group rank ${groupRanks[j]}) called ${describe(theirs)} where this rank (group rank ${groupRanks[localIndex]}) called ${describe(p.callWord)}; every rank must call the same collectives in the same order with the same counts and root",
        )
        return false
    }

    private fun describe(word: Long): String {
        val kind = OffloadPhase.Kind.entries.getOrNull((word ushr 56).toInt())?.name?.lowercase() ?: "?"
        val target = ((word ushr 32) and 0xffff) - 1
        return "$kind of ${word and 0xffff_ffffL} bytes (root ${(word ushr 48) and 0xff}${if (target >= 0) ", to $target" else ""})"
    }

    /**
     * Notes a wait and checks, every liveness interval, on the ranks we wait for; false (not through yet). Those are
     * the ranks still short of `field ≥ e` ([only]: just that rank): one that has done its part of this piece is not
     * what we wait for, and may have finished and exited.
     */
    private fun waiting(seg: OffloadSegment, p: OffloadPhase, now: Long, field: Int, e: Long, only: Int = -1): Boolean {
        if (p.waitingSince == 0L) {
            p.waitingSince = now
            p.lastLiveness = now
            return false
        }
        if (now - p.lastLiveness < livenessNs) return false
        p.lastLiveness = now
        val b = seg.buffer
        // The dead first, so that the rank named is the one that died, not one that noticed it.
        for (j in 0 until localSize) {
            if (j == localIndex || (only >= 0 && j != only) || b.getLongVolatile(seg.control(j) + field) >= e) continue
            val c = seg.control(j)
            val start = b.getLongVolatile(c + START)
            val pid = b.getLong(c + PID)
            if (start == 0L) {
                if (diedUnattached(j)) return false
                if (now - attachStart > attachTimeoutNs) {
                    fail(
                        Errno.ETIMEDOUT,
                        "local rank $j (group rank ${groupRanks[j]}) never attached to the shared-memory segment within ${attachTimeoutNs / 1_000_000} ms",
                        j,
                    )
                    return false
                }
            } else if (!alive(pid, start)) {
                fail(
                    Errno.ECONNRESET,
                    "local rank $j (group rank ${groupRanks[j]}, pid $pid) died; its part of this host's collective will never come",
                    j,
                )
                return false
            }
        }
        for (j in 0 until localSize) {
            if (j == localIndex || (only >= 0 && j != only) || b.getLongVolatile(seg.control(j) + field) >= e) continue
            val failed = b.getLongVolatile(seg.control(j) + FAILED)
            if (failed != 0L) {
                val code = failed.toInt()
                val culprit = (failed ushr 32).toInt() - 1
                val who =
                    if (culprit in 0 until localSize && culprit != j)
                        "local rank $culprit (group rank ${groupRanks[culprit]}), as local rank $j (group rank ${groupRanks[j]}) found,"
                    else "local rank $j (group rank ${groupRanks[j]})"
                fail(
                    code,
                    "$who failed its part of this host's collective (${Errno.name(code)}), so this one cannot complete",
                    culprit,
                )
                return false
            }
        }
        return false
    }

    /**
     * Whether local rank [j], which has not mapped the segment (or, for rank 0, not created it), is found dead by the
     * process its address names; if so the engine fails, naming it, rather than wait out the attach time-out.
     */
    private fun diedUnattached(j: Int): Boolean {
        val who = owners[j] ?: return false
        if (who.alive()) return false
        fail(
            Errno.ECONNRESET,
            "local rank $j (group rank ${groupRanks[j]}, pid ${who.pid}) died before it mapped the shared-memory " +
                "segment; its part of this host's collective will never come",
            j,
        )
        return true
    }

    /**
     * A call of this rank failed outside the segment (its part between hosts): the host's other ranks must not wait for
     * it.
     */
    fun abandon(code: Int, why: String) =
        synchronized(lock) { if (pending.isNotEmpty()) fail(code, "this rank's part between hosts failed ($why)") }

    /** Ends the engine with [code]; [culprit] is the local rank at fault (published so the others name it). */
    private fun fail(code: Int, why: String, culprit: Int = localIndex) {
        if (failure != null) return
        failureCode = code
        failure = "offload (local rank $localIndex of $localSize, group rank ${groupRanks[localIndex]}): $why"
        pending.clear()
        segment?.let { s ->
            s.buffer.putLongVolatile(
                s.control(localIndex) + FAILED,
                ((culprit + 1).toLong() shl 32) or (code.toLong() and 0xffff_ffffL),
            )
            if (localIndex == 0 && !unlinked) {
                s.unlink()
                unlinked = true
            }
        }
        if (segment == null && localIndex == 0) runCatching { Files.deleteIfExists(path) }
    }

    /** Unmaps the segment; a phase stepped later fails with EOPBADSTATE (it never maps the segment again). */
    override fun close() {
        synchronized(lock) {
            closed = true
            pending.clear()
            segment?.close()
            segment = null
        }
    }

    internal companion object {
        /** The largest piece carried in half a slot with one synchronisation. */
        const val SMALL_MAX = 4096

        /**
         * This process as the control blocks name it (a start of 0 there means "not attached yet":
         * [ProcessIdentity.startMillis] is never 0).
         */
        val self: ProcessIdentity = ProcessIdentity.SELF

        /** Whether [pid] runs and is the process that started at [start] (not a reused pid, not a zombie). */
        fun alive(pid: Long, start: Long): Boolean = ProcessIdentity(pid, start).alive()
    }
}
