package braid.bench

import braid.core.Completion
import braid.core.Errno
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * The CPU cost of the link's same-host path against the shm rail's own (a program that prints numbers, not a test), one
 * thread, no peer process, so neither a second process nor the scheduler is in the numbers:
 * 1. an idle poll: one `CompletionQueue.read` that finds nothing (the loop a waiting caller spins);
 * 2. a message: a 64-byte tagged inject from node 0 to node 1, the receive posted in advance, and node 1's CQ read
 *    until its completion is there (send, one or more polls, matching, CQ).
 *
 * Each row is the median of [ROUNDS] batches, shm and link batches alternating. With both in one JVM the domain's call
 * into its transport sees two classes (a process using one sees one), so `shm` or `link` as the second argument
 * measures one alone. After the README's build:
 * ```
 * java -cp samples/target/braid.jar braid.bench.LinkPathBench [BATCH] [shm,link]
 * ```
 */
public object LinkPathBench {
    private const val ROUNDS = 15

    @JvmStatic
    public fun main(args: Array<String>) {
        val batch = args.getOrNull(0)?.toInt() ?: 1_000_000
        val rails = args.getOrNull(1)?.split(",") ?: listOf("shm", "link")
        LocalEndpoints(2, LocalEndpoints.info("shm")).use { shm ->
            LocalEndpoints(2, LocalEndpoints.info("link")).use { link ->
                val polls = rails.associateWith { LongArray(ROUNDS) }
                val messages = rails.associateWith { LongArray(ROUNDS) }
                val fabrics =
                    linkedMapOf<String, LocalEndpoints>("shm" to shm, "link" to link).filterKeys { it in rails }
                for (warm in 0 until 3) for ((_, f) in fabrics) {
                    idlePolls(f, batch)
                    messages(f, batch / 10)
                }
                for (r in 0 until ROUNDS) {
                    for ((name, f) in fabrics) {
                        polls.getValue(name)[r] = idlePolls(f, batch)
                        messages.getValue(name)[r] = messages(f, batch / 10)
                    }
                }
                println("# one thread; median of $ROUNDS batches, shm and link alternating")
                println(String.format("%-8s %16s %16s", "rail", "idle poll ns", "message ns"))
                for (name in fabrics.keys) {
                    println(
                        String.format(
                            "%-8s %16.1f %16.1f",
                            name,
                            median(polls.getValue(name)) / batch,
                            median(messages.getValue(name)) / (batch / 10.0),
                        )
                    )
                }
            }
        }
    }

    private fun idlePolls(f: LocalEndpoints, n: Int): Long {
        val c = Completion()
        val cq = f.nodes[0].cq
        val t0 = System.nanoTime()
        for (i in 0 until n) check(cq.read(c) == -Errno.EAGAIN)
        return System.nanoTime() - t0
    }

    private val out = UnsafeBuffer(ByteBuffer.allocateDirect(64))
    private val rx = UnsafeBuffer(ByteBuffer.allocateDirect(64))

    private fun messages(f: LocalEndpoints, n: Int): Long {
        val (a, b) = f.nodes
        val toB = f.addr(0, 1)
        val toA = f.addr(1, 0)
        val c = Completion()
        val t0 = System.nanoTime()
        for (i in 0 until n) {
            check(b.ep.tryTrecv(rx, 0, 64, toA, 1, 0, null) == 0)
            check(a.ep.tryTinject(out, 0, 64, toB, 1) == 0)
            while (b.cq.read(c) != 1) Unit
        }
        return System.nanoTime() - t0
    }

    private fun median(xs: LongArray): Double = xs.sorted()[xs.size / 2].toDouble()
}
