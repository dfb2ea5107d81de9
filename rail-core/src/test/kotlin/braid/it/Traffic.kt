package braid.it

import kotlin.math.exp
import kotlin.math.ln
import org.agrona.MutableDirectBuffer

/**
 * The deterministic message stream both sides of a multi-process test derive: message [seq] of sender [sender] has a
 * size (log-uniform 0 B..64 KiB, every 300th one 1..4 MiB) and a payload that only it has, so the receiver checks every
 * byte without the sender telling it anything.
 */
object Traffic {
    const val MAX_SIZE = 8 * 1024 * 1024

    fun size(sender: Int, seq: Int): Int {
        val r = mix(sender.toLong() * 1_000_003 + seq)
        if (seq % 300 == 299) return 1024 * 1024 + ((r ushr 1) % (3L * 1024 * 1024 + 1)).toInt()
        if (seq % 300 == 149) return MAX_SIZE
        val u = (r ushr 11).toDouble() / (1L shl 53)
        return (exp(u * ln(65537.0)) - 1).toInt().coerceIn(0, 65536)
    }

    fun fill(buffer: MutableDirectBuffer, sender: Int, seq: Int, size: Int) {
        val seed = mix(sender.toLong() shl 32 or seq.toLong())
        var i = 0
        while (i + 8 <= size) {
            buffer.putLong(i, mix(seed + i))
            i += 8
        }
        while (i < size) {
            buffer.putByte(i, mix(seed + i).toByte())
            i++
        }
    }

    /** The index of the first byte that differs from what [fill] writes, or -1. */
    fun check(buffer: MutableDirectBuffer, sender: Int, seq: Int, size: Int): Int {
        val seed = mix(sender.toLong() shl 32 or seq.toLong())
        var i = 0
        while (i + 8 <= size) {
            if (buffer.getLong(i) != mix(seed + i)) return i
            i += 8
        }
        while (i < size) {
            if (buffer.getByte(i) != mix(seed + i).toByte()) return i
            i++
        }
        return -1
    }

    fun tag(sender: Int, seq: Int): Long = (sender.toLong() shl 32) or seq.toLong()

    private fun mix(x: Long): Long {
        var z = x + -0x61c8864680b583ebL
        z = (z xor (z ushr 30)) * -0x40a7b892e31b1a47L
        z = (z xor (z ushr 27)) * -0x6b2fb644ecceee15L
        return z xor (z ushr 31)
    }
}
