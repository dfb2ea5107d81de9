package braid.mpi

import java.io.ByteArrayOutputStream
import java.io.DataInputStream
import java.io.DataOutputStream
import java.nio.ByteBuffer

/**
 * The few collectives communicator management needs (barrier, broadcast, allgather and the
 * AND-allreduce of context-id masks), built on point-to-point messages in a communicator's
 * [MatchBitsDescriptor.SUB_INTERNAL] sub-context so they never meet user traffic.
 *
 * **Temporary**: these are simple (binomial broadcast, gather-to-0 allgather) and blocking. Once
 * `braid.collectives` is merged, communicator construction should call its allgather and
 * allreduce on the parent's group instead, and this file goes away.
 */
internal class CommBootstrapCollectives(
    private val mpi: Mpi,
    private val context: Int,
    private val sub: Int,
    private val rank: Int,
    /** Fabric addresses of the ranks of this channel. */
    private val addrs: LongArray,
) {
    private val size: Int get() = addrs.size

    fun send(dest: Int, tag: Int, data: ByteArray): Request {
        val op = SendOp(mpi).set(null, addrs[dest], MatchBitsDescriptor.bits(context, sub, rank, tag), 0)
        op.region.set(ByteBuffer.wrap(data), data.size, Datatype.BYTE, packNow = false)
        mpi.submit(op)
        return op
    }

    /** Receives a message of any length from [source] (or any, with [Mpi.ANY_SOURCE]) with [tag]. */
    fun recv(source: Int, tag: Int): ByteArray {
        val any = source == Mpi.ANY_SOURCE
        val bits = MatchBitsDescriptor.bits(context, sub, if (any) 0 else source, tag)
        val ignore = MatchBitsDescriptor.ignore(any, false)
        val probe = ProbeOp(mpi, null, claim = true)
        var idle = 0
        while (!probe.look(bits, ignore)) mpi.idle(++idle)
        val out = ByteArray(probe.bytes.toInt())
        probe.receive(Region().set(ByteBuffer.wrap(out), out.size, Datatype.BYTE, packNow = false))
        probe.waitFor()
        return out
    }

    fun barrier() {
        allgather(ByteArray(0))
    }

    /** Binomial-tree broadcast of [root]'s [data]; others pass anything (ignored). */
    fun bcast(root: Int, data: ByteArray?): ByteArray {
        val rel = (rank - root + size) % size
        var buf = data
        var mask = 1
        while (mask < size) {
            if (rel and mask != 0) { buf = recv((rank - mask + size) % size, TAG_BCAST); break }
            mask = mask shl 1
        }
        mask = mask shr 1
        val sends = ArrayList<Request>()
        while (mask > 0) {
            if (rel + mask < size) sends += send((rank + mask) % size, TAG_BCAST, buf!!)
            mask = mask shr 1
        }
        sends.forEach { it.waitFor() }
        return buf!!
    }

    /** Every rank's [data], indexed by rank. */
    fun allgather(data: ByteArray): Array<ByteArray> {
        val all: ByteArray
        if (rank == 0) {
            val parts = Array(size) { if (it == 0) data else ByteArray(0) }
            for (i in 1 until size) parts[i] = recv(i, TAG_GATHER)
            all = bcast(0, join(parts))
        } else {
            send(0, TAG_GATHER, data).waitFor()
            all = bcast(0, null)
        }
        return split(all)
    }

    /** The bitwise AND of every rank's [mask]. */
    fun allreduceAnd(mask: ByteArray): ByteArray {
        val parts = allgather(mask)
        val out = parts[0].copyOf()
        for (i in 1 until parts.size) ContextIdPool.and(out, parts[i])
        return out
    }

    /** Sends [data] to [peer] and receives its message, on [tag] (the leaders' exchange). */
    fun exchange(peer: Int, tag: Int, data: ByteArray): ByteArray {
        val s = send(peer, tag, data)
        val r = recv(peer, tag)
        s.waitFor()
        return r
    }

    companion object {
        const val TAG_BCAST = 1
        const val TAG_GATHER = 2

        fun join(parts: Array<ByteArray>): ByteArray {
            val bytes = ByteArrayOutputStream()
            DataOutputStream(bytes).use { out -> out.writeInt(parts.size); parts.forEach { out.writeInt(it.size); out.write(it) } }
            return bytes.toByteArray()
        }

        fun split(all: ByteArray): Array<ByteArray> = DataInputStream(all.inputStream()).use { inp ->
            Array(inp.readInt()) { ByteArray(inp.readInt()).also { b -> inp.readFully(b) } }
        }
    }
}
