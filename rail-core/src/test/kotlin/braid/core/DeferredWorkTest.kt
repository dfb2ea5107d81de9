package braid.core

import braid.provider.DomainProvider
import braid.provider.Provider
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import braid.provider.shm.ShmProvider
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.agrona.concurrent.UnsafeBuffer

/** Triggered operations and the deferred work queue (fi_trigger(3)) through real shm endpoints in this process. */
class DeferredWorkTest :
    FunSpec({

        /** Receives [n] tagged messages at [b] (any tag) and returns their tags in arrival order. */
        fun receiveTags(b: TestFabric.Node, a: TestFabric.Node, n: Int): List<Long> {
            val bufs = List(n) { UnsafeBuffer(ByteArray(16)) }
            for (i in 0 until n) b.ep.tryTrecv(bufs[i], 0, 16, FiAddr.UNSPEC, 0, -1L, i) shouldBe 0
            return b.await(n, others = listOf(a)).map { (it as Completion).tag }
        }

        test(
            "requests fire in threshold order, ties in submission order, even when the counter jumps past several thresholds"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val dw = a.domain.deferredWork
                val thresholds = listOf(5L, 1L, 3L, 3L, 2L, 1L, 4L, 7L)
                val works =
                    thresholds.mapIndexed { i, t ->
                        DeferredWork(c, t, DeferredOp.Tsend(a.ep, buf("m$i"), 0, 2, f.addrs[0][1], i.toLong())).also {
                            dw.queue(it)
                        }
                    }
                dw.queued shouldBe 8
                c.add(2) // 0 -> 2: thresholds 1, 1, 2
                works.map { it.status } shouldBe
                    thresholds.map { if (it <= 2) WorkStatus.COMPLETED else WorkStatus.QUEUED }
                c.add(4) // 2 -> 6: 3, 3, 4, 5
                receiveTags(b, a, 7) shouldContainExactly listOf(1L, 5L, 4L, 2L, 3L, 6L, 0L)
                works[7].status shouldBe WorkStatus.QUEUED
                c.addErr(1) // errors count too: 7
                receiveTags(b, a, 1) shouldContainExactly listOf(7L)
                dw.queued shouldBe 0
            }
        }

        test("a request whose threshold is already met fires inside queue(), and reads its buffer then, not before") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val payload = buf("old")
                val later = DeferredWork(c, 1, DeferredOp.Send(a.ep, payload, 0, 3, f.addrs[0][1]))
                a.domain.deferredWork.queue(later)
                payload.putBytes(0, "new".toByteArray())
                c.add(1)
                val now = DeferredWork(c, 0, DeferredOp.Send(a.ep, buf("now"), 0, 3, f.addrs[0][1]))
                a.domain.deferredWork.queue(now)
                now.status shouldBe WorkStatus.COMPLETED // issued (and, eager on shm, complete) before queue() returned
                val rx = List(2) { UnsafeBuffer(ByteArray(3)) }
                rx.forEachIndexed { i, r -> b.ep.tryRecv(r, 0, 3, FiAddr.UNSPEC, i) shouldBe 0 }
                b.await(2, others = listOf(a))
                rx.map { it.text() } shouldBe listOf("new", "now")
            }
        }

        test(
            "no completion reaches the CQ or the endpoint's counters unless asked; with COMPLETION one does, with the request as context"
        ) {
            val f = TestFabric(counters = false)
            f.use {
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val done = a.domain.counter()
                val silent = DeferredWork(c, 1, DeferredOp.Tsend(a.ep, buf("s"), 0, 1, f.addrs[0][1], 1), done)
                val loud =
                    DeferredWork(
                        c,
                        1,
                        DeferredOp.Tsend(a.ep, buf("l"), 0, 1, f.addrs[0][1], 2),
                        done,
                        OpFlags.COMPLETION,
                        "mine",
                    )
                a.domain.deferredWork.queue(silent)
                a.domain.deferredWork.queue(loud)
                c.add(1)
                done.read() shouldBe 2
                val got = a.await(1).single().shouldBeInstanceOf<Completion>()
                got.context shouldBeSameInstanceAs loud
                (got.context as DeferredWork).context shouldBe "mine"
                got.flags shouldBe (OpFlags.SEND or OpFlags.TAGGED)
                a.cq.read(Completion()) shouldBe -Errno.EAGAIN
            }
        }

        test(
            "a trigger-able alias defers every operation; completions are the endpoint's own, with the operation's context"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val alias = a.ep.triggerAlias(c, 2)
                alias.tryTsend(buf("x"), 0, 1, f.addrs[0][1], 10, "at-2") shouldBe 0
                alias.tryTsend(buf("y"), 0, 1, f.addrs[0][1], 11, TriggeredContext(c, 1, "at-1")) shouldBe 0
                val rx = UnsafeBuffer(ByteArray(8))
                alias.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 99, 0, "recv-at-2") shouldBe 0
                repeat(20) {
                    a.domain.progress()
                    b.domain.progress()
                }
                a.ep.srx.postedCount shouldBe 0
                b.ep.srx.unexpectedCount shouldBe 0
                c.add(1)
                a.await(1, others = listOf(b)).map { (it as Completion).context } shouldBe listOf("at-1")
                c.add(1)
                a.await(1, others = listOf(b)).map { (it as Completion).context } shouldBe listOf("at-2")
                a.ep.srx.postedCount shouldBe 1
                b.ep.tryTsend(buf("reply"), 0, 5, f.addrs[1][0], 99, null) shouldBe 0
                val got = a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>()
                got.context shouldBe "recv-at-2"
                rx.text(5) shouldBe "reply"
                b.await(1).single().shouldBeInstanceOf<Completion>().tag shouldBe 99 // the reply's send
                receiveTags(b, a, 2) shouldContainExactly listOf(11L, 10L)
                alias.tryAtomic(
                    buf("12345678"),
                    0,
                    1,
                    f.addrs[0][1],
                    0,
                    1,
                    AtomicDatatype.DOUBLE,
                    AtomicOp.BAND,
                    null,
                ) shouldBe -Errno.EOPNOTSUPP
            }
        }

        test(
            "cancel one, flush one counter, flush all: every waiting request comes back CANCELLED, none fires afterwards"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c1 = a.domain.counter()
                val c2 = a.domain.counter()
                val dw = a.domain.deferredWork
                val on1 =
                    (1..10).map {
                        DeferredWork(
                            c1,
                            (11 - it).toLong(),
                            DeferredOp.Tsend(a.ep, buf("1"), 0, 1, f.addrs[0][1], it.toLong()),
                        )
                    }
                val on2 =
                    (1..10).map {
                        DeferredWork(c2, 1, DeferredOp.Tsend(a.ep, buf("2"), 0, 1, f.addrs[0][1], 100L + it))
                    }
                (on1 + on2).forEach { dw.queue(it) }
                dw.cancel(on1[4]) shouldBe true
                on1[4].status shouldBe WorkStatus.CANCELLED
                on1[4].error shouldBe Errno.ECANCELED
                dw.cancel(on1[4]) shouldBe false
                val flushed = dw.flush(c1)
                flushed shouldContainExactly (on1 - on1[4]).sortedBy { it.threshold }
                flushed.forEach { it.status shouldBe WorkStatus.CANCELLED }
                dw.flush(c1).shouldBeEmpty()
                dw.flushAll() shouldContainExactly on2
                dw.queued shouldBe 0
                c1.add(100)
                c2.add(100)
                repeat(50) {
                    a.domain.progress()
                    b.domain.progress()
                }
                b.ep.srx.unexpectedCount shouldBe 0
                (on1 + on2).forEach { it.status shouldBe WorkStatus.CANCELLED }
                dw.queue(on2[0]) // a cancelled request may be queued again
                on2[0].status shouldBe WorkStatus.COMPLETED
            }
        }

        test(
            "a failing operation bumps its completion counter's error side and, when asked, writes an error completion"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val done = a.domain.counter()
                val badKey =
                    DeferredWork(
                        c,
                        1,
                        DeferredOp.Write(a.ep, buf("abcd"), 0, 4, f.addrs[0][1], 0, 987654),
                        done,
                        OpFlags.COMPLETION,
                    )
                val badAddr = DeferredWork(c, 1, DeferredOp.Send(a.ep, buf("abcd"), 0, 4, 12345), done)
                a.domain.deferredWork.queue(badKey)
                a.domain.deferredWork.queue(badAddr)
                c.add(1)
                badAddr.status shouldBe WorkStatus.FAILED // refused by the rail as it fired
                badAddr.error shouldBe Errno.EINVAL
                val err = a.await(1, others = listOf(b)).single().shouldBeInstanceOf<CompletionError>()
                err.context shouldBeSameInstanceAs badKey
                err.err shouldBe Errno.EACCES
                err.message shouldContain "key 987654"
                badKey.status shouldBe WorkStatus.FAILED
                badKey.errorMessage shouldContain "no memory region registered"
                done.value shouldBe 0
                done.errorValue shouldBe 2
            }
        }

        test("what cannot be issued as described is refused when queued, naming why") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val c = a.domain.counter()
                val dw = a.domain.deferredWork
                fun refused(w: DeferredWork): FabricException = shouldThrow { dw.queue(w) }
                refused(DeferredWork(c, 1, DeferredOp.CounterAdd(c, 1), a.domain.counter())).also {
                    it.code shouldBe Errno.EINVAL
                    it.message shouldContain "takes no completion counter"
                }
                refused(DeferredWork(b.domain.counter(), 1, DeferredOp.Send(a.ep, buf("x"), 0, 1, 0)))
                    .message shouldContain "belongs to domain"
                refused(DeferredWork(c, 1, DeferredOp.Send(b.ep, buf("x"), 0, 1, 0))).message shouldContain
                    "its endpoint belongs to domain"
                refused(DeferredWork(c, 1, DeferredOp.Send(a.ep, buf("x"), 0, 2, 0))).message shouldContain
                    "is not inside the buffer of 1 bytes"
                refused(DeferredWork(c, -1, DeferredOp.Send(a.ep, buf("x"), 0, 1, 0))).code shouldBe Errno.EINVAL
                refused(
                        DeferredWork(
                            c,
                            1,
                            DeferredOp.Atomic(a.ep, direct(8), 0, 1, 0, 0, 1, AtomicDatatype.FLOAT, AtomicOp.BOR),
                        )
                    )
                    .code shouldBe Errno.EOPNOTSUPP
                refused(
                        DeferredWork(
                            c,
                            1,
                            DeferredOp.Atomic(
                                a.ep,
                                direct(1 shl 16),
                                0,
                                4096,
                                0,
                                0,
                                1,
                                AtomicDatatype.INT64,
                                AtomicOp.SUM,
                            ),
                        )
                    )
                    .code shouldBe Errno.EMSGSIZE
                val w = DeferredWork(c, 5, DeferredOp.Send(a.ep, buf("x"), 0, 1, f.addrs[0][1]))
                dw.queue(w)
                refused(w).code shouldBe Errno.EBUSY
                shouldThrow<FabricException> { w.threshold = 6 }.code shouldBe Errno.EBUSY
                dw.queued shouldBe 1
            }
        }

        test("a rail without RMA refuses RMA and atomic requests with ENOSYS when they are queued") {
            val noRma =
                object : Provider {
                    override val name = "shm-no-rma"

                    override fun infos() = ShmProvider.infos().map { it.copy(provider = name) }

                    override fun openDomain(domain: Domain, info: Info): DomainProvider {
                        val shm = ShmProvider.openDomain(domain, info)
                        return object : DomainProvider by shm {
                            override fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport =
                                MessagesOnly(shm.openEndpoint(host, info, av))
                        }
                    }
                }
            Braid.register(noRma)
            try {
                val info = Braid.getInfo(Hints(provider = "shm-no-rma")).first()
                Braid.fabric(info).use { fabric ->
                    val d = fabric.domain(info)
                    val ep =
                        d.endpoint().apply {
                            bind(d.completionQueue(), OpFlags.TRANSMIT or OpFlags.RECV)
                            bind(d.addressVector())
                            enable()
                        }
                    val c = d.counter()
                    val e =
                        shouldThrow<FabricException> {
                            d.deferredWork.queue(DeferredWork(c, 1, DeferredOp.Write(ep, direct(8), 0, 8, 0, 0, 1)))
                        }
                    e.code shouldBe Errno.ENOSYS
                    e.message shouldContain "carries no RMA write"
                    shouldThrow<FabricException> {
                            d.deferredWork.queue(
                                DeferredWork(
                                    c,
                                    1,
                                    DeferredOp.FetchAtomic(
                                        ep,
                                        direct(8),
                                        0,
                                        1,
                                        direct(8),
                                        0,
                                        0,
                                        0,
                                        1,
                                        AtomicDatatype.INT64,
                                        AtomicOp.SUM,
                                    ),
                                )
                            )
                        }
                        .code shouldBe Errno.ENOSYS
                    ep.tryWrite(direct(8), 0, 8, 0, 0, 1, null) shouldBe -Errno.ENOSYS
                    ep.triggerAlias(c).tryRead(direct(8), 0, 8, 0, 0, 1, null) shouldBe -Errno.ENOSYS
                    ep.close()
                }
            } finally {
                Braid.unregister("shm-no-rma")
            }
        }

        test("a chain of 1,000 sends, each triggered by the previous one's completion counter, runs to the end") {
            TestFabric(ringCapacity = 1 shl 14).use { f ->
                val (a, b) = f.nodes
                val n = 1000
                val counters = List(n + 1) { a.domain.counter() }
                val works =
                    (0 until n).map { i ->
                        DeferredWork(
                            counters[i],
                            1,
                            DeferredOp.Tsend(a.ep, buf("c"), 0, 1, f.addrs[0][1], i.toLong()),
                            counters[i + 1],
                        )
                    }
                works.forEach { a.domain.deferredWork.queue(it) }
                counters[0].add(1)
                receiveTags(b, a, n) shouldContainExactly
                    (0L until n).toList() // the receiver drains the small ring as it goes
                driveUntil("the end of the chain", listOf(a, b), 20_000) { counters[n].value == 1L }
                works.forEach { it.status shouldBe WorkStatus.COMPLETED }
            }
        }

        test("a chain of 100,000 counter additions runs in one call without growing the stack") {
            TestFabric(1).use { f ->
                val d = f.nodes[0].domain
                val n = 100_000
                val counters = List(n + 1) { d.counter() }
                for (i in 0 until n) d.deferredWork.queue(
                    DeferredWork(counters[i], 1, DeferredOp.CounterAdd(counters[i + 1], 1))
                )
                counters[0].add(1)
                counters[n].value shouldBe 1
                d.deferredWork.queued shouldBe 0
            }
        }

        test(
            "firing looks at one request more than it fires: 100,000 requests over 1,000 counters do not slow an unrelated counter"
        ) {
            TestFabric(1).use { f ->
                val d = f.nodes[0].domain
                val dw = d.deferredWork
                val sink = d.counter()
                val counters = List(1000) { d.counter() }
                val random = java.util.Random(7)
                val onFirst = ArrayList<Long>()
                for (i in 0 until 100_000) {
                    val t = 1L + random.nextInt(1000)
                    if (i % 1000 == 0) onFirst += t
                    dw.queue(DeferredWork(counters[i % 1000], t, DeferredOp.CounterAdd(sink, 1)))
                }
                val unrelated = d.counter()
                dw.queue(DeferredWork(unrelated, 1, DeferredOp.CounterAdd(sink, 1)))
                dw.queued shouldBe 100_001
                val before = dw.examined
                unrelated.add(1)
                dw.examined - before shouldBe 1
                sink.value shouldBe 1
                // Counter 0 jumps to 500: exactly its requests at thresholds ≤ 500 fire, plus one look at the next.
                val due = onFirst.count { it <= 500 }
                val at = dw.examined
                counters[0].add(500)
                sink.value shouldBe 1L + due
                dw.examined - at shouldBe due + 1L
                dw.queued shouldBe 100_000 - due
            }
        }

        test("requests the rail has no room for are issued again by progress, in order") {
            TestFabric(txSize = 2).use { f ->
                val (a, b) = f.nodes
                val mr = b.domain.registerMemory(direct(80), MrAccess.REMOTE)
                val c = a.domain.counter()
                val done = a.domain.counter()
                val works =
                    (0 until 10).map { i ->
                        DeferredWork(
                            c,
                            1,
                            DeferredOp.Write(
                                a.ep,
                                direct(8).also { it.putLong(0, i + 1L) },
                                0,
                                8,
                                f.addrs[0][1],
                                8L * i,
                                mr.key,
                            ),
                            done,
                        )
                    }
                works.forEach { a.domain.deferredWork.queue(it) }
                c.add(1)
                a.domain.deferredWork.inFlight shouldBe 10
                driveUntil("10 writes", listOf(a, b), 20_000) { done.value == 10L }
                (0 until 10).map { mr.buffer.getLong(8 * it) } shouldBe (1L..10L).toList()
            }
        }

        test("closing the endpoint fails its fired requests with ESHUTDOWN on their completion counters") {
            TestFabric().use { f ->
                val a = f.nodes[0]
                val c = a.domain.counter()
                val done = a.domain.counter()
                val w = DeferredWork(c, 0, DeferredOp.Recv(a.ep, UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC), done)
                a.domain.deferredWork.queue(w)
                w.status shouldBe WorkStatus.FIRED
                a.ep.close()
                w.status shouldBe WorkStatus.FAILED
                w.error shouldBe Errno.ESHUTDOWN
                done.errorValue shouldBe 1
            }
        }

        // ## Batches (DeferredWorkQueue.queueAll): a schedule's requests queued as one ##

        test(
            "a batch fires its due requests in array order as it is queued, and the rest when their counters move, in threshold order"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val start = a.domain.counter()
                val c = a.domain.counter()
                val dw = a.domain.deferredWork
                // Tags 0 and 1 are due at once (threshold 0); 2..4 wait on c, which the first two complete into.
                val works =
                    arrayOf(
                        DeferredWork(start, 0, DeferredOp.Tsend(a.ep, buf("a"), 0, 1, f.addrs[0][1], 0), c),
                        DeferredWork(start, 0, DeferredOp.Tsend(a.ep, buf("b"), 0, 1, f.addrs[0][1], 1), c),
                        DeferredWork(c, 3, DeferredOp.Tsend(a.ep, buf("c"), 0, 1, f.addrs[0][1], 4)),
                        DeferredWork(c, 2, DeferredOp.Tsend(a.ep, buf("d"), 0, 1, f.addrs[0][1], 2)),
                        DeferredWork(c, 2, DeferredOp.Tsend(a.ep, buf("e"), 0, 1, f.addrs[0][1], 3)),
                    )
                dw.queueAll(works)
                // The eager sends complete as they are posted, so c reaches 2 inside the batch and the chain runs on
                // this thread.
                works.map { it.status } shouldContainExactly
                    listOf(
                        WorkStatus.COMPLETED,
                        WorkStatus.COMPLETED,
                        WorkStatus.QUEUED,
                        WorkStatus.COMPLETED,
                        WorkStatus.COMPLETED,
                    )
                c.add(1)
                receiveTags(b, a, 5) shouldContainExactly listOf(0L, 1L, 2L, 3L, 4L)
                dw.queued shouldBe 0
                // Re-armed: the same requests go in again once they are done.
                c.set(0)
                dw.queueAll(works, 0, 2)
                receiveTags(b, a, 2) shouldContainExactly listOf(0L, 1L)
            }
        }

        test("a batch with a request the queue refuses queues nothing and says what was wrong") {
            TestFabric().use { f ->
                val (a, _) = f.nodes
                val c = a.domain.counter()
                val dw = a.domain.deferredWork
                val good = DeferredWork(c, 1, DeferredOp.Tsend(a.ep, buf("x"), 0, 1, f.addrs[0][1], 7))
                val bad =
                    DeferredWork(
                        c,
                        1,
                        DeferredOp.Tsend(a.ep, buf("y"), 0, 5, f.addrs[0][1], 8),
                    ) // 5 bytes of a 1-byte buffer
                shouldThrow<FabricException> { dw.queueAll(arrayOf(good, bad)) }.message shouldContain
                    "[0, 5) is not inside the buffer of 1 bytes"
                good.status shouldBe WorkStatus.IDLE
                dw.queued shouldBe 0
                val twice = shouldThrow<FabricException> { dw.queueAll(arrayOf(good, good)) }
                twice.code shouldBe Errno.EBUSY
                twice.message shouldContain "in the batch twice"
                dw.queued shouldBe 0
                // Neither refusal left a mark: the request queues normally afterwards.
                dw.queueAll(arrayOf(good))
                good.status shouldBe WorkStatus.QUEUED
                shouldThrow<FabricException> { dw.queueAll(arrayOf(good)) }.code shouldBe Errno.EBUSY
                dw.cancel(good) shouldBe true
            }
        }
    })

/** A rail that carries messages only: RMA and atomics fall to the Transport defaults (-ENOSYS). */
private class MessagesOnly(private val inner: Transport) : Transport by inner {
    override val rmaCaps: Long
        get() = 0

    override fun write(
        buffer: org.agrona.DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = -Errno.ENOSYS

    override fun read(
        buffer: org.agrona.MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int = -Errno.ENOSYS

    override fun atomic(
        operand: org.agrona.DirectBuffer,
        compare: org.agrona.DirectBuffer?,
        result: org.agrona.MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int = -Errno.ENOSYS

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = 0
}
