package braid.core

import braid.testsupport.Deadline
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Once warm, RMA and re-armed deferred work allocate nothing per operation (bytes counted with the JVM's per-thread
 * allocation counter, not time): fetch-adds on shm and tcp, and a request queued again and fired by a counter again and
 * again.
 */
class TriggerAllocationTest :
    FunSpec({
        fun perOp(rounds: Int, warm: Int = rounds, round: () -> Unit): Long {
            repeat(warm) { round() }
            return SteadyAllocation.least(3, rounds - 1L) { repeat(rounds) { round() } } / rounds
        }

        for ((rail, open) in
            listOf<Pair<String, () -> TestFabric>>(
                "shm" to { TestFabric() },
                "tcp" to { TestFabric(rail = Rail.TCP) },
            )) {
            test("$rail: a warm fetch-add round trip allocates nothing") {
                open().use { f ->
                    val (a, b) = f.nodes
                    val mr = b.domain.registerMemory(direct(8), MrAccess.REMOTE)
                    val one = UnsafeBuffer(ByteBuffer.allocateDirect(8)).also { it.putLong(0, 1) }
                    val result = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                    val c = Completion()
                    val dest = f.addrs[0][1]
                    val deadline = Deadline.of("the fetch-add's completion")
                    val bytes =
                        perOp(20_000) {
                            check(
                                a.ep.tryFetchAtomic(
                                    one,
                                    0,
                                    1,
                                    result,
                                    0,
                                    dest,
                                    0,
                                    mr.key,
                                    AtomicDatatype.INT64,
                                    AtomicOp.SUM,
                                    null,
                                ) == 0
                            )
                            deadline.restart()
                            while (a.cq.read(c) != 1) {
                                b.domain.progress()
                                deadline.check()
                            }
                        }
                    withClue("$bytes bytes per fetch-add") { bytes shouldBeLessThan 1L }
                }
            }
        }

        test("re-arming a request and firing it with a counter allocates nothing") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val trigger = a.domain.counter()
                val done = a.domain.counter()
                val payload = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val send = DeferredWork(trigger, 0, DeferredOp.Tsend(a.ep, payload, 0, 8, f.addrs[0][1], 3), done)
                val add = DeferredWork(done, 0, DeferredOp.CounterAdd(a.domain.counter(), 1))
                val c = Completion()
                val deadline = Deadline.of("the triggered send's arrival")
                val bytes =
                    perOp(20_000) {
                        send.threshold = trigger.value + 1
                        add.threshold = done.value + 1
                        a.domain.deferredWork.queue(send)
                        a.domain.deferredWork.queue(add)
                        check(b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, null) == 0)
                        trigger.add(1)
                        deadline.restart()
                        while (b.cq.read(c) != 1) {
                            a.domain.progress()
                            deadline.check()
                        }
                    }
                withClue("$bytes bytes per triggered send") { bytes shouldBeLessThan 1L }
            }
        }

        test(
            "a trigger-able endpoint's try forms allocate nothing once warm: sends and receives, DirectBuffer and ByteBuffer forms"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val trigger = a.domain.counter()
                val rxTrigger = b.domain.counter()
                val alias = a.ep.triggerAlias(trigger)
                val rxAlias = b.ep.triggerAlias(rxTrigger)
                val payload = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val payloadBuffer = ByteBuffer.allocateDirect(8)
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                val rxBuffer = ByteBuffer.allocateDirect(8)
                val c = Completion()
                val dest = f.addrs[0][1]
                val deadline = Deadline.of("both triggered messages' arrival")
                val bytes =
                    perOp(20_000) {
                        // Waiting receives and a send, then the counters fire them.
                        rxAlias.threshold = rxTrigger.value + 1
                        check(rxAlias.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, null) == 0)
                        check(rxAlias.tryTrecv(rxBuffer, FiAddr.UNSPEC, 4, 0, null) == 0)
                        alias.threshold = trigger.value + 1
                        check(alias.tryTsend(payload, 0, 8, dest, 3, null) == 0)
                        check(alias.tryTsend(payloadBuffer, dest, 4, null) == 0)
                        rxTrigger.add(1)
                        trigger.add(1)
                        var got = 0
                        deadline.restart()
                        while (got < 2) {
                            if (b.cq.read(c) == 1) got++
                            a.domain.progress()
                            deadline.check()
                        }
                        while (a.cq.read(c) == 1) {}
                    }
                withClue("$bytes bytes per round of four triggered operations") { bytes shouldBeLessThan 1L }
            }
        }
    })
