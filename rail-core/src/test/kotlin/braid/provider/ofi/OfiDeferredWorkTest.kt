package braid.provider.ofi

import braid.core.Completion
import braid.core.Counter
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.WorkStatus
import braid.core.direct
import braid.core.text
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/**
 * Both paths of deferred work on the native rail: `sockets` queues it natively (FI_QUEUE_WORK, native counters bound to
 * Braid's), `tcp;ofi_rxm` answers -FI_ENOSYS and Braid's own queue serves.
 */
class OfiDeferredWorkTest :
    FunSpec({
        val sockets = Rail.ofi("ofi:sockets", "lo")

        fun TestFabric.native(): OfiDeferredWork = (nodes[0].domain.provider as OfiDomain).work

        fun TestFabric.tsend(trigger: Counter, threshold: Long, text: String, tag: Long, done: Counter?): DeferredWork {
            val buf = direct(8).also { it.putStringWithoutLengthAscii(0, text) }
            val w =
                DeferredWork(
                    trigger,
                    threshold,
                    DeferredOp.Tsend(nodes[0].ep, buf, 0, text.length, addrs[0][1], tag),
                    done,
                )
            nodes[0].domain.deferredWork.queue(w)
            return w
        }

        /** Posts a receive for [tag] on node 1; the buffer it lands in. */
        fun TestFabric.recv(tag: Long): UnsafeBuffer {
            val rx = UnsafeBuffer(ByteArray(8))
            nodes[1].ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, tag, 0, "r$tag") shouldBe 0
            return rx
        }

        fun TestFabric.drive(what: String, until: () -> Boolean) {
            val deadline = Deadline.of(what)
            while (!until()) {
                nodes.forEach { it.domain.progress() }
                deadline.check()
            }
        }

        /** A chain: the second send waits on the first one's completion counter. */
        fun TestFabric.chain(): Triple<DeferredWork, DeferredWork, List<Counter>> {
            val a = nodes[0]
            val trigger = a.domain.counter()
            val first = a.domain.counter()
            val second = a.domain.counter()
            val w2 = tsend(first, 1, "two!", 22, second)
            val w1 = tsend(trigger, 1, "one!", 21, first)
            return Triple(w1, w2, listOf(trigger, first, second))
        }

        fun TestFabric.fireAndReceive(counters: List<Counter>) {
            val b = nodes[1]
            val rx1 = recv(21)
            val rx2 = recv(22)
            counters[0].add(1)
            b.await(2, others = listOf(nodes[0])).map { (it as Completion).context }.toSet() shouldBe
                setOf("r21", "r22")
            rx1.text(4) shouldBe "one!"
            rx2.text(4) shouldBe "two!"
            drive("the chain's completion counters") { counters[2].value >= 1 }
            counters[1].value shouldBe 1L // one count per native completion, never two
            counters[2].value shouldBe 1L
        }

        test("ofi:sockets: a chain of deferred sends runs on the native queue and stays in Braid's heap") {
            TestFabric(rail = sockets).use { f ->
                val (w1, w2, counters) = f.chain()
                val native = f.native()
                native.supported shouldBe true
                native.queued shouldBe 2L
                f.nodes[0].domain.deferredWork.queued shouldBe 2 // Braid's heap holds them too
                w1.status shouldBe WorkStatus.QUEUED
                f.fireAndReceive(counters)
                f.drive("the native requests' CQ entries") { w2.status == WorkStatus.COMPLETED }
                w1.status shouldBe WorkStatus.COMPLETED
                native.finished shouldBe 2L
                f.nodes[0].domain.deferredWork.queued shouldBe 0
                f.nodes[0].domain.deferredWork.inFlight shouldBe 0
            }
        }

        test(
            "ofi:sockets: a Braid counter set lower is lower natively too, so a native request waits for the new count"
        ) {
            TestFabric(rail = sockets).use { f ->
                val trigger = f.nodes[0].domain.counter()
                val rx = f.recv(31)
                val w = f.tsend(trigger, 3, "late", 31, null)
                f.native().queued shouldBe 1L
                trigger.add(2)
                trigger.set(0) // mirrored increases only, the native count would stay 2 and the next add fire it
                trigger.add(1)
                repeat(200) { f.nodes.forEach { it.domain.progress() } }
                w.status shouldBe WorkStatus.QUEUED
                rx.text(4) shouldBe "\u0000\u0000\u0000\u0000"
                trigger.add(2) // 3: due
                f.nodes[1].await(1, others = listOf(f.nodes[0]))
                rx.text(4) shouldBe "late"
                f.drive("the native request's completion") { w.status == WorkStatus.COMPLETED }
            }
        }

        test(
            "ofi:sockets: a native request the provider counts as failed (fi_cntr_readerr) fails in Braid, with its CQ error"
        ) {
            TestFabric(rail = sockets).use { f ->
                val a = f.nodes[0]
                val trigger = a.domain.counter()
                val done = a.domain.counter()
                val buf = direct(8)
                val w =
                    DeferredWork(
                        trigger,
                        5, // not reached: the provider is the one to say it failed
                        DeferredOp.Tsend(a.ep, buf, 0, 4, f.addrs[0][1], 61),
                        done,
                        braid.core.OpFlags.COMPLETION,
                    )
                a.domain.deferredWork.queue(w)
                f.native().queued shouldBe 1L
                // What sockets does when a triggered send fails after it was issued: one on the completion counter's
                // error count, and no CQ entry. (A send that fails on the wire cannot be made on one host reliably,
                // so the count is made here, before the request fires: Braid takes it off its heap too.)
                val cntr = f.native().nativeCompletionCounter(done)
                OfiCall.of(cntr, OfiOps.CNTR_OPS, OfiOps.CNTR_ADDERR, "LLI")!!.use { it.arg(0, cntr).arg(1, 1).call() }
                val err = a.await(1).single() as braid.core.CompletionError
                err.context shouldBe w
                err.err shouldBe Errno.EIO
                err.message shouldContain "ofi:sockets"
                err.message shouldContain "fi_cntr_readerr"
                w.status shouldBe WorkStatus.FAILED
                done.errorValue shouldBe 1L
                done.value shouldBe 0L
                a.domain.deferredWork.inFlight shouldBe 0
                a.domain.deferredWork.queued shouldBe 0
            }
        }

        test(
            "ofi:sockets: a native request failed by a CQ error entry (sockets' way) fails in Braid with its prov_errno"
        ) {
            TestFabric(rail = sockets).use { f ->
                val a = f.nodes[0]
                val trigger = a.domain.counter()
                val done = a.domain.counter()
                val w =
                    DeferredWork(
                        trigger,
                        5, // not reached: the provider is the one to say it failed
                        DeferredOp.Tsend(a.ep, direct(8), 0, 4, f.addrs[0][1], 62),
                        done,
                        braid.core.OpFlags.COMPLETION,
                    )
                a.domain.deferredWork.queue(w)
                f.native().queued shouldBe 1L
                // What the rail does with a native CQ error entry whose op context is the request's fi_deferred_work:
                // sockets writes one there when an issued deferred send fails on its connection
                // (sock_pe_report_tx_error),
                // with the text OfiTransport renders from fi_cq_strerror. (A send that fails on the wire cannot be made
                // on one host reliably: a closed peer makes fi_control or the trigger's post fail at once instead.)
                val text = "Connection reset by peer (err 104, prov_errno -104: Connection reset by peer)"
                synchronized(a.domain.lock) {
                    f.native().nativeError(12345L, Errno.ECONNRESET, text) shouldBe false // not a request of ours
                    f.native().nativeError(f.native().nativeWorkAddress(w), Errno.ECONNRESET, text) shouldBe true
                }
                val err = a.await(1).single() as braid.core.CompletionError
                err.context shouldBe w
                err.err shouldBe Errno.ECONNRESET
                err.message shouldContain "ofi:sockets: deferred tagged send of 4 bytes failed in the native queue"
                err.message shouldContain "prov_errno -104: Connection reset by peer"
                w.status shouldBe WorkStatus.FAILED
                done.errorValue shouldBe 1L
                a.domain.deferredWork.inFlight shouldBe 0
                f.native().finished shouldBe 1L
            }
        }

        test("ofi:sockets: cancel and flush of natively held work say the native queue cannot, and leave it to fire") {
            TestFabric(rail = sockets).use { f ->
                val dwq = f.nodes[0].domain.deferredWork
                val trigger = f.nodes[0].domain.counter()
                val rx = f.recv(41)
                val w = f.tsend(trigger, 1, "kept", 41, null)
                val e = shouldThrow<FabricException> { dwq.cancel(w) }
                e.code shouldBe Errno.ENOSYS
                e.message shouldContain "ofi:sockets"
                e.message shouldContain "ofi.native_work=false"
                shouldThrow<FabricException> { dwq.flush(trigger) }.code shouldBe Errno.ENOSYS
                shouldThrow<FabricException> { dwq.flushAll() }.code shouldBe Errno.ENOSYS
                w.status shouldBe WorkStatus.QUEUED
                dwq.queued shouldBe 1
                trigger.add(1)
                f.nodes[1].await(1, others = listOf(f.nodes[0]))
                rx.text(4) shouldBe "kept"
            }
        }

        test("ofi:sockets: an endpoint closed with native work queued on it keeps its native objects; firing is safe") {
            TestFabric(rail = sockets).use { f ->
                val a = f.nodes[0]
                val trigger = a.domain.counter()
                val rx = f.recv(71)
                val w = f.tsend(trigger, 1, "late", 71, null)
                f.native().queued shouldBe 1L
                a.ep.close()
                trigger.add(1) // the provider issues it on the endpoint it still has
                f.nodes[1].await(1, others = listOf(f.nodes[0]))
                rx.text(4) shouldBe "late"
                w.status shouldBe WorkStatus.FIRED
            }
        }

        test("ofi:sockets with ofi.native_work=false: Braid's queue holds the work, and cancel takes it back") {
            TestFabric(rail = sockets, settings = TestFabric.SETTINGS.with(OfiParams.NATIVE_WORK, false)).use { f ->
                val dwq = f.nodes[0].domain.deferredWork
                val trigger = f.nodes[0].domain.counter()
                val w = f.tsend(trigger, 1, "gone", 51, null)
                f.native().supported shouldBe null // never asked
                dwq.cancel(w) shouldBe true
                w.status shouldBe WorkStatus.CANCELLED
                val w2 = f.tsend(trigger, 1, "gone", 52, null)
                dwq.flush(trigger) shouldBe listOf(w2)
            }
        }

        test("ofi:tcp: the native provider answers ENOSYS, so Braid's deferred work queue serves the same chain") {
            TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { f ->
                val (w1, w2, counters) = f.chain()
                f.native().supported shouldBe false
                f.native().queued shouldBe 0L
                f.nodes[0].domain.deferredWork.queued shouldBe 2
                counters.forEach { it.mirror shouldBe null } // Braid's counters stay Braid's alone
                f.fireAndReceive(counters)
                w1.status shouldBe WorkStatus.COMPLETED
                w2.status shouldBe WorkStatus.COMPLETED
            }
        }
    })
