package braid.provider.tcp

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.util.Random
import java.util.zip.CRC32C
import org.agrona.concurrent.UnsafeBuffer

/**
 * The frame decoder against hostile input: random bytes and mutated valid frame streams, cut into reads at random
 * places, with a deterministic seed. Nothing may escape as an exception, every call must consume input or return (no
 * hang), a refused stream must say why, and a valid stream must come out frame for frame whatever the cuts.
 */
class TcpFrameFuzzTest :
    FunSpec({
        val maxEager = 4096
        val limits =
            TcpFrameAdapter.Limits { type ->
                when (type) {
                    TcpFrameDescriptor.EAGER -> maxEager
                    TcpFrameDescriptor.DATA -> 1 shl 20
                    in TcpFrameDescriptor.HELLO..TcpFrameDescriptor.REJECT -> HandshakeDescriptor.payloadLimit(type)
                    else -> 0
                }
            }

        /** Records frames; sinks payloads into a scratch buffer, keeping a random prefix, like a truncating receive. */
        class Recorder(private val random: Random) : TcpFrameAdapter.Handler {
            val frames = ArrayList<String>()
            private val scratch = UnsafeBuffer(ByteArray(1 shl 20))

            override fun onHeader(a: TcpFrameAdapter): Int {
                if (a.payloadLength > 0) a.sinkTo(scratch, 0, random.nextInt(a.payloadLength + 1))
                return TcpFrameAdapter.CONTINUE
            }

            override fun onFrame(a: TcpFrameAdapter): Int {
                frames += "${a.type}/${a.flags}/${a.payloadLength}/${a.msgId}/${a.tag}/${a.value}"
                return TcpFrameAdapter.CONTINUE
            }
        }

        /** A stream of [count] valid frames of random types and sizes, and the record of each. */
        fun validStream(random: Random, count: Int): Pair<ByteArray, List<String>> {
            val memory = ByteBuffer.allocateDirect(TcpFrameDescriptor.HEADER_LENGTH)
            val header = UnsafeBuffer(memory)
            val crc = CRC32C()
            val out = java.io.ByteArrayOutputStream()
            val expected = ArrayList<String>()
            repeat(count) {
                val type =
                    listOf(
                        TcpFrameDescriptor.EAGER,
                        TcpFrameDescriptor.RTS,
                        TcpFrameDescriptor.CTS,
                        TcpFrameDescriptor.DATA,
                        TcpFrameDescriptor.ACK,
                        TcpFrameDescriptor.CREDIT,
                        TcpFrameDescriptor.HEARTBEAT,
                    )[random.nextInt(7)]
                val length =
                    when (type) {
                        TcpFrameDescriptor.EAGER ->
                            random.nextInt(maxEager + 1).let { if (random.nextBoolean()) it % 64 else it }
                        TcpFrameDescriptor.DATA -> random.nextInt(20_000)
                        else -> 0
                    }
                val flags = random.nextInt(8)
                val msgId = random.nextLong()
                val tag = random.nextLong()
                val value = if (type == TcpFrameDescriptor.EAGER) length.toLong() else random.nextLong()
                TcpFrameDescriptor.putHeader(
                    header,
                    memory,
                    crc,
                    0,
                    type,
                    flags,
                    length,
                    random.nextInt().toLong() and 0xffff_ffffL,
                    msgId,
                    tag,
                    random.nextLong(),
                    value,
                )
                val h = ByteArray(TcpFrameDescriptor.HEADER_LENGTH).also { header.getBytes(0, it) }
                out.write(h)
                out.write(ByteArray(length).also { random.nextBytes(it) })
                expected += "$type/$flags/$length/$msgId/$tag/$value"
            }
            return out.toByteArray() to expected
        }

        /**
         * Feeds [bytes] to a fresh adapter in random cuts. Returns the recorder and the adapter. Fails the test if a
         * call throws or returns without consuming while input is left.
         */
        fun feed(bytes: ByteArray, random: Random): Pair<Recorder, TcpFrameAdapter> {
            val adapter = TcpFrameAdapter(limits)
            val recorder = Recorder(random)
            val direct = ByteBuffer.allocateDirect(bytes.size + 1)
            direct.put(bytes).flip()
            var calls = 0
            while (direct.hasRemaining()) {
                val cut = minOf(direct.remaining(), 1 + random.nextInt(if (random.nextInt(4) == 0) 8 else 4096))
                val slice = direct.duplicate().limit(direct.position() + cut) as ByteBuffer
                val before = slice.position()
                val rc = adapter.decode(slice, recorder)
                calls++
                check(calls < bytes.size + 10) { "decoder did not make progress" }
                if (rc == TcpFrameAdapter.FAIL) break
                check(slice.position() > before || cut == 0) { "decoder consumed nothing from $cut bytes" }
                direct.position(slice.position())
            }
            return recorder to adapter
        }

        test("a valid frame stream decodes frame for frame however it is cut into reads") {
            val random = Random(20_251_121)
            repeat(2_000) { case ->
                val (bytes, expected) = validStream(random, 1 + random.nextInt(8))
                val (recorder, adapter) = feed(bytes, random)
                withClue("case $case: ${adapter.error}") {
                    adapter.error shouldBe null
                    recorder.frames shouldBe expected
                    adapter.midFrame shouldBe false
                }
            }
        }

        test("random bytes never throw, never hang, and a refused stream says why") {
            val random = Random(7)
            var refused = 0
            repeat(5_000) {
                val bytes = ByteArray(random.nextInt(400)).also { random.nextBytes(it) }
                if (random.nextInt(3) == 0 && bytes.isNotEmpty()) bytes[0] = TcpFrameDescriptor.MAGIC.toByte()
                if (random.nextInt(3) == 0 && bytes.size > 1) bytes[1] = TcpFrameDescriptor.VERSION.toByte()
                val (_, adapter) = feed(bytes, random)
                if (adapter.error != null) {
                    refused++
                    adapter.error!! shouldContain "at byte"
                } else {
                    (bytes.size < TcpFrameDescriptor.HEADER_LENGTH) shouldBe
                        true // only a header not yet complete can leave it undecided
                }
            }
            (refused > 3_000) shouldBe true
        }

        test("mutated valid streams (flipped, inserted, deleted bytes, truncation) never throw or hang") {
            val random = Random(42)
            repeat(5_000) { case ->
                val (valid, _) = validStream(random, 1 + random.nextInt(6))
                val bytes = valid.toMutableList()
                repeat(1 + random.nextInt(4)) {
                    if (bytes.isEmpty()) return@repeat
                    val at = random.nextInt(bytes.size)
                    when (random.nextInt(4)) {
                        0 -> bytes[at] = (bytes[at].toInt() xor (1 shl random.nextInt(8))).toByte()
                        1 -> bytes.add(at, random.nextInt().toByte())
                        2 -> bytes.removeAt(at)
                        else -> while (bytes.size > at) bytes.removeAt(bytes.size - 1)
                    }
                }
                val (_, adapter) = feed(bytes.toByteArray(), random)
                withClue("case $case") { if (adapter.error != null) adapter.error!! shouldContain "at byte" }
            }
        }

        test("any single changed bit in a header is caught before the frame is acted on") {
            val random = Random(99)
            repeat(3_000) { case ->
                val (valid, _) = validStream(random, 1)
                val bit = random.nextInt(TcpFrameDescriptor.HEADER_LENGTH * 8)
                valid[bit / 8] = (valid[bit / 8].toInt() xor (1 shl (bit % 8))).toByte()
                val (recorder, adapter) = feed(valid, random)
                withClue("case $case, bit $bit") {
                    adapter.error.shouldNotBeNull()
                    recorder.frames shouldBe emptyList()
                }
            }
        }

        test("handshake frames must have their exact sizes and data frames their limits") {
            val random = Random(3)
            val memory = ByteBuffer.allocateDirect(TcpFrameDescriptor.HEADER_LENGTH)
            val header = UnsafeBuffer(memory)
            for ((type, length) in
                listOf(
                    TcpFrameDescriptor.EAGER to maxEager + 1,
                    TcpFrameDescriptor.CTS to 1,
                    TcpFrameDescriptor.HELLO to HandshakeDescriptor.HELLO_LENGTH + 1,
                    99 to 0,
                )) {
                TcpFrameDescriptor.putHeader(header, memory, CRC32C(), 0, type, 0, length, 0, 1, 0, 0, 0)
                val (_, adapter) =
                    feed(ByteArray(TcpFrameDescriptor.HEADER_LENGTH).also { header.getBytes(0, it) }, random)
                withClue("type $type, $length bytes") { adapter.error.shouldNotBeNull() }
            }
        }
    })
