package braid.provider.ofi

import braid.core.Completion
import braid.core.Rail
import braid.core.TestFabric
import braid.core.matchingContract
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The matching rules every rail keeps ([matchingContract]), over native libfabric's tcp (rxm, on `lo`) and shm. The
 * contract counts progress rounds where a message must have arrived; a native provider sets its connections up on the
 * first send over many rounds (rxm: a connection handshake), so each fabric is [warmed] first: every node sends every
 * other one message and receives theirs, and the contract then starts on connected endpoints. Delivery-complete is not
 * claimed: a native message is delivered into the rail's own receive buffer, before Braid matches it.
 */
class OfiTcpMatchingTest :
    FunSpec({
        matchingContract(deliveryComplete = false) { count, eager ->
            warmed(TestFabric(count, Rail.ofi("ofi:tcp", "lo"), eagerSize = eager))
        }
    })

class OfiShmMatchingTest :
    FunSpec({
        matchingContract(deliveryComplete = false) { count, eager ->
            warmed(TestFabric(count, Rail.ofi("ofi:shm"), eagerSize = eager))
        }
    })

/** [f] with a connection between every pair of its nodes: one zero-byte message each way, received and completed. */
fun warmed(f: TestFabric): TestFabric {
    val n = f.nodes.size
    val tag = 0x7eed_0000_0000_0000L
    for (i in 0 until n) for (j in 0 until n) if (i != j) {
        f.nodes[j].ep.tryTrecv(UnsafeBuffer(ByteArray(1)), 0, 0, f.addrs[j][i], tag, 0, null)
        while (f.nodes[i].ep.tryTsend(UnsafeBuffer(ByteArray(1)), 0, 0, f.addrs[i][j], tag, null) != 0) {
            f.nodes.forEach { it.domain.progress() }
        }
    }
    val deadline = Deadline.of("every pair of ${f.rail} nodes connected", Duration.ofSeconds(20))
    var done = 0
    val c = Completion()
    while (done < 2 * n * (n - 1)) {
        deadline.check()
        for (node in f.nodes) {
            node.domain.progress()
            while (node.cq.read(c) > 0) done++
        }
    }
    return f
}

/**
 * The native rail as a link's network rail: node 0 joins shm and native tcp (`shm+ofi:tcp:lo`), node 1 native tcp
 * alone, so their messages cross the native rail under the link's shared receive context, and the matching contract
 * holds there too.
 */
class OfiLinkMatchingTest :
    FunSpec({
        matchingContract(deliveryComplete = false) { count, eager ->
            val links = List(count) { if (it == 0) "shm+ofi:tcp:lo" else "ofi:tcp:lo" }
            warmed(TestFabric(count, Rail.link(links), eagerSize = eager))
        }
    })
