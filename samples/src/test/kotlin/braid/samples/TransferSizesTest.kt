package braid.samples

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** [TransferSizes] against fi_pingpong's size lists, and the `-S` syntax. */
class TransferSizesTest :
    FunSpec({
        test("'all' is fi_pingpong's list: 0, 1, then powers of two and the size half-way above, up to 6m") {
            val all = TransferSizes.all()
            all.take(14) shouldBe listOf(0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96)
            all.takeLast(4) shouldBe listOf(2 shl 20, 3 shl 20, 4 shl 20, 6 shl 20)
            all.size shouldBe 46
            all.map { PerfFormat.sizeStr(it.toLong()) }.joinToString(" ") shouldContain "768k 1m 1.5m 2m 3m 4m 6m"
        }

        test("the default is fi_pingpong's: 64 256 1k 4k 64k 1m") {
            TransferSizes.DEFAULT.map { PerfFormat.sizeStr(it.toLong()) } shouldBe
                listOf("64", "256", "1k", "4k", "64k", "1m")
        }

        test("-S takes a byte count, binary suffixes, a comma-separated list, or all") {
            TransferSizes.parse("pingpong", "-S", "64") shouldBe listOf(64)
            TransferSizes.parse("pingpong", "-S", "64,4k,64K,1m") shouldBe listOf(64, 4096, 65536, 1048576)
            TransferSizes.parse("pingpong", "-S", "ALL") shouldBe TransferSizes.all()
            TransferSizes.parse("pingpong", "-S", TransferSizes.format(listOf(0, 7, 4096))) shouldBe listOf(0, 7, 4096)
        }

        test("a malformed size is a usage error naming the option and the value") {
            listOf("", "12q", "-1", "64,,4k", "3g").forEach { bad ->
                val e = shouldThrow<UsageException> { TransferSizes.parse("pingpong", "-S", bad) }
                e.command shouldBe "pingpong"
                e.message shouldContain "-S"
            }
        }
    })
