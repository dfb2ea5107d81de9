package braid.bench

import braid.core.FiAddr
import org.agrona.concurrent.UnsafeBuffer

/**
 * What one idle duty cycle costs (a program that prints numbers, not a test): an endpoint with one connected peer calls
 * `Domain.progress()` with nothing arriving, CYCLES times per round, ROUNDS rounds, on shm and on tcp. The rails'
 * timers must not add to it: shm's liveness checks and tcp's keepalive run when the process's timer raises a flag, so
 * an idle cycle reads no clock.
 *
 * After the README's build: `java -cp samples/target/braid.jar braid.bench.IdleCycleBench [CYCLES] [ROUNDS]`.
 */
public object IdleCycleBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val cycles = args.getOrNull(0)?.toInt() ?: 2_000_000
        val rounds = args.getOrNull(1)?.toInt() ?: 7
        println(
            "Braid idle duty cycle: ${Runtime.getRuntime().availableProcessors()} CPUs, $cycles cycles x $rounds rounds"
        )
        println(String.format("%-6s %12s %12s %12s", "rail", "best ns", "median ns", "worst ns"))
        measure("shm", LocalEndpoints(2, LocalEndpoints.info("shm")), cycles, rounds)
        measure("tcp", LocalEndpoints(2, LocalEndpoints.info("tcp")), cycles, rounds)
    }

    private fun measure(rail: String, f: LocalEndpoints, cycles: Int, rounds: Int) {
        f.use {
            val a = f.nodes[0]
            // One message each way, so the channels (shm) and the connection (tcp) exist and are polled.
            for ((from, to) in listOf(0 to 1, 1 to 0)) {
                f.nodes[to].ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, null)
                check(f.nodes[from].ep.tryTsend(UnsafeBuffer("hi".toByteArray()), 0, 2, f.addr(from, to), 1, null) == 0)
                f.nodes[to].await(1, f.nodes[from])
                f.nodes[from].await(1, f.nodes[to])
            }
            val d = a.domain
            repeat(cycles) { d.progress() } // warm-up
            val ns =
                DoubleArray(rounds) {
                        val t0 = System.nanoTime()
                        for (i in 0 until cycles) d.progress()
                        (System.nanoTime() - t0).toDouble() / cycles
                    }
                    .sorted()
            println(String.format("%-6s %12.1f %12.1f %12.1f", rail, ns.first(), ns[rounds / 2], ns.last()))
        }
    }
}
