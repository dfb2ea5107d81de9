package braid.core

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/**
 * A receive directed at a peer endpoint that closed while its process lives on fails, as it does for a dead process
 * (issue 11, item 6): nothing can arrive for it any more.
 */
class ClosedPeerTest :
    FunSpec({
        // A link's shm rail is the same code, but the link routes by its own addresses and fans a
        // rail's peer-down out to them: both are checked.
        val rails =
            listOf<Pair<String, () -> TestFabric>>(
                "shm" to { TestFabric(2) },
                "link over its shm rail" to { TestFabric(rail = Rail.link("shm+tcp:lo", "shm+tcp:lo")) },
            )
        for ((rail, open) in rails) {
            test("$rail: a receive directed at a closed endpoint of a live process fails with EHOSTDOWN") {
                open().use { f ->
                    val (me, peer) = f.nodes
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 5, 0, "directed") shouldBe 0
                    repeat(100) { me.domain.progress() }
                    peer.ep.close()
                    me.directedReceiveFailsClosed(viaLink = rail != "shm")
                }
            }

            test(
                "$rail: a receive directed at a peer that sent before and then closed its endpoint fails with EHOSTDOWN"
            ) {
                open().use { f ->
                    val (me, peer) = f.nodes
                    peer.ep.tryTsend(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[1][0], 1, "sent") shouldBe 0
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 1, 0, "first") shouldBe 0
                    (me.await(1, others = listOf(peer)).single() as Completion).context shouldBe "first"
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 5, 0, "directed") shouldBe 0
                    peer.ep.close()
                    me.directedReceiveFailsClosed(viaLink = rail != "shm")
                }
            }
        }
    })

/**
 * The receive posted with context "directed" fails: EHOSTDOWN, saying the peer closed its endpoint (shm). Through a
 * link the receive also made its tcp rail connect to the peer, which may report first that the closed endpoint refused
 * the connection, reset it or closed it (the connection was accepted as the endpoint closed).
 */
private fun TestFabric.Node.directedReceiveFailsClosed(viaLink: Boolean) {
    val e = await(1, millis = 10_000).single() as CompletionError
    e.context shouldBe "directed"
    e.err shouldBe Errno.EHOSTDOWN
    if (viaLink && "tcp: peer" in e.message) {
        withClue(e.message) {
            listOf("refused the connection", "reset the connection", "closed the connection").any {
                it in e.message
            } shouldBe true
        }
    } else {
        e.message shouldContain "shm: peer"
        e.message shouldContain "closed its endpoint"
    }
}
