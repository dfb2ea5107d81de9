package braid.collectives.offload

import braid.collectives.InlineOffloadStep
import braid.core.DeferredWork
import braid.core.Errno
import braid.core.LocalReduction
import braid.core.LocalStep
import braid.core.WorkStatus
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * One shared-memory phase of a collective on the offload provider's segment: a [LocalStep] of the collective's
 * schedule. When the step fires it hands the phase to the group's [OffloadEngine] and answers `-EAGAIN` (the deferred
 * work queue issues it again on later progress) until the engine has carried it through; then it completes and the
 * schedule goes on. Built once with its schedule; [arm] resets it per call.
 *
 * Kinds (all ranks of the host take part, [root] is a local rank):
 * - [Kind.ALLREDUCE]: every rank gets the reduction of every rank's input;
 * - [Kind.REDUCE]: [root] gets it;
 * - [Kind.BCAST]: [root]'s input lands in every other rank's output;
 * - [Kind.ALLGATHER]: rank j's input lands at `j × bytes` in every output;
 * - [Kind.GATHER]: rank j's input lands at `j × bytes` in [root]'s output (the others are done once they posted);
 * - [Kind.PASS]: [root]'s input lands in [target]'s output, the host's other ranks only keep the epochs in step;
 * - [Kind.BARRIER]: no data.
 *
 * Outputs are written from [outputOffset] on.
 */
internal class OffloadPhase(
    private val engine: OffloadEngine,
    val kind: Kind,
    /** Bytes of one rank's contribution (the whole message for reductions and broadcasts). */
    val bytes: Int,
    val elementSize: Int,
    val root: Int,
    val kernel: LocalReduction?,
    val input: DirectBuffer,
    val inputOffset: Int,
    val output: MutableDirectBuffer,
    val name: String,
    /** Where in [output] the phase writes. */
    val outputOffset: Int = 0,
    /** A [Kind.PASS]'s one receiving local rank (-1 for the other kinds). */
    val target: Int = -1,
) : LocalStep, InlineOffloadStep {
    enum class Kind {
        ALLREDUCE,
        REDUCE,
        BCAST,
        ALLGATHER,
        BARRIER,
        GATHER,
        PASS,
    }

    /**
     * Whether the ranks split a piece's reduction among them (built-in ops) or rank 0 reduces it whole (user
     * reductions).
     */
    val splits: Boolean = kernel != null && kernel !is braid.collectives.UserKernel

    /** The schedule's request for this step (set once the step is added). */
    lateinit var work: DeferredWork

    // ## Per-call state, under the engine's lock ##
    @JvmField var fired = false
    @JvmField var done = false
    /** Which segment of the message, and where in it: 0 free-wait, 1 posted, 2 reduced. */
    @JvmField var segment = 0
    @JvmField var stage = 0
    @JvmField var epoch = 0L
    /**
     * Where in each slot the current piece is (a small piece uses half a slot, by epoch parity), or in each control
     * block ([inControl]).
     */
    @JvmField var at = 0
    /** Whether the current piece is tiny: carried in the control blocks' tiny words, not the slots. */
    @JvmField var inControl = false
    @JvmField var waitingSince = 0L
    @JvmField var lastLiveness = 0L

    /** The message goes through the slots in pieces of at most this many bytes (whole elements). */
    val chunk: Int
        get() =
            if (bytes <= engine.smallBytes) maxOf(bytes, elementSize)
            else maxOf(elementSize, engine.slotBytes / elementSize * elementSize)

    val segments: Int
        get() = if (bytes == 0) 1 else (bytes + chunk - 1) / chunk

    /** The call word ranks compare to detect mismatched calls: kind, root, target + 1, bytes. */
    val callWord: Long
        get() =
            (kind.ordinal.toLong() shl 56) or
                ((root.toLong() and 0xff) shl 48) or
                (((target + 1).toLong() and 0xffff) shl 32) or
                (bytes.toLong() and 0xffff_ffffL)

    fun arm() {
        fired = false
        done = false
        segment = 0
        stage = 0
        epoch = 0
        at = 0
        inControl = false
        waitingSince = 0
        lastLiveness = 0
    }

    /** Whether the schedule gave up on this phase before it fired (a failed or cancelled earlier step). */
    val abandoned: Boolean
        get() = !fired && (work.status == WorkStatus.CANCELLED || work.status == WorkStatus.FAILED)

    override fun run(work: DeferredWork): Int = engine.step(this)

    /** [run] for a caller carrying this phase itself: up to [spins] tries in a row. */
    override fun carry(spins: Int): Int = engine.step(this, spins)

    /** Names the phase, and the engine's failure once it failed (the queue puts this in the step's error). */
    override fun toString(): String =
        engine.failure?.let { "$name: $it" }
            ?: if (engine.closed) "$name: the offload binding was closed (its segment is unmapped)" else name

    internal companion object {
        val EAGAIN = -Errno.EAGAIN
    }
}

/**
 * Adds a shared-memory phase of [kind] to this schedule, as a round of its own, and to [phases] (the binding arms them
 * per call). [bytes] and [root] as [OffloadPhase] takes them; the element size and the reduction kernel come from
 * [key].
 */
internal fun braid.collectives.Schedule.offloadPhase(
    engine: OffloadEngine,
    group: braid.collectives.CollectiveGroup,
    key: braid.collectives.ShapeKey,
    phases: MutableList<OffloadPhase>,
    kind: OffloadPhase.Kind,
    bytes: Int,
    root: Int,
    input: DirectBuffer,
    inputOffset: Int,
    output: MutableDirectBuffer,
    outputOffset: Int = 0,
    target: Int = -1,
) {
    val es = key.datatype?.size ?: 1
    val kernel =
        if (kind == OffloadPhase.Kind.ALLREDUCE || kind == OffloadPhase.Kind.REDUCE) group.kernelFor(key, key.count)
        else null
    val p =
        OffloadPhase(
            engine,
            kind,
            bytes,
            es,
            root,
            kernel,
            input,
            inputOffset,
            output,
            "offload ${kind.name.lowercase()} of $bytes B (rank ${group.rank})",
            outputOffset,
            target,
        )
    p.work = local(p)
    round()
    phases += p
}
