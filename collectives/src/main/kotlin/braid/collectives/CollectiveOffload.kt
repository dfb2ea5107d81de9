package braid.collectives

import braid.core.Domain
import braid.core.PeerAvSet

/**
 * A collective offload provider (fi_peer(3)'s second model: "an offload provider implements a subset of the libfabric
 * API … paired with a main peer provider"): it implements only collectives, for some of a group's members, and the
 * group's main provider carries the rest. Groups program against this and the [OffloadBinding] it returns, never
 * against an implementation, the way the endpoint programs against a rail through the provider SPI. The intra-node
 * shared-memory offload (`braid.collectives.offload.ShmOffload`, over rail-core's shared-memory kit) is the first
 * implementation; a NIC's collective engine would be a second.
 *
 * How a group gets one: [JoinOptions.withOffload] at the join, or [pairWith] for every group joined on a domain's
 * endpoints (what a topology's `offload` block does). When the join completes the group asks the offload to pair with
 * it; the offload answers with a binding, or null to leave the group to the main provider.
 */
public abstract class CollectiveOffload {
    /**
     * Whether it carries [op] on [datatype] with [reduceOp] (`fi_query_collective`): 0 if so, `-ENOSYS` if not. Barrier
     * takes no datatype (null). The provider's answer; a group's binding answers for the group
     * ([OffloadBinding.queryCollective]).
     */
    public abstract fun queryCollective(op: CollectiveOp, datatype: Datatype?, reduceOp: ReduceOp?): Int

    /**
     * Pairs with [group], joined on [set] (the peer AV set through which the offload imports the members); the binding,
     * or null when the group is left to the main provider. Called once, as the join completes.
     */
    @JvmSynthetic internal abstract fun pair(group: CollectiveGroup, set: PeerAvSet): OffloadBinding?

    public companion object {
        private val paired = java.util.WeakHashMap<Domain, CollectiveOffload>()

        /**
         * Pairs [offload] with [domain] (what opening a topology with an `offload` block does): groups joined on the
         * domain's endpoints use it unless their [JoinOptions] name another. Null unpairs.
         */
        @JvmStatic
        public fun pairWith(domain: Domain, offload: CollectiveOffload?): Unit =
            synchronized(paired) { if (offload == null) paired.remove(domain) else paired[domain] = offload }

        /** The offload paired with [domain] by [pairWith], or null. */
        @JvmStatic public fun pairedWith(domain: Domain): CollectiveOffload? = synchronized(paired) { paired[domain] }
    }
}

/**
 * A group's pairing with a [CollectiveOffload] ([CollectiveGroup.offload]): which of the group's calls the offload
 * carries, and counters of what carried each call. The group asks it, when a call's shape is first compiled, for the
 * call's schedule (null: the main provider's), and tells it as each call starts; the counters are kept here, alike for
 * every offload.
 */
public abstract class OffloadBinding : AutoCloseable {
    /** The provider paired with the group. */
    public abstract val provider: CollectiveOffload

    /** Whether the group spans hosts (calls become hierarchical schedules); Java reads it as `isHierarchical()`. */
    public abstract val isHierarchical: Boolean

    /** How many hosts the group spans. */
    public abstract val hostCount: Int

    /** The group ranks on this host, in rank order. */
    public abstract fun localRanks(): IntArray

    /** Whether this rank is its host's leader (it carries the host's part between hosts). */
    public abstract val isLeader: Boolean

    /** Calls carried wholly by the offload. */
    @Volatile
    public var offloadCalls: Long = 0
        protected set

    /** Calls run as hierarchical schedules. */
    @Volatile
    public var hierarchicalCalls: Long = 0
        protected set

    /** Calls the offload declined (left to the main provider). */
    @Volatile
    public var mainCalls: Long = 0
        protected set

    /**
     * Of [offloadCalls], the blocking calls carried on the caller's thread: their one phase stepped straight through
     * the offload while the call waits, with no deferred work queued (the domain's progress still runs every few steps,
     * for everything else in flight).
     */
    @Volatile
    public var inlineCalls: Long = 0
        protected set

    /** Transfers this rank posted on the main provider for the between-host part of hierarchical calls. */
    @Volatile
    public var leaderTransfers: Long = 0
        protected set

    /** Phases this rank carried through the offload (the shared-memory offload: through its host's segment). */
    public abstract val segmentPhases: Long

    /** Bytes this rank handed the offload (the shared-memory offload: copied into its segment). */
    public abstract val segmentBytes: Long

    /** The failure that ended the offload for this group, or null. */
    public abstract val failure: String?

    /**
     * Whether a call of [op] on [datatype] with the built-in [reduceOp] (null for operations without one) takes this
     * pairing's path in this group: 0 if so, `-ENOSYS` if it runs on the main provider. `fi_query_collective` for the
     * group rather than the provider ([CollectiveOffload.queryCollective]).
     */
    public abstract fun queryCollective(op: CollectiveOp, datatype: Datatype?, reduceOp: ReduceOp?): Int

    /** [queryCollective] for a call of [count] elements with a user reduction. */
    public abstract fun queryCollective(op: CollectiveOp, datatype: Datatype, reduction: UserReduction, count: Int): Int

    /**
     * Releases what the pairing holds; later offload calls fail. [CollectiveGroup.close] calls it once no collective is
     * in flight.
     */
    abstract override fun close()

    // ## Called by the group ##

    /** The schedule of [key] through the offload, or null to leave the call to the main provider. */
    @JvmSynthetic internal abstract fun compile(key: ShapeKey): Schedule?

    /**
     * A call is starting on [s] (under the group's lock, before its steps can fire). A [blocking] call the offload
     * carries in one step may be carried by the caller itself while it waits: that step is returned (and nothing is
     * queued); otherwise null, and the schedule runs.
     */
    @JvmSynthetic internal abstract fun starting(s: Schedule, blocking: Boolean): InlineOffloadStep?
}

/** An offload's one step of a blocking call, carried by the waiting caller ([CollectiveRequest]). */
internal interface InlineOffloadStep {
    /** Up to [spins] tries: 0 once carried through, `-EAGAIN` until then, `-errno` if it failed. */
    fun carry(spins: Int): Int
}
