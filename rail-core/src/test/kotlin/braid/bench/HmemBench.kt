package braid.bench

import braid.core.Completion
import braid.core.Errno
import braid.core.HmemCopyFunction
import braid.core.HmemOp
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.Rail
import braid.core.TestDevice
import braid.core.TestFabric
import java.nio.ByteBuffer
import java.util.Locale
import org.agrona.concurrent.UnsafeBuffer

/**
 * What device memory and override ops cost (a program that prints numbers, not a test), over shm in one process:
 * 1. `pingpong`: tagged ping-pong (best of 5 alternated runs) of host memory at 64 B and 1 MiB with no override set,
 *    then with a trivial override set on both domains (system memory never calls it: the ratio should be ≤ 1.05), then
 *    of [TestDevice] memory through the override (every byte staged through the bounce buffers);
 * 2. `stream`: 64 MiB device-to-device messages of the test device, staged through bounce buffers: GB/s.
 *
 * Run from the repository root: `bench/hmem-bench.sh [ROUNDS]`.
 */
object HmemBench {
    @JvmStatic
    fun main(args: Array<String>) {
        val rounds = args.getOrNull(0)?.toInt() ?: 20_000
        for (size in listOf(64, 1 shl 20)) {
            val n = if (size > 4096) maxOf(rounds / 50, 200) else rounds
            // Alternated and repeated, best of each: the first runs pay for warming up the JIT.
            var none = Double.MAX_VALUE
            var set = Double.MAX_VALUE
            var dev = Double.MAX_VALUE
            repeat(REPEATS) {
                none = minOf(none, hostPingPong(size, n, override = false))
                set = minOf(set, hostPingPong(size, n, override = true))
                dev = minOf(dev, devicePingPong(size, n))
            }
            println(
                String.format(
                    Locale.ROOT,
                    "pingpong %8d B: no override %8.2f µs, trivial override set %8.2f µs (%.3fx), device memory %8.2f µs",
                    size,
                    none,
                    set,
                    set / none,
                    dev,
                )
            )
        }
        stream(64 shl 20, maxOf(rounds / 2000, 5))
    }

    private const val REPEATS = 5

    private val trivial = HmemCopyFunction { _, _, _, _, _, _, size -> size }

    /** Microseconds per round trip of [size]-byte host messages. */
    private fun hostPingPong(size: Int, n: Int, override: Boolean): Double =
        TestFabric(rail = Rail.SHM, eagerSize = 8192).use { f ->
            if (override) {
                for (node in f.nodes) {
                    check(node.domain.setOp(HmemOp.COPY_TO_HMEM_IOV, trivial) == 0)
                    check(node.domain.setOp(HmemOp.COPY_FROM_HMEM_IOV, trivial) == 0)
                }
            }
            val a = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            val b = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            val ma = f.nodes[0].domain.registerMemory(a, MrAccess.SEND or MrAccess.RECV)
            val mb = f.nodes[1].domain.registerMemory(b, MrAccess.SEND or MrAccess.RECV)
            time(f, ma, mb, size, n)
        }

    /** Microseconds per round trip of [size]-byte device messages through the override. */
    private fun devicePingPong(size: Int, n: Int): Double {
        val dev = TestDevice(2 * size + 64)
        return TestFabric(rail = Rail.SHM, eagerSize = 8192).use { f ->
            for (node in f.nodes) dev.copies().setOn(node.domain)
            val ma =
                f.nodes[0].domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND or MrAccess.RECV)
            val mb =
                f.nodes[1].domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND or MrAccess.RECV)
            time(f, ma, mb, size, n)
        }
    }

    private fun time(f: TestFabric, ma: MemoryRegion, mb: MemoryRegion, size: Int, n: Int): Double {
        val (a, b) = f.nodes
        val toB = f.addrs[0][1]
        val toA = f.addrs[1][0]
        val c = Completion()
        fun drain(node: TestFabric.Node, count: Int) {
            var got = 0
            while (got < count) {
                val rc = node.cq.read(c)
                if (rc == 1) got++ else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
                a.domain.progress()
                b.domain.progress()
            }
        }
        fun round() {
            check(b.ep.tryTrecv(mb, 0, size, toA, 1, 0, null) == 0)
            check(a.ep.tryTrecv(ma, 0, size, toB, 2, 0, null) == 0)
            check(a.ep.tryTsend(ma, 0, size, toB, 1, null) == 0)
            drain(b, 1)
            check(b.ep.tryTsend(mb, 0, size, toA, 2, null) == 0)
            drain(a, 2)
            drain(b, 1)
        }
        repeat(n / 5 + 1) { round() }
        val start = System.nanoTime()
        repeat(n) { round() }
        return (System.nanoTime() - start) / 1000.0 / n
    }

    /** 64 MiB device-to-device messages staged through bounce buffers: GB/s, one message at a time. */
    private fun stream(size: Int, n: Int) {
        val dev = TestDevice(2 * size + 64)
        TestFabric(rail = Rail.SHM, eagerSize = 8192).use { f ->
            val (a, b) = f.nodes
            val copies = f.nodes.map { dev.copies().also { c -> c.setOn(it.domain) } }
            val src = a.domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND)
            val dst = b.domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.RECV)
            val c = Completion()
            fun one() {
                check(b.ep.tryTrecv(dst, 0, size, f.addrs[1][0], 3, 0, null) == 0)
                check(a.ep.tryTsend(src, 0, size, f.addrs[0][1], 3, null) == 0)
                var got = 0
                while (got < 2) {
                    if (b.cq.read(c) == 1) got++
                    if (a.cq.read(c) == 1) got++
                    a.domain.progress()
                    b.domain.progress()
                }
            }
            one()
            copies.forEach { it.reset() }
            val start = System.nanoTime()
            repeat(n) { one() }
            val ns = System.nanoTime() - start
            println(
                String.format(
                    Locale.ROOT,
                    "stream %d MiB device to device over shm (bounce-staged): %.2f GB/s over %d messages; copies %s / %s",
                    size shr 20,
                    size.toDouble() * n / ns,
                    n,
                    copies[0],
                    copies[1],
                )
            )
        }
    }
}
