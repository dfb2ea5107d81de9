package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/** [DeferredWorkQueue.queueAll]: a schedule's requests queued as one batch, through real shm endpoints in this process. */
class DeferredWorkBatchTest : FunSpec({

    fun buf(s: String) = UnsafeBuffer(s.toByteArray())

    fun receiveTags(b: TestFabric.Node, a: TestFabric.Node, n: Int): List<Long> {
        val bufs = List(n) { UnsafeBuffer(ByteArray(16)) }
        for (i in 0 until n) b.ep.tryTrecv(bufs[i], 0, 16, FiAddr.UNSPEC, 0, -1L, i) shouldBe 0
        return b.await(n, others = listOf(a)).map { (it as Completion).tag }
    }

    test("a batch fires its due requests in array order as it is queued, and the rest when their counters move, in threshold order") {
        TestFabric().use { f ->
            val (a, b) = f.nodes
            val start = a.domain.counter()
            val c = a.domain.counter()
            val dw = a.domain.deferredWork
            // Tags 0 and 1 are due at once (threshold 0); 2..4 wait on c, which the first two complete into.
            val works = arrayOf(
                DeferredWork(start, 0, DeferredOp.Tsend(a.ep, buf("a"), 0, 1, f.addrs[0][1], 0), c),
                DeferredWork(start, 0, DeferredOp.Tsend(a.ep, buf("b"), 0, 1, f.addrs[0][1], 1), c),
                DeferredWork(c, 3, DeferredOp.Tsend(a.ep, buf("c"), 0, 1, f.addrs[0][1], 4)),
                DeferredWork(c, 2, DeferredOp.Tsend(a.ep, buf("d"), 0, 1, f.addrs[0][1], 2)),
                DeferredWork(c, 2, DeferredOp.Tsend(a.ep, buf("e"), 0, 1, f.addrs[0][1], 3)),
            )
            dw.queueAll(works)
            // The eager sends complete as they are posted, so c reaches 2 inside the batch and the chain runs on this thread.
            works.map { it.status } shouldContainExactly listOf(WorkStatus.COMPLETED, WorkStatus.COMPLETED, WorkStatus.QUEUED, WorkStatus.COMPLETED, WorkStatus.COMPLETED)
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
            val bad = DeferredWork(c, 1, DeferredOp.Tsend(a.ep, buf("y"), 0, 5, f.addrs[0][1], 8)) // 5 bytes of a 1-byte buffer
            shouldThrow<FabricException> { dw.queueAll(arrayOf(good, bad)) }.message shouldContain "[0, 5) is not inside the buffer of 1 bytes"
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
