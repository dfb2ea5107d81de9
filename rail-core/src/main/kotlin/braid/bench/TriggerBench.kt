package braid.bench

import braid.core.Completion
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.FiAddr
import braid.core.OpFlags
import braid.provider.shm.ShmParams
import java.nio.ByteBuffer
import java.util.Locale
import org.agrona.concurrent.UnsafeBuffer

/**
 * Measurements of triggered operations and the deferred work queue (a program that prints numbers, not a test):
 * 1. `issue`: from a counter reaching a threshold to the triggered 8-byte send being in the shm ring (`counter.add`
 *    returns once it is), against posting the same send directly;
 * 2. `pingpong`: in-process round trip of 8-byte tagged messages where the echo is a triggered send (the receive
 *    counter fires it) against an echo posted by the application;
 * 3. `queue`: queueing and firing one request with 0 and with 100,000 others pending (over 1,000 counters), and
 *    queueing then firing 100,000 at once;
 *
 * The fetch-add round trip to another process is `braid bench fop_latency -p shm|tcp|link`. After the README's build:
 * ```
 * java -Xmx2g -cp samples/target/braid.jar braid.bench.TriggerBench [ROUNDS] [issue,pingpong,queue]
 * ```
 */
public object TriggerBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val rounds = args.getOrNull(0)?.toInt() ?: 200_000
        val sections = args.getOrNull(1)?.split(",")?.toSet() ?: setOf("issue", "pingpong", "queue")
        println(
            "Braid trigger bench: ${Runtime.getRuntime().availableProcessors()} CPUs, ${System.getProperty("java.vm.name")} ${System.getProperty("java.version")}"
        )
        if ("issue" in sections) issue(rounds)
        if ("pingpong" in sections) pingpong(rounds / 2)
        if ("queue" in sections) queue()
    }

    private fun line(what: String, nanos: Double) =
        println(String.format(Locale.ROOT, "  %-66s %10.1f ns", what, nanos))

    // ## 1. Counter reaches threshold -> send in the ring, vs a direct send ##

    private fun issue(rounds: Int) {
        println(
            "1. issue: counter reaches the threshold -> 8-byte tsend in the shm ring, vs posting it directly ($rounds sends each, batches of 256)"
        )
        LocalEndpoints(2, LocalEndpoints.info("shm").with(ShmParams.RING_SIZE, 1 shl 20)).use { f ->
            val (a, b) = f.nodes
            val dest = f.addr(0, 1)
            val payload = UnsafeBuffer(ByteBuffer.allocateDirect(8))
            val rx = UnsafeBuffer(ByteBuffer.allocateDirect(8))
            val counter = a.domain.counter()
            val batch = 256
            val works = Array(batch) { DeferredWork(counter, 0, DeferredOp.Tsend(a.ep, payload, 0, 8, dest, 1)) }
            val c = Completion()
            fun drain(n: Int) {
                var got = 0
                while (got < n) {
                    if (b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 1, 0, null) != 0) error("recv")
                    while (b.cq.read(c) != 1) a.domain.progress()
                    got++
                }
                while (a.cq.read(c) == 1) {} // direct sends' completions
            }
            repeat(3) { pass ->
                var direct = 0L
                var triggered = 0L
                var done = 0
                while (done < rounds) {
                    val t0 = System.nanoTime()
                    for (i in 0 until batch) if (a.ep.tryTsend(payload, 0, 8, dest, 1, null) != 0)
                        error("direct send refused")
                    direct += System.nanoTime() - t0
                    drain(batch)
                    val base = counter.value
                    for (i in 0 until batch) {
                        works[i].threshold = base + i + 1
                        a.domain.deferredWork.queue(works[i])
                    }
                    val t1 = System.nanoTime()
                    for (i in 0 until batch) counter.add(1)
                    triggered += System.nanoTime() - t1
                    drain(batch)
                    done += batch
                }
                if (pass == 2) {
                    line("direct tryTsend (with its CQ completion)", direct.toDouble() / done)
                    line(
                        "counter.add(1) firing a queued tsend (no completion, as deferred work)",
                        triggered.toDouble() / done,
                    )
                }
            }
        }
    }

    // ## 2. Ping-pong with a triggered echo ##

    private fun pingpong(rounds: Int) {
        println(
            "2. pingpong: in-process 8-byte tagged round trip over shm, one thread driving both ends ($rounds rounds)"
        )
        for (triggered in listOf(false, true, false, true)) {
            LocalEndpoints(2, LocalEndpoints.info("shm")).use { f ->
                val (a, b) = f.nodes
                val recvs = b.domain.counter()
                val ab = f.addr(0, 1)
                val ba = f.addr(1, 0)
                val buf = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val bufB = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val c = Completion()
                // B counts its receives with a counter its receives bump: the echo waits on it.
                val echo = DeferredWork(recvs, 0, DeferredOp.Tsend(b.ep, bufB, 0, 8, ba, 2))
                val bRecv = DeferredWork(recvs, 0, DeferredOp.Trecv(b.ep, bufB, 0, 8, FiAddr.UNSPEC, 1), recvs)
                val t0 = System.nanoTime()
                for (i in 0 until rounds) {
                    if (a.ep.tryTrecv(buf, 0, 8, FiAddr.UNSPEC, 2, 0, null) != 0) error("recv A")
                    if (triggered) {
                        bRecv.threshold = recvs.value
                        b.domain.deferredWork.queue(bRecv)
                        echo.threshold = recvs.value + 1
                        b.domain.deferredWork.queue(echo)
                    } else if (b.ep.tryTrecv(bufB, 0, 8, FiAddr.UNSPEC, 1, 0, null) != 0) error("recv B")
                    if (a.ep.tryTsend(buf, 0, 8, ab, 1, null) != 0) error("send A")
                    var replied = false
                    while (!replied) {
                        if (triggered) b.domain.progress()
                        else if (b.cq.read(c) == 1 && c.flags and OpFlags.RECV != 0L) {
                            if (b.ep.tryTsend(bufB, 0, 8, ba, 2, null) != 0) error("send B")
                        }
                        while (a.cq.read(c) == 1) if (c.flags and OpFlags.RECV != 0L) replied = true
                    }
                    if (!triggered) while (b.cq.read(c) == 1) {}
                }
                val ns = (System.nanoTime() - t0).toDouble() / rounds
                line(
                    if (triggered) "round trip, echo triggered by B's receive counter"
                    else "round trip, echo posted by the application",
                    ns,
                )
            }
        }
    }

    // ## 3. Queue and fire with many pending ##

    private fun queue() {
        println(
            "3. queue: queue one request and fire it (a counter add to a sink), alone and beside 100,000 pending over 1,000 counters"
        )
        LocalEndpoints(1, LocalEndpoints.info("shm")).use { f ->
            val d = f.nodes[0].domain
            val dw = d.deferredWork
            val sink = d.counter()
            val trigger = d.counter()
            val work = DeferredWork(trigger, 0, DeferredOp.CounterAdd(sink, 1))
            fun queueAndFire(n: Int): Double {
                val t0 = System.nanoTime()
                for (i in 0 until n) {
                    work.threshold = trigger.value + 1
                    dw.queue(work)
                    trigger.add(1)
                }
                return (System.nanoTime() - t0).toDouble() / n
            }
            repeat(3) { queueAndFire(200_000) }
            line("queue + fire, nothing else pending", queueAndFire(1_000_000))
            val counters = List(1000) { d.counter() }
            val random = java.util.Random(1)
            val pending =
                List(100_000) { i ->
                    DeferredWork(counters[i % 1000], 1L + random.nextInt(1_000_000), DeferredOp.CounterAdd(sink, 1))
                }
            var t0 = System.nanoTime()
            pending.forEach { dw.queue(it) }
            line(
                "queue one of 100,000 (1,000 counters, random thresholds)",
                (System.nanoTime() - t0).toDouble() / pending.size,
            )
            repeat(3) { queueAndFire(200_000) }
            val examined = dw.examined
            line("queue + fire, 100,000 pending on other counters", queueAndFire(1_000_000))
            println(
                String.format(
                    Locale.ROOT,
                    "  %-66s %10.2f",
                    "  requests examined per fire",
                    (dw.examined - examined) / 1_000_000.0,
                )
            )
            t0 = System.nanoTime()
            for (c in counters) c.add(1_000_000)
            line(
                "fire one of 100,000 (each of the 1,000 counters jumps past all)",
                (System.nanoTime() - t0).toDouble() / pending.size,
            )
            check(dw.queued == 0) { "still queued: ${dw.queued}" }
        }
    }
}
