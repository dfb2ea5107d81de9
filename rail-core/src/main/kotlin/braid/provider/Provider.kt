package braid.provider

import braid.core.Domain
import braid.core.Endpoint
import braid.core.Info
import braid.core.SrxPeer
import org.agrona.DirectBuffer

/**
 * A provider (a rail): one transport under the object model. It offers [infos], parses the
 * addresses of its peers, and opens the per-endpoint [Transport] that moves the bytes.
 */
internal interface Provider {
    val name: String

    /** What this provider offers on this machine, most desirable first. */
    fun infos(): List<Info>

    fun openDomain(domain: Domain): DomainProvider
}

/** A provider's part of one open [Domain]. */
internal interface DomainProvider : AutoCloseable {
    /** Parses and validates a peer's address blob; throws [braid.core.FabricException] naming what is wrong. */
    fun parseAddress(raw: ByteArray): PeerAddress

    fun openEndpoint(endpoint: Endpoint): Transport
}

/** A parsed peer address. [key] identifies the peer endpoint uniquely on the fabric. */
internal interface PeerAddress {
    val key: String
    val raw: ByteArray
    fun render(): String
}

/**
 * A provider's part of one [Endpoint]: it sends, receives into the endpoint's shared receive
 * context (as an [SrxPeer]), and writes completions through the endpoint.
 */
internal interface Transport : SrxPeer, AutoCloseable {
    /** This endpoint's address blob. */
    val address: ByteArray

    fun enable()

    /** One duty cycle: moves whatever can move without blocking; returns the work done. */
    fun progress(): Int

    /**
     * Starts a send of [buffer] (the whole view) to [dest]. [flags] carries [braid.core.OpFlags]
     * (TAGGED, REMOTE_CQ_DATA, INJECT, DELIVERY_COMPLETE, COMPLETION). Returns 0, or a negated
     * errno: `-EAGAIN` when resources are exhausted (progress and retry), `-EINVAL` for a bad
     * address or size. With INJECT the buffer is copied before return and no completion follows.
     */
    fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int
}
