package braid.provider

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Domain
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Info
import braid.core.Param
import braid.core.RailCounters
import braid.core.RailLimit
import braid.core.RailStats
import braid.core.SrxPeer
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * A provider (a rail): one transport under the object model. It offers [infos], parses the addresses of its peers, and
 * opens the per-endpoint [Transport] that moves the bytes.
 */
internal interface Provider {
    val name: String

    /**
     * Whether this provider serves the provider name [name] in hints, configuration and links: its own [name], and for
     * the native rail the names it stands for (`ofi:tcp`, `verbs`).
     */
    fun answersTo(name: String): Boolean = name == this.name

    /** What this provider offers on this machine, most desirable first. */
    fun infos(): List<Info>

    /** [infos] for [hints]; the providers resolve their parameters from [Hints.settings] here. */
    fun infos(hints: Hints): List<Info> = infos()

    /** The parameters this provider declares ([braid.core.Settings] resolves them; `braid info -e` lists them). */
    val parameters: List<Param<*>>
        get() = emptyList()

    /**
     * The parameter behind a rail's [limit] (its eager size, its ring capacity), or null when this provider has none.
     */
    fun limitParameter(limit: RailLimit): Param<Int>? = null

    /**
     * Whether this provider can serve as a peer under an owner (a link's rail): write into the owner's CQ, match
     * through its shared receive context, resolve through its AV. Opening a provider that cannot as a peer fails with
     * EINVAL, as fi_peer(3) requires.
     */
    val canBePeer: Boolean
        get() = false

    /**
     * What an entry [info] of this provider carries as a link's rail: its caps, unless the provider carries some only
     * when it stands alone (the native rail's RMA needs its own registrations, which a link's regions do not make).
     */
    fun capsAsRail(info: Info): Long = info.caps

    /** The host identity a peer address blob of this provider carries, or null if [address] is not one. */
    fun hostIdOf(address: ByteArray): Long? = null

    /**
     * The process that owns the endpoint of a peer address blob of this provider, where the address names it (shm's
     * does: its endpoint name carries the pid and start time), else null.
     */
    fun processOf(address: ByteArray): braid.core.shm.ProcessIdentity? = null

    /**
     * Opens this provider's part of [domain] for [info] (one of this provider's [infos]): the domain's own Info when
     * the provider stands alone, the rail's Info inside a link.
     */
    fun openDomain(domain: Domain, info: Info): DomainProvider
}

/** A provider's part of one open [Domain]. */
internal interface DomainProvider : AutoCloseable {
    /** Parses and validates a peer's address blob; throws [braid.core.FabricException] naming what is wrong. */
    fun parseAddress(raw: ByteArray): PeerAddress

    /**
     * Opens this provider's part of an endpoint: [host] is the endpoint as its rails see it (the one upward seam),
     * [info] the rail's own Info (the endpoint's when the provider stands alone), and [av] how the rail sees the
     * endpoint's address vector.
     */
    fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport

    /**
     * Whether this provider honours an override of [op] for an object of [info] (`Domain.setOp`, or `Endpoint.setOp`
     * when [endpoint]): 0, or `-ENOSYS`. Rails that stage device memory through the copy service honour it where they
     * offer Caps.HMEM; the native rail asks libfabric (`fi_set_ops` with `FI_SET_OPS_HMEM_OVERRIDE`) and passes its
     * answer on.
     */
    fun hmemOverride(op: braid.core.HmemOp, info: Info, endpoint: Boolean): Int =
        if (braid.core.HmemOverrides.honoured(info.caps)) 0 else -braid.core.Errno.ENOSYS

    /**
     * The registration hook: registers [buffer] (the whole view) with the provider's own memory registration
     * (`fi_mr_reg`) for [access], under [key] (Braid's choice, or the caller's when [requested]), or returns null when
     * the provider has none and Braid's own key serves (every rail that carries RMA itself). A provider that makes its
     * own keys (FI_MR_PROV_KEY) answers with another [ProviderRegion.key], and the domain files the region under it.
     * Throws [braid.core.FabricException] naming the provider and what it refused. Called with the domain lock held.
     */
    fun registerMemory(buffer: UnsafeBuffer, access: Int, key: Long, requested: Boolean): ProviderRegion? = null

    /**
     * The native deferred-work hook (`fi_control(domain, FI_QUEUE_WORK)`): offers [work], already checked, to the
     * provider's own queue. True: the provider holds it too, issues it itself when its native counter reaches the
     * threshold, and reports its outcome through [braid.core.DeferredWorkQueue.nativeSucceeded] and
     * [braid.core.DeferredWorkQueue.nativeFailed]; Braid's queue keeps it in its own heap as well (cancel, flush and
     * the counts see it) but never issues it. False: Braid's queue serves it (every provider without a native queue,
     * and what a native queue does not take). Called with the domain lock held.
     */
    fun queueWork(work: braid.core.DeferredWork): Boolean = false

    /**
     * Takes [work], which [queueWork] took, off the native queue (`FI_CANCEL_WORK`), or throws
     * [braid.core.FabricException] naming the provider when it cannot. Called with the domain lock held.
     */
    fun cancelWork(work: braid.core.DeferredWork): Unit =
        throw braid.core.FabricException(braid.core.Errno.ENOSYS, "this provider cannot cancel natively queued work")
}

/** A provider's own registration of a [braid.core.MemoryRegion] ([DomainProvider.registerMemory]). */
internal interface ProviderRegion {
    /** The key peers present: the one asked for, or the provider's own (FI_MR_PROV_KEY). */
    val key: Long

    /** The local descriptor operations on this memory pass (`fi_mr_desc`), or 0 when the provider needs none. */
    val descriptor: Long

    /** Deregisters it (`fi_close` of the `fid_mr`); once only, further calls do nothing. */
    fun close()
}

/** A parsed peer address. [key] identifies the peer endpoint uniquely on the fabric. */
internal interface PeerAddress {
    val key: String
    val raw: ByteArray

    fun render(): String

    /** The part of this address rail [provider] reaches it by: itself, unless it bundles several rails' addresses. */
    fun part(provider: String): PeerAddress? = this

    /** Keys of the rail addresses bundled in this one; each resolves to this address's fi_addr. */
    val partKeys: List<String>
        get() = emptyList()

    /** [braid.core.AddressTable.keyHash] of [key] (an address may compute it without building the string). */
    fun keyHash(): Long = braid.core.AddressTable.keyHash(key)

    /**
     * How many keys the address vector files this address under — its [partKeys], or its own [key] when it bundles none
     * — and the hash of each ([indexKeyHash]); no strings built.
     */
    val indexKeyCount: Int
        get() = 1

    fun indexKeyHash(i: Int): Long = keyHash()
}

/**
 * How one rail sees its endpoint's address vector (the link's use of the peer AV idea). [rail] is the rail's identity
 * (its provider's name when it stands alone; in a link, [braid.core.RailAttr.name]) and [provider] its provider.
 * [query] gives the rail's own part of an inserted address: the part named [rail], else — when the rail is the link's
 * [sole] rail of its provider, so that a peer naming its rail differently (`tcp:eth0` here, `tcp:ib0` there, an older
 * peer's unnamed part) is still paired — the address's first part of [provider]'s kind. [epAddr] maps a rail address
 * key back to the fi_addr the application knows (or [FiAddr.NOTAVAIL]). [generation] changes on every insert and
 * remove, so a rail can refresh what it cached.
 */
internal class RailAv(
    private val host: RailHost,
    val rail: String,
    val provider: String = rail,
    private val sole: Boolean = true,
) {
    val bound: Boolean
        get() = host.av != null

    val generation: Long
        get() = host.av?.generation ?: -1L

    fun query(fiAddr: Long): PeerAddress? {
        val whole = host.av?.peer(fiAddr) ?: return null
        return whole.part(rail) ?: if (sole && rail != provider) whole.part(provider) else null
    }

    /** The whole address inserted at [fiAddr] (all rails' parts), or null. */
    fun peer(fiAddr: Long): PeerAddress? = host.av?.peer(fiAddr)

    fun epAddr(key: String): Long = host.av?.reverse(key) ?: FiAddr.NOTAVAIL

    /**
     * The same address vector as rail [name] of [provider] sees it (a link's view for each of its rails); [sole]: the
     * only rail of [provider] in the link.
     */
    fun forRail(name: String, provider: String = name, sole: Boolean = true): RailAv =
        RailAv(host, name, provider, sole)
}

/**
 * A provider's part of one [Endpoint]: it sends, receives into the endpoint's shared receive context (as an [SrxPeer]),
 * and writes completions through the endpoint.
 */
internal interface Transport : SrxPeer, AutoCloseable {
    /** This endpoint's address blob. */
    val address: ByteArray

    fun enable()

    /** One duty cycle: moves whatever can move without blocking; returns the work done. */
    fun progress(): Int

    /**
     * [progress] threw: this rail's state can no longer be trusted. Every operation in flight on it fails with [err]
     * naming [why], its peers are reported down, and an error event goes to the endpoint's event queue. The domain
     * drives it no more.
     */
    fun abort(err: Int, why: String)

    /**
     * Starts a send of [buffer] (the whole view) to [dest]. [flags] carries [braid.core.OpFlags] (TAGGED,
     * REMOTE_CQ_DATA, INJECT, DELIVERY_COMPLETE, COMPLETION). Returns 0, or a negated errno: `-EAGAIN` when resources
     * are exhausted (progress and retry), `-EINVAL` for a bad address or size. With INJECT the buffer is copied before
     * return and no completion follows.
     */
    fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int

    /** Whether [sendSequenced] carries a link's sequence number and stripe word to the peer's [ArrivalOrder] (tcp). */
    val carriesSequence: Boolean
        get() = false

    /**
     * [send] for a link that spreads one peer's messages over several rails: the message carries the link's sequence
     * number [seq] (per destination, from 1) and, for a part of a striped message, [stripe] (its offset in the message
     * in the high 32 bits, the message's length in the low 32), which the peer's rail hands to its [ArrivalOrder].
     * `-ENOSYS` where [carriesSequence] is false.
     */
    fun sendSequenced(
        buffer: DirectBuffer,
        dest: Long,
        tag: Long,
        data: Long,
        flags: Long,
        context: Any?,
        seq: Long,
        stripe: Long,
    ): Int = -Errno.ENOSYS

    /**
     * Tells [dest] that this endpoint's link message [seq] failed on another rail, so that its reorder stage stops
     * waiting for it: 0, `-EAGAIN` (no room now), or the refusal of a peer gone here. `-ENOSYS` where [carriesSequence]
     * is false.
     */
    fun sendSkip(dest: Long, seq: Long): Int = -Errno.ENOSYS

    /**
     * Tells [dest] that this endpoint's link has every message [dest] sent it up to sequence number [seq] (a cumulative
     * acknowledgement, so that [dest]'s link drops the copies it keeps to resend them): 0, `-EAGAIN` (no room now), or
     * the refusal of a peer gone here. `-ENOSYS` where [carriesSequence] is false.
     */
    fun sendLinkAck(dest: Long, seq: Long): Int = -Errno.ENOSYS

    /**
     * A link retrying a rail that lost [dest]'s peer: starts connecting to it again if the rail can
     * ([RailHost.reconnects] and the peer died of something a new connection may cure); true if it did. [connected]
     * says when it is up.
     */
    fun reconnect(dest: Long): Boolean = false

    /** Whether [dest]'s peer is reached over this transport now (a connection-oriented rail: connected). */
    fun connected(dest: Long): Boolean = !peerGone(dest)

    /**
     * How many connections to [dest]'s peer this transport has established so far (a connection-oriented rail; 0
     * elsewhere). A link records it when the rail loses the peer, and takes the rail back only once it is [connected]
     * over a newer connection, never over the one it lost (which may report itself connected until its reset is read).
     */
    fun connectionGeneration(dest: Long): Long = 0

    /**
     * The largest message to [dest] a link may keep to send again over this transport: one whose resend the credit
     * [dest]'s peer keeps for resends covers (tcp: the peer's eager size, from its address), so that a resend gets
     * through even when every other byte of this rail's credit is held behind it. Larger ones are not kept.
     */
    fun resendLimit(dest: Long): Int = Int.MAX_VALUE

    /**
     * For the message of an operation to [addr] this transport refused: which of its rails it tried and how each stood
     * (a link of several network rails), or null when it has nothing to add.
     */
    fun describeRoute(addr: Long): String? = null

    /** Whether this rail has declared [addr]'s peer gone (a link asks before counting on it). */
    fun peerGone(addr: Long): Boolean = false

    /** False when this transport was told no receive will accept any source (BRAID_LINK_USE_SRQ=0). */
    val acceptsAnySource: Boolean
        get() = true

    /** Messages and bytes this rail sent and received ([braid.core.Endpoint.stats]). */
    val counters: RailCounters

    /** One entry per rail under this transport: its own, or each linked rail's. */
    fun railStats(): List<RailStats> = listOf(counters.snapshot())

    /**
     * What this rail counts beyond [railStats], by name, for JMX ([braid.core.telemetry.Telemetry]): tcp's committed
     * credit, shm's split copies. Read under the domain lock; a link sums its rails'.
     */
    fun telemetry(): Map<String, Long> = emptyMap()

    /** Stops ([pause]) or resumes counting traffic in [railStats] ([braid.core.Endpoint.pauseStats]). */
    fun pauseStats(pause: Boolean) {
        counters.pause(pause)
    }

    // ## RMA and atomics: a rail that lacks them refuses with -ENOSYS ##

    /** The RMA capabilities this rail carries ([braid.core.Caps.RMA], ATOMIC, READ, WRITE, REMOTE_*); 0 if none. */
    val rmaCaps: Long
        get() = 0

    /**
     * Starts an RMA write of [buffer] (the whole view) into the region [key] names at [dest], at [remoteOffset] bytes
     * into it (`fi_write`). The target checks the key, the bounds and REMOTE_WRITE; a refusal completes the operation
     * in error. Returns 0, `-EAGAIN`, or another negated errno as [send] does.
     */
    fun write(buffer: DirectBuffer, dest: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int =
        -Errno.ENOSYS

    /** Starts an RMA read of `buffer.capacity()` bytes from [src]'s region [key] at [remoteOffset] (`fi_read`). */
    fun read(buffer: MutableDirectBuffer, src: Long, remoteOffset: Long, key: Long, flags: Long, context: Any?): Int =
        -Errno.ENOSYS

    /**
     * Starts an atomic of [count] elements of [type] on [dest]'s region [key] at [remoteOffset]: with [result] it
     * fetches the old values (`fi_fetch_atomic`), with [compare] too it is a compare-and-swap (`fi_compare_atomic`),
     * with neither it only updates (`fi_atomic`). The target applies it under its domain lock.
     */
    fun atomic(
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int = -Errno.ENOSYS

    /** The most elements of [type] one atomic of [form] may carry on this rail; 0 if it has no atomics. */
    fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = 0
}
