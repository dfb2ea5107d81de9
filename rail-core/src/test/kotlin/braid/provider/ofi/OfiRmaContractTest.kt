package braid.provider.ofi

import braid.core.Rail
import braid.core.TestFabric
import braid.core.rmaContract
import io.kotest.core.spec.style.FunSpec

/**
 * Braid's RMA contract over native RMA and atomics: `ofi:tcp` (rxm's RMA, and the atomics rxm emulates when asked for
 * FI_ATOMIC), `ofi:sockets` and `ofi:shm` (FI_MR_VIRT_ADDR: regions keyed by their address). Native receive buffers of
 * 3 MiB let the contract's largest transfer (2.5 MB) pass the rail's message-size limit.
 */
class OfiRmaContractTest :
    FunSpec({
        val settings = TestFabric.SETTINGS.with(OfiParams.RECV_SIZE, 3 shl 20).with(OfiParams.RECV_COUNT, 1)
        for ((name, domain) in listOf("ofi:tcp" to "lo", "ofi:sockets" to "lo", "ofi:shm" to null)) {
            rmaContract("$name: ", targetChecks = false) { count ->
                TestFabric(count, Rail.ofi(name, domain), settings = settings)
            }
        }
    })
