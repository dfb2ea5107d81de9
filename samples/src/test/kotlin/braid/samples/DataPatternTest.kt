package braid.samples

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/** [DataPattern]: what one side fills the other finds, and any change is found. */
class DataPatternTest :
    FunSpec({
        test("a filled buffer checks clean; a changed byte, another message, size or direction do not") {
            val b = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
            DataPattern.fill(b, 4096, 12, DataPattern.FROM_CLIENT)
            DataPattern.firstMismatch(b, 4096, 12, DataPattern.FROM_CLIENT) shouldBe -1
            (0 until 4096).forEach {
                DataPattern.expected(12, 4096, DataPattern.FROM_CLIENT, it).toByte() shouldBe b.getByte(it)
            }
            DataPattern.firstMismatch(b, 4096, 13, DataPattern.FROM_CLIENT) shouldNotBe -1
            DataPattern.firstMismatch(b, 4096, 12, DataPattern.FROM_SERVER) shouldNotBe -1
            DataPattern.firstMismatch(b, 2048, 12, DataPattern.FROM_CLIENT) shouldNotBe -1
            b.putByte(1000, (b.getByte(1000) + 1).toByte())
            DataPattern.firstMismatch(b, 4096, 12, DataPattern.FROM_CLIENT) shouldBe 1000
        }
    })
