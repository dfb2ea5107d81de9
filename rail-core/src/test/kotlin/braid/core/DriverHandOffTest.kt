package braid.core

import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.atomic.AtomicReference
import kotlin.concurrent.thread
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/**
 * The manual-progress driver handing its role to a thread blocked on the domain and back: whatever waits — a suspended
 * coroutine, an outstanding future — is driven again once the blocked thread leaves.
 */
class DriverHandOffTest :
    FunSpec({
        test("a suspended receive is still driven after a thread joining a future beside it leaves") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                val hub = b.domain.hub
                // A thread blocked joining a receive future on b: it drives b's progress while it waits.
                val joined = b.ep.trecvAsync(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 31)
                val joiner = thread(name = "joiner") { joined.join() }
                Deadline.await("the joiner to block on b") { hub.anyBlocked }
                // A coroutine suspended in a receive on b, beside it, in runBlocking.
                val got = AtomicReference<Any>()
                val receiver =
                    thread(name = "suspended receiver") {
                        got.set(
                            runCatching {
                                    runBlocking { b.ep.trecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 32) }
                                }
                                .fold({ it }, { it })
                        )
                    }
                Deadline.await("the receive to suspend") { hub.suspendedWaiters == 1 }
                // Its driver has looked a few times and found the joiner blocked.
                val rounds = hub.driverRounds
                Deadline.await("the drivers to run a few rounds") { hub.driverRounds >= rounds + 3 }
                // The joiner's message comes, and it leaves; only then does the suspended receive's message come:
                // nobody but a driver drives b now.
                a.ep.tinjectAsync(buf("joined"), 0, 6, toB, 31).join()
                joiner.join(30_000)
                joiner.isAlive shouldBe false
                a.ep.tinjectAsync(buf("later"), 0, 5, toB, 32).join()
                receiver.join(30_000)
                withClue("the suspended receive was left with no driver once the joiner left") {
                    receiver.isAlive shouldBe false
                }
                (got.get() as Completion).len shouldBe 5L
            }
        }
    })
