package braid.core

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlinx.coroutines.CoroutineScope
import org.agrona.concurrent.UnsafeBuffer

/** Closing an endpoint ends every operation waiting on it, whatever form the waiter takes. */
class CloseWithWaitersTest :
    FunSpec({
        for (progress in listOf(ProgressModel.MANUAL, ProgressModel.AUTO)) {
            test("closing an endpoint resumes every waiter with ESHUTDOWN naming its operation ($progress progress)") {
                TestFabric(progress = progress).use { f ->
                    val (a, b) = f.nodes
                    OneThread("waiters").use { t ->
                        val scope = CoroutineScope(t.dispatcher)
                        val receives =
                            List(100) { i ->
                                scope.outcome {
                                    b.ep.trecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, i.toLong())
                                }
                            }
                        // A rendezvous send to a peer that never posts its receive: taken, so not cancellable.
                        val send =
                            scope.outcome { b.ep.tsend(UnsafeBuffer(ByteArray(8192)), 0, 8192, f.addrs[1][0], 1) }
                        val future = b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1000)
                        val blocked = AtomicReference<Throwable>()
                        val blocker =
                            thread(name = "blocked-receiver") {
                                blocked.set(
                                    runCatching {
                                            b.ep.trecvBlocking(
                                                UnsafeBuffer(ByteArray(8)),
                                                0,
                                                8,
                                                FiAddr.UNSPEC,
                                                1001,
                                                0,
                                                60_000,
                                            )
                                        }
                                        .exceptionOrNull()
                                )
                            }
                        Deadline.await("103 operations to wait") {
                            b.domain.pendingOps == 103 && b.domain.suspendedOps == 101
                        }
                        b.ep.close()
                        for (r in receives + send) {
                            val e = r.await(10_000).exceptionOrNull().shouldBeInstanceOf<FabricException>()
                            e.code shouldBe Errno.ESHUTDOWN
                            e.message shouldContain "the endpoint was closed while the operation was pending"
                        }
                        send.await(0).exceptionOrNull()!!.message shouldContain
                            "tsend of 8192 bytes to ${f.addrs[1][0]}, tag 0x1"
                        val fe =
                            runCatching { future.get(10, TimeUnit.SECONDS) }
                                .exceptionOrNull()
                                .shouldBeInstanceOf<ExecutionException>()
                        (fe.cause as FabricException).code shouldBe Errno.ESHUTDOWN
                        blocker.join(10_000)
                        (blocked.get() as FabricException).code shouldBe Errno.ESHUTDOWN
                        b.domain.pendingOps shouldBe 0
                        b.domain.suspendedOps shouldBe 0
                        // After close, new operations are refused at once.
                        val late = scope.outcome { b.ep.trecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1) }
                        late.await(10_000).exceptionOrNull().shouldBeInstanceOf<FabricException>().code shouldBe
                            Errno.EOPBADSTATE
                        a.domain.pendingOps shouldBe 0
                    }
                }
            }
        }
    })
