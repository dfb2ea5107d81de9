package braid.collectives.offload

import braid.collectives.CollBench
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.JoinOptions
import braid.collectives.RankEndpoint
import braid.collectives.ReduceOp
import braid.collectives.benchBuffer
import braid.core.Braid
import braid.core.Hints
import braid.core.IdlePolicy
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import kotlin.system.exitProcess

/**
 * The benchmark behind `bench/coll-offload.sh` (a program that prints numbers, not a test): `run N` starts N processes
 * on this host (this one is rank 0), joins two groups of all of them on one shm endpoint each — one paired with
 * [ShmOffload] taking every size (`withMaxBytes(Int.MAX_VALUE)`), one not — and prints, per operation and size, the
 * slowest rank's mean and median call through the main provider and through the offload, the two paths taking turns
 * (three rounds each, the first a warm-up): `OP BYTES MAIN_MEAN MAIN_P50 OFFLOAD_MEAN OFFLOAD_P50`. What
 * [ShmOffload.DEFAULT]'s `maxBytes` is chosen from.
 */
public object OffloadBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        when (args[0]) {
            "run" -> run(args[1].toInt())
            "child" -> {
                rank(Path.of(args[3]), args[1].toInt(), args[2].toInt())
                exitProcess(0)
            }
            else -> error("usage: OffloadBench run N")
        }
    }

    private fun run(n: Int) {
        val dir = Files.createTempDirectory("offloadbench")
        val children =
            (1 until n).map { r ->
                ProcessBuilder(
                        ProcessHandle.current().info().command().orElse("java"),
                        "-Xmx512m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        OffloadBench::class.java.name,
                        "child",
                        "$r",
                        "$n",
                        dir.toString(),
                    )
                    .redirectErrorStream(true)
                    .redirectOutput(File(dir.toFile(), "$r.log"))
                    .start()
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
        val info =
            Braid.getInfo(Hints(provider = "shm")).first().let { it.copy(domainAttr = it.domainAttr.copy(idle = idle)) }
        val me = RankEndpoint.open(info, dir, rank, n)
        val ep = me.ep
        val set = me.set
        val main = Collectives.join(ep, set, 60_000)
        val off =
            Collectives.join(
                ep,
                set,
                60_000,
                JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT.withMaxBytes(Int.MAX_VALUE)),
            )
        check(off.offload != null && main.offload == null)
        val send = benchBuffer(1 shl 20)
        val recv = benchBuffer(1 shl 20)
        val mine = benchBuffer(16)
        val worst = benchBuffer(16)
        val timers = listOf(CollBench.Timer(main, 10_000), CollBench.Timer(off, 10_000))
        val best = Array(2) { DoubleArray(2) }
        fun slowest(k: Int) {
            mine.putDouble(0, timers[k].mean)
            mine.putDouble(8, timers[k].p50)
            main.startReduce(mine, 0, worst, 0, 2, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
            best[k][0] = minOf(best[k][0], worst.getDouble(0))
            best[k][1] = minOf(best[k][1], worst.getDouble(8))
        }
        for (op in listOf("allreduce", "broadcast", "barrier")) {
            for (bytes in if (op == "barrier") intArrayOf(0) else intArrayOf(8, 4096, 16384, 65536, 1 shl 20)) {
                val iters = if (bytes <= 4096) 10_000 else if (bytes <= 65536) 1000 else 100
                val count = bytes / 8
                for (b in best) b.fill(Double.MAX_VALUE)
                for (round in 0..2) for ((k, g) in listOf(main, off).withIndex()) {
                    timers[k].time(iters) {
                        when (op) {
                            "allreduce" ->
                                g.startAllreduce(send, 0, recv, 0, count, Datatype.DOUBLE, ReduceOp.SUM).waitFor(-1)
                            "broadcast" -> g.startBroadcast(send, 0, count, Datatype.DOUBLE, 0).waitFor(-1)
                            else -> g.barrier()
                        }
                    }
                    if (round > 0) slowest(k)
                    else {
                        mine.putDouble(0, 0.0)
                        main.startReduce(mine, 0, worst, 0, 2, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
                    }
                }
                if (rank == 0)
                    println(
                        "%s %d %.2f %.2f %.2f %.2f".format(op, bytes, best[0][0], best[0][1], best[1][0], best[1][1])
                    )
            }
        }
        if (rank == 0)
            System.err.println(
                "ranks waited with idle policy ${idle.kind}; offload carried ${off.offload!!.offloadCalls} calls on rank 0"
            )
        me.close()
    }
}
