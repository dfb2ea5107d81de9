package braid.samples

import java.io.DataInputStream
import java.io.DataOutputStream

/**
 * What both sides of a pingpong must agree on before any data moves: they run the same loops in lock step, so a client
 * started with `-I 1000` against a server started with `-I 10` would hang. Each side sends its own over the control
 * connection, followed by its endpoint address, and compares; a mismatch fails both sides at once, naming every
 * difference.
 *
 * The record starts with [MAGIC], so a peer that is not a `braid pingpong` of this protocol (fi_pingpong, say) is
 * recognised as such.
 */
internal data class PingpongAgreement(
    val api: String,
    val provider: String,
    val tagged: Boolean,
    val check: Boolean,
    val iterations: Int,
    val sizes: List<Int>,
) {
    fun write(out: DataOutputStream) {
        out.writeInt(MAGIC)
        out.writeUTF(api)
        out.writeUTF(provider)
        out.writeBoolean(tagged)
        out.writeBoolean(check)
        out.writeInt(iterations)
        out.writeInt(sizes.size)
        sizes.forEach { out.writeInt(it) }
    }

    /** The settings in which [peer] differs, in words; empty if they agree. */
    fun differences(peer: PingpongAgreement): List<String> = buildList {
        if (api != peer.api) add("--api: this side $api, the peer ${peer.api}")
        if (provider != peer.provider) add("-p: this side $provider, the peer ${peer.provider}")
        if (tagged != peer.tagged) add("-m: this side ${mode(tagged)}, the peer ${mode(peer.tagged)}")
        if (check != peer.check) add("-c: this side ${onOff(check)}, the peer ${onOff(peer.check)}")
        if (iterations != peer.iterations) add("-I: this side $iterations, the peer ${peer.iterations}")
        if (sizes != peer.sizes)
            add("-S: this side ${TransferSizes.format(sizes)}, the peer ${TransferSizes.format(peer.sizes)}")
    }

    companion object {
        /** "BPP1": braid pingpong, protocol 1. */
        const val MAGIC: Int = 0x42505031

        private const val MAX_SIZES = 1024

        /** Reads the peer's record; [peer] names it in errors. */
        fun read(input: DataInputStream, peer: String): PingpongAgreement {
            val magic = input.readInt()
            if (magic != MAGIC) {
                throw CommandFailure(
                    "the peer $peer does not speak braid pingpong (it sent 0x${Integer.toHexString(magic)}, expected 0x${Integer.toHexString(MAGIC)}); " +
                        "both sides must run 'braid pingpong' of the same version (fi_pingpong cannot be mixed with it)"
                )
            }
            val api = input.readUTF()
            val provider = input.readUTF()
            val tagged = input.readBoolean()
            val check = input.readBoolean()
            val iterations = input.readInt()
            val count = input.readInt()
            if (count !in 0..MAX_SIZES)
                throw CommandFailure("the peer $peer sent a list of $count sizes; protocol error")
            val sizes = List(count) { input.readInt() }
            return PingpongAgreement(api, provider, tagged, check, iterations, sizes)
        }

        private fun mode(tagged: Boolean) = if (tagged) "tagged" else "msg"

        private fun onOff(on: Boolean) = if (on) "on" else "off"
    }
}
