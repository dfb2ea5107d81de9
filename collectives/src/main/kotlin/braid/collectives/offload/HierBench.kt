package braid.collectives.offload

import braid.collectives.CollectiveGroup
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
 * The benchmark behind `bench/coll-hier.sh` (a program that prints numbers, not a test): `run N H` starts N processes
 * on this machine made H hosts by `BRAID_HOST_ID` (rank r on host r mod H), tcp on loopback as the main provider. Each
 * joins two groups of all ranks: one flat (every rank talks tcp to the others), one paired with [ShmOffload]
 * (hierarchical: the segment inside each host, tcp among the hosts' leaders). Rank 0 prints, per operation and size,
 * the OSU-style average time of the slowest rank on each: `OP BYTES FLAT_USEC HIER_USEC`. Loopback tcp between "hosts"
 * is far cheaper than a network, so this shows what the segment saves inside a host, not what a network would cost.
 */
public object HierBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        when (args[0]) {
            "run" -> run(args[1].toInt(), args[2].toInt())
            "child" -> {
                rank(Path.of(args[3]), args[1].toInt(), args[2].toInt())
                exitProcess(0)
            }
            else -> error("usage: HierBench run N HOSTS")
        }
    }

    private fun run(n: Int, hosts: Int) {
        val dir = Files.createTempDirectory("hierbench")
        val children =
            (0 until n).map { r ->
                ProcessBuilder(
                        ProcessHandle.current().info().command().orElse("java"),
                        "-Xmx512m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        HierBench::class.java.name,
                        "child",
                        "$r",
                        "$n",
                        dir.toString(),
                    )
                    .also {
                        if (r == 0) it.inheritIO()
                        else it.redirectErrorStream(true).redirectOutput(File(dir.toFile(), "$r.log"))
                    }
                    .also {
                        it.environment()
                            .putAll(
                                mapOf(
                                    "BRAID_HOST_ID" to "hierbench-${r % hosts}-${dir.fileName}",
                                    "BRAID_TCP_IFACE" to "lo",
                                    "BRAID_JOB_KEY" to "hierbench-${dir.fileName}",
                                )
                            )
                    }
                    .start()
            }
        try {
            for ((r, c) in children.withIndex()) check(c.waitFor() == 0) {
                "rank $r failed:\n" + File(dir.toFile(), "$r.log").takeIf { it.exists() }?.readText()
            }
        } finally {
            children.forEach { if (it.isAlive) it.destroyForcibly() }
            dir.toFile().deleteRecursively()
        }
    }

    private fun rank(dir: Path, rank: Int, n: Int) {
        val idle = if (n <= Runtime.getRuntime().availableProcessors()) IdlePolicy.SPIN else IdlePolicy.YIELD
        val info =
            Braid.getInfo(Hints(provider = "tcp", domainName = "lo")).first().let {
                it.copy(domainAttr = it.domainAttr.copy(idle = idle))
            }
        val me = RankEndpoint.open(info, dir, rank, n)
        val flat = Collectives.join(me.ep, me.set, 60_000)
        val hier = Collectives.join(me.ep, me.set, 60_000, JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT))
        val o = checkNotNull(hier.offload) { "rank $rank: the offload did not pair" }
        check(flat.offload == null && o.isHierarchical) {
            "rank $rank: expected one flat group and one hierarchical: $o"
        }
        val send = benchBuffer(1 shl 20)
        val recv = benchBuffer(n shl 20)
        val mine = benchBuffer(8)
        val worst = benchBuffer(8)
        fun slowest(usec: Double): Double {
            mine.putDouble(0, usec)
            flat.startReduce(mine, 0, worst, 0, 1, Datatype.DOUBLE, ReduceOp.MAX, 0).waitFor(60_000)
            return worst.getDouble(0)
        }
        fun time(g: CollectiveGroup, iters: Int, call: (CollectiveGroup) -> Unit): Double {
            val warm = maxOf(1, iters / 10)
            var t = 0L
            for (i in 0 until iters + warm) {
                if (i == warm) {
                    g.barrier()
                    t = System.nanoTime()
                }
                call(g)
            }
            return slowest((System.nanoTime() - t) / 1000.0 / iters)
        }
        val ops =
            listOf<Pair<String, (CollectiveGroup, Int) -> Unit>>(
                "allreduce" to
                    { g, c ->
                        g.startAllreduce(send, 0, recv, 0, c, Datatype.DOUBLE, ReduceOp.SUM).waitFor(-1)
                    },
                "reduce" to
                    { g, c ->
                        g.startReduce(send, 0, recv, 0, c, Datatype.DOUBLE, ReduceOp.SUM, n - 1).waitFor(-1)
                    },
                "allgather" to { g, c -> g.startAllgather(send, 0, recv, 0, c, Datatype.DOUBLE).waitFor(-1) },
                "broadcast" to { g, c -> g.startBroadcast(recv, 0, c, Datatype.DOUBLE, n - 1).waitFor(-1) },
            )
        for ((name, call) in ops) for (bytes in intArrayOf(8, 4096, 65536, 1 shl 20)) {
            val iters = if (bytes <= 4096) 2000 else if (bytes <= 65536) 300 else 30
            val a = time(flat, iters) { call(it, bytes / 8) }
            val b = time(hier, iters) { call(it, bytes / 8) }
            if (rank == 0) println("%s %d %.2f %.2f".format(name, bytes, a, b))
        }
        if (rank == 0)
            System.err.println(
                "ranks waited with idle policy ${idle.kind}; rank 0 ran ${o.hierarchicalCalls} hierarchical calls, ${o.mainCalls} on the main provider"
            )
        me.close()
    }
}
