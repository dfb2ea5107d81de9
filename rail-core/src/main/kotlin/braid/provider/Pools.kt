package braid.provider

import org.agrona.concurrent.UnsafeBuffer

/**
 * Buffers for unexpected eager payloads, pooled by power-of-two size class. After a burst of unexpected messages the
 * pool keeps at most [budget] bytes for reuse and lets the rest go to the collector, so a burst does not pin its peak
 * in the heap for ever.
 */
internal class PayloadPool(private val budget: Long = 8L shl 20) {
    private val classes = Array(32) { ArrayDeque<UnsafeBuffer>() }
    private var retained = 0L

    fun acquire(length: Int): UnsafeBuffer {
        val c = sizeClass(length)
        val pooled = classes[c].removeLastOrNull()
        if (pooled != null) retained -= pooled.byteArray().size
        val b = pooled ?: UnsafeBuffer(ByteArray(1 shl c))
        b.wrap(b.byteArray(), 0, length)
        return b
    }

    fun release(b: UnsafeBuffer) {
        val size = b.byteArray().size
        if (retained + size > budget) return
        classes[sizeClass(size)].addLast(b)
        retained += size
    }

    private fun sizeClass(length: Int): Int = maxOf(6, 32 - Integer.numberOfLeadingZeros(maxOf(length, 1) - 1))
}

/** A FIFO of (long, long, long) triples in one growable array: control records waiting for ring space. */
internal class TripleQueue {
    private var items = LongArray(3 * 16)
    private var head = 0
    private var tail = 0

    fun isEmpty(): Boolean = head == tail

    fun add(a: Long, b: Long, c: Long) {
        if (tail + 3 > items.size) {
            val live = tail - head
            val grown = if (live + 3 > items.size / 2) items.size * 2 else items.size
            val moved = LongArray(grown)
            System.arraycopy(items, head, moved, 0, live)
            items = moved
            head = 0
            tail = live
        }
        items[tail] = a
        items[tail + 1] = b
        items[tail + 2] = c
        tail += 3
    }

    fun first(i: Int): Long = items[head + i]

    fun removeFirst() {
        head += 3
        if (head == tail) {
            head = 0
            tail = 0
        }
    }
}
