package braid.bench

import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.Domain
import braid.core.Endpoint
import braid.core.FiAddr
import braid.core.Hints
import braid.core.IdlePolicy
import braid.core.Info
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.core.tinject
import braid.core.tinjectAsync
import braid.core.trecv
import braid.core.trecvAsync
import braid.core.trecvBlocking
import braid.core.tsend
import braid.core.tsendAsync
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.util.concurrent.Executors
import kotlin.concurrent.thread
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/**
 * Measurements of the progress engine (a program that prints numbers, not a test):
 * 1. CPU time of this process while one receive waits, idle, for `IDLE_SECONDS` (default 10), under each idle strategy
 *    and each way of waiting;
 * 2. heap per pending receive: raw, suspended in a coroutine, and as a future (50,000 of each);
 * 3. in-process ping-pong latency of 64-byte tagged messages, raw polling versus `suspend`;
 * 4. the CPU cost of one message through each API, with one thread playing both sides (no waiting for a peer: every
 *    operation completes at its first poll).
 *
 * After the README's build:
 * ```
 * java -Xmx1g -XX:+UseParallelGC -cp samples/target/braid.jar \
 *     braid.bench.ProgressBench [IDLE_SECONDS] [PINGPONG_ROUNDS] [idle,memory,pingpong,overhead]
 * ```
 */
public object ProgressBench {
    @JvmStatic
    public fun main(args: Array<String>) {
        val idleSeconds = args.getOrNull(0)?.toLong() ?: 10
        val rounds = args.getOrNull(1)?.toInt() ?: 200_000
        val sections = args.getOrNull(2)?.split(",")?.toSet() ?: setOf("idle", "memory", "pingpong", "overhead")
        println(
            "Braid progress bench: ${Runtime.getRuntime().availableProcessors()} CPUs, ${System.getProperty("java.vm.name")} ${System.getProperty("java.version")}"
        )
        if ("idle" in sections) idleCpu(idleSeconds)
        if ("memory" in sections) memory()
        if ("pingpong" in sections) pingpong(rounds)
        if ("overhead" in sections) overhead(rounds)
    }

    // ## Idle CPU ##

    private val os = ManagementFactory.getOperatingSystemMXBean() as com.sun.management.OperatingSystemMXBean

    private fun idleCpu(seconds: Long) {
        println("\n# CPU of this process over $seconds s while one receive waits with nothing arriving")
        println("(percent of one core; the JVM's own background work is the 'nothing waiting' line)")
        println(String.format("%-58s %10s %8s", "waiting", "CPU ms", "% core"))
        report("nothing waiting (baseline)", seconds) { {} }
        for (policy in listOf(IdlePolicy.SPIN, IdlePolicy.YIELD, IdlePolicy.BACKOFF)) {
            for (form in
                listOf(
                    "blocking trecv (manual progress)",
                    "suspended trecv (manual progress)",
                    "suspended trecv (engine thread)",
                )) {
                Pair(policy, if (form.contains("engine")) ProgressModel.AUTO else ProgressModel.MANUAL).let { (p, model)
                    ->
                    Fabric2(p, model, ProgressModel.MANUAL).use { f -> // only the waiting side has an engine
                        report("$form, ${p.kind}", seconds) {
                            val rx = UnsafeBuffer(ByteArray(64))
                            if (form.startsWith("blocking")) {
                                val t =
                                    thread(name = "blocked") { f.b.trecvBlocking(rx, 0, 64, FiAddr.UNSPEC, 1, 0, -1) }
                                ({
                                    f.wake()
                                    t.join()
                                })
                            } else {
                                val pool = Executors.newSingleThreadExecutor()
                                val job =
                                    CoroutineScope(pool.asCoroutineDispatcher()).launch {
                                        f.b.trecv(rx, 0, 64, FiAddr.UNSPEC, 1)
                                    }
                                ({
                                    f.wake()
                                    runBlocking { job.join() }
                                    pool.shutdown()
                                })
                            }
                        }
                    }
                }
            }
        }
    }

    /** Starts a wait with [start] (which returns how to end it), measures process CPU for [seconds]. */
    private fun report(what: String, seconds: Long, start: () -> () -> Unit) {
        val end = start()
        Thread.sleep(500) // settle into the idle phase
        val before = os.processCpuTime
        Thread.sleep(seconds * 1000)
        val used = os.processCpuTime - before
        end()
        println(String.format("%-58s %10d %7.1f%%", what, used / 1_000_000, 100.0 * used / (seconds * 1e9)))
    }

    /** Two endpoints, each with its own domain of [policy]; a's progress is [modelA], b's [modelB]. */
    private class Fabric2(policy: IdlePolicy, private val modelB: ProgressModel, modelA: ProgressModel = modelB) :
        AutoCloseable {
        val info: Info =
            Braid.getInfo(Hints(caps = Caps.TAGGED, provider = "shm")).first().let {
                it.copy(domainAttr = it.domainAttr.copy(idle = policy))
            }
        val fabric = Braid.fabric(info)
        private var nextModel = modelA

        private fun open(): Pair<Endpoint, braid.core.AddressVector> {
            val d = fabric.domain(info.copy(domainAttr = info.domainAttr.copy(progress = nextModel)))
            nextModel = modelB
            val av = d.addressVector()
            val ep =
                d.endpoint().also {
                    it.bind(d.completionQueue(), OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(av)
                    it.enable()
                }
            return ep to av
        }

        private val pa = open()
        private val pb = open()
        val a: Endpoint = pa.first
        val b: Endpoint = pb.first
        val aToB: Long = pa.second.insert(b.address)
        val bToA: Long = pb.second.insert(a.address)

        fun wake() {
            check(a.tryTinject(UnsafeBuffer(ByteArray(8)), 0, 8, aToB, 1) == 0)
        }

        override fun close() {
            a.close()
            b.close()
            fabric.close()
        }
    }

    // ## Memory ##

    private fun usedHeap(): Long {
        val m = ManagementFactory.getMemoryMXBean()
        repeat(4) {
            System.gc()
            Thread.sleep(50)
        }
        return m.heapMemoryUsage.used
    }

    private fun memory() {
        val n = 50_000
        println(
            "\n# Heap per pending receive ($n pending on a fresh endpoint, one shared 64-byte buffer, after full GCs)"
        )
        val rx = UnsafeBuffer(ByteArray(64))
        val pool = Executors.newSingleThreadExecutor()
        val dispatcher = pool.asCoroutineDispatcher()
        fun measure(what: String, pending: (Endpoint) -> Unit, until: (Endpoint) -> Boolean = { true }): Long {
            Fabric2(IdlePolicy.BACKOFF, ProgressModel.MANUAL).use { f ->
                val before = usedHeap()
                pending(f.b)
                val deadline = System.nanoTime() + 120_000_000_000
                while (!until(f.b)) {
                    check(System.nanoTime() < deadline) { "$what: never all pending" }
                    Thread.sleep(5)
                }
                val each = (usedHeap() - before) / n
                println(String.format("%-58s %8d bytes", what, each))
                return each
            }
        }
        val contexts = Array<Any>(n) { Any() } // the raw path's contexts belong to the application
        val raw =
            measure(
                "raw tryTrecv (the SRX entry)",
                { ep ->
                    for (i in 0 until n) check(ep.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, i.toLong(), 0, contexts[i]) == 0)
                },
            )
        val plainParent = Job()
        val plain =
            measure(
                "a launched coroutine suspended in nothing (no Braid at all)",
                { _ ->
                    repeat(n) {
                        CoroutineScope(dispatcher + plainParent).launch {
                            kotlinx.coroutines.suspendCancellableCoroutine<Unit> {}
                        }
                    }
                    pool.submit {}.get()
                },
            )
        runBlocking { plainParent.cancelAndJoin() }
        val parent = Job()
        val suspended =
            measure(
                "suspended trecv, each in its own launched coroutine",
                { ep ->
                    repeat(n) { i ->
                        CoroutineScope(dispatcher + parent).launch {
                            runCatching { ep.trecv(rx, 0, 64, FiAddr.UNSPEC, i.toLong()) }
                        }
                    }
                },
                { ep -> suspended(ep.domain) == n },
            )
        runBlocking { parent.cancelAndJoin() }
        val future =
            measure(
                "trecvAsync future",
                { ep -> repeat(n) { i -> ep.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, i.toLong()) } },
            )
        pool.shutdown()
        println(
            String.format(
                "%-58s %8d bytes",
                "  suspended: Braid's share beyond the SRX entry and the coroutine",
                suspended - raw - plain,
            )
        )
        println(String.format("%-58s %8d bytes", "  future: beyond the SRX entry", future - raw))
    }

    private fun suspended(d: Domain): Int = d.hub.suspendedWaiters

    // ## Ping-pong ##

    private fun pingpong(rounds: Int) {
        println(
            "\n# In-process ping-pong, 64-byte tagged messages, two threads, one domain each ($rounds round trips after ${rounds / 4} warm-up)"
        )
        println(String.format("%-58s %10s %10s %10s", "form", "mean ns", "p50 ns", "p99 ns"))
        println("(one-way latency: half the round trip)")
        for (form in
            listOf(
                "raw (try… + CQ read polling)",
                "suspend (manual progress)",
                "suspend (engine threads)",
                "futures + get() (manual progress)",
            )) {
            val model = if (form.contains("engine")) ProgressModel.AUTO else ProgressModel.MANUAL
            Fabric2(IdlePolicy.BACKOFF, model).use { f ->
                val samples = LongArray(rounds)
                val warm = rounds / 4
                val ping = thread(name = "ping") { pingSide(form, f, f.a, f.aToB, warm, rounds, samples) }
                val pong = thread(name = "pong") { pongSide(form, f.b, f.bToA, warm + rounds) }
                ping.join()
                pong.join()
                samples.sort()
                val mean = samples.average() / 2
                println(
                    String.format(
                        "%-58s %10.0f %10d %10d",
                        form,
                        mean,
                        samples[rounds / 2] / 2,
                        samples[(rounds * 99L / 100).toInt()] / 2,
                    )
                )
            }
        }
    }

    private fun pingSide(
        form: String,
        f: Fabric2,
        ep: Endpoint,
        dest: Long,
        warm: Int,
        rounds: Int,
        samples: LongArray,
    ) {
        val out = UnsafeBuffer(ByteBuffer.allocateDirect(64))
        val rx = UnsafeBuffer(ByteBuffer.allocateDirect(64))
        when {
            form.startsWith("raw") -> {
                val c = Completion()
                val cq = cqOf(ep)
                for (i in 0 until warm + rounds) {
                    val t0 = System.nanoTime()
                    check(ep.tryTsend(out, 0, 64, dest, 1, null) == 0)
                    while (cq.read(c) != 1) Unit
                    check(ep.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, 2, 0, null) == 0)
                    while (cq.read(c) != 1) Unit
                    if (i >= warm) samples[i - warm] = System.nanoTime() - t0
                }
            }
            form.startsWith("futures") -> {
                for (i in 0 until warm + rounds) {
                    val t0 = System.nanoTime()
                    ep.tsendAsync(out, 0, 64, dest, 1).get()
                    ep.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, 2).get()
                    if (i >= warm) samples[i - warm] = System.nanoTime() - t0
                }
            }
            else ->
                runBlocking {
                    val c = Completion()
                    for (i in 0 until warm + rounds) {
                        val t0 = System.nanoTime()
                        ep.tsend(out, 0, 64, dest, 1, c)
                        ep.trecv(rx, 0, 64, FiAddr.UNSPEC, 2, into = c)
                        if (i >= warm) samples[i - warm] = System.nanoTime() - t0
                    }
                }
        }
    }

    private fun pongSide(form: String, ep: Endpoint, dest: Long, total: Int) {
        val out = UnsafeBuffer(ByteBuffer.allocateDirect(64))
        val rx = UnsafeBuffer(ByteBuffer.allocateDirect(64))
        when {
            form.startsWith("raw") -> {
                val c = Completion()
                val cq = cqOf(ep)
                repeat(total) {
                    check(ep.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, 1, 0, null) == 0)
                    while (cq.read(c) != 1) Unit
                    check(ep.tryTsend(out, 0, 64, dest, 2, null) == 0)
                    while (cq.read(c) != 1) Unit
                }
            }
            form.startsWith("futures") ->
                repeat(total) {
                    ep.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, 1).get()
                    ep.tsendAsync(out, 0, 64, dest, 2).get()
                }
            else ->
                runBlocking {
                    val c = Completion()
                    repeat(total) {
                        ep.trecv(rx, 0, 64, FiAddr.UNSPEC, 1, into = c)
                        ep.tsend(out, 0, 64, dest, 2, c)
                    }
                }
        }
    }

    private fun cqOf(ep: Endpoint) = ep.txCq!!

    // ## Per-message overhead ##

    /**
     * One thread sends a 64-byte tagged message from a to b and receives it, [rounds] times per batch, through each API
     * in turn; prints the best batch's nanoseconds per message (send and receive). The message is in b's ring before
     * its receive is posted, so nothing waits: the difference between the lines is the API's own work.
     */
    private fun overhead(rounds: Int) {
        println(
            "\n# CPU per 64-byte message, one thread playing both sides " +
                "(send + receive; best of 7 batches of $rounds, the forms taking turns)"
        )
        println(String.format("%-58s %10s", "form", "ns/msg"))
        Fabric2(IdlePolicy.SPIN, ProgressModel.MANUAL).use { f ->
            val out = UnsafeBuffer(ByteBuffer.allocateDirect(64))
            val rx = UnsafeBuffer(ByteBuffer.allocateDirect(64))
            val c = Completion()
            val cqA = cqOf(f.a)
            val cqB = cqOf(f.b)
            val forms =
                linkedMapOf<String, () -> Unit>(
                    "raw (tryTsend + tryTrecv + CQ reads)" to
                        {
                            for (i in 0 until rounds) {
                                check(f.a.tryTsend(out, 0, 64, f.aToB, 1, null) == 0)
                                while (cqA.read(c) != 1) Unit
                                check(f.b.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, 1, 0, null) == 0)
                                while (cqB.read(c) != 1) Unit
                            }
                        },
                    "suspend (tsend + trecv, reused completion)" to
                        {
                            runBlocking {
                                for (i in 0 until rounds) {
                                    f.a.tsend(out, 0, 64, f.aToB, 1, c)
                                    f.b.trecv(rx, 0, 64, FiAddr.UNSPEC, 1, into = c)
                                }
                            }
                        },
                    "suspend (tsend + trecv, a new completion each)" to
                        {
                            runBlocking {
                                for (i in 0 until rounds) {
                                    f.a.tsend(out, 0, 64, f.aToB, 1)
                                    f.b.trecv(rx, 0, 64, FiAddr.UNSPEC, 1)
                                }
                            }
                        },
                    // bench/api-overhead.sh's suspend order: the inject, then the receive that takes it.
                    "suspend (tinject + trecv, reused completion)" to
                        {
                            runBlocking {
                                for (i in 0 until rounds) {
                                    f.a.tinject(out, 0, 64, f.aToB, 1)
                                    f.b.trecv(rx, 0, 64, FiAddr.UNSPEC, 1, into = c)
                                }
                            }
                        },
                    "futures + join()" to
                        {
                            for (i in 0 until rounds) {
                                f.a.tsendAsync(out, 0, 64, f.aToB, 1).join()
                                f.b.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, 1).join()
                            }
                        },
                    // bench/api-overhead.sh's order: the receive is posted before the inject that it takes.
                    "raw, receive first (tryTrecv + tryTinject + CQ read)" to
                        {
                            for (i in 0 until rounds) {
                                check(f.b.tryTrecv(rx, 0, 64, FiAddr.UNSPEC, 1, 0, null) == 0)
                                check(f.a.tryTinject(out, 0, 64, f.aToB, 1) == 0)
                                while (cqB.read(c) != 1) Unit
                            }
                        },
                    "futures, receive first (trecvAsync + tinjectAsync, joined)" to
                        {
                            for (i in 0 until rounds) {
                                val r = f.b.trecvAsync(rx, 0, 64, FiAddr.UNSPEC, 1)
                                f.a.tinjectAsync(out, 0, 64, f.aToB, 1).join()
                                r.join()
                            }
                        },
                )
            // The forms take turns, batch by batch, so a burst of load from elsewhere slows one batch of each rather
            // than every batch of one form.
            val best = LongArray(forms.size) { Long.MAX_VALUE }
            repeat(3) { forms.values.forEach { it() } } // warm-up
            repeat(7) {
                forms.values.forEachIndexed { i, body ->
                    val t0 = System.nanoTime()
                    body()
                    best[i] = minOf(best[i], System.nanoTime() - t0)
                }
            }
            forms.keys.forEachIndexed { i, name ->
                println(String.format("%-58s %10.1f", name, best[i].toDouble() / rounds))
            }
        }
    }
}
