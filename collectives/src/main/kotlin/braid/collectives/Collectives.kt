package braid.collectives

import braid.core.AvSet
import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.EventQueue
import braid.core.EventType
import braid.core.FabricException
import braid.core.FiAddr
import java.util.WeakHashMap
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.function.IntSupplier
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Joining collective groups (`fi_join_collective`). The join is itself a collective over the set's members: an
 * allreduce of one record that agrees on the group's context id (the largest id any member has free, so the id is new
 * on every member's endpoint), checks that every member passed the same set (a hash of the members' addresses, in
 * order) and that every member passed the same [CollectiveTuning] (its fingerprint: forced algorithms and crossovers).
 * Members whose tunings differ would compile different schedules for one call and hang, so such a join fails on every
 * member with EINVAL naming both tunings. Joins on one endpoint run one at a time (a second returns EAGAIN while one is
 * under way, as cxi's do); every member must have its own endpoint's address inserted in the AV and in the set. The
 * join itself always runs one algorithm (recursive doubling), whatever the tunings say, so it completes even when they
 * differ.
 */
public object Collectives {
    private class EndpointState {
        var next = 1
        var joining = false
    }

    private val states = WeakHashMap<Endpoint, EndpointState>()

    /**
     * Starts joining the group of [set]'s members on [endpoint]. When the join ends, a [EventType.JOIN_COMPLETE] event
     * with [context] is written to [eq] if given (an error entry if it failed), and the returned [CollectiveJoin]
     * completes.
     */
    @JvmStatic
    @JvmOverloads
    public fun startJoin(
        endpoint: Endpoint,
        set: AvSet,
        eq: EventQueue? = null,
        context: Any? = null,
        options: JoinOptions = JoinOptions.DEFAULT,
    ): CollectiveJoin {
        val members = set.toLongArray()
        val self = set.av.epAddr(endpoint)
        val rank = if (self == FiAddr.NOTAVAIL) -1 else members.indexOf(self)
        if (rank < 0)
            throw FabricException.invalid(
                "join on $endpoint: its own address is not a member of $set; insert endpoint.address into the AV and the set"
            )
        val hash = membershipHash(set, members)
        val tuning =
            options.tuning // resolved once, before the endpoint is marked joining: a bad BRAID_COLL_* value throws here
        val state =
            synchronized(states) {
                val st = states.getOrPut(endpoint) { EndpointState() }
                if (st.joining)
                    throw FabricException(
                        Errno.EAGAIN,
                        "join on $endpoint: another join is under way on this endpoint; retry once it completes",
                    )
                st.joining = true
                st
            }
        val proposal = synchronized(states) { state.next }
        // Recursive doubling whatever the defaults say: AGREE combines the three values as one record, so no algorithm
        // may cut the vector into blocks.
        val scratch = CollectiveGroup(endpoint, set, members, rank, 0, JOIN_TUNING, (hash and 0xffff).toInt())
        val record = LongArray(RECORD)
        record[PROPOSAL] = proposal.toLong()
        record[HASH_MIN] = hash
        record[HASH_MAX] = hash
        tuning.fingerprint(record, TUNING_MIN)
        tuning.fingerprint(record, TUNING_MAX)
        val send = UnsafeBuffer(ByteArray(RECORD * 8)).apply { for (i in 0 until RECORD) putLong(i * 8, record[i]) }
        val recv = UnsafeBuffer(ByteArray(RECORD * 8))
        val request =
            try {
                scratch.startAllreduce(send, 0, recv, 0, RECORD, Datatype.INT64, AGREE)
            } catch (e: Throwable) {
                synchronized(states) { state.joining = false }
                throw e
            }
        val join = CollectiveJoin(request)
        request.toFuture().whenComplete { _, failure ->
            synchronized(states) { state.joining = false }
            val agreed = LongArray(RECORD) { recv.getLong(it * 8) }
            val err: Throwable? =
                failure?.let { (it as? java.util.concurrent.CompletionException)?.cause ?: it }
                    ?: if (agreed[HASH_MIN] != hash || agreed[HASH_MAX] != hash)
                        FabricException.invalid(
                            "join on $endpoint: the members passed different sets (rank $rank's has ${members.size} members); every member must join with the same members in the same order"
                        )
                    else if (!sameTuning(agreed, record)) tuningMismatch(endpoint, rank, tuning, agreed, record)
                    else if (agreed[PROPOSAL] >= MAX_CONTEXT)
                        FabricException(
                            Errno.ENOSPC,
                            "join on $endpoint: no context id left ($MAX_CONTEXT groups joined)",
                        )
                    else null
            if (err != null) {
                eq?.writeErr(context, (err as? FabricException)?.code ?: Errno.EIO, err.message ?: err.toString())
                join.future.completeExceptionally(err)
            } else {
                val ctx = agreed[PROPOSAL].toInt()
                synchronized(states) { state.next = maxOf(state.next, ctx + 1) }
                val group = paired(CollectiveGroup(endpoint, set, members, rank, ctx, tuning, 0), set, options)
                eq?.write(EventType.JOIN_COMPLETE, context, ctx.toLong())
                join.future.complete(group)
            }
        }
        return join
    }

    /** Joins and waits (driving progress) up to [timeoutMillis]; throws [FabricException] on failure or ETIMEDOUT. */
    @JvmStatic
    @JvmOverloads
    public fun join(
        endpoint: Endpoint,
        set: AvSet,
        timeoutMillis: Long,
        options: JoinOptions = JoinOptions.DEFAULT,
    ): CollectiveGroup = startJoin(endpoint, set, null, null, options).waitFor(timeoutMillis)

    /** Joins as a future (for Java); see [CollectiveRequest.toFuture] for when it completes under manual progress. */
    @JvmStatic
    @JvmOverloads
    public fun joinAsync(
        endpoint: Endpoint,
        set: AvSet,
        options: JoinOptions = JoinOptions.DEFAULT,
    ): CompletableFuture<CollectiveGroup> = startJoin(endpoint, set, null, null, options).toFuture()

    /** Joins, suspending until it is done. */
    public suspend fun joinSuspend(
        endpoint: Endpoint,
        set: AvSet,
        options: JoinOptions = JoinOptions.DEFAULT,
    ): CollectiveGroup = startJoin(endpoint, set, null, null, options).await()

    /**
     * A group over [set]'s members on [endpoint] with a context id its members have already agreed by other means,
     * joined with no traffic. This is how a layer that agrees its own ids builds groups: an MPI layer agrees a new
     * communicator's context id with a collective on the parent communicator's group and then makes the child's group
     * here, so no group needs a join to exist (the world's group uses a fixed id). Every member must pass the same
     * members in the same order and the same [contextId], in 1 until 2^23, which must not be in use by another group on
     * any member's endpoint (joins hand out ids counting up from 1: do not mix the two on one endpoint without keeping
     * the ranges apart). The group's first call has sequence number 0 on every member. No traffic means no check
     * either: the members must also pass the same [JoinOptions.tuning] (a join would refuse differing ones), or their
     * schedules differ and the group hangs. The group is paired with an offload as a join's is ([JoinOptions.offload],
     * else the domain's pairing), so a layer that makes its groups here gets the intra-node offload too.
     */
    @JvmStatic
    @JvmOverloads
    public fun groupOf(
        endpoint: Endpoint,
        set: AvSet,
        contextId: Int,
        options: JoinOptions = JoinOptions.DEFAULT,
    ): CollectiveGroup {
        if (contextId < 1 || contextId >= MAX_CONTEXT)
            throw FabricException.invalid("group on $endpoint: context id $contextId is outside 1 until $MAX_CONTEXT")
        val members = set.toLongArray()
        val self = set.av.epAddr(endpoint)
        val rank = if (self == FiAddr.NOTAVAIL) -1 else members.indexOf(self)
        if (rank < 0)
            throw FabricException.invalid(
                "group on $endpoint: its own address is not a member of $set; insert endpoint.address into the AV and the set"
            )
        return paired(CollectiveGroup(endpoint, set, members, rank, contextId, options.tuning, 0), set, options)
    }

    /**
     * Pairs [group] with its offload, and gives it the progress its blocking waits drive ([JoinOptions.withProgress]),
     * as every way of making a group does (a join and [groupOf] alike). The offload is the one in [options], else the
     * one paired with the endpoint's domain ([CollectiveOffload.pairWith]), else none. The offload may still leave the
     * group to the main provider (too few ranks on the host): then [CollectiveGroup.offload] stays null.
     */
    private fun paired(group: CollectiveGroup, set: AvSet, options: JoinOptions): CollectiveGroup {
        group.waitProgress = options.progress
        (options.offload ?: CollectiveOffload.pairedWith(group.endpoint.domain))?.let {
            group.offload = it.pair(group, set)
        }
        return group
    }

    private const val MAX_CONTEXT = 1L shl 23

    private val JOIN_TUNING =
        CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RECURSIVE_DOUBLING)

    /** FNV-1a over the members' address blobs in order: equal on every member iff the sets are. */
    private fun membershipHash(set: AvSet, members: LongArray): Long {
        var h = -0x340d631b7bdddcdbL
        for (m in members) {
            for (b in set.av.lookup(m)) {
                h = h xor (b.toLong() and 0xff)
                h *= 0x100000001b3L
            }
            h = h xor 0xff
            h *= 0x100000001b3L
        }
        return h
    }

    // The join's agreement record, one vector of longs that no algorithm may cut into blocks:
    // the proposed context id (max), the membership hash (min and max), and the tuning's
    // fingerprint, the lexicographically least and greatest of the members' (FINGERPRINT_LONGS each).
    private const val PROPOSAL = 0
    private const val HASH_MIN = 1
    private const val HASH_MAX = 2
    private const val TUNING_MIN = 3
    private const val TUNING_MAX = TUNING_MIN + CollectiveTuning.FINGERPRINT_LONGS
    private const val RECORD = TUNING_MAX + CollectiveTuning.FINGERPRINT_LONGS

    /** Whether every member passed the tuning this one did (the least and the greatest fingerprint are this one's). */
    private fun sameTuning(agreed: LongArray, mine: LongArray): Boolean {
        for (i in 0 until CollectiveTuning.FINGERPRINT_LONGS) if (
            agreed[TUNING_MIN + i] != mine[TUNING_MIN + i] || agreed[TUNING_MAX + i] != mine[TUNING_MIN + i]
        )
            return false
        return true
    }

    /** The error every member of a join with differing tunings gets: its own tuning and one that differs from it. */
    private fun tuningMismatch(
        endpoint: Endpoint,
        rank: Int,
        mine: CollectiveTuning,
        agreed: LongArray,
        record: LongArray,
    ): FabricException {
        val leastIsMine =
            (0 until CollectiveTuning.FINGERPRINT_LONGS).all { agreed[TUNING_MIN + it] == record[TUNING_MIN + it] }
        val other = CollectiveTuning.fromFingerprint(agreed, if (leastIsMine) TUNING_MAX else TUNING_MIN)
        return FabricException.invalid(
            "join on $endpoint: the members joined with different collective tunings, so their schedules would differ and the group would hang: " +
                "rank $rank has $mine, another member has $other; every member must join with the same tuning (the same BRAID_COLL_* variables, or the same JoinOptions.withTuning)"
        )
    }

    /** The join's reduction over the record: max, min, max, then the least and the greatest fingerprint. */
    private val AGREE =
        object : UserReduction {
            override fun reduce(
                input: DirectBuffer,
                inputOffset: Int,
                inout: MutableDirectBuffer,
                inoutOffset: Int,
                count: Int,
                datatype: Datatype,
            ) {
                inout.putLong(inoutOffset, maxOf(input.getLong(inputOffset), inout.getLong(inoutOffset)))
                inout.putLong(inoutOffset + 8, minOf(input.getLong(inputOffset + 8), inout.getLong(inoutOffset + 8)))
                inout.putLong(inoutOffset + 16, maxOf(input.getLong(inputOffset + 16), inout.getLong(inoutOffset + 16)))
                if (compare(input, inputOffset + TUNING_MIN * 8, inout, inoutOffset + TUNING_MIN * 8) < 0)
                    inout.putBytes(
                        inoutOffset + TUNING_MIN * 8,
                        input,
                        inputOffset + TUNING_MIN * 8,
                        CollectiveTuning.FINGERPRINT_LONGS * 8,
                    )
                if (compare(input, inputOffset + TUNING_MAX * 8, inout, inoutOffset + TUNING_MAX * 8) > 0)
                    inout.putBytes(
                        inoutOffset + TUNING_MAX * 8,
                        input,
                        inputOffset + TUNING_MAX * 8,
                        CollectiveTuning.FINGERPRINT_LONGS * 8,
                    )
            }

            private fun compare(a: DirectBuffer, aOffset: Int, b: DirectBuffer, bOffset: Int): Int {
                for (i in 0 until CollectiveTuning.FINGERPRINT_LONGS) {
                    val c = a.getLong(aOffset + i * 8).compareTo(b.getLong(bOffset + i * 8))
                    if (c != 0) return c
                }
                return 0
            }

            override fun isCommutative(): Boolean = true

            override fun toString(): String = "join agreement"
        }
}

/**
 * What a join sets up besides the members: the [tuning] its group chooses algorithms by, and the [offload] provider
 * paired with the endpoint's provider for the group (none by default). Every member must pass an equal tuning
 * ([CollectiveTuning.equals]: the same forced algorithms and crossovers); the join fails on every member, naming both,
 * when they differ.
 */
public class JoinOptions
private constructor(
    /** The tuning [withTuning] set; null: the environment's, read when asked ([tuning]). */
    private val setTuning: CollectiveTuning?,
    @get:JvmName("offload") public val offload: CollectiveOffload? = null,
    /** The progress a blocking call's wait drives ([withProgress]); null: the domain's. */
    @get:JvmName("progress") public val progress: IntSupplier? = null,
) {
    /**
     * The tuning: the one [withTuning] set, else the environment's ([CollectiveTuning.fromEnvironment]), read when the
     * join asks, so a bad `BRAID_COLL_*` value is a [braid.core.SettingsException] naming it there (not a class that
     * fails to load).
     */
    @get:JvmName("tuning")
    public val tuning: CollectiveTuning
        get() = setTuning ?: CollectiveTuning.fromEnvironment()

    public fun withTuning(tuning: CollectiveTuning): JoinOptions = JoinOptions(tuning, offload, progress)

    /**
     * A copy pairing [offload] with the group (null: the one paired with the endpoint's domain by
     * [CollectiveOffload.pairWith], if any).
     */
    public fun withOffload(offload: CollectiveOffload?): JoinOptions = JoinOptions(setTuning, offload, progress)

    /**
     * A copy whose groups' blocking calls drive [progress] while they wait, instead of the domain's progress: for a
     * layer above the endpoint that completes its own requests when it reads the completion queue (an MPI layer), so
     * that its operations move while a blocking collective waits (MPI's progress rule). [progress] drives one round,
     * the domain's progress included, and returns the work done (0: the wait idles by the domain's policy). A blocking
     * call the offload carries inline steps its phase between rounds. Null: the domain's progress.
     */
    public fun withProgress(progress: IntSupplier?): JoinOptions = JoinOptions(setTuning, offload, progress)

    public companion object {
        /** The tuning of the environment ([CollectiveTuning.fromEnvironment], read at each join), no offload named. */
        @JvmField public val DEFAULT: JoinOptions = JoinOptions(null)
    }
}

/** A join under way: its group once it completes. */
public class CollectiveJoin internal constructor(private val request: CollectiveRequest) {
    @get:JvmSynthetic internal val future = CompletableFuture<CollectiveGroup>()

    /** Drives progress once; the group once joined, null before. Throws [FabricException] if the join failed. */
    public fun test(): CollectiveGroup? {
        if (!future.isDone) request.drive()
        return if (future.isDone) result() else null
    }

    /**
     * Waits up to [timeoutMillis] (negative: no limit), driving progress through the domain's one wait
     * ([Domain.driveUntil]).
     */
    @Throws(FabricException::class)
    public fun waitFor(timeoutMillis: Long): CollectiveGroup {
        if (!request.domain.driveUntil(Domain.deadlineAfter(timeoutMillis)) { future.isDone }) {
            throw FabricException(Errno.ETIMEDOUT, "join: not complete after $timeoutMillis ms")
        }
        return result()
    }

    /** Suspends until joined, driving progress through the domain's suspending wait ([Domain.awaitUntil]). */
    public suspend fun await(): CollectiveGroup {
        request.domain.awaitUntil { future.isDone }
        return result()
    }

    public fun toFuture(): CompletableFuture<CollectiveGroup> = future

    private fun result(): CollectiveGroup =
        try {
            future.get()
        } catch (e: ExecutionException) {
            throw (e.cause as? FabricException) ?: FabricException(Errno.EIO, "join failed: ${e.cause}")
        }
}
