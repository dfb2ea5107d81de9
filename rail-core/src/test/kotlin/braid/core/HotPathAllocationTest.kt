package braid.core

import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/**
 * Once warm, the shm hot path allocates nothing per message: a ping-pong of eager and rendezvous messages between two
 * endpoints, raw and through the `suspend` forms' inline path, counted with the JVM's per-thread allocation counter
 * (bytes, not time).
 */
class HotPathAllocationTest :
    FunSpec({
        test("a warm ping-pong allocates nothing per message, eager or rendezvous") {
            TestFabric(eagerSize = 1024).use { f -> pingPongAllocatesNothing(f, listOf(64, 64 * 1024)) { 20_000 } }
        }

        test("a warm ping-pong of messages large enough for a split copy allocates nothing per message") {
            // One thread drives both ends, so each receiver copies every chunk and each sender's
            // SHARE comes late: both sides' code runs, the sender's push finding the split over.
            val split =
                Settings.ofEnvironment(mapOf("BRAID_SHM_SHARE_SIZE" to "65536", "BRAID_SHM_SHARE_CHUNK" to "16384"))
            TestFabric(eagerSize = 1024, settings = split).use { f ->
                pingPongAllocatesNothing(f, listOf(256 * 1024)) { 2_000 }
            }
        }

        test("suspend sends, injects and receives that complete without suspending allocate nothing per message") {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                val toA = f.addrs[1][0]
                val out = UnsafeBuffer(ByteBuffer.allocateDirect(64))
                val inA = UnsafeBuffer(ByteBuffer.allocateDirect(64))
                val inB = UnsafeBuffer(ByteBuffer.allocateDirect(64))
                val sent = Completion()
                val got = Completion()
                // One thread plays both sides: each message is in the ring before its receive is
                // posted, so every operation completes in the first inline poll of its caller.
                fun rounds(n: Int) = runBlocking {
                    for (i in 0 until n) {
                        a.ep.tsend(out, 0, 64, toB, 1, sent)
                        b.ep.trecv(inB, 0, 64, toA, 1, into = got)
                        check(got.len == 64L && got.tag == 1L) { "round $i: tagged receive got $got" }
                        b.ep.inject(out, 0, 32, toA)
                        a.ep.recv(inA, 0, 64, toB, got)
                        check(got.len == 32L) { "round $i: receive got $got" }
                    }
                }
                val n = 20_000
                rounds(n)
                val allocated = SteadyAllocation.least(3, n * 2L - 1) { rounds(n) }
                withClue("$allocated bytes allocated over ${n * 2} messages (${n * 4} suspend calls)") {
                    (allocated / (n * 2)) shouldBeLessThan 1L
                }
                a.domain.pendingOps shouldBe 0
                b.domain.pendingOps shouldBe 0
                a.domain.suspendedOps shouldBe 0
            }
        }

        test(
            "suspend forms with ByteBuffers, heap and direct, that complete without suspending allocate nothing per message"
        ) {
            TestFabric().use { f ->
                val (a, b) = f.nodes
                val toB = f.addrs[0][1]
                val toA = f.addrs[1][0]
                val out = ByteBuffer.allocate(64)
                val inA = ByteBuffer.allocateDirect(64)
                val inB = ByteBuffer.allocate(64)
                val got = Completion()
                fun rounds(n: Int) = runBlocking {
                    for (i in 0 until n) {
                        a.ep.tsend(out, toB, 1, got)
                        b.ep.trecv(inB, toA, 1, into = got)
                        check(got.len == 64L) { "round $i: tagged receive got $got" }
                        b.ep.senddata(out, 7, toA, got)
                        a.ep.recv(inA, toB, got)
                        check(got.len == 64L && got.data == 7L) { "round $i: receive got $got" }
                    }
                }
                val n = 20_000
                rounds(n)
                val allocated = SteadyAllocation.least(3, n * 2L - 1) { rounds(n) }
                withClue("$allocated bytes allocated over ${n * 2} messages (${n * 4} suspend calls)") {
                    (allocated / (n * 2)) shouldBeLessThan 1L
                }
                a.domain.pendingOps shouldBe 0
                b.domain.pendingOps shouldBe 0
            }
        }
    })
