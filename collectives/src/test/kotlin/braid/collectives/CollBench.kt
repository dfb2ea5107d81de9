package braid.collectives

import braid.core.Braid
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.OpFlags
import braid.it.Rendezvous
import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.nio.file.Path
import kotlin.system.exitProcess

/**
 * The benchmark behind `bench/coll-vs-mpich.sh` (a program that prints numbers, not a test).
 * - `run N`: N processes over shm (this one is rank 0 and starts the others), OSU-style
 *   averages of allreduce (SUM of doubles) and broadcast at 8 B, 4 KiB, 64 KiB and 1 MiB and of
 *   barrier; prints `OP BYTES USEC` lines (the slowest rank's average) as the C loop does.
 * - `build`: builds schedules on a simulated group (one real endpoint, made-up member addresses;
 *   nothing is queued or sent) and prints the build time, requests, rounds and memory.
 */
object CollBench {
    @JvmStatic
    fun main(args: Array<String>) {
        when (args[0]) {
            "run" -> run(args[1].toInt())
            "child" -> { rank(Path.of(args[3]), args[1].toInt(), args[2].toInt()); exitProcess(0) }
            "build" -> build()
            else -> error("usage: CollBench run N | build")
        }
    }

    private fun run(n: Int) {
        val dir = Files.createTempDirectory("collbench")
        val children = (1 until n).map { r ->
            ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                CollBench::class.java.name, "child", "$r", "$n", dir.toString()).redirectErrorStream(true).redirectOutput(File(dir.toFile(), "$r.log")).start()
        }
        try {
            rank(dir, 0, n)
            children.forEach { it.waitFor() }
        } finally {
            children.forEach { if (it.isAlive) it.destroyForcibly() }
            dir.toFile().deleteRecursively()
        }
    }

    private fun rank(dir: Path, rank: Int, n: Int) {
        // Waiting spins when every rank has a core (as MPICH's ranks do), yields when they share them.
        val idle = if (n <= Runtime.getRuntime().availableProcessors()) IdlePolicy.SPIN else IdlePolicy.YIELD
        val info = Braid.getInfo(Hints(provider = "shm")).first().let { it.copy(domainAttr = it.domainAttr.copy(idle = idle)) }
        val fabric = Braid.fabric(info)
        val domain = fabric.domain(info)
        val cq = domain.completionQueue()
        val av = domain.addressVector()
        val ep = domain.endpoint().also { it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV); it.bind(av); it.enable() }
        Rendezvous.publish(dir, "$rank", ep.address)
        val addrs = (0 until n).map { r -> av.insert(Rendezvous.lookup(dir, "$r")) }
        val g = Collectives.join(ep, av.avSet(*addrs.toLongArray()), 60_000)
        val send = Reference.buffer(1 shl 20); val recv = Reference.buffer(1 shl 20)
        val mine = Reference.buffer(8); val worst = Reference.buffer(8)
        fun report(op: String, bytes: Int, usec: Double) {
            mine.putDouble(0, usec)
            g.startReduce(mine, 0, worst, 0, 1, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
            if (rank == 0) println("%s %d %.2f".format(op, bytes, worst.getDouble(0)))
            if (rank == 0 && op == "barrier") System.err.println("braid ranks waited with idle policy ${idle.kind}")
        }
        for (bytes in intArrayOf(8, 4096, 65536, 1 shl 20)) {
            val count = bytes / 8
            val iters = if (bytes <= 4096) 10_000 else if (bytes <= 65536) 1000 else 100
            val warm = iters / 10
            for (op in 0..1) {
                var t = 0L
                for (i in 0 until iters + warm) {
                    if (i == warm) { g.barrier(); t = System.nanoTime() }
                    if (op == 0) g.startAllreduce(send, 0, recv, 0, count, Datatype.DOUBLE, ReduceOp.SUM).waitFor(-1)
                    else g.startBroadcast(send, 0, count, Datatype.DOUBLE, 0).waitFor(-1)
                }
                report(if (op == 0) "allreduce" else "broadcast", bytes, (System.nanoTime() - t) / 1000.0 / iters)
            }
        }
        var t = 0L
        for (i in 0 until 11_000) { if (i == 1000) t = System.nanoTime(); g.barrier() }
        report("barrier", 0, (System.nanoTime() - t) / 1000.0 / 10_000)
        ep.close(); fabric.close()
    }

    private fun build() {
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        val f = collectiveFabric(1)
        val ep = f.nodes[0].ep
        println("%-34s %6s %10s %9s %8s %12s %12s".format("schedule", "ranks", "build us", "requests", "rounds", "heap bytes", "scratch B"))
        for (p in intArrayOf(16, 64, 256, 1024)) {
            val members = LongArray(p) { it.toLong() }
            val g = CollectiveGroup(ep, f.nodes[0].set, members, 0, 1, CollectiveTuning.DEFAULT, 0)
            for ((name, key) in listOf(
                "allreduce 8 B (recursive doubling)" to ShapeKey().set(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RECURSIVE_DOUBLING, Datatype.DOUBLE, ReduceOp.SUM, 1, 0, false),
                "allreduce 1 MiB (Rabenseifner)" to ShapeKey().set(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RABENSEIFNER, Datatype.DOUBLE, ReduceOp.SUM, 131072, 0, false),
                "allreduce 1 MiB (ring)" to ShapeKey().set(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RING, Datatype.DOUBLE, ReduceOp.SUM, 131072, 0, false),
                "alltoall 8 B per pair (pairwise)" to ShapeKey().set(CollectiveOp.ALLTOALL, CollectiveAlgorithm.PAIRWISE, Datatype.DOUBLE, null, 1, 0, false),
                "barrier (dissemination)" to ShapeKey().set(CollectiveOp.BARRIER, CollectiveAlgorithm.DISSEMINATION, null, null, 0, 0, false),
            )) {
                repeat(20) { g.compile(key) }   // warm the compiler
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
                println("%-34s %6d %10.1f %9d %8d %12d %12d".format(name, p, best / 1000.0, s!!.requests, s!!.rounds, bytes, s!!.scratchSize))
            }
        }
        println("(heap bytes: allocated on the heap to build one schedule, an upper bound on what a cached one keeps; scratch: its direct buffers)")
        f.close()
    }
}
