package braid.mpi

import java.io.ByteArrayOutputStream
import java.io.DataInputStream
import java.io.DataOutputStream
import java.nio.ByteBuffer

/**
 * The point-to-point channel communicator management keeps for what is not a collective of one group: two leaders'
 * exchange (intercommunicator creation and agreement, in [MatchBitsDescriptor.SUB_LEADERS]) and port connections.
 * Everything within one group — the AND of context-id masks, split's allgather, a leader's broadcast — runs on the
 * collectives module ([CommCollectives]). Messages are byte arrays of any length ([recv] probes the size), and
 * [join]/[split] frame several in one.
 */
internal class CommBootstrapCollectives(
    private val mpi: Mpi,
    private val context: Int,
    private val sub: Int,
    private val rank: Int,
    /** Fabric addresses of the ranks of this channel. */
    private val addrs: LongArray,
) {
    private val size: Int
        get() = addrs.size

    fun send(dest: Int, tag: Int, data: ByteArray): Request {
        val op = SendOp(mpi).set(null, addrs[dest], MatchBitsDescriptor.bits(context, sub, rank, tag), 0)
        op.region.set(ByteBuffer.wrap(data), data.size, Datatype.BYTE, packNow = false)
        mpi.submit(op)
        return op
    }

    /** Receives a message of any length from [source] (or any, with [Mpi.ANY_SOURCE]) with [tag]. */
    fun recv(source: Int, tag: Int): ByteArray = recvUnless(source, tag) { false }!!

    /**
     * [recv], unless [stop] says to give up first (asked between looks, so a message already there is taken): then
     * null, and nothing was received.
     */
    fun recvUnless(source: Int, tag: Int, stop: () -> Boolean): ByteArray? {
        val any = source == Mpi.ANY_SOURCE
        val bits = MatchBitsDescriptor.bits(context, sub, if (any) 0 else source, tag)
        val ignore = MatchBitsDescriptor.ignore(any, false)
        val probe = ProbeOp(mpi, null, claim = true)
        var found = false
        mpi.lookUntil {
            found = probe.look(bits, ignore)
            if (!found && stop()) {
                found = probe.look(bits, ignore) // a last look: what arrived as the reason to stop came is taken
                true
            } else found
        }
        if (!found) return null
        val out = ByteArray(probe.bytes.toInt())
        probe.receive(Region().set(ByteBuffer.wrap(out), out.size, Datatype.BYTE, packNow = false))
        probe.waitFor()
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
        fun join(parts: Array<ByteArray>): ByteArray {
            val bytes = ByteArrayOutputStream()
            DataOutputStream(bytes).use { out ->
                out.writeInt(parts.size)
                parts.forEach {
                    out.writeInt(it.size)
                    out.write(it)
                }
            }
            return bytes.toByteArray()
        }

        fun split(all: ByteArray): Array<ByteArray> =
            DataInputStream(all.inputStream()).use { inp ->
                Array(inp.readInt()) { ByteArray(inp.readInt()).also { b -> inp.readFully(b) } }
            }
    }
}
