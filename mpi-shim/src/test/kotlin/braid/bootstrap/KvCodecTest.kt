package braid.bootstrap

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlin.random.Random

class KvCodecTest :
    FunSpec({
        fun roundTrip(value: ByteArray, limit: Int): List<Pair<String, String>> {
            val parts = KvCodec.encode("addr", 3, value, limit)
            val store = parts.toMap()
            KvCodec.decode("addr", 3) { store[it] }.contentEquals(value) shouldBe true
            return parts
        }

        test(
            "values of every length around the launcher's limit come back whole, each launcher value within the limit"
        ) {
            val random = Random(7)
            for (size in
                listOf(0, 1, 2, 700, 765, 766, 767, 768, 1021, 1022, 1023, 1024, 1025, 3000, 10_240, 100_000)) {
                val value = random.nextBytes(size)
                val parts = roundTrip(value, 1023)
                parts.forEach { (k, v) ->
                    (v.length <= 1023) shouldBe true
                    (k.length <= 64) shouldBe true
                    v.any { it == ' ' || it == '=' || it == ';' || it == '\n' } shouldBe false
                }
            }
        }

        test("a 10 KiB value splits into several launcher keys, the base key naming how many") {
            val parts = roundTrip(ByteArray(10_240) { it.toByte() }, 1023)
            (parts.size > 10) shouldBe true
            parts[0].first shouldBe "addr@3"
            parts[0].second.substringBefore('.') shouldBe parts.size.toString()
            parts[1].first shouldBe "addr@3#1"
        }

        test("a missing part is an error naming the rank, the key and the part, never a short value") {
            val parts = KvCodec.encode("addr", 2, ByteArray(5000) { 1 }, 1023).toMap().toMutableMap()
            parts.remove("addr@2#3")
            shouldThrow<BootstrapException> { KvCodec.decode("addr", 2) { parts[it] } }.message shouldContain
                "part 3 of"
        }

        test("a value a launcher truncated is refused") {
            val parts = KvCodec.encode("addr", 0, ByteArray(50) { 9 }, 1023).toMap()
            val cut = parts.mapValues { it.value.dropLast(1) }
            shouldThrow<BootstrapException> { KvCodec.decode("addr", 0) { cut[it] } }.message shouldContain
                "does not decode"
        }

        test("a key nobody put is an error naming rank and key") {
            shouldThrow<BootstrapException> { KvCodec.decode("addr", 5) { null } }.message shouldContain
                "rank 5 put nothing under key 'addr'"
        }

        test("keys with spaces, '=' or ';', or too long for the launcher, are refused with the reason") {
            shouldThrow<BootstrapException> { KvCodec.checkKey("a b", 64) }.message shouldContain "letters, digits"
            shouldThrow<BootstrapException> { KvCodec.checkKey("a=b", 64) }
            shouldThrow<BootstrapException> { KvCodec.checkKey("a;b", 64) }
            shouldThrow<BootstrapException> { KvCodec.checkKey("k".repeat(50), 64) }.message shouldContain "46 at most"
            KvCodec.checkKey("addr.rail-0:tcp", 64)
        }
    })
