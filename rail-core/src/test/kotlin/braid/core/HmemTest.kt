package braid.core

import braid.testsupport.SteadyAllocation
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.agrona.concurrent.UnsafeBuffer

/**
 * Device memory (a [TestDevice] no rail can address) over shm, tcp and the link: messages eager and rendezvous, RMA and
 * atomics arrive intact, every byte moved by the override functions (their counts prove it), overrides scoped to what
 * they were set on, `-ENOSYS` where a rail cannot honour them, failing copies as error completions.
 */
class HmemTest :
    FunSpec({
        val device = TestDevice(8 shl 20)
        val eager = 1024
        val sizes = listOf(100, 200_000) // one eager, one rendezvous (and a split copy on shm)

        fun pattern(n: Int, seed: Int) = ByteArray(n) { (it * 31 + seed).toByte() }

        for (rail in listOf(Rail.SHM, Rail.TCP, Rail.LINK)) {
            test("$rail: tagged and untagged messages between device buffers move every byte through the overrides") {
                TestFabric(rail = rail, eagerSize = eager).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies()
                    val cb = device.copies()
                    ca.setOn(a.domain) shouldBe listOf(0, 0)
                    cb.setOn(b.domain) shouldBe listOf(0, 0)
                    for (size in sizes) {
                        for (tagged in listOf(true, false)) {
                            val src = device.alloc(size)
                            val dst = device.alloc(size)
                            val bytes = pattern(size, size + if (tagged) 1 else 2)
                            device.put(src, bytes)
                            val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND)
                            val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV)
                            ca.reset()
                            cb.reset()
                            val toB = f.addrs[0][1]
                            val toA = f.addrs[1][0]
                            if (tagged) {
                                b.ep.tryTrecv(into, 0, size, toA, 9, 0, "r") shouldBe 0
                                a.ep.tryTsend(out, 0, size, toB, 9, "s") shouldBe 0
                            } else {
                                b.ep.tryRecv(into, 0, size, toA, "r") shouldBe 0
                                a.ep.trySend(out, 0, size, toB, "s") shouldBe 0
                            }
                            val got = b.await(1, others = listOf(a)).single() as Completion
                            got.context shouldBe "r"
                            got.len shouldBe size.toLong()
                            (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "s"
                            withClue("$size bytes, tagged=$tagged") {
                                device.get(dst, size).contentEquals(bytes) shouldBe true
                                ca.fromBytes.get() shouldBe size.toLong()
                                cb.toBytes.get() shouldBe size.toLong()
                                ca.toBytes.get() shouldBe 0L
                                cb.fromBytes.get() shouldBe 0L
                            }
                            out.close()
                            into.close()
                        }
                    }
                }
            }

            test(
                "$rail: RMA writes and reads between device buffers, and atomics on device memory, through the overrides"
            ) {
                TestFabric(rail = rail, eagerSize = eager).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies().also { it.setOn(a.domain) }
                    val cb = device.copies().also { it.setOn(b.domain) }
                    val toB = f.addrs[0][1]
                    for (size in sizes) {
                        val target = device.alloc(size)
                        val mine = device.alloc(size)
                        val back = device.alloc(size)
                        val bytes = pattern(size, 7)
                        device.put(mine, bytes)
                        val tmr = b.domain.registerMemory(device.iface, 0, target, size, MrAccess.REMOTE)
                        val local = a.domain.registerMemory(device.iface, 0, mine, size, MrAccess.WRITE)
                        val readBack = a.domain.registerMemory(device.iface, 0, back, size, MrAccess.READ)
                        ca.reset()
                        cb.reset()
                        a.ep.tryWrite(local, 0, size, toB, 0, tmr.key, "w") shouldBe 0
                        (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "w"
                        device.get(target, size).contentEquals(bytes) shouldBe true
                        a.ep.tryRead(readBack, 0, size, toB, 0, tmr.key, "rd") shouldBe 0
                        (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "rd"
                        withClue("$size bytes") {
                            device.get(back, size).contentEquals(bytes) shouldBe true
                            ca.fromBytes.get() shouldBe size.toLong() // the write's source
                            ca.toBytes.get() shouldBe size.toLong() // the read's destination
                            cb.toBytes.get() shouldBe size.toLong() // the write's target
                            cb.fromBytes.get() shouldBe size.toLong() // the read's target
                        }
                        listOf(tmr, local, readBack).forEach { it.close() }
                    }
                    // An atomic on device memory: fetched host-side, applied, copied back.
                    val counter = device.alloc(8)
                    device.putLong(counter, 40)
                    val cmr = b.domain.registerMemory(device.iface, 0, counter, 8, MrAccess.REMOTE)
                    val two = UnsafeBuffer(ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()))
                    two.putLong(0, 2)
                    val old = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                    cb.reset()
                    a.ep.tryFetchAtomic(
                        two,
                        0,
                        1,
                        old,
                        0,
                        toB,
                        0,
                        cmr.key,
                        AtomicDatatype.INT64,
                        AtomicOp.SUM,
                        "fa",
                    ) shouldBe 0
                    (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "fa"
                    old.getLong(0) shouldBe 40L
                    device.getLong(counter) shouldBe 42L
                    cb.fromBytes.get() shouldBe 8L
                    cb.toBytes.get() shouldBe 8L
                }
            }

            test("$rail: a copy function that fails turns its operation into an error completion; the stream goes on") {
                TestFabric(rail = rail, eagerSize = eager).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies().also { it.setOn(a.domain) }
                    val cb = device.copies().also { it.setOn(b.domain) }
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val size = 3000
                    val src = device.alloc(size)
                    val dst = device.alloc(size)
                    val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND)
                    val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV)
                    // 1: the receiver's copy fails; 2: the sender's; 3: arrives.
                    for (round in 1..3) {
                        val bytes = pattern(size, round)
                        device.put(src, bytes)
                        when (round) {
                            1 -> cb.failNext.set(Errno.ENODEV)
                            2 -> ca.failNext.set(Errno.ENODEV)
                        }
                        if (round != 2) b.ep.tryTrecv(into, 0, size, toA, round.toLong(), 0, "r$round") shouldBe 0
                        a.ep.tryTsend(out, 0, size, toB, round.toLong(), "s$round") shouldBe 0
                        when (round) {
                            1 -> {
                                val e = b.await(1, others = listOf(a)).single()
                                (e as CompletionError).err shouldBe Errno.ENODEV
                                e.context shouldBe "r1"
                                e.message shouldContain "COPY_TO_HMEM_IOV"
                                (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "s1"
                            }
                            2 -> {
                                val e = a.await(1, others = listOf(b)).single()
                                (e as CompletionError).err shouldBe Errno.ENODEV
                                e.context shouldBe "s2"
                            }
                            3 -> {
                                (b.await(1, others = listOf(a)).single() as Completion).context shouldBe "r3"
                                (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "s3"
                                device.get(dst, size).contentEquals(bytes) shouldBe true
                            }
                        }
                    }
                }
            }
        }

        test("the suspend, future and blocking forms take device memory too, RMA included") {
            TestFabric(rail = Rail.SHM, eagerSize = eager).use { f ->
                val (a, b) = f.nodes
                val ca = device.copies().also { it.setOn(a.domain) }
                val cb = device.copies().also { it.setOn(b.domain) }
                val toB = f.addrs[0][1]
                val toA = f.addrs[1][0]
                val size = 50_000
                val src = device.alloc(size)
                val dst = device.alloc(size)
                val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND or MrAccess.WRITE)
                val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV or MrAccess.REMOTE)
                // suspend
                device.put(src, pattern(size, 11))
                runBlocking {
                    val r = async(Dispatchers.Default) { b.ep.trecv(into, 0, size, toA, 4) }
                    a.ep.tsend(out, 0, size, toB, 4).len shouldBe size.toLong()
                    r.await().len shouldBe size.toLong()
                }
                device.get(dst, size).contentEquals(pattern(size, 11)) shouldBe true
                // future
                device.put(src, pattern(size, 12))
                val rf = b.ep.recvAsync(into, 0, size, toA)
                a.ep.sendAsync(out, 0, size, toB).get(10, TimeUnit.SECONDS)
                rf.get(10, TimeUnit.SECONDS).len shouldBe size.toLong()
                device.get(dst, size).contentEquals(pattern(size, 12)) shouldBe true
                // blocking, and a future receive cancelled while staged
                val never = b.ep.trecvAsync(into, 0, size, toA, 999, 0)
                never.cancel(true) shouldBe true
                device.put(src, pattern(size, 13))
                val rb = b.ep.trecvAsync(into, 0, size, toA, 5, 0)
                a.ep.tsendBlocking(out, 0, size, toB, 5, 10_000)
                rb.get(10, TimeUnit.SECONDS).len shouldBe size.toLong()
                device.get(dst, size).contentEquals(pattern(size, 13)) shouldBe true
                // suspend RMA
                device.put(src, pattern(size, 14))
                runBlocking {
                    val target =
                        launch(Dispatchers.Default) { // serves the write
                            while (isActive) {
                                b.domain.progress()
                                yield()
                            }
                        }
                    a.ep.write(out, 0, size, toB, 0, into.key)
                    target.cancel()
                }
                device.get(dst, size).contentEquals(pattern(size, 14)) shouldBe true
                ca.toBytes.get() shouldBe 0L
                cb.fromBytes.get() shouldBe 0L
                ca.fromBytes.get() shouldBe 4L * size
                cb.toBytes.get() shouldBe 4L * size
            }
        }

        test("an endpoint's override wins over its domain's, and touches no other endpoint") {
            TestFabric(rail = Rail.SHM, eagerSize = eager).use { f ->
                val (a, b) = f.nodes
                val domainA = device.copies().also { it.setOn(a.domain) shouldBe listOf(0, 0) }
                val endpointA = device.copies().also { it.setOn(a.ep) shouldBe listOf(0, 0) }
                val domainB = device.copies().also { it.setOn(b.domain) shouldBe listOf(0, 0) }
                val size = 5000
                val src = device.alloc(size)
                val dst = device.alloc(size)
                device.put(src, pattern(size, 3))
                val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND)
                val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV)
                b.ep.tryTrecv(into, 0, size, f.addrs[1][0], 1, 0, "r") shouldBe 0
                a.ep.tryTsend(out, 0, size, f.addrs[0][1], 1, "s") shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                device.get(dst, size).contentEquals(pattern(size, 3)) shouldBe true
                endpointA.fromBytes.get() shouldBe size.toLong()
                domainA.fromBytes.get() shouldBe 0L
                domainB.toBytes.get() shouldBe size.toLong()
                endpointA.toBytes.get() shouldBe 0L
                // Removing the endpoint's own puts its domain's back in charge.
                a.ep.setOp(HmemOp.COPY_FROM_HMEM_IOV, null) shouldBe 0
                b.ep.tryTrecv(into, 0, size, f.addrs[1][0], 2, 0, "r") shouldBe 0
                a.ep.tryTsend(out, 0, size, f.addrs[0][1], 2, "s") shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                domainA.fromBytes.get() shouldBe size.toLong()
            }
        }

        test("a rail that cannot honour an override answers -ENOSYS at setOp, and refuses device buffers") {
            // Granted without Caps.HMEM, the rail stages nothing: the override cannot take.
            val info =
                Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm", settings = TestFabric.SETTINGS))
                    .first()
            (info.caps and Caps.HMEM) shouldBe 0L
            Braid.fabric(info).use { fabric ->
                val domain = fabric.domain(info)
                val copies = device.copies()
                copies.setOn(domain) shouldBe listOf(-Errno.ENOSYS, -Errno.ENOSYS)
                val ep = domain.endpoint()
                copies.setOn(ep) shouldBe listOf(-Errno.ENOSYS, -Errno.ENOSYS)
                val mr = domain.registerMemory(device.iface, 0, device.alloc(64), 64, MrAccess.SEND)
                ep.trySend(mr, 0, 64, 0, null) shouldBe -Errno.EOPNOTSUPP
                ep.close()
                domain.close()
            }
            // What getInfo offers: shm, tcp and the link claim HMEM.
            for (p in listOf("shm", "tcp", "link")) {
                withClue(p) {
                    (Braid.getInfo(Hints(provider = p, settings = TestFabric.SETTINGS)).first().caps and
                        Caps.HMEM) shouldBe Caps.HMEM
                }
            }
        }

        test("CUDA memory with no override takes the built-in copy, or fails with an error naming the library") {
            TestFabric(rail = Rail.SHM).use { f ->
                val (a, b) = f.nodes
                // Not a CUDA address: with libcudart but no such allocation, cudaMemcpy fails (EIO).
                val mr = a.domain.registerMemory(HmemIface.CUDA, 0, TestDevice.BASE, 64, MrAccess.SEND)
                a.ep.trySend(mr, 0, 64, f.addrs[0][1], "s") shouldBe 0
                val e = a.await(1, others = listOf(b)).single() as CompletionError
                e.context shouldBe "s"
                if (CudaRuntime.available) {
                    println("HmemTest: libcudart is installed here (${CudaRuntime.library}): the built-in copy ran")
                    e.err shouldBe Errno.EIO
                    e.message shouldContain "COPY_FROM_HMEM_IOV"
                } else {
                    e.err shouldBe Errno.ENOSYS
                    e.message shouldContain "libcudart"
                }
            }
        }

        for (rail in listOf(Rail.SHM, Rail.TCP)) test(
            "$rail: a warm ping-pong between device buffers allocates nothing per message"
        ) {
            TestFabric(rail = rail, eagerSize = eager).use { f ->
                val (a, b) = f.nodes
                device.copies().setOn(a.domain)
                device.copies().setOn(b.domain)
                val toB = f.addrs[0][1]
                val toA = f.addrs[1][0]
                for (size in listOf(64, 64 * 1024)) {
                    val ma =
                        a.domain.registerMemory(
                            device.iface,
                            0,
                            device.alloc(size),
                            size,
                            MrAccess.SEND or MrAccess.RECV,
                        )
                    val mb =
                        b.domain.registerMemory(
                            device.iface,
                            0,
                            device.alloc(size),
                            size,
                            MrAccess.SEND or MrAccess.RECV,
                        )
                    val c = Completion()
                    val ctx = Any()
                    fun drain(n: TestFabric.Node, count: Int) {
                        var got = 0
                        while (got < count) {
                            val rc = n.cq.read(c)
                            if (rc == 1) got++ else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
                            a.domain.progress()
                            b.domain.progress()
                        }
                    }
                    fun round() {
                        check(b.ep.tryTrecv(mb, 0, size, toA, 1, 0, ctx) == 0)
                        check(a.ep.tryTrecv(ma, 0, size, toB, 2, 0, ctx) == 0)
                        check(a.ep.tryTsend(ma, 0, size, toB, 1, ctx) == 0)
                        drain(b, 1)
                        check(b.ep.tryTsend(mb, 0, size, toA, 2, ctx) == 0)
                        drain(a, 2)
                        drain(b, 1)
                    }
                    val n = 2_000
                    repeat(n) { round() }
                    val allocated = SteadyAllocation.least(3, n * 2L - 1) { repeat(n) { round() } }
                    withClue("$size-byte device messages: $allocated bytes allocated over ${n * 2} messages") {
                        (allocated / (n * 2)) shouldBeLessThan 1L
                    }
                }
            }
        }
    })
