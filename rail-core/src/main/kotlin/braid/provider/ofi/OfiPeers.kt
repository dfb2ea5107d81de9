package braid.provider.ofi

import braid.core.Errno
import braid.core.FiAddr
import braid.provider.RailAv
import braid.provider.RailHost
import com.sun.jna.Function
import com.sun.jna.Memory
import com.sun.jna.Pointer
import org.agrona.collections.Long2LongHashMap

/**
 * One native rail's peers: Braid's fi_addr of each peer against the native fi_addr in the rail's own native AV ([nav],
 * through `fi_av_insert`). Sends ask [nativeDest], which inserts a peer natively on first use; receives ask
 * [braidSource] for the sender of what arrived (FI_SOURCE), so [sweep] inserts every address of the rail as soon as
 * Braid's AV changes. Under the domain lock, as every native call.
 */
internal class OfiPeers(
    private val rail: String,
    private val host: RailHost,
    private val av: RailAv,
    private val nav: Long,
    private val fnAvInsert: Function,
) {
    private val byKey = HashMap<String, Long>()
    private val destCache = Long2LongHashMap(-1L)
    private var destGeneration = -2L
    private var nativeToBraid = LongArray(16) { FiAddr.NOTAVAIL }
    private var sweptGeneration = -2L
    /** `fi_av_insert`'s arguments: the raw address, then the fi_addr it writes. */
    private val scratch = Memory((NAME_MAX + 8).toLong())
    private val nameBuf = Pointer.nativeValue(scratch)
    private val outPtr = nameBuf + NAME_MAX

    /** The native fi_addr of Braid's [dest], inserting it into the native AV on first use; -1 if it is not ours. */
    fun nativeDest(dest: Long): Long {
        val g = av.generation
        if (g != destGeneration) {
            destCache.clear()
            destGeneration = g
        }
        val cached = destCache.get(dest)
        if (cached != -1L) return cached
        val a = av.query(dest) as? OfiAddress ?: return -1
        val n = insert(a, dest)
        if (n >= 0) destCache.put(dest, n)
        return n
    }

    private fun insert(a: OfiAddress, braid: Long): Long {
        val known = byKey[a.key]
        val n =
            if (known != null) known
            else {
                scratch.write(0, a.native, 0, minOf(a.native.size, NAME_MAX))
                OfiOps.putLong(outPtr, -1)
                val rc = fnAvInsert.invokeInt(arrayOf(nav, nameBuf, 1L, outPtr, 0L, 0L))
                if (rc != 1) {
                    host.eventError(
                        Errno.EINVAL,
                        "$rail: fi_av_insert refused the peer address ${a.render()}: " +
                            (if (rc < 0) OfiLibrary.strerror(rc) else "inserted $rc of 1") +
                            " ($rc)",
                    )
                    return -1
                }
                OfiOps.getLong(outPtr).also { byKey[a.key] = it }
            }
        if (n >= 0 && n < Int.MAX_VALUE) {
            if (n >= nativeToBraid.size) {
                val old = nativeToBraid
                nativeToBraid = LongArray(maxOf(old.size * 2, n.toInt() + 1)) { FiAddr.NOTAVAIL }
                old.copyInto(nativeToBraid)
            }
            nativeToBraid[n.toInt()] = braid
        }
        return n
    }

    /** When the AV changed, inserts every address of this rail natively, so receives know their senders. */
    fun sweep() {
        val g = av.generation
        if (g == sweptGeneration || !av.bound) return
        sweptGeneration = g
        val count = host.av?.count ?: return
        var found = 0
        var fi = 0L
        while (found < count && fi < count + SWEEP_SLACK) {
            val a = av.query(fi)
            if (a != null) {
                found++
                if (a is OfiAddress) insert(a, fi)
            }
            fi++
        }
    }

    /** Braid's fi_addr of the native sender [nativeSrc], or [FiAddr.NOTAVAIL]. */
    fun braidSource(nativeSrc: Long): Long =
        if (nativeSrc < 0 || nativeSrc >= nativeToBraid.size) FiAddr.NOTAVAIL else nativeToBraid[nativeSrc.toInt()]

    private companion object {
        const val NAME_MAX = 256
        const val SWEEP_SLACK = 1024L
    }
}
