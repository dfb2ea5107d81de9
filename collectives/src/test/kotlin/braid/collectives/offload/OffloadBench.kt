package braid.collectives.offload

import braid.collectives.CollectiveGroup
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.JoinOptions
import braid.collectives.RankEndpoint
import braid.collectives.ReduceOp
import braid.collectives.Reference
import braid.core.Braid
import braid.core.Hints
import braid.core.IdlePolicy
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import kotlin.system.exitProcess

/**
 * The benchmark behind `bench/coll-offload.sh` (a program that prints numbers, not a test):
 * `run N` starts N processes on this host (this one is rank 0), joins two groups of all of them
 * on one shm endpoint each — one paired with [ShmOffload], one not — and prints, per size, the
 * OSU-style average allreduce time (SUM of doubles, the slowest rank's) through the main provider
 * and through the offload: `allreduce BYTES MAIN_USEC OFFLOAD_USEC`.
 */
object OffloadBench {
    @JvmStatic
    fun main(args: Array<String>) {
        when (args[0]) {
            "run" -> run(args[1].toInt())
            "child" -> { rank(Path.of(args[3]), args[1].toInt(), args[2].toInt()); exitProcess(0) }
            else -> error("usage: OffloadBench run N")
        }
    }

    private fun run(n: Int) {
        val dir = Files.createTempDirectory("offloadbench")
        val children = (1 until n).map { r ->
            ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                OffloadBench::class.java.name, "child", "$r", "$n", dir.toString()).redirectErrorStream(true).redirectOutput(File(dir.toFile(), "$r.log")).start()
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
        val idle = if (n <= Runtime.getRuntime().availableProcessors()) IdlePolicy.SPIN else IdlePolicy.YIELD
        val info = Braid.getInfo(Hints(provider = "shm")).first().let { it.copy(domainAttr = it.domainAttr.copy(idle = idle)) }
        val me = RankEndpoint.open(info, dir, rank, n)
        val ep = me.ep
        val set = me.set
        val main = Collectives.join(ep, set, 60_000)
        val off = Collectives.join(ep, set, 60_000, JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT))
        check(off.offload != null && main.offload == null)
        val send = Reference.buffer(1 shl 20); val recv = Reference.buffer(1 shl 20)
        val mine = Reference.buffer(8); val worst = Reference.buffer(8)
        fun slowest(usec: Double): Double {
            mine.putDouble(0, usec)
            main.startReduce(mine, 0, worst, 0, 1, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
            return worst.getDouble(0)
        }
        fun time(g: CollectiveGroup, count: Int, iters: Int): Double {
            val warm = maxOf(1, iters / 10)
            var t = 0L
            for (i in 0 until iters + warm) {
                if (i == warm) { g.barrier(); t = System.nanoTime() }
                g.startAllreduce(send, 0, recv, 0, count, Datatype.DOUBLE, ReduceOp.SUM).waitFor(-1)
            }
            return slowest((System.nanoTime() - t) / 1000.0 / iters)
        }
        for (bytes in intArrayOf(8, 4096, 65536, 1 shl 20)) {
            val iters = if (bytes <= 4096) 10_000 else if (bytes <= 65536) 1000 else 100
            val a = time(main, bytes / 8, iters)
            val b = time(off, bytes / 8, iters)
            if (rank == 0) println("allreduce %d %.2f %.2f".format(bytes, a, b))
        }
        if (rank == 0) System.err.println("ranks waited with idle policy ${idle.kind}; offload carried ${off.offload!!.offloadCalls} calls on rank 0")
        me.close()
    }
}
