package braid.provider.ofi

import braid.core.Braid
import braid.core.Caps
import braid.core.CompletionError
import braid.core.FabricException
import braid.core.Hints
import braid.core.MrAccess
import braid.core.Rail
import braid.core.TestFabric
import braid.core.direct
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Native memory registration, its cache, and what native RMA answers where Braid's contract cannot hold a native target
 * (OfiRmaContractTest runs the contract itself).
 */
class OfiRmaTest :
    FunSpec({
        test(
            "ofi:tcp, ofi:sockets and ofi:shm (FI_MR_VIRT_ADDR: regions keyed by their address) claim RMA and atomics"
        ) {
            for (p in listOf("ofi:tcp:lo", "ofi:sockets:lo", "ofi:shm")) {
                val caps = Braid.getInfo(Hints(provider = p)).first().caps
                (caps and Caps.RMA_ALL) shouldBe Caps.RMA_ALL
            }
            // In a link the native rail carries messages only: the link's regions are not registered natively.
            val link =
                Braid.getInfo(Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, "shm+ofi:tcp:lo"))
                    .first()
            (link.caps and Caps.RMA_ALL) shouldBe 0L
        }

        test("a region of a native RMA domain is registered natively under Braid's key, or the key asked for") {
            TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { f ->
                val d = f.nodes[1].domain
                val memory = (d.provider as OfiDomain).memory
                val before = memory.registrations
                val mr = d.registerMemory(direct(64), MrAccess.REMOTE)
                val asked = d.registerMemory(direct(64), MrAccess.REMOTE, 777)
                mr.native.shouldBeInstanceOf<braid.provider.ProviderRegion>().key shouldBe mr.key
                asked.key shouldBe 777L
                asked.native!!.key shouldBe 777L
                memory.registrations shouldBe before + 2
                // The peer's native write finds the region by that key.
                val a = f.nodes[0]
                a.ep.tryWrite(direct(8).also { it.putLong(0, 42) }, 0, 8, f.addrs[0][1], 16, asked.key, "w") shouldBe 0
                a.await(1, others = listOf(f.nodes[1])).single().shouldBeInstanceOf<braid.core.Completion>()
                asked.buffer.getLong(16) shouldBe 42L
                mr.close()
                mr.close() // twice is once
                shouldThrow<FabricException> { d.registerMemory(direct(8), MrAccess.REMOTE, 777) }.message shouldContain
                    "already registered"
                // asked stays registered: closing the fabric deregisters it before the native domain closes.
            }
        }

        test("a key ofi:tcp does not know fails the write with an error completion naming the provider and the key") {
            TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { f ->
                val (a, b) = f.nodes
                b.domain.registerMemory(direct(64), MrAccess.REMOTE)
                a.ep.tryWrite(direct(8), 0, 8, f.addrs[0][1], 0, 4242, "bad") shouldBe 0
                val e = a.await(1, others = listOf(b)).single().shouldBeInstanceOf<CompletionError>()
                e.context shouldBe "bad"
                e.message shouldContain "ofi:tcp;ofi_rxm: RMA write of 8 bytes"
                e.message shouldContain "key 4242"
                e.message shouldContain "prov_errno"
            }
        }

        test("the registration cache registers a hot loop's buffer once, stays bounded, and forgets what is dropped") {
            TestFabric(rail = Rail.ofi("ofi:tcp", "lo")).use { f ->
                val od = f.nodes[0].domain.provider as OfiDomain
                val cache = OfiMrCache(od.memory, 2)
                try {
                    val start = od.memory.registrations
                    val hot = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
                    repeat(1000) {
                        val e = cache.acquire(hot, 4096, MrAccess.READ)
                        e.descriptor shouldBe e.region.descriptor
                        cache.release(e)
                    }
                    // A smaller range inside it, with access it covers, hits too.
                    cache.release(cache.acquire(UnsafeBuffer(hot, 100, 200), 200, MrAccess.READ))
                    od.memory.registrations shouldBe start + 1
                    cache.hits shouldBe 1000L
                    // Bounded: a third buffer evicts the least recently used one nobody holds.
                    val held = cache.acquire(UnsafeBuffer(ByteBuffer.allocateDirect(64)), 64, MrAccess.READ)
                    cache.release(cache.acquire(UnsafeBuffer(ByteBuffer.allocateDirect(64)), 64, MrAccess.READ))
                    cache.size shouldBe 2
                    cache.release(cache.acquire(hot, 4096, MrAccess.READ))
                    od.memory.registrations shouldBe start + 4 // hot was evicted, so registered again
                    held.region.open shouldBe true // held entries are never evicted under an operation
                    cache.release(held)
                    // Invalidated: a dropped range is registered afresh next time.
                    cache.invalidate(hot.addressOffset(), hot.addressOffset() + 1)
                    cache.release(cache.acquire(hot, 4096, MrAccess.READ))
                    od.memory.registrations shouldBe start + 5
                    // Memory with no owner (a raw address) is registered per operation, never cached.
                    val raw = UnsafeBuffer(hot.addressOffset(), 64)
                    val once = cache.acquire(raw, 64, MrAccess.WRITE)
                    cache.release(once)
                    once.region.open shouldBe false
                    cache.size shouldBe 2
                    cache.misses shouldBeLessThan 10L
                } finally {
                    cache.close()
                }
            }
        }

        test("ofi:shm keys each region by its address (FI_MR_VIRT_ADDR) and refuses a requested key") {
            // ofi:shm with RMA: its regions are keyed by their address (FI_MR_VIRT_ADDR), and a requested key refused.
            TestFabric(rail = Rail.ofi("ofi:shm")).use { f ->
                val buf = direct(64)
                val mr = f.nodes[0].domain.registerMemory(buf, MrAccess.REMOTE)
                mr.key shouldBe buf.addressOffset()
                val e =
                    shouldThrow<braid.core.FabricException> {
                        f.nodes[0].domain.registerMemory(direct(64), MrAccess.REMOTE, 77)
                    }
                e.message shouldContain "FI_MR_VIRT_ADDR"
            }
        }

        test("a domain whose rail carries no native RMA keeps Braid's own keys") {
            // A domain opened without RMA and atomics (every native provider here has them otherwise).
            val info = Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "ofi:shm")).first()
            Braid.fabric(info).use { fabric ->
                val mr = fabric.domain(info).registerMemory(direct(64), MrAccess.REMOTE)
                mr.native shouldBe null
                mr.key shouldNotBe 0L
            }
        }
    })
