package braid.provider.ofi

import braid.core.Rail
import braid.core.TestFabric
import braid.core.pingPongAllocatesNothing
import io.kotest.core.spec.style.FunSpec

/**
 * Once warm, the native rail's hot path allocates nothing per message: a ping-pong between two endpoints over native
 * shm and native tcp (rxm), counted with the JVM's per-thread allocation counter (bytes, not time). Every native call
 * on that path goes through a prepared [OfiCall]; completions are read into the rail's own native arena; a message that
 * finds its receive posted is copied straight into it; the liveness check reads no clock per poll.
 */
class OfiHotPathAllocationTest :
    FunSpec({
        for ((name, domain) in listOf("ofi:shm" to null, "ofi:tcp" to "lo")) {
            test("$name: a warm ping-pong allocates nothing per message, small or up to the native receive size") {
                TestFabric(rail = Rail.ofi(name, domain)).use { f ->
                    pingPongAllocatesNothing(f, listOf(64, 16 * 1024)) { size -> if (size > 1024) 2_000 else 10_000 }
                }
            }
        }
    })
