package braid.provider.ofi

import braid.core.Errno
import braid.core.HmemCopyFunction
import braid.core.HmemOp
import braid.core.MrAccess
import braid.core.Rail
import braid.core.TestDevice
import braid.core.TestFabric
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The native rail's override ops: `setOp` is passed to libfabric as `FI_SET_OPS_HMEM_OVERRIDE` on the native domain,
 * and its answer comes back. Every provider of Debian's libfabric 1.17 answers `-FI_ENOSYS` (only cxi implements it).
 */
class OfiHmemTest :
    FunSpec({
        val copy = HmemCopyFunction { _, _, _, _, _, _, size -> size }

        for ((name, domain) in listOf("ofi:tcp" to "lo", "ofi:shm" to null, "ofi:sockets" to "lo", "ofi:udp" to "lo")) {
            test("$name: setOp answers libfabric's own -ENOSYS for FI_SET_OPS_HMEM_OVERRIDE, and no copy is set") {
                TestFabric(rail = Rail.ofi(name, domain)).use { f ->
                    val (a, b) = f.nodes
                    // What the native domain itself says to fi_set_ops("hmem_override_ops").
                    val native = (a.domain.provider as OfiDomain).native.domain
                    val table = com.sun.jna.Memory(24).also { it.clear() }
                    val raw =
                        OfiOps.setOps(
                            native,
                            OfiHmemOverride.HMEM_OVERRIDE_OPS,
                            0,
                            com.sun.jna.Pointer.nativeValue(table),
                            0,
                        )
                    withClue("native fi_set_ops answered $raw") { raw shouldBe -OfiOps.FI_ENOSYS }
                    for (op in HmemOp.entries) {
                        a.domain.setOp(op, copy) shouldBe -Errno.ENOSYS
                        a.ep.setOp(op, copy) shouldBe -Errno.ENOSYS
                    }
                    a.domain.hmemOps.toHmem() shouldBe null
                    a.domain.hmemOps.fromHmem() shouldBe null
                    // Device memory is refused on the native rail: it does not offer Caps.HMEM.
                    TestDevice(4096).use { dev ->
                        val mr = a.domain.registerMemory(dev.iface, 0, dev.alloc(64), 64, MrAccess.SEND)
                        a.ep.trySend(mr, 0, 64, f.addrs[0][1], null) shouldBe -Errno.EOPNOTSUPP
                        mr.close()
                    }
                    b.domain.setOp(HmemOp.COPY_TO_HMEM_IOV, null) shouldBe -Errno.ENOSYS
                }
            }
        }
    })
