package braid.bench

import braid.core.CoreParams
import braid.core.HmemCopyFunction
import braid.core.HmemOp
import braid.core.Info
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.Settings
import java.nio.ByteBuffer
import java.util.Locale
import org.agrona.concurrent.UnsafeBuffer

/**
 * What device memory and override ops cost (a program that prints numbers, not a test), over shm in one process:
 * 1. `pingpong`: tagged ping-pong (best of 5 alternated runs) of host memory at 64 B and 1 MiB with no override set,
 *    then with a trivial override set on both domains (system memory never calls it: the ratio should be ≤ 1.05), then
 *    of [SegmentDevice] memory through the override (every byte staged through the bounce buffers);
 * 2. `stream`: 64 MiB (or `STREAM_MIB`) device-to-device messages of the device over shm and tcp, staged whole through
 *    one bounce buffer their size ([CoreParams.HMEM_CHUNK] 1 GiB, how they went before chunking) and chunk by chunk
 *    (its default): GB/s.
 *
 * Two [LocalEndpoints] over shm (eager up to 8 KiB), driven by this one thread. After the README's build: `java -cp
 * samples/target/braid.jar braid.bench.HmemBench [ROUNDS [stream] [STREAM_MIB]]` (20,000 and 64 by default; `stream`:
 * the second part alone), or `bench/hmem-bench.sh [ROUNDS] [stream]`.
 */
public object HmemBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val rounds = args.getOrNull(0)?.toInt() ?: 20_000
        val rest = args.drop(1)
        val streamOnly = rest.firstOrNull() == "stream"
        val streamMiB = rest.lastOrNull()?.toIntOrNull() ?: 64
        for (size in listOf(64, 1 shl 20)) {
            if (streamOnly) break
            val n = if (size > 4096) maxOf(rounds / 50, minOf(rounds, 200)) else rounds
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
        // Staged whole (one bounce buffer the message's size; shm's receiver pulls it with one copy) against chunk by
        // chunk.
        for (provider in listOf("shm", "tcp")) {
            for (chunk in listOf(WHOLE, CoreParams.HMEM_CHUNK.default)) {
                stream(streamMiB shl 20, maxOf(rounds / 2000, 5), provider, chunk)
            }
        }
    }

    private const val REPEATS = 5
    private const val WHOLE = 1 shl 30

    private val trivial = HmemCopyFunction { _, _, _, _, _, _, size -> size }

    /** Microseconds per round trip of [size]-byte host messages. */
    private fun hostPingPong(size: Int, n: Int, override: Boolean): Double =
        LocalEndpoints(2, shm()).use { f ->
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
        val dev = SegmentDevice(2 * size + 64)
        return LocalEndpoints(2, shm()).use { f ->
            for (node in f.nodes) dev.copies().setOn(node.domain)
            val ma =
                f.nodes[0].domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND or MrAccess.RECV)
            val mb =
                f.nodes[1].domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND or MrAccess.RECV)
            time(f, ma, mb, size, n)
        }
    }

    /** shm's offer, progressed by this thread, with an 8 KiB eager limit. */
    private fun shm(): Info = offer("shm", Settings.DEFAULT)

    /** [provider]'s offer under [settings], progressed by this thread, with an 8 KiB eager limit. */
    private fun offer(provider: String, settings: Settings): Info =
        LocalEndpoints.info(provider, settings).let { it.copy(endpointAttr = it.endpointAttr.copy(eagerSize = 8192)) }

    private fun time(f: LocalEndpoints, ma: MemoryRegion, mb: MemoryRegion, size: Int, n: Int): Double {
        val (a, b) = f.nodes
        val toB = f.addr(0, 1)
        val toA = f.addr(1, 0)
        fun drain(node: LocalEndpoints.Node, count: Int) = node.await(count, a, b)
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
    private fun stream(size: Int, n: Int, provider: String, chunk: Int) {
        val dev = SegmentDevice(2 * size + 64)
        LocalEndpoints(2, offer(provider, Settings.DEFAULT.with(CoreParams.HMEM_CHUNK, chunk))).use { f ->
            val (a, b) = f.nodes
            val copies = f.nodes.map { dev.copies().also { c -> c.setOn(it.domain) } }
            val src = a.domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.SEND)
            val dst = b.domain.registerMemory(dev.iface, 0, dev.alloc(size), size, MrAccess.RECV)
            fun one() {
                check(b.ep.tryTrecv(dst, 0, size, f.addr(1, 0), 3, 0, null) == 0)
                check(a.ep.tryTsend(src, 0, size, f.addr(0, 1), 3, null) == 0)
                // Both ends' completions, each driving both domains (the send's may come first or last).
                b.await(1, a, b)
                a.await(1, a, b)
            }
            one()
            copies.forEach { it.reset() }
            val start = System.nanoTime()
            repeat(n) { one() }
            val ns = System.nanoTime() - start
            println(
                String.format(
                    Locale.ROOT,
                    "stream %d MiB device to device over %s, %s: %.2f GB/s over %d messages; copies %s / %s",
                    size shr 20,
                    provider,
                    if (chunk >= size) "staged whole" else "staged in ${chunk shr 10} KiB chunks",
                    size.toDouble() * n / ns,
                    n,
                    copies[0],
                    copies[1],
                )
            )
        }
    }
}
