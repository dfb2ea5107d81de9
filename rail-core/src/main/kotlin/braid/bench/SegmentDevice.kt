package braid.bench

import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.HmemCopyFunction
import braid.core.HmemIface
import braid.core.HmemOp
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import org.agrona.UnsafeAccess
import org.agrona.concurrent.UnsafeBuffer

/**
 * A stand-in device for programs and tests without an accelerator: memory no rail can address, reached only through the
 * copy functions an application sets on a domain or endpoint (`fi_hmem_ops` overrides), as a GPU's memory is. Its
 * addresses are [BASE] + an offset into a private off-heap segment of [size] bytes; [BASE] is a non-canonical x86-64
 * address, so a rail that dereferenced one, or handed it to `process_vm_readv` or a socket, would crash or fail loudly
 * instead of passing. Only the copy functions of its [Copies] reach the segment, and they count their calls and bytes.
 * [HmemBench] measures the bounce-staged path with it; the device-memory tests run on it (`TestDevice` there). Not
 * thread-safe for [alloc]; the copies may run on any thread.
 */
public class SegmentDevice @JvmOverloads constructor(size: Int, name: String = "testdev") : AutoCloseable {
    /** The memory interface its regions are registered under (a distinct [HmemIface] per device name). */
    public val iface: HmemIface = HmemIface.define(name)
    private val segment = UnsafeBuffer(ByteBuffer.allocateDirect(size))
    private var next = 0L

    /** [length] bytes of device memory (8-byte aligned), zeroed. */
    public fun alloc(length: Int): Long {
        val at = (next + 7) and 7L.inv()
        require(at + length <= segment.capacity()) { "SegmentDevice: out of memory ($at + $length)" }
        next = at + length
        segment.setMemory(at.toInt(), length, 0)
        return BASE + at
    }

    /** Access from outside any rail (what the device itself would see): what lies at [address]. */
    public fun get(address: Long, length: Int): ByteArray =
        ByteArray(length).also { segment.getBytes(at(address, length), it) }

    /** Writes [bytes] at [address], outside any rail. */
    public fun put(address: Long, bytes: ByteArray) {
        segment.putBytes(at(address, bytes.size), bytes)
    }

    /** The 8 bytes at [address], outside any rail. */
    public fun getLong(address: Long): Long = segment.getLong(at(address, 8))

    /** Writes [value] at [address], outside any rail. */
    public fun putLong(address: Long, value: Long) {
        segment.putLong(at(address, 8), value)
    }

    private fun at(address: Long, length: Int): Int {
        val off = address - BASE
        require(off >= 0 && off + length <= segment.capacity()) {
            "SegmentDevice: address 0x${address.toString(16)} is not mine"
        }
        return off.toInt()
    }

    /** A pair of copy functions with counters of their own, over this device's memory. */
    public fun copies(): Copies = Copies()

    public inner class Copies {
        /** Calls of [toHmem] and the bytes they copied. */
        public val toCalls: AtomicLong = AtomicLong()
        public val toBytes: AtomicLong = AtomicLong()
        /** Calls of [fromHmem] and the bytes they copied. */
        public val fromCalls: AtomicLong = AtomicLong()
        public val fromBytes: AtomicLong = AtomicLong()
        /** An errno the next copy in either direction fails with (0: none); it fails once. */
        public val failNext: AtomicInteger = AtomicInteger()
        /** An errno the next copy to the device fails with (0: none); it fails once. */
        public val failTo: AtomicInteger = AtomicInteger()
        /** Copies from the device that succeed before one fails with EIO (0: none fails); counted from [reset]. */
        public val failFromAfter: AtomicLong = AtomicLong()

        /** `COPY_TO_HMEM_IOV`: host memory into the device's segment. */
        public val toHmem: HmemCopyFunction = HmemCopyFunction { i, _, iov, count, offset, host, size ->
            check(i === iface) { "copy to $i memory given to the $iface device" }
            failure()?.let {
                return@HmemCopyFunction it
            }
            val e = failTo.getAndSet(0)
            if (e != 0) return@HmemCopyFunction -e.toLong()
            toCalls.incrementAndGet()
            walk(iov, count, offset, size) { dev, h, n -> UNSAFE.copyMemory(host + h, address(dev), n) }
            toBytes.addAndGet(size)
            size
        }

        /** `COPY_FROM_HMEM_IOV`: the device's segment into host memory. */
        public val fromHmem: HmemCopyFunction = HmemCopyFunction { i, _, iov, count, offset, host, size ->
            check(i === iface) { "copy from $i memory given to the $iface device" }
            failure()?.let {
                return@HmemCopyFunction it
            }
            val after = failFromAfter.get()
            if (after > 0 && fromCalls.get() == after) {
                failFromAfter.set(0)
                return@HmemCopyFunction -Errno.EIO.toLong()
            }
            fromCalls.incrementAndGet()
            walk(iov, count, offset, size) { dev, h, n -> UNSAFE.copyMemory(address(dev), host + h, n) }
            fromBytes.addAndGet(size)
            size
        }

        /** Sets both functions on [domain]; both answers. */
        public fun setOn(domain: Domain): List<Int> =
            listOf(domain.setOp(HmemOp.COPY_TO_HMEM_IOV, toHmem), domain.setOp(HmemOp.COPY_FROM_HMEM_IOV, fromHmem))

        /** Sets both functions on [ep]; both answers. */
        public fun setOn(ep: Endpoint): List<Int> =
            listOf(ep.setOp(HmemOp.COPY_TO_HMEM_IOV, toHmem), ep.setOp(HmemOp.COPY_FROM_HMEM_IOV, fromHmem))

        /** Zeroes the counters. */
        public fun reset() {
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

    public companion object {
        /** Non-canonical on x86-64: nothing is mapped there, nor ever can be. */
        public const val BASE: Long = 0x4000_0000_0000_0000L
        private val UNSAFE = UnsafeAccess.UNSAFE
    }
}
