package braid.core

/**
 * Capability bits (`fi_info::caps`), with libfabric's values. Primary capabilities (MSG, TAGGED, RMA, ATOMIC,
 * COLLECTIVE and the SEND/RECV/READ/WRITE modifiers) must be asked for; secondary ones (LOCAL_COMM, REMOTE_COMM,
 * SOURCE, DIRECTED_RECV, …) may be granted without being asked for. Hints that ask for no primary capability are
 * granted every one the provider offers.
 *
 * Granted capabilities are what an endpoint may do, as libfabric's mean: an endpoint whose [Info.caps] lacks [RMA]
 * refuses RMA reads and writes, and one that lacks [ATOMIC] refuses atomics, with `-EOPNOTSUPP` (a future or blocking
 * form throws a [FabricException] naming the missing capability), even where its rail could carry them. A rail that
 * carries no RMA at all answers `-ENOSYS`. A topology's link (`Topology.open`) asks for every capability its rails
 * carry.
 */
public object Caps {
    public const val MSG: Long = 1L shl 1
    public const val RMA: Long = 1L shl 2
    public const val TAGGED: Long = 1L shl 3
    public const val ATOMIC: Long = 1L shl 4
    public const val MULTICAST: Long = 1L shl 5
    public const val COLLECTIVE: Long = 1L shl 6
    public const val READ: Long = 1L shl 8
    public const val WRITE: Long = 1L shl 9
    public const val RECV: Long = 1L shl 10
    public const val SEND: Long = 1L shl 11
    public const val REMOTE_READ: Long = 1L shl 12
    public const val REMOTE_WRITE: Long = 1L shl 13
    public const val MULTI_RECV: Long = 1L shl 16
    public const val TRIGGER: Long = 1L shl 20
    public const val FENCE: Long = 1L shl 21
    public const val HMEM: Long = 1L shl 47
    public const val VARIABLE_MSG: Long = 1L shl 48
    public const val LOCAL_COMM: Long = 1L shl 51
    public const val REMOTE_COMM: Long = 1L shl 52
    public const val SHARED_AV: Long = 1L shl 53
    public const val RMA_EVENT: Long = 1L shl 56
    public const val SOURCE: Long = 1L shl 57
    public const val NAMED_RX_CTX: Long = 1L shl 58
    public const val DIRECTED_RECV: Long = 1L shl 59

    /**
     * RMA and atomics, initiated and served: what the shm and tcp rails carry besides messages (not a libfabric bit).
     */
    public const val RMA_ALL: Long = RMA or ATOMIC or READ or WRITE or REMOTE_READ or REMOTE_WRITE

    /** Capabilities an application must request explicitly; a provider grants no others of these. */
    public const val PRIMARY: Long =
        MSG or
            RMA or
            TAGGED or
            ATOMIC or
            MULTICAST or
            COLLECTIVE or
            READ or
            WRITE or
            RECV or
            SEND or
            REMOTE_READ or
            REMOTE_WRITE or
            TRIGGER or
            HMEM

    private val names =
        listOf(
            MSG to "MSG",
            RMA to "RMA",
            TAGGED to "TAGGED",
            ATOMIC to "ATOMIC",
            MULTICAST to "MULTICAST",
            COLLECTIVE to "COLLECTIVE",
            READ to "READ",
            WRITE to "WRITE",
            RECV to "RECV",
            SEND to "SEND",
            REMOTE_READ to "REMOTE_READ",
            REMOTE_WRITE to "REMOTE_WRITE",
            MULTI_RECV to "MULTI_RECV",
            TRIGGER to "TRIGGER",
            FENCE to "FENCE",
            HMEM to "HMEM",
            VARIABLE_MSG to "VARIABLE_MSG",
            LOCAL_COMM to "LOCAL_COMM",
            REMOTE_COMM to "REMOTE_COMM",
            SHARED_AV to "SHARED_AV",
            RMA_EVENT to "RMA_EVENT",
            SOURCE to "SOURCE",
            NAMED_RX_CTX to "NAMED_RX_CTX",
            DIRECTED_RECV to "DIRECTED_RECV",
        )

    /** `FI_MSG, FI_TAGGED, …` as `fi_info -v` prints a caps field. */
    @JvmStatic public fun toString(caps: Long): String = bitNames(caps, names, "FI_")
}

/**
 * Mode bits (`fi_info::mode`): restrictions a provider places on the application. A provider that needs a mode bit the
 * caller did not set in its hints is left out of [Braid.getInfo].
 */
public object Mode {
    public const val CONTEXT: Long = 1L shl 59
    public const val MSG_PREFIX: Long = 1L shl 58
    public const val ASYNC_IOV: Long = 1L shl 57
    public const val RX_CQ_DATA: Long = 1L shl 56
    public const val LOCAL_MR: Long = 1L shl 55
    public const val CONTEXT2: Long = 1L shl 52
    public const val BUFFERED_RECV: Long = 1L shl 51
    public const val PEER_TRANSFER: Long = 1L shl 36

    private val names =
        listOf(
            CONTEXT to "CONTEXT",
            MSG_PREFIX to "MSG_PREFIX",
            ASYNC_IOV to "ASYNC_IOV",
            RX_CQ_DATA to "RX_CQ_DATA",
            LOCAL_MR to "LOCAL_MR",
            CONTEXT2 to "CONTEXT2",
            BUFFERED_RECV to "BUFFERED_RECV",
            PEER_TRANSFER to "PEER_TRANSFER",
        )

    @JvmStatic public fun toString(mode: Long): String = bitNames(mode, names, "FI_")
}

/**
 * Operation flags: passed to data operations (`tryTrecv(…, flags = OpFlags.PEEK)`) and reported in [Completion.flags].
 * Values follow libfabric; CLAIM and DISCARD share bits with capabilities as they do there, since the two sets never
 * meet in one field.
 */
public object OpFlags {
    public const val MSG: Long = Caps.MSG
    public const val RMA: Long = Caps.RMA
    public const val TAGGED: Long = Caps.TAGGED
    public const val ATOMIC: Long = Caps.ATOMIC
    public const val READ: Long = Caps.READ
    public const val WRITE: Long = Caps.WRITE
    public const val RECV: Long = Caps.RECV
    public const val SEND: Long = Caps.SEND
    public const val TRANSMIT: Long = SEND
    /** Counter binding: RMA reads and writes, and atomics, that peers carried out on this endpoint's memory. */
    public const val REMOTE_READ: Long = Caps.REMOTE_READ
    public const val REMOTE_WRITE: Long = Caps.REMOTE_WRITE
    public const val REMOTE_CQ_DATA: Long = 1L shl 17
    public const val MORE: Long = 1L shl 18
    public const val PEEK: Long = 1L shl 19
    public const val TRIGGER: Long = 1L shl 20
    public const val COMPLETION: Long = 1L shl 24
    public const val INJECT: Long = 1L shl 25
    public const val INJECT_COMPLETE: Long = 1L shl 26
    public const val TRANSMIT_COMPLETE: Long = 1L shl 27
    public const val DELIVERY_COMPLETE: Long = 1L shl 28
    public const val DISCARD: Long = 1L shl 58
    public const val CLAIM: Long = 1L shl 59

    /** Bind flag: completions only for operations posted with [COMPLETION] (FI_SELECTIVE_COMPLETION). */
    public const val SELECTIVE_COMPLETION: Long = 1L shl 59

    private val names =
        listOf(
            MSG to "MSG",
            RMA to "RMA",
            TAGGED to "TAGGED",
            ATOMIC to "ATOMIC",
            READ to "READ",
            WRITE to "WRITE",
            RECV to "RECV",
            SEND to "SEND",
            REMOTE_READ to "REMOTE_READ",
            REMOTE_WRITE to "REMOTE_WRITE",
            REMOTE_CQ_DATA to "REMOTE_CQ_DATA",
            MORE to "MORE",
            PEEK to "PEEK",
            TRIGGER to "TRIGGER",
            COMPLETION to "COMPLETION",
            INJECT to "INJECT",
            INJECT_COMPLETE to "INJECT_COMPLETE",
            TRANSMIT_COMPLETE to "TRANSMIT_COMPLETE",
            DELIVERY_COMPLETE to "DELIVERY_COMPLETE",
            DISCARD to "DISCARD",
            CLAIM to "CLAIM",
        )

    @JvmStatic public fun toString(flags: Long): String = bitNames(flags, names, "FI_")
}

/** Special fabric addresses. */
public object FiAddr {
    /** Any source: a receive posted with it matches every sender (`FI_ADDR_UNSPEC`). */
    public const val UNSPEC: Long = -1L

    /** The sender of a message is not in the receiver's address vector (`FI_ADDR_NOTAVAIL`). */
    public const val NOTAVAIL: Long = -1L

    // UNSPEC and NOTAVAIL share a value, as in libfabric: a receive's filter says UNSPEC, a
    // completion's source says NOTAVAIL.
}

public enum class EndpointType {
    RDM,
    MSG,
    DGRAM,
}

public enum class AvType {
    UNSPEC,
    MAP,
    TABLE,
}

/**
 * The threading level a domain is asked for (`fi_threading`). [SAFE] (the default): each domain takes its one lock per
 * post, per completion-queue read and per progress round, so any thread may call in (uncontended, a compare-and-swap
 * each way: on x86 two locked instructions per inject, each waiting for the ring copy before it to drain).
 *
 * [DOMAIN] (`FI_THREAD_DOMAIN`) under manual progress: the application calls into a domain and its objects from one
 * thread at a time, and the per-message path takes no lock ([Domain.isSolo]). The domain takes its lock again, for
 * good, once a thread of Braid's own is made to drive it: a [ProgressEngine], the driver of futures and suspended
 * calls, tcp's keepalive for an idle application, a completion queue's publisher ([Domain.shareAcrossThreads] says so
 * for a thread the application starts). Telemetry's JMX views only read counters: on a solo domain they read them
 * without the lock, so two counters of one view may be a message apart. [COMPLETION] and [ENDPOINT] are served as
 * [SAFE].
 */
public enum class Threading {
    UNSPEC,
    SAFE,
    DOMAIN,
    COMPLETION,
    ENDPOINT,
}

/**
 * How a domain makes progress (`fi_progress`). Under [MANUAL] (the default) progress happens when the application calls
 * in: reading a CQ or counter, a blocking or `suspend` data operation, [Domain.progress] — and, while any
 * `CompletableFuture` the domain handed out is incomplete, a driver on the common coroutine pool, so futures complete
 * without a `get()`. Under [AUTO] a [ProgressEngine] thread drives the domain and every waiter parks.
 */
public enum class ProgressModel {
    UNSPEC,
    MANUAL,
    AUTO,
}

/** Memory registration modes (`fi_domain_attr::mr_mode`). */
public object MrMode {
    public const val LOCAL: Int = 1 shl 2
    public const val VIRT_ADDR: Int = 1 shl 4
    public const val ALLOCATED: Int = 1 shl 5
    public const val PROV_KEY: Int = 1 shl 6
    public const val ENDPOINT: Int = 1 shl 8
    public const val HMEM: Int = 1 shl 9

    @JvmStatic
    public fun toString(mode: Int): String =
        bitNames(
            mode.toLong(),
            listOf(
                LOCAL.toLong() to "LOCAL",
                VIRT_ADDR.toLong() to "VIRT_ADDR",
                ALLOCATED.toLong() to "ALLOCATED",
                PROV_KEY.toLong() to "PROV_KEY",
                ENDPOINT.toLong() to "ENDPOINT",
                HMEM.toLong() to "HMEM",
            ),
            "FI_MR_",
        )
}

internal fun bitNames(bits: Long, names: List<Pair<Long, String>>, prefix: String): String {
    if (bits == 0L) return " "
    val out = StringBuilder()
    var rest = bits
    for ((bit, name) in names) {
        if (bits and bit != 0L && rest and bit != 0L) {
            if (out.isNotEmpty()) out.append(", ")
            out.append(prefix).append(name)
            rest = rest and bit.inv()
        }
    }
    if (rest != 0L) {
        if (out.isNotEmpty()) out.append(", ")
        out.append("0x").append(java.lang.Long.toHexString(rest))
    }
    return out.toString()
}
