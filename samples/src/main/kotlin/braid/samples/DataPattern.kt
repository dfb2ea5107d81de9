package braid.samples

import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * The bytes `pingpong -c` sends and checks. Every message gets its own pattern, derived from its sequence number (the
 * n-th message one side sends is the n-th the other receives), its size and its direction, so a reply that merely
 * echoes the request, a stale buffer from an earlier message and a message of another size all fail the check.
 *
 * Byte `j` is `(start + j) mod 251`: a period that is prime, hence no divisor of any power-of-two fragment or ring
 * size, so a fragment placed at a wrong offset shows as a mismatch too.
 */
internal object DataPattern {
    private const val PERIOD = 251

    /** Direction of messages the client sends. */
    const val FROM_CLIENT: Int = 0

    /** Direction of messages the server sends. */
    const val FROM_SERVER: Int = 1

    private fun start(sequence: Long, size: Int, direction: Int): Int =
        ((sequence % PERIOD * 7 + size.toLong() % PERIOD * 13 + direction * 101L) % PERIOD).toInt()

    /** The expected value of byte [index] of the message. */
    fun expected(sequence: Long, size: Int, direction: Int, index: Int): Int =
        (start(sequence, size, direction) + index % PERIOD) % PERIOD

    /** Writes the pattern of message ([sequence], [size], [direction]) into `buffer[0, size)`. */
    fun fill(buffer: MutableDirectBuffer, size: Int, sequence: Long, direction: Int) {
        var v = start(sequence, size, direction)
        for (j in 0 until size) {
            buffer.putByte(j, v.toByte())
            if (++v == PERIOD) v = 0
        }
    }

    /** The index of the first byte of `buffer[0, size)` that differs from the pattern, or -1. */
    fun firstMismatch(buffer: DirectBuffer, size: Int, sequence: Long, direction: Int): Int {
        var v = start(sequence, size, direction)
        for (j in 0 until size) {
            if (buffer.getByte(j) != v.toByte()) return j
            if (++v == PERIOD) v = 0
        }
        return -1
    }
}
