package braid.samples

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * [PerfFormat] against fi_pingpong's own output (libfabric 1.17, `fi_pingpong -p shm -e rdm`): every expected string
 * below was printed by fi_pingpong, and every row is rebuilt from the elapsed microseconds its numbers imply.
 */
class PerfFormatTest :
    FunSpec({
        test("sizes: powers of 1024, one truncated fractional digit only below 10") {
            mapOf(
                    0L to "0",
                    1L to "1",
                    20L to "20",
                    960L to "960",
                    1024L to "1k",
                    1280L to "1.2k",
                    1536L to "1.5k",
                    1800L to "1.7k",
                    3840L to "3.7k",
                    9600L to "9.3k",
                    12800L to "12k",
                    128000L to "125k",
                    983040L to "960k",
                    1048576L to "1m",
                    1228800L to "1.1m",
                    1310720L to "1.2m",
                    6291456L to "6m",
                    12582912L to "12m",
                    209715200L to "200m",
                    1288490188L to "1.1g",
                    20971520000L to "19g",
                )
                .forEach { (size, text) -> PerfFormat.sizeStr(size) shouldBe text }
        }

        test("counts: powers of 1000, truncated, no fraction") {
            mapOf(
                    0L to "0",
                    10L to "10",
                    100L to "100",
                    999L to "999",
                    1000L to "1k",
                    1999L to "1k",
                    10_000L to "10k",
                    100_000L to "100k",
                    1_000_000L to "1m",
                    2_500_000_000L to "2b",
                )
                .forEach { (count, text) -> PerfFormat.countStr(count) shouldBe text }
        }

        test("the header is fi_pingpong's, character for character") {
            PerfFormat.HEADER shouldBe "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec"
        }

        test("rows are fi_pingpong's, character for character") {
            // (size, iterations, elapsed microseconds) -> the row fi_pingpong printed.
            PerfFormat.row(64, 1000, 1000, 2_138_000) shouldBe
                "64      1k      =1k      125k        0.00s     59.87       1.07       0.94"
            PerfFormat.row(64, 100, 100, 380_000) shouldBe
                "64      100     =100     12k         0.00s     33.68       1.90       0.53"
            PerfFormat.row(1536, 10, 10, 47_000) shouldBe
                "1.5k    10      =10      30k         0.00s    653.62       2.35       0.43"
            PerfFormat.row(3072, 10, 10, 45_000) shouldBe
                "3k      10      =10      60k         0.00s   1365.33       2.25       0.44"
            PerfFormat.row(65536, 10, 10, 498_000) shouldBe
                "64k     10      =10      1.2m        0.00s   2631.97      24.90       0.04"
        }

        test("a count the peer did not acknowledge shows as + or -") {
            PerfFormat.row(64, 100, 90, 380_000).substring(16, 25) shouldBe "+10      "
            PerfFormat.row(64, 100, 110, 380_000).substring(16, 25) shouldBe "-10      "
        }
    })
