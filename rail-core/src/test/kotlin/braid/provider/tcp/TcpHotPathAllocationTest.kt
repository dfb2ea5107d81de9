package braid.provider.tcp

import braid.core.Rail
import braid.core.TestFabric
import braid.core.pingPongAllocatesNothing
import io.kotest.core.spec.style.FunSpec

/**
 * Once warm, the tcp hot path allocates nothing per message: a ping-pong of eager and rendezvous messages between two
 * endpoints over 127.0.0.1, counted with the JVM's per-thread allocation counter (bytes, not time). The keepalive
 * threads allocate on their own threads.
 */
class TcpHotPathAllocationTest :
    FunSpec({
        test("a warm tcp ping-pong allocates nothing per message, eager or rendezvous") {
            TestFabric(rail = Rail.TCP, eagerSize = 1024).use { f ->
                pingPongAllocatesNothing(f, listOf(64, 256 * 1024)) { size -> if (size > 1024) 2_000 else 20_000 }
            }
        }
    })
