package braid.provider.shm

import braid.core.Completion
import braid.core.Settings
import braid.core.TestFabric
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Which way a rendezvous message crosses shm, by [ShmParams.PULL_SIZE]: below it the sender streams fragments of
 * [ShmParams.FRAG_SIZE] through the bulk ring (so the receive completes only once the sender is driven too); from it on
 * the receiver pulls the message itself with one copy (so the receive completes with the sender idle). Either way every
 * byte lands in place.
 */
class ShmRendezvousPathTest :
    FunSpec({
        val pullSize = 64 shl 10

        fun fabric() =
            TestFabric(
                2,
                eagerSize = 1024,
                ringCapacity = 1 shl 16,
                settings =
                    Settings.ofEnvironment(mapOf("BRAID_SHM_PULL_SIZE" to "$pullSize", "BRAID_SHM_FRAG_SIZE" to "1000")),
            )

        /**
         * Posts a receive on node 1 and a send of [size] patterned bytes from node 0; returns (source, destination).
         */
        fun post(f: TestFabric, size: Int): Pair<UnsafeBuffer, UnsafeBuffer> {
            val src = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            val dst = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            for (i in 0 until size) src.putByte(i, (i * 31 + 7).toByte())
            f.nodes[1].ep.tryTrecv(dst, 0, size, f.addrs[1][0], 5L, 0L, "recv") shouldBe 0
            f.nodes[0].ep.tryTsend(src, 0, size, f.addrs[0][1], 5L, "send") shouldBe 0
            return src to dst
        }

        fun receiverOnly(f: TestFabric, polls: Int): List<Completion> {
            val r = f.nodes[1]
            val got = ArrayList<Completion>()
            repeat(polls) {
                if (r.cq.read(r.entry) == 1)
                    got +=
                        Completion().also {
                            it.context = r.entry.context
                            it.len = r.entry.len
                        }
            }
            return got
        }

        test(
            "a rendezvous message below shm.pull_size streams in fragments: its receive waits for the sender, then holds every byte"
        ) {
            fabric().use { f ->
                val size = pullSize - 1 // 66 fragments of 1000 bytes (the last one short)
                val (src, dst) = post(f, size)
                receiverOnly(f, 2_000).shouldBeEmpty()
                (f.nodes[1].await(1, others = listOf(f.nodes[0])).single() as Completion).len shouldBe size.toLong()
                f.nodes[0].await(1, others = listOf(f.nodes[1]))
                dst.compareTo(src) shouldBe 0
            }
        }

        test(
            "a rendezvous message of shm.pull_size or more is pulled by the receiver alone, then completes at the sender"
        ) {
            fabric().use { f ->
                val size = pullSize
                val (src, dst) = post(f, size)
                val got = receiverOnly(f, 2_000)
                got.size shouldBe 1
                got.single().len shouldBe size.toLong()
                dst.compareTo(src) shouldBe 0
                (f.nodes[0].await(1).single() as Completion).context shouldBe "send"
            }
        }
    })
