package braid.it

import braid.core.Braid
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OneThread
import braid.core.OpFlags
import braid.core.outcome
import braid.core.suspendedOps
import braid.core.trecv
import braid.core.tsend
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.time.Duration
import kotlinx.coroutines.CoroutineScope
import org.agrona.concurrent.UnsafeBuffer

/** Many suspended operations in two real processes over shared memory. */
class ProgressMultiProcessIT :
    FunSpec({
        test(
            "10,000 suspended receives in each of two processes each get their own message over shm, with no thread per waiter"
        ) {
            val n = 10_000
            val dir = Files.createTempDirectory("braid-progress-it")
            // The child: 10,000 coroutines that each send message i, then wait suspended for reply i (automatic
            // progress).
            val child =
                ChildProcess.jvm(ProgressPeerMain::class.java.name, "pingers", "$dir", "tx", "rx", "$n")
                    .output(dir.resolve("tx.log"))
                    .start()
            try {
                val info = Braid.getInfo(Hints(provider = "shm")).first()
                Braid.fabric(info).use { fabric ->
                    val domain = fabric.domain(info) // manual progress: the waiters drive it
                    val cq = domain.completionQueue()
                    val av = domain.addressVector()
                    val ep =
                        domain.endpoint().also {
                            it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                            it.bind(av)
                            it.enable()
                        }
                    OneThread("waiters").use { t ->
                        val rx = Array(n) { UnsafeBuffer(ByteArray(ProgressPeerMain.MESSAGE)) }
                        val threads = ManagementFactory.getThreadMXBean()
                        val heapBefore = usedHeapAfterGc()
                        threads.resetPeakThreadCount()
                        val threadsBefore = threads.threadCount
                        val peer = java.util.concurrent.atomic.AtomicLong(-1)
                        val scope = CoroutineScope(t.dispatcher)
                        val waiters =
                            List(n) { i ->
                                scope.outcome {
                                    val c = ep.trecv(rx[i], 0, ProgressPeerMain.MESSAGE, FiAddr.UNSPEC, i.toLong())
                                    check(c.len == ProgressPeerMain.MESSAGE.toLong() && Pings.check(rx[i], i) == 1) {
                                        "message $i wrong: $c"
                                    }
                                    val reply = UnsafeBuffer(ByteArray(ProgressPeerMain.MESSAGE))
                                    Pings.fill(reply, i, 2)
                                    ep.tsend(reply, 0, ProgressPeerMain.MESSAGE, peer.get(), i.toLong())
                                }
                            }
                        Deadline.await("$n receives to suspend", Duration.ofSeconds(60)) { domain.suspendedOps == n }
                        val perWaiter = (usedHeapAfterGc() - heapBefore) / n
                        val extraThreads = threads.peakThreadCount - threadsBefore
                        println(
                            "$n suspended receives: $perWaiter bytes of heap each (coroutine, continuation, operation, SRX entry); $extraThreads extra threads"
                        )
                        withClue("heap per suspended receive") { perWaiter shouldBeLessThan 4096L }
                        withClue("threads started while $n receives were suspended") { extraThreads shouldBeLessThan 3 }
                        // Only now may the child send: every receive is waiting, none matched an early arrival.
                        Rendezvous.publish(dir, "rx", ep.address)
                        peer.set(av.insert(Rendezvous.lookup(dir, "tx")))
                        for (w in waiters) w.await(120_000).getOrThrow()
                        Rendezvous.mark(dir, "rx")
                    }
                    val rc = child.awaitExit(Duration.ofSeconds(120))
                    withClue(child.output()) { rc shouldBe 0 }
                    child.output() shouldContain "OK $n pings answered"
                    ep.close()
                }
            } finally {
                child.close()
            }
        }
    })

private fun usedHeapAfterGc(): Long {
    val memory = ManagementFactory.getMemoryMXBean()
    repeat(3) {
        System.gc()
        Thread.sleep(50)
    }
    return memory.heapMemoryUsage.used
}
