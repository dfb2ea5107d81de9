package braid.collectives

import braid.bench.LocalEndpoints
import braid.core.Braid
import braid.core.Endpoint
import braid.core.Hints
import braid.core.IdlePolicy
import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path
import kotlin.system.exitProcess

/**
 * The collectives' benchmark program (it prints numbers; it is not a test), behind `bench/coll-crossovers.sh`; against
 * MPICH, `bench/side-by-side.sh` compares `braid bench allreduce|bcast|barrier --layer mpi` with the same OSU loops in
 * C. After the README's build: `java -cp samples/target/braid.jar braid.collectives.CollBench run 4`.
 * - `run N`: N processes over shm (this one is rank 0 and starts the others), OSU-style averages of allreduce (SUM of
 *   doubles) and broadcast at 8 B, 4 KiB, 64 KiB and 1 MiB and of barrier; prints `OP BYTES USEC P50` lines (the
 *   slowest rank's average and median per call) as the C loop prints `OP BYTES USEC`. The cases run in passes, at least
 *   5 and for at least 10 s (`BRAID_BENCH_PASSES`, `BRAID_BENCH_WARMUP_SECONDS`), and the last pass is reported: the
 *   others are the JIT's warm-up. A loop measured while the compiler threads still work shares the cores with them, and
 *   on 2 cores that costs whole scheduler slices: with 2 passes the 8 B allreduce's mean was 9–17 µs against a steady
 *   0.5; 5 passes took 2 s, and the first window of a pass still took stalls of milliseconds, which put its mean at up
 *   to twice its median.
 * - `crossovers N`: [Crossovers] — every algorithm of allreduce, broadcast and allgather forced in turn at 8 B … 4 MiB.
 * - `build`: builds schedules on a simulated group (one real endpoint, made-up member addresses; nothing is queued or
 *   sent) and prints the build time, requests, rounds and memory.
 *
 * Ranks wait with the SPIN idle policy when every rank has a core (as MPICH's ranks do), YIELD when they share them.
 */
public object CollBench {
    /** The `loop` mode's arguments (after N), passed on to the children. */
    private var loopArgs: List<String> = emptyList()

    @JvmStatic
    public fun main(args: Array<String>) {
        when (args[0]) {
            "run",
            "crossovers" -> spawn(args[0], args[1].toInt())
            "loop" -> {
                loopArgs = args.drop(2)
                spawn("loop", args[1].toInt())
            }
            "child" -> {
                loopArgs = args.drop(5)
                rank(args[1], Path.of(args[4]), args[2].toInt(), args[3].toInt())
                exitProcess(0)
            }
            "build" -> build()
            else -> error("usage: CollBench run N | crossovers N | loop N OP BYTES SECONDS [offload] | build")
        }
    }

    /** Starts ranks 1..n-1 as child JVMs and runs rank 0 here. */
    private fun spawn(mode: String, n: Int) {
        val dir = Files.createTempDirectory("collbench")
        val children =
            (1 until n).map { r ->
                ProcessBuilder(
                        ProcessHandle.current().info().command().orElse("java"),
                        *jvmFlags(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        CollBench::class.java.name,
                        "child",
                        mode,
                        "$r",
                        "$n",
                        dir.toString(),
                        *loopArgs.toTypedArray(),
                    )
                    .redirectErrorStream(true)
                    .redirectOutput(File(dir.toFile(), "$r.log"))
                    .start()
            }
        try {
            rank(mode, dir, 0, n)
            children.forEach { it.waitFor() }
        } finally {
            children.forEach { if (it.isAlive) it.destroyForcibly() }
            dir.toFile().deleteRecursively()
        }
    }

    /** The children's JVM flags: this JVM's own (heap size, GC), so every rank runs alike. */
    private fun jvmFlags(): Array<String> =
        ManagementFactory.getRuntimeMXBean().inputArguments.filter { it.startsWith("-X") }.toTypedArray()

    /** One rank's endpoint over shm, its AV holding every rank; [join] joins a group over all of them. */
    internal class Rank(private val me: RankEndpoint, val idle: IdlePolicy) : AutoCloseable {
        val rank: Int
            get() = me.rank

        val n: Int
            get() = me.size

        val ep: Endpoint
            get() = me.ep

        fun join(
            tuning: CollectiveTuning = CollectiveTuning.DEFAULT,
            offload: braid.collectives.offload.ShmOffload? = null,
        ): CollectiveGroup =
            Collectives.join(ep, me.set, 60_000, JoinOptions.DEFAULT.withTuning(tuning).withOffload(offload))

        override fun close() = me.close()
    }

    private fun open(dir: Path, rank: Int, n: Int): Rank {
        val idle = if (n <= Runtime.getRuntime().availableProcessors()) IdlePolicy.SPIN else IdlePolicy.YIELD
        val info =
            Braid.getInfo(Hints(provider = "shm")).first().let { it.copy(domainAttr = it.domainAttr.copy(idle = idle)) }
        return Rank(RankEndpoint.open(info, dir, rank, n), idle)
    }

    private fun rank(mode: String, dir: Path, rank: Int, n: Int) {
        open(dir, rank, n).use {
            when (mode) {
                "crossovers" -> Crossovers(it).run()
                "loop" -> loop(it, loopArgs)
                else -> vsMpich(it)
            }
        }
    }

    /**
     * Times [iters] calls of [call] after a barrier: the mean (from the loop's wall time), the median and the 99th
     * percentile per call, in µs.
     */
    internal class Timer(val g: CollectiveGroup, maxIters: Int) {
        private val lat = LongArray(maxIters)
        var mean = 0.0
            private set

        var p50 = 0.0
            private set

        var p99 = 0.0
            private set

        @JvmSynthetic
        inline fun time(iters: Int, call: () -> Unit) {
            g.barrier()
            val t0 = System.nanoTime()
            var last = t0
            for (i in 0 until iters) {
                call()
                val now = System.nanoTime()
                record(i, now - last)
                last = now
            }
            finish(iters, last - t0)
        }

        fun record(i: Int, ns: Long) {
            lat[i] = ns
        }

        fun finish(iters: Int, total: Long) {
            mean = total / 1000.0 / iters
            java.util.Arrays.sort(lat, 0, iters)
            p50 = lat[iters / 2] / 1000.0
            p99 = lat[minOf(iters - 1, iters * 99 / 100)] / 1000.0
        }
    }

    /**
     * Each case on two groups of the same ranks: `p2p`, the main provider's schedules (no offload), and `offload`, a
     * group paired with [braid.collectives.offload.ShmOffload] at the join taking every size through its segment (by
     * default a two-rank group sends calls above 64 KiB through the main provider). Lines: `OP BYTES PATH MEAN P50
     * P99`.
     */
    private fun vsMpich(rk: Rank) {
        val p2p = rk.join()
        val paired = rk.join(offload = braid.collectives.offload.ShmOffload.DEFAULT.withMaxBytes(Int.MAX_VALUE))
        check(paired.offload != null) { "the offload did not pair with a one-host group" }
        val send = benchBuffer(1 shl 20)
        val recv = benchBuffer(1 shl 20)
        val mine = benchBuffer(24)
        val worst = benchBuffer(24)
        val paths = listOf("p2p" to p2p, "offload" to paired)
        val timers = paths.map { Timer(it.second, 10_000) }
        // The last pass is reported; the others warm the JIT up, for at least this many passes and seconds.
        val minPasses = System.getenv("BRAID_BENCH_PASSES")?.toInt() ?: 5
        val warmupNs = (System.getenv("BRAID_BENCH_WARMUP_SECONDS")?.toDouble() ?: 10.0).times(1e9).toLong()
        val lines = ArrayList<String>()
        fun report(op: String, bytes: Int, path: Int) {
            val timer = timers[path]
            mine.putDouble(0, timer.mean)
            mine.putDouble(8, timer.p50)
            mine.putDouble(16, timer.p99)
            p2p.startReduce(mine, 0, worst, 0, 3, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
            if (rk.rank == 0)
                lines +=
                    "%s %d %s %.2f %.2f %.2f"
                        .format(
                            op,
                            bytes,
                            paths[path].first,
                            worst.getDouble(0),
                            worst.getDouble(8),
                            worst.getDouble(16),
                        )
        }
        val start = System.nanoTime()
        var pass = 0
        while (true) {
            lines.clear()
            for (bytes in intArrayOf(8, 4096, 65536, 1 shl 20)) {
                val count = bytes / 8
                val iters = if (bytes <= 4096) 10_000 else if (bytes <= 65536) 1000 else 100
                for ((k, path) in paths.withIndex()) {
                    val g = path.second
                    timers[k].time(iters) { g.allreduce(send, 0, recv, 0, count, Datatype.DOUBLE, ReduceOp.SUM) }
                    report("allreduce", bytes, k)
                }
                for ((k, path) in paths.withIndex()) {
                    val g = path.second
                    timers[k].time(iters) { g.broadcast(send, 0, count, Datatype.DOUBLE, 0) }
                    report("broadcast", bytes, k)
                }
            }
            for ((k, path) in paths.withIndex()) {
                val g = path.second
                timers[k].time(10_000) { g.barrier() }
                report("barrier", 0, k)
            }
            // Every rank stops after the same pass: rank 0's count and clock decide.
            pass++
            mine.putDouble(
                0,
                if (rk.rank == 0 && pass >= minPasses && System.nanoTime() - start >= warmupNs) 1.0 else 0.0,
            )
            p2p.startAllreduce(mine, 0, worst, 0, 1, Datatype.DOUBLE, ReduceOp.MAX).waitFor(60_000)
            if (worst.getDouble(0) > 0) break
        }
        lines.forEach(::println)
        if (rk.rank == 0)
            System.err.println("braid ranks waited with idle policy ${rk.idle.kind}; $pass passes, the last reported")
    }

    /**
     * `loop N OP BYTES SECONDS [offload]`: one operation (allreduce, broadcast or barrier) in a loop for about SECONDS
     * on N ranks, for a profiler (`-XX:StartFlightRecording`); prints the calls made, the mean and the median.
     */
    private fun loop(rk: Rank, args: List<String>) {
        val op = args[0]
        val bytes = args[1].toInt()
        val seconds = args[2].toDouble()
        val tuning = CollectiveTuning.fromEnvironment() // BRAID_COLL_ALLREDUCE=recursive_doubling and the like
        val g =
            if (args.getOrNull(3) == "offload")
                rk.join(tuning, braid.collectives.offload.ShmOffload.DEFAULT.withMaxBytes(Int.MAX_VALUE))
            else rk.join(tuning)
        val send = benchBuffer(maxOf(bytes, 8))
        val recv = benchBuffer(maxOf(bytes, 8))
        val count = bytes / 8
        val call: () -> Unit =
            when (op) {
                "allreduce" -> {
                    { g.allreduce(send, 0, recv, 0, count, Datatype.DOUBLE, ReduceOp.SUM) }
                }
                "broadcast" -> {
                    { g.broadcast(send, 0, count, Datatype.DOUBLE, 0) }
                }
                else -> {
                    { g.barrier() }
                }
            }
        val timer = Timer(g, 10_000)
        val end = System.nanoTime() + (seconds * 1e9).toLong()
        var calls = 0L
        val flag = benchBuffer(8)
        val any = benchBuffer(8)
        val batch = if (bytes <= 4096) 10_000 else if (bytes <= 65536) 1000 else 100
        while (true) {
            timer.time(batch) { call() }
            calls += batch
            // Every rank stops after the same batch: rank 0's clock decides.
            flag.putDouble(0, if (rk.rank == 0 && System.nanoTime() > end) 1.0 else 0.0)
            g.startAllreduce(flag, 0, any, 0, 1, Datatype.DOUBLE, ReduceOp.MAX).waitFor(60_000)
            if (any.getDouble(0) > 0) break
        }
        if (rk.rank == 0)
            println(
                "%s %d: %d calls; last batch mean %.2f µs, median %.2f µs, p99 %.2f µs"
                    .format(op, bytes, calls, timer.mean, timer.p50, timer.p99)
            )
    }

    private fun build() {
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        val f = LocalEndpoints(1, LocalEndpoints.info("shm"))
        val ep = f.nodes[0].ep
        val set = f.nodes[0].av.let { av -> av.avSet(*LongArray(av.count) { it.toLong() }) }
        println(
            "%-34s %6s %10s %9s %8s %12s %12s"
                .format("schedule", "ranks", "build us", "requests", "rounds", "heap bytes", "scratch B")
        )
        for (p in intArrayOf(16, 64, 256, 1024)) {
            val members = LongArray(p) { it.toLong() }
            val g = CollectiveGroup(ep, set, members, 0, 1, CollectiveTuning.DEFAULT, 0)
            for ((name, key) in
                listOf(
                    "allreduce 8 B (recursive doubling)" to
                        ShapeKey()
                            .set(
                                CollectiveOp.ALLREDUCE,
                                CollectiveAlgorithm.RECURSIVE_DOUBLING,
                                Datatype.DOUBLE,
                                ReduceOp.SUM,
                                1,
                                0,
                                false,
                            ),
                    "allreduce 1 MiB (Rabenseifner)" to
                        ShapeKey()
                            .set(
                                CollectiveOp.ALLREDUCE,
                                CollectiveAlgorithm.RABENSEIFNER,
                                Datatype.DOUBLE,
                                ReduceOp.SUM,
                                131072,
                                0,
                                false,
                            ),
                    "allreduce 1 MiB (ring)" to
                        ShapeKey()
                            .set(
                                CollectiveOp.ALLREDUCE,
                                CollectiveAlgorithm.RING,
                                Datatype.DOUBLE,
                                ReduceOp.SUM,
                                131072,
                                0,
                                false,
                            ),
                    "alltoall 8 B per pair (pairwise)" to
                        ShapeKey()
                            .set(
                                CollectiveOp.ALLTOALL,
                                CollectiveAlgorithm.PAIRWISE,
                                Datatype.DOUBLE,
                                null,
                                1,
                                0,
                                false,
                            ),
                    "barrier (dissemination)" to
                        ShapeKey().set(CollectiveOp.BARRIER, CollectiveAlgorithm.DISSEMINATION, null, null, 0, 0, false),
                )) {
                repeat(20) { g.compile(key) } // warm the compiler
                val reps = 50
                val tid = Thread.currentThread().id
                var best = Long.MAX_VALUE
                var s: Schedule? = null
                var bytes = 0L
                repeat(reps) {
                    val a0 = threads.getThreadAllocatedBytes(tid)
                    val t0 = System.nanoTime()
                    s = g.compile(key)
                    val dt = System.nanoTime() - t0
                    bytes = threads.getThreadAllocatedBytes(tid) - a0
                    best = minOf(best, dt)
                }
                println(
                    "%-34s %6d %10.1f %9d %8d %12d %12d"
                        .format(name, p, best / 1000.0, s!!.requests, s!!.rounds, bytes, s!!.scratchSize)
                )
            }
        }
        println(
            "(heap bytes: allocated on the heap to build one schedule, an upper bound on what a cached one keeps; scratch: its direct buffers)"
        )
        // The work of one small allreduce per rank: what each algorithm queues, sends and waits for.
        println()
        println(
            "%-34s %6s %5s %9s %6s %6s %8s"
                .format("work per call, 8 B allreduce", "ranks", "rank", "requests", "sends", "recvs", "rounds")
        )
        for (p in intArrayOf(2, 4)) for (algorithm in
            listOf(CollectiveAlgorithm.RECURSIVE_DOUBLING, CollectiveAlgorithm.RABENSEIFNER)) for (r in 0 until p) {
            val g = CollectiveGroup(ep, set, LongArray(p) { it.toLong() }, r, 1, CollectiveTuning.DEFAULT, 0)
            val s =
                g.compile(ShapeKey().set(CollectiveOp.ALLREDUCE, algorithm, Datatype.DOUBLE, ReduceOp.SUM, 1, 0, false))
            println(
                "%-34s %6d %5d %9d %6d %6d %8d"
                    .format(algorithm.name.lowercase(), p, r, s.requests, s.sends, s.recvs, s.rounds)
            )
        }
        f.close()
    }
}
