package braid.core

import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import org.agrona.UnsafeAccess
import org.agrona.concurrent.UnsafeBuffer

/**
 * A test "device": memory no rail can address. Its addresses are [BASE] + an offset into a private off-heap segment;
 * [BASE] is a non-canonical x86-64 address, so a rail that dereferenced one, or handed it to `process_vm_readv` or a
 * socket, would crash or fail loudly instead of passing. Only the copy functions of its [Copies] reach the segment, and
 * they count their calls and bytes.
 */
class TestDevice(size: Int, name: String = "testdev") : AutoCloseable {
    val iface: HmemIface = HmemIface.define(name)
    private val segment = UnsafeBuffer(ByteBuffer.allocateDirect(size))
    private var next = 0L

    /** [length] bytes of device memory (8-byte aligned), zeroed. */
    fun alloc(length: Int): Long {
        val at = (next + 7) and 7L.inv()
        require(at + length <= segment.capacity()) { "TestDevice: out of memory ($at + $length)" }
        next = at + length
        segment.setMemory(at.toInt(), length, 0)
        return BASE + at
    }

    /** Test-side access, outside any rail: what lies at [address]. */
    fun get(address: Long, length: Int): ByteArray =
        ByteArray(length).also { segment.getBytes(at(address, length), it) }

    fun put(address: Long, bytes: ByteArray) {
        segment.putBytes(at(address, bytes.size), bytes)
    }

    fun getLong(address: Long): Long = segment.getLong(at(address, 8))

    fun putLong(address: Long, value: Long) {
        segment.putLong(at(address, 8), value)
    }

    private fun at(address: Long, length: Int): Int {
        val off = address - BASE
        require(off >= 0 && off + length <= segment.capacity()) {
            "TestDevice: address 0x${address.toString(16)} is not mine"
        }
        return off.toInt()
    }

    /** A pair of copy functions with counters of their own, over this device's memory. */
    fun copies(): Copies = Copies()

    inner class Copies {
        val toCalls = AtomicLong()
        val toBytes = AtomicLong()
        val fromCalls = AtomicLong()
        val fromBytes = AtomicLong()
        /** An errno the next copy in either direction fails with (0: none); it fails once. */
        val failNext = AtomicInteger()

        val toHmem = HmemCopyFunction { i, _, iov, count, offset, host, size ->
            check(i === iface) { "copy to $i memory given to the $iface device" }
            failure()?.let {
                return@HmemCopyFunction it
            }
            toCalls.incrementAndGet()
            walk(iov, count, offset, size) { dev, h, n -> UNSAFE.copyMemory(host + h, address(dev), n) }
            toBytes.addAndGet(size)
            size
        }

        val fromHmem = HmemCopyFunction { i, _, iov, count, offset, host, size ->
            check(i === iface) { "copy from $i memory given to the $iface device" }
            failure()?.let {
                return@HmemCopyFunction it
            }
            fromCalls.incrementAndGet()
            walk(iov, count, offset, size) { dev, h, n -> UNSAFE.copyMemory(address(dev), host + h, n) }
            fromBytes.addAndGet(size)
            size
        }

        /** Sets both functions on [domain]; both answers. */
        fun setOn(domain: Domain): List<Int> =
            listOf(domain.setOp(HmemOp.COPY_TO_HMEM_IOV, toHmem), domain.setOp(HmemOp.COPY_FROM_HMEM_IOV, fromHmem))

        fun setOn(ep: Endpoint): List<Int> =
            listOf(ep.setOp(HmemOp.COPY_TO_HMEM_IOV, toHmem), ep.setOp(HmemOp.COPY_FROM_HMEM_IOV, fromHmem))

        fun reset() {
            listOf(toCalls, toBytes, fromCalls, fromBytes).forEach { it.set(0) }
        }

        private fun failure(): Long? {
            val e = failNext.getAndSet(0)
            return if (e == 0) null else -e.toLong()
        }

        override fun toString(): String = "to: $toCalls calls $toBytes bytes, from: $fromCalls calls $fromBytes bytes"
    }

    private fun address(dev: Long): Long = segment.addressOffset() + (dev - BASE)

    private inline fun walk(iov: LongArray, count: Int, offset: Long, size: Long, piece: (Long, Long, Long) -> Unit) {
        var skip = offset
        var done = 0L
        for (i in 0 until count) {
            if (done == size) break
            val len = iov[2 * i + 1]
            if (skip >= len) {
                skip -= len
                continue
            }
            val n = minOf(len - skip, size - done)
            val dev = iov[2 * i] + skip
            check(dev >= BASE && dev - BASE + n <= segment.capacity()) {
                "device address 0x${dev.toString(16)} out of range"
            }
            piece(dev, done, n)
            done += n
            skip = 0
        }
        check(done == size) { "iov holds $done of $size bytes" }
    }

    override fun close() {}

    companion object {
        /** Non-canonical on x86-64: nothing is mapped there, nor ever can be. */
        const val BASE: Long = 0x4000_0000_0000_0000L
        private val UNSAFE = UnsafeAccess.UNSAFE
    }
}
