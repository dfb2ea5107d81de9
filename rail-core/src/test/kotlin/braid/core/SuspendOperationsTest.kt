package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.agrona.concurrent.UnsafeBuffer

/** The suspend, future and blocking forms of data operations, and the Flow of a queue's completions. */
class SuspendOperationsTest :
    FunSpec({
        test("a suspended tagged receive gets the message a suspended send sends, and neither shows up in the queue") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                runBlocking {
                    val got = async { b.ep.trecv(rx, 0, 16, FiAddr.UNSPEC, 7) }
                    val sent = a.ep.tsend(buf("hello"), 0, 5, f.addrs[0][1], 7)
                    sent.flags and OpFlags.SEND shouldBe OpFlags.SEND
                    sent.len shouldBe 5
                    val c = got.await()
                    c.len shouldBe 5
                    c.tag shouldBe 7
                    c.source shouldBe f.addrs[1][0]
                    c.flags and (OpFlags.RECV or OpFlags.TAGGED) shouldBe (OpFlags.RECV or OpFlags.TAGGED)
                    rx.text(5) shouldBe "hello"
                }
                a.cq.read(a.entry) shouldBe -Errno.EAGAIN
                b.cq.read(b.entry) shouldBe -Errno.EAGAIN
                a.domain.pendingOps shouldBe 0
                b.domain.pendingOps shouldBe 0
            }
        }

        test("untagged send and receive, inject and tinject, with several waiters on one thread") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                runBlocking {
                    val bufs = List(10) { UnsafeBuffer(ByteArray(8)) }
                    val receives = bufs.map { rb -> async { b.ep.recv(rb, 0, 8, FiAddr.UNSPEC).len } }
                    val tagged = async {
                        b.ep.trecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 0x100, ignore = 0xff).tag
                    }
                    repeat(5) { a.ep.send(buf("m$it"), 0, 2, toB) }
                    repeat(5) { a.ep.inject(buf("i$it"), 0, 2, toB) }
                    a.ep.tinject(buf("t"), 0, 1, toB, 0x1ab)
                    receives.awaitAll() shouldBe List(10) { 2L }
                    tagged.await() shouldBe 0x1ab
                    bufs.map { it.text(2) } shouldContainExactly (List(5) { "m$it" } + List(5) { "i$it" })
                }
            }
        }

        test("a truncated receive throws ETRUNC and a refused start names the limit") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                runBlocking {
                    val small = async { runCatching { b.ep.trecv(UnsafeBuffer(ByteArray(2)), 0, 2, FiAddr.UNSPEC, 1) } }
                    a.ep.tsend(buf("toolong"), 0, 7, f.addrs[0][1], 1)
                    val e = small.await().exceptionOrNull() as FabricException
                    e.code shouldBe Errno.ETRUNC
                    e.message shouldContain "trecv of 2 bytes from any source, tag 0x1"
                    val big = UnsafeBuffer(ByteArray(8192))
                    val refused = shouldThrow<FabricException> { a.ep.inject(big, 0, 8192, f.addrs[0][1]) }
                    refused.code shouldBe Errno.EMSGSIZE
                    refused.message shouldContain "inject size"
                    shouldThrow<FabricException> { a.ep.send(big, 8000, 1000, f.addrs[0][1]) }.code shouldBe
                        Errno.EINVAL
                }
            }
        }

        test("sends refused with EAGAIN wait in order for resources and are started by progress") {
            // A 1 KiB ring holds a few messages and a backlog of 2 refuses the rest: the suspended
            // sends queue behind each other and go out, in order, as the receiver drains the ring.
            TestFabric(ringCapacity = 1024, eagerSize = 64, txSize = 2).use { f ->
                val (a, b) = f.nodes
                runBlocking {
                    val out = List(200) { i -> UnsafeBuffer(ByteArray(64)).also { it.putInt(0, i) } }
                    val sends = out.map { o -> async { a.ep.tsend(o, 0, 64, f.addrs[0][1], 3) } }
                    withTimeout(10_000) {
                        val order = ArrayList<Int>()
                        val rx = UnsafeBuffer(ByteArray(64))
                        repeat(200) {
                            b.ep.trecv(rx, 0, 64, FiAddr.UNSPEC, 3)
                            order += rx.getInt(0)
                        }
                        order shouldBe (0 until 200).toList()
                    }
                    sends.awaitAll().size shouldBe 200
                }
            }
        }

        test("futures complete with the completion, or exceptionally with the error, and drive progress from get()") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val rx = UnsafeBuffer(ByteArray(16))
                val r = b.ep.trecvAsync(rx, 0, 16, FiAddr.UNSPEC, 9)
                val s = a.ep.tsendAsync(buf("future"), 0, 6, f.addrs[0][1], 9)
                s.get(10, TimeUnit.SECONDS).len shouldBe 6
                r.get(10, TimeUnit.SECONDS).len shouldBe 6
                rx.text(6) shouldBe "future"
                val trunc = b.ep.trecvAsync(UnsafeBuffer(ByteArray(1)), 0, 1, FiAddr.UNSPEC, 9)
                a.ep.tsendBlocking(buf("xx"), 0, 2, f.addrs[0][1], 9, 10_000)
                val e = shouldThrow<ExecutionException> { trunc.get(10, TimeUnit.SECONDS) }
                (e.cause as FabricException).code shouldBe Errno.ETRUNC
                a.ep.injectAsync(buf("i"), 0, 1, f.addrs[0][1]).isDone shouldBe true
                b.ep.recvBlocking(UnsafeBuffer(ByteArray(4)), 0, 4, FiAddr.UNSPEC, 10_000).len shouldBe 1
            }
        }

        test(
            "the Flow of a queue emits raw completions, wakes for a write by a raw post, and hands errors to its handler"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val errors = ArrayList<CompletionError>()
                OneThread("collector").use { t ->
                    runBlocking {
                        coroutineScope {
                            val collected = async(t.dispatcher) { b.cq.completions { errors += it }.take(3).toList() }
                            val rx = List(3) { UnsafeBuffer(ByteArray(4)) }
                            b.ep.tryTrecv(rx[0], 0, 4, FiAddr.UNSPEC, 1, 0, "first") shouldBe 0
                            b.ep.tryTrecv(rx[1], 0, 4, FiAddr.UNSPEC, 2, 0, "cancelled") shouldBe 0
                            b.ep.tryTrecv(rx[2], 0, 4, FiAddr.UNSPEC, 3, 0, "third") shouldBe 0
                            b.ep.cancel("cancelled") shouldBe 0
                            a.ep.tryTinject(buf("one"), 0, 3, f.addrs[0][1], 1) shouldBe 0
                            // A send on b completes inline into b's queue: a raw post wakes the collector.
                            b.ep.tryTsend(buf("to-a"), 0, 4, f.addrs[1][0], 5, "b-send") shouldBe 0
                            a.ep.tryTinject(buf("three"), 0, 3, f.addrs[0][1], 3) shouldBe 0
                            val got = withTimeout(10_000) { collected.await() }
                            got.map { it.context }.toSet() shouldBe setOf("first", "b-send", "third")
                            errors.single().err shouldBe Errno.ECANCELED
                        }
                    }
                }
            }
        }

        test("a Flow collector parked for a long time is woken by a write from another thread") {
            TestFabric(idle = IdlePolicy(IdleKind.BACKOFF, maxParkNanos = 60_000_000_000, maxSpins = 0, maxYields = 0))
                .use { f ->
                    val (a, b) = f.nodes
                    OneThread("collector").use { t ->
                        runBlocking {
                            val first = async(t.dispatcher) { b.cq.completions().take(1).toList().single() }
                            Thread.sleep(50) // let it park
                            b.ep.tryTsend(buf("x"), 0, 1, f.addrs[1][0], 1, "self") shouldBe 0
                            withTimeout(10_000) { first.await() }.context shouldBe "self"
                        }
                    }
                }
        }

        test("a driver whose dispatcher refuses it hands its role on, so the suspended receive still completes") {
            // No inline spins: the receive suspends at once and launches the driver on its own dispatcher, which
            // refuses it.
            TestFabric(idle = IdlePolicy(IdleKind.BACKOFF, maxSpins = 0, maxYields = 0)).use { f ->
                val (a, b) = f.nodes
                val pool = java.util.concurrent.Executors.newSingleThreadExecutor()
                try {
                    val refuse = java.util.concurrent.atomic.AtomicBoolean(false)
                    val refused = java.util.concurrent.atomic.AtomicInteger()
                    val refusing =
                        java.util.concurrent.Executor { r ->
                            if (!refuse.get()) {
                                pool.execute(r)
                            } else {
                                refused.incrementAndGet()
                                throw java.util.concurrent.RejectedExecutionException("refused for the test")
                            }
                        }
                    val rx = UnsafeBuffer(ByteArray(8))
                    val got =
                        CoroutineScope(refusing.asCoroutineDispatcher()).outcome {
                            refuse.set(true)
                            b.ep.trecv(rx, 0, 8, FiAddr.UNSPEC, 5).len
                        }
                    braid.testsupport.Deadline.await("the driver's launch to be refused") { refused.get() == 1 }
                    refuse.set(false)
                    a.ep.tryTinject(buf("wake"), 0, 4, f.addrs[0][1], 5) shouldBe 0
                    // Nobody else drives b's domain: only a driver that took over (on the default pool) completes the
                    // receive.
                    runBlocking { got.await(10_000).getOrThrow() } shouldBe 4L
                } finally {
                    pool.shutdownNow()
                }
            }
        }

        test("operations on an endpoint that is not enabled are refused with EOPBADSTATE") {
            TestFabric().use { f ->
                val ep = f.nodes[0].domain.endpoint()
                val e = runBlocking {
                    runCatching { ep.tsend(buf("x"), 0, 1, 0, 1) }.exceptionOrNull() as FabricException
                }
                e.code shouldBe Errno.EOPBADSTATE
                e.message shouldContain "enable()"
                ep.close()
            }
        }
    })

/** Runs [block] on [t]'s thread. */
suspend fun <T> on(t: OneThread, block: suspend () -> T): T = withContext(t.dispatcher) { block() }
