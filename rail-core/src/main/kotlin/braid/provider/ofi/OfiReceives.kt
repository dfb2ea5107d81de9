package braid.provider.ofi

import braid.core.MrAccess
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RxEntry
import braid.provider.RailHost
import braid.provider.Transport
import braid.provider.UnexpectedBounds
import java.nio.ByteBuffer
import org.agrona.collections.IntArrayList
import org.agrona.concurrent.UnsafeBuffer

/**
 * The receiving side of one native rail: [recvCount] native receives posted on each queue (untagged, and tagged with
 * every tag bit ignored) into buffers of [recvSize], and what happens to a message that lands in one ([arrived]): it is
 * matched through the endpoint's shared receive context exactly as shm's and tcp's are (`getMsg`/`getTag`), copied into
 * the receive it matched, or copied out and held as unexpected (counted in the endpoint's shared [account]) until one
 * does ([start], [discard]). The buffer is then posted again, unless the bounds are full: it is parked until they are
 * not ([repostParked]), so the native provider pushes the senders back.
 *
 * Receive buffer `i`'s op context is `ctxBase + i * contextSize`, an address the rail's CQ dispatch maps back to `i`.
 * Under the domain lock, as every native call.
 */
internal class OfiReceives(
    private val rail: String,
    private val host: RailHost,
    private val owner: Transport,
    private val account: UnexpectedBounds.Account,
    private val counters: RailCounters,
    private val peers: OfiPeers,
    private val recvSize: Int,
    private val recvCount: Int,
    private val ep: Long,
    private val fnRecv: OfiCall,
    private val fnTRecv: OfiCall,
    private val ctxBase: Long,
    private val contextSize: Long,
    memory: OfiMemory,
    mrLocal: Boolean,
) {
    private val bounce: ByteBuffer = ByteBuffer.allocateDirect(2 * recvCount * recvSize)
    private val bounceBase = UnsafeBuffer(bounce).addressOffset()
    private val bounceView = UnsafeBuffer(0L, 0)
    /** The registration of the native receive buffers, when the provider needs local descriptors. */
    private var bounceMr: OfiRegion? =
        if (mrLocal) memory.registerLocal(bounceBase, bounce.capacity().toLong(), MrAccess.RECV) else null
    private val bounceDesc: Long
        get() = bounceMr?.descriptor ?: 0L

    /** Receive buffers not reposted (the bounds are full, or the repost answered `-FI_EAGAIN`). */
    private val rxParked = IntArrayList()

    /** Posts every receive buffer: the rail is enabled. */
    fun postAll() {
        for (i in 0 until 2 * recvCount) post(i)
    }

    /** Posts receive buffer [i] natively (untagged below [recvCount], tagged with every tag bit ignored above). */
    fun post(i: Int): Boolean {
        val ctx = ctxBase + i.toLong() * contextSize
        val buf = bounceBase + i.toLong() * recvSize
        val rc =
            if (i < recvCount)
                fnRecv
                    .arg(0, ep)
                    .arg(1, buf)
                    .arg(2, recvSize.toLong())
                    .arg(3, bounceDesc)
                    .arg(4, FI_ADDR_UNSPEC)
                    .arg(5, ctx)
                    .call()
            else
                fnTRecv
                    .arg(0, ep)
                    .arg(1, buf)
                    .arg(2, recvSize.toLong())
                    .arg(3, bounceDesc)
                    .arg(4, FI_ADDR_UNSPEC)
                    .arg(5, 0L)
                    .arg(6, -1L)
                    .arg(7, ctx)
                    .call()
        if (rc == 0L) return true
        if (rc != -OfiOps.FI_EAGAIN.toLong())
            host.eventError(
                ofiErrno(rc.toInt()),
                "$rail: fi_${if (i < recvCount) "" else "t"}recv failed: ${OfiLibrary.strerror(rc.toInt())} ($rc)",
            )
        rxParked.addInt(i)
        return false
    }

    /** A message of [len] bytes landed in receive buffer [i]: matched, or held as unexpected; the buffer reposted. */
    fun arrived(i: Int, nativeFlags: Long, len: Long, data: Long, tag: Long, nativeSrc: Long) {
        val tagged = i >= recvCount
        val src = peers.braidSource(nativeSrc)
        counters.received(len)
        val srx = host.srx
        val e = if (tagged) srx.getTag(src, tag, len) else srx.getMsg(src, len)
        if (nativeFlags and OpFlags.REMOTE_CQ_DATA != 0L) {
            e.data = data
            e.flags = e.flags or OpFlags.REMOTE_CQ_DATA
        }
        val at = bounceBase + i.toLong() * recvSize
        if (srx.isMatched(e)) {
            val n = minOf(len, e.buffer.capacity().toLong()).toInt()
            if (n > 0) {
                bounceView.wrap(at, n)
                e.buffer.putBytes(0, bounceView, 0, n)
            }
            host.rxComplete(e, len)
        } else {
            val bytes = UnsafeBuffer(ByteArray(len.toInt()))
            if (len > 0) {
                bounceView.wrap(at, len.toInt())
                bytes.putBytes(0, bounceView, 0, len.toInt())
            }
            e.peerContext = bytes
            e.peerSource = nativeSrc
            account.held(len, 1)
            if (tagged) srx.queueTag(e, owner) else srx.queueMsg(e, owner)
        }
        if (account.mustPushBack(0)) rxParked.addInt(i) else post(i)
    }

    /** A receive matched the unexpected message [e] held: its bytes go to the receive, which completes. */
    fun start(e: RxEntry) {
        val bytes = e.peerContext as UnsafeBuffer
        e.peerContext = null
        account.held(-bytes.capacity().toLong(), -1)
        val n = minOf(e.size, e.buffer.capacity().toLong()).toInt()
        if (n > 0) e.buffer.putBytes(0, bytes, 0, n)
        host.rxComplete(e, e.size)
    }

    /** The unexpected message [e] held is dropped. */
    fun discard(e: RxEntry) {
        val bytes = e.peerContext as UnsafeBuffer
        e.peerContext = null
        account.held(-bytes.capacity().toLong(), -1)
        host.srx.freeEntry(e)
    }

    /** Posts the parked receive buffers again while the bounds allow; returns how many. */
    fun repostParked(): Int {
        var n = 0
        while (rxParked.isNotEmpty() && !account.mustPushBack(0)) {
            val i = rxParked.removeAt(rxParked.size - 1)
            if (!post(i)) break
            n++
        }
        return n
    }

    /** Releases the receive buffers' registration, once the native endpoint is closed. */
    fun close() {
        bounceMr?.close()
        bounceMr = null
    }

    private companion object {
        const val FI_ADDR_UNSPEC = -1L
    }
}
