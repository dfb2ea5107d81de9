package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/**
 * Endpoint.pauseStats leaves traffic out of Endpoint.stats (a benchmark's warm-up), on a plain rail and on a link's
 * rails.
 */
class EndpointStatsPauseTest :
    FunSpec({
        for ((name, hints) in
            listOf(
                "shm" to Hints(provider = "shm"),
                "link" to Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, "shm+tcp:lo"),
            )) {
            test("$name: messages sent while the statistics are paused are not counted; those after resuming are") {
                val info = Braid.getInfo(hints).first()
                val fabric = Braid.fabric(info)
                try {
                    val a = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
                    val b = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
                    a.ep.enable()
                    b.ep.enable()
                    val aToB = a.av.insert(b.ep.address)
                    fun exchange(n: Int) =
                        ProgressEngine.thread(b.domain).use {
                            runBlocking {
                                withTimeout(30_000) {
                                    repeat(n) {
                                        val r =
                                            async(Dispatchers.Default) {
                                                b.ep.recv(ByteBuffer.allocate(8), FiAddr.UNSPEC)
                                            }
                                        a.ep.send(ByteBuffer.wrap("abc".toByteArray()), aToB)
                                        r.await()
                                    }
                                }
                            }
                        }
                    fun sent() = a.ep.stats().rails.sumOf { it.messagesSent }
                    fun received() = b.ep.stats().rails.sumOf { it.messagesReceived }
                    exchange(2)
                    val before = sent()
                    a.ep.pauseStats()
                    b.ep.pauseStats()
                    exchange(5)
                    a.ep.resumeStats()
                    b.ep.resumeStats()
                    sent() shouldBe before
                    exchange(3)
                    sent() shouldBe before + 3
                    received() shouldBe before + 3
                    a.ep.resumeStats() // not paused: nothing changes
                    sent() shouldBe before + 3
                } finally {
                    fabric.close()
                }
            }
        }
    })
