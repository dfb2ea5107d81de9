package braid.bench

import braid.core.AvScale
import braid.core.FiAddr
import braid.core.RxEntry
import braid.core.SharedReceiveContext
import braid.core.SrxPeer
import java.util.Locale
import org.agrona.concurrent.UnsafeBuffer

/**
 * Scale measurements (a program that prints numbers, not a test):
 * 1. `av`: for each rail (shm, tcp) and the link, the heap an address vector of 1,000,000 entries holds per entry (heap
 *    after GC, blobs excluded), its off-heap bytes per entry, and the bulk insert rate (`insert(List)` in batches of
 *    10,000 pre-built blobs), by the wall clock and by the inserting thread's CPU time (which a loaded machine disturbs
 *    less);
 * 2. `sharedav`: one host's cost of the addressing data with 8 ranks and 1,000,000 link addresses, each rank with its
 *    own AV against one named AV shared by all ([braid.core.Domain.createSharedAddressVector]: one rank inserts, 7 map
 *    it read-only): the shared file's bytes in use and as the file system allocated them (`du`), and the heap an opener
 *    adds;
 * 3. `anysource`: the time an any-source receive for one exact tag takes to find its message behind 1,000,000
 *    unexpected messages of other tags (and, for comparison, a directed receive, and a masked any-source receive, which
 *    must scan).
 *
 * After the README's build:
 * ```
 * java -Xmx3g -cp samples/target/braid.jar braid.bench.ScaleBench [av,sharedav,anysource]
 * ```
 */
public object ScaleBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val what = (args.getOrNull(0) ?: "av,anysource").split(',')
        if ("av" in what) av()
        if ("sharedav" in what) sharedAv()
        if ("anysource" in what) anySource()
    }

    private const val N = 1_000_000

    private fun av() {
        println("rail   entries   heap B/entry   off-heap B/entry   insert M/s wall   insert M/s CPU (best of 3)")
        val threads = java.lang.management.ManagementFactory.getThreadMXBean()
        for (rail in (System.getProperty("braid.bench.rails")?.split(",") ?: AvScale.rails)) {
            val blobs = List(N) { AvScale.blob(rail, it) }
            var best = 0.0
            var bestCpu = 0.0
            var heap = 0L
            var offHeap = 0L
            repeat(3) { round ->
                val (fabric, domain) = AvScale.open(rail)
                try {
                    val before = if (round == 0) AvScale.heapAfterGc() else 0L
                    val av = domain.addressVector()
                    val start = System.nanoTime()
                    val cpuStart = threads.currentThreadCpuTime
                    var i = 0
                    while (i < N) {
                        av.insert(blobs.subList(i, minOf(N, i + 10_000)))
                        i += 10_000
                    }
                    val rate = N / ((System.nanoTime() - start) / 1e9) / 1e6
                    best = maxOf(best, rate)
                    bestCpu = maxOf(bestCpu, N / ((threads.currentThreadCpuTime - cpuStart) / 1e9) / 1e6)
                    if (round == 0) {
                        heap = AvScale.heapAfterGc() - before
                        offHeap = av.storageBytes()[1]
                    }
                    check(av.count == N) { "$rail: ${av.count} entries, expected $N" }
                    av.close()
                } finally {
                    fabric.close()
                }
            }
            println(
                String.format(
                    Locale.ROOT,
                    "%-6s %-9d %-14d %-18d %-17.2f %.2f",
                    rail,
                    N,
                    heap / N,
                    offHeap / N,
                    best,
                    bestCpu,
                )
            )
        }
    }

    private fun sharedAv() {
        val ranks = 8
        val blobs = List(N) { AvScale.blob("link", it) }
        val (fabric, domain) = AvScale.open("link")
        try {
            val own = domain.addressVector()
            val before = AvScale.heapAfterGc()
            AvScale.fill(own, "link", 0, N)
            val ownBytes = AvScale.heapAfterGc() - before + own.storageBytes()[1]
            own.close()
            val name = "scalebench-${ProcessHandle.current().pid()}"
            val shared = domain.createSharedAddressVector(name, N)
            var i = 0
            while (i < N) {
                shared.insert(blobs.subList(i, minOf(N, i + 10_000)))
                i += 10_000
            }
            val inUse = shared.storageBytes()[1]
            val file = braid.core.shm.SharedMemoryDir.default.resolve("braid-av-$name")
            val du =
                ProcessBuilder("du", "-B1", file.toString())
                    .start()
                    .inputStream
                    .bufferedReader()
                    .readText()
                    .trim()
                    .substringBefore('\t')
            val heapBefore = AvScale.heapAfterGc()
            val readers = List(ranks - 1) { fabric.domain(domain.info).openSharedAddressVector(name) }
            val readerHeap = (AvScale.heapAfterGc() - heapBefore) / (ranks - 1)
            check(readers.all { it.count == N && it.lookup(N - 1L).contentEquals(blobs[N - 1]) })
            readers.forEach { it.close() }
            shared.close()
            println("one host, $ranks ranks, ${String.format(Locale.ROOT, "%,d", N)} link addresses:")
            println(
                String.format(
                    Locale.ROOT,
                    "  an AV per rank:   %,d B per rank, %,d B per host",
                    ownBytes,
                    ownBytes * ranks,
                )
            )
            println(
                String.format(
                    Locale.ROOT,
                    "  one shared AV:    %,d B in use (du: %s B) + %,d B of heap per opener, %,d B per host",
                    inUse,
                    du,
                    readerHeap,
                    inUse + readerHeap * ranks,
                )
            )
        } finally {
            fabric.close()
        }
    }

    private class Peer : SrxPeer {
        override fun startMsg(entry: RxEntry) {}

        override fun startTag(entry: RxEntry) {}

        override fun discardMsg(entry: RxEntry) {}

        override fun discardTag(entry: RxEntry) {}
    }

    private fun anySource() {
        val srx = SharedReceiveContext(unexpectedLimit = 2 * N)
        val peer = Peer()
        fun arrive(src: Long, tag: Long) {
            val e = srx.getTag(src, tag, 8)
            if (srx.isMatched(e)) error("nothing is posted")
            srx.queueTag(e, peer)
        }
        for (i in 0 until N) arrive(10L + i % 1000, 2L + i % 5000)
        val buffer = UnsafeBuffer(ByteArray(8))
        fun time(label: String, rounds: Int, src: Long, tag: Long, ignore: Long) {
            val samples = LongArray(rounds)
            repeat(rounds) { r ->
                arrive(7, 1)
                val start = System.nanoTime()
                val got = srx.postForBench(src, tag, ignore, buffer)
                samples[r] = System.nanoTime() - start
                check(got) { "$label: the tag-1 message was not found" }
                srx.freeLast()
            }
            samples.sort()
            println(
                String.format(
                    Locale.ROOT,
                    "%-44s median %10.2f µs   max %10.2f µs   (%d rounds, %,d unexpected of other tags)",
                    label,
                    samples[rounds / 2] / 1e3,
                    samples[rounds - 1] / 1e3,
                    rounds,
                    srx.unexpectedCount,
                )
            )
        }
        time("any-source, exact tag", 10_000, FiAddr.UNSPEC, 1, 0)
        time("directed, exact tag", 10_000, 7, 1, 0)
        time("any-source, tag with an ignore mask (scans)", 20, FiAddr.UNSPEC, 1, 1)
    }

    private var last: RxEntry? = null

    private fun SharedReceiveContext.postForBench(src: Long, tag: Long, ignore: Long, buffer: UnsafeBuffer): Boolean {
        last = post(true, src, tag, ignore, 0, null, buffer, 0, 8)
        return last != null
    }

    private fun SharedReceiveContext.freeLast() {
        last?.let { freeEntry(it) }
        last = null
    }
}
