package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import org.agrona.concurrent.UnsafeBuffer

/**
 * A refused operation's message names the one cause that is true: an address not in the AV, or a region outside the
 * buffer.
 */
class RefusalMessageTest :
    FunSpec({
        test("a send to an fi_addr not in the address vector says so, and not that the buffer region does not fit") {
            val info = Braid.getInfo(Hints(provider = "shm")).first()
            val fabric = Braid.fabric(info)
            try {
                val a = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
                a.ep.enable()
                val e =
                    shouldThrow<ExecutionException> {
                        a.ep.sendAsync(UnsafeBuffer(ByteArray(64)), 0, 64, 12345).get(10, TimeUnit.SECONDS)
                    }
                val cause = e.cause as FabricException
                cause.code shouldBe Errno.EINVAL
                cause.message shouldContain "address 12345 is not in the address vector"
                cause.message shouldNotContain "buffer region"
                val self = a.av.insert(a.ep.address)
                val r =
                    shouldThrow<ExecutionException> {
                        a.ep.sendAsync(UnsafeBuffer(ByteArray(64)), 32, 64, self).get(10, TimeUnit.SECONDS)
                    }
                r.cause!!.message shouldContain "the buffer region [32, 96) does not fit a buffer of 64 bytes"
                r.cause!!.message shouldNotContain "address vector"
            } finally {
                fabric.close()
            }
        }
    })
