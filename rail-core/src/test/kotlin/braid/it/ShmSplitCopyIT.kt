package braid.it

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.Settings
import braid.core.TestFabric
import braid.provider.shm.ShmSplitCopy
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.nio.file.Files
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * Split copies of large rendezvous messages over shm between two real processes: the receiver (this JVM) and the sender
 * ([SplitSendMain]) copy disjoint chunks of each message at once (`process_vm_readv` and `process_vm_writev`). Every
 * byte lands in place whoever copied it; a sender that does not progress leaves every chunk to the receiver; a sender
 * killed holding a chunk fails the receive with EIO instead of hanging it.
 */
class ShmSplitCopyIT :
    FunSpec({
        val shareSize = 256 shl 10
        val chunk = 64 shl 10
        val settings =
            Settings.ofEnvironment(mapOf("BRAID_SHM_SHARE_SIZE" to "$shareSize", "BRAID_SHM_SHARE_CHUNK" to "$chunk"))
        // Just under and over the share size, whole and partial chunks, 4 MiB and more, odd offsets.
        val cases =
            listOf(
                shareSize - 1 to 0,
                shareSize to 0,
                shareSize + 1 to 3,
                5 * chunk + 123 to 1,
                (1 shl 20) to 4095,
                (4 shl 20) to 0,
                (4 shl 20) + 4097 to 7,
            )
        fun splitChunks(size: Int) = if (size >= shareSize) (size + chunk - 1) / chunk else 0

        fun sender(
            dir: java.nio.file.Path,
            mode: String,
            rounds: Int,
            cases: List<Pair<Int, Int>>,
            jvm: List<String> = emptyList(),
        ) =
            ChildProcess.jvm(
                    SplitSendMain::class.java.name,
                    listOf("$dir", "tx", "rx", mode, "$rounds") + cases.map { "${it.first}@${it.second}" },
                )
                .output(dir.resolve("tx.log"))
                .jvmArgs(listOf("-Xmx256m", "-XX:MaxDirectMemorySize=512m") + jvm)
                .start()

        /** The counters of the receiving side's channel from the sender, from the endpoint's description. */
        fun counter(f: TestFabric, name: String): Long =
            Regex("$name (\\d+)").findAll(f.nodes[0].ep.describe()).sumOf { it.groupValues[1].toLong() }

        /**
         * Receives the messages of [cases] for [rounds] rounds from [tx], each at its own offset into a buffer,
         * checking every byte.
         */
        fun receiveAll(f: TestFabric, tx: Long, rounds: Int, cases: List<Pair<Int, Int>>) {
            val me = f.nodes[0]
            // The receiving side's offsets differ from the sender's.
            val buffers =
                cases.mapIndexed { i, (size, _) ->
                    UnsafeBuffer(ByteBuffer.allocateDirect(size + 64), (i * 13) % 64, size)
                }
            for (round in 0 until rounds) for ((i, c) in cases.withIndex()) {
                val seq = round * cases.size + i
                buffers[i].setMemory(0, c.first, 0)
                me.ep.tryTrecv(buffers[i], 0, c.first, tx, seq.toLong(), 0, "r$seq") shouldBe 0
                val got = me.await(1, millis = 60_000).single()
                withClue("message $seq of ${c.first} bytes: $got") {
                    got.shouldBeInstanceOf<Completion>().len shouldBe c.first.toLong()
                }
                withClue("message $seq of ${c.first} bytes") {
                    Traffic.check(buffers[i], SplitSendMain.SENDER, seq, c.first) shouldBe -1
                }
            }
        }

        test("split copies land every byte in place across sizes and offsets, and both processes copied chunks") {
            val dir = Files.createTempDirectory("braid-it")
            // Both copy in every split whatever the scheduler does: the receiver takes its first chunk, then waits for
            // the sender to push one before it pulls.
            ShmSplitCopy.testReceiverAwaitsPush = true
            TestFabric(1, settings = settings).use { f ->
                Rendezvous.publish(dir, "rx", f.nodes[0].ep.address)
                val rounds = 3
                val kid = sender(dir, "drive", rounds, cases)
                try {
                    val tx = f.nodes[0].av.insert(Rendezvous.lookup(dir, "tx"))
                    receiveAll(f, tx, rounds, cases)
                    Rendezvous.mark(dir, "rx")
                    val out = kid.awaitOk(Duration.ofSeconds(120))
                    val pushed = Regex("PUSHED (\\d+)").find(out)!!.groupValues[1].toLong()
                    val chunks = rounds * cases.sumOf { splitChunks(it.first) }.toLong()
                    val describe = f.nodes[0].ep.describe()
                    withClue(describe) {
                        counter(f, "split copies") shouldBe rounds * cases.count { it.first >= shareSize }.toLong()
                        pushed shouldBeGreaterThan 0L // the sender helped
                        counter(f, "chunks pulled") shouldBeGreaterThan 0L // and so did the receiver
                        counter(f, "chunks pulled") + pushed shouldBe chunks
                    }
                } finally {
                    ShmSplitCopy.testReceiverAwaitsPush = false
                    kid.close()
                }
            }
        }

        test(
            "a sender that posts its sends and never progresses again still has them received: the receiver copies every chunk"
        ) {
            val dir = Files.createTempDirectory("braid-it")
            TestFabric(1, settings = settings).use { f ->
                Rendezvous.publish(dir, "rx", f.nodes[0].ep.address)
                val kid = sender(dir, "idle", 1, cases)
                try {
                    val tx = f.nodes[0].av.insert(Rendezvous.lookup(dir, "tx"))
                    val deadline = Deadline.of("the sender to post its sends", Duration.ofSeconds(60))
                    while ("POSTED" !in kid.output()) {
                        f.nodes[0].domain.progress()
                        deadline.check { kid.output() }
                    }
                    receiveAll(f, tx, 1, cases)
                    withClue(f.nodes[0].ep.describe()) {
                        counter(f, "split copies") shouldBe cases.count { it.first >= shareSize }.toLong()
                        counter(f, "chunks pulled") shouldBe cases.sumOf { splitChunks(it.first) }.toLong()
                    }
                    kid.isAlive shouldBe true // it was there all along, just not progressing
                } finally {
                    kid.close()
                }
            }
        }

        test("a sender killed while it holds a chunk of a split copy fails that receive with EIO, without a hang") {
            val dir = Files.createTempDirectory("braid-it")
            TestFabric(1, settings = settings).use { f ->
                val me = f.nodes[0]
                Rendezvous.publish(dir, "rx", me.ep.address)
                // The sender stops for ever once it claims its first chunk; large messages give it the time to claim
                // one.
                val size = 32 shl 20
                val rounds = 20
                val kid =
                    sender(dir, "drive", rounds, listOf(size to 0), jvm = listOf("-Dbraid.shm.testStallInPush=true"))
                // This thread is held inside the receive's copy while the sender holds its chunk: another one kills it.
                val killer =
                    Thread {
                            val deadline = Deadline.of("the sender to claim a chunk", Duration.ofSeconds(120))
                            while ("CLAIMED CHUNK" !in kid.output() && !deadline.expired()) Thread.sleep(5)
                            kid.process().destroyForcibly()
                        }
                        .apply {
                            isDaemon = true
                            start()
                        }
                try {
                    val tx = me.av.insert(Rendezvous.lookup(dir, "tx"))
                    val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                    var received = 0
                    var failed: CompletionError? = null
                    while (failed == null) {
                        received shouldBeLessThan rounds
                        me.ep.tryTrecv(buffer, 0, size, tx, received.toLong(), 0, "r$received") shouldBe 0
                        when (val got = me.await(1, millis = 60_000).single()) {
                            is CompletionError -> failed = got
                            else -> {
                                Traffic.check(buffer, SplitSendMain.SENDER, received, size) shouldBe -1
                                received++
                            }
                        }
                    }
                    killer.join(10_000)
                    withClue(kid.output()) { ("CLAIMED CHUNK" in kid.output()) shouldBe true }
                    val err = failed!!
                    err.err shouldBe Errno.EIO
                    err.context shouldBe "r$received"
                    err.message shouldContain "died"
                    counter(f, "split copies") shouldBeGreaterThan received.toLong() - 1
                } finally {
                    kid.close()
                }
            }
        }
    })
