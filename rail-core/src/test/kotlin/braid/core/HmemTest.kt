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

            test(
                "$rail: a large device message is staged chunk by chunk through one bounded chunk, every byte intact"
            ) {
                val chunk = 16 shl 10
                val settings = TestFabric.SETTINGS.with(CoreParams.HMEM_CHUNK, chunk)
                TestFabric(rail = rail, eagerSize = eager, settings = settings).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies().also { it.setOn(a.domain) }
                    val cb = device.copies().also { it.setOn(b.domain) }
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val size = 200_000
                    val src = device.alloc(size)
                    val dst = device.alloc(size)
                    val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND)
                    val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV)
                    for (round in 1..3) {
                        val bytes = pattern(size, 40 + round)
                        device.put(src, bytes)
                        ca.reset()
                        cb.reset()
                        // Round 2: the fourth chunk's copy fails mid-stream; the send fails, the stream behind goes on.
                        if (round == 2) ca.failFromAfter.set(3)
                        b.ep.tryTrecv(into, 0, size, toA, round.toLong(), 0, "r$round") shouldBe 0
                        a.ep.tryTsend(out, 0, size, toB, round.toLong(), "s$round") shouldBe 0
                        val sent = a.await(1, others = listOf(b)).single()
                        val got = b.await(1, others = listOf(a)).single() as Completion
                        got.context shouldBe "r$round"
                        got.len shouldBe size.toLong()
                        withClue("round $round") {
                            if (round == 2) {
                                (sent as CompletionError).err shouldBe Errno.EIO
                                sent.context shouldBe "s2"
                                sent.message shouldContain "COPY_FROM_HMEM_IOV"
                            } else {
                                (sent as Completion).context shouldBe "s$round"
                                device.get(dst, size).contentEquals(bytes) shouldBe true
                                ca.fromCalls.get() shouldBe ((size + chunk - 1) / chunk).toLong() // one per chunk
                                ca.fromBytes.get() shouldBe size.toLong()
                                cb.toBytes.get() shouldBe size.toLong()
                            }
                        }
                    }
                }
            }

            test(
                "$rail: atomics whose operand, compare and result buffers are device memory go through the overrides"
            ) {
                TestFabric(rail = rail, eagerSize = eager).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies().also { it.setOn(a.domain) }
                    device.copies().setOn(b.domain)
                    val toB = f.addrs[0][1]
                    val counter = device.alloc(8)
                    device.putLong(counter, 40)
                    val cmr = b.domain.registerMemory(device.iface, 0, counter, 8, MrAccess.REMOTE)
                    val operand = device.alloc(8)
                    val compare = device.alloc(8)
                    val result = device.alloc(8)
                    val access = MrAccess.READ or MrAccess.WRITE
                    val om = a.domain.registerMemory(device.iface, 0, operand, 8, access)
                    val cm = a.domain.registerMemory(device.iface, 0, compare, 8, access)
                    val rm = a.domain.registerMemory(device.iface, 0, result, 8, access)
                    val t = AtomicDatatype.INT64
                    // fetch-add 2: the old value lands in device memory
                    device.putLong(operand, 2)
                    a.ep.tryFetchAtomic(om, 0, 1, rm, 0, toB, 0, cmr.key, t, AtomicOp.SUM, "fa") shouldBe 0
                    (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "fa"
                    device.getLong(result) shouldBe 40L
                    device.getLong(counter) shouldBe 42L
                    // update: add 3, no result
                    device.putLong(operand, 3)
                    a.ep.tryAtomic(om, 0, 1, toB, 0, cmr.key, t, AtomicOp.SUM, "add") shouldBe 0
                    (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "add"
                    device.getLong(counter) shouldBe 45L
                    // compare-swap 45 → 7
                    device.putLong(operand, 7)
                    device.putLong(compare, 45)
                    a.ep.tryCompareAtomic(om, 0, 1, cm, 0, rm, 0, toB, 0, cmr.key, t, AtomicOp.CSWAP, "cs") shouldBe 0
                    (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "cs"
                    device.getLong(result) shouldBe 45L
                    device.getLong(counter) shouldBe 7L
                    ca.fromBytes.get() shouldBe 8L + 8L + 16L // operands and compare
                    ca.toBytes.get() shouldBe 8L + 8L // the two results
                    // A failing copy of the operand: an error completion with its errno.
                    ca.failNext.set(Errno.ENODEV)
                    a.ep.tryAtomic(om, 0, 1, toB, 0, cmr.key, t, AtomicOp.SUM, "bad") shouldBe 0
                    val e = a.await(1, others = listOf(b)).single() as CompletionError
                    e.context shouldBe "bad"
                    e.err shouldBe Errno.ENODEV
                    device.getLong(counter) shouldBe 7L
                }
            }

            test("$rail: an inject from device memory is staged before it returns and arrives through the overrides") {
                TestFabric(rail = rail, eagerSize = eager).use { f ->
                    val (a, b) = f.nodes
                    val ca = device.copies().also { it.setOn(a.domain) }
                    val cb = device.copies().also { it.setOn(b.domain) }
                    val size = 200
                    val src = device.alloc(size)
                    val dst = device.alloc(size)
                    val out = a.domain.registerMemory(device.iface, 0, src, size, MrAccess.SEND)
                    val into = b.domain.registerMemory(device.iface, 0, dst, size, MrAccess.RECV)
                    for (tagged in listOf(true, false)) {
                        val bytes = pattern(size, if (tagged) 5 else 6)
                        device.put(src, bytes)
                        ca.reset()
                        cb.reset()
                        if (tagged) b.ep.tryTrecv(into, 0, size, f.addrs[1][0], 8, 0, "r") shouldBe 0
                        else b.ep.tryRecv(into, 0, size, f.addrs[1][0], "r") shouldBe 0
                        if (tagged) a.ep.tryTinject(out, 0, size, f.addrs[0][1], 8) shouldBe 0
                        else a.ep.tryInject(out, 0, size, f.addrs[0][1]) shouldBe 0
                        ca.fromBytes.get() shouldBe size.toLong() // staged before the call returned
                        device.put(src, ByteArray(size)) // reusable at once
                        (b.await(1, others = listOf(a)).single() as Completion).context shouldBe "r"
                        device.get(dst, size).contentEquals(bytes) shouldBe true
                        cb.toBytes.get() shouldBe size.toLong()
                    }
                    // A failed copy is the inject's own return code.
                    ca.failNext.set(Errno.ENODEV)
                    a.ep.tryInject(out, 0, size, f.addrs[0][1]) shouldBe -Errno.ENODEV
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

        test("atomics and RMA on device memory have suspend, future and blocking forms, through the overrides") {
            TestFabric(rail = Rail.SHM, eagerSize = eager).use { f ->
                val (a, b) = f.nodes
                val ca = device.copies().also { it.setOn(a.domain) }
                device.copies().setOn(b.domain)
                val toB = f.addrs[0][1]
                val counter = device.alloc(8)
                device.putLong(counter, 100)
                val cmr = b.domain.registerMemory(device.iface, 0, counter, 8, MrAccess.REMOTE)
                val access = MrAccess.READ or MrAccess.WRITE
                val operand = device.alloc(8)
                val compare = device.alloc(8)
                val result = device.alloc(8)
                val om = a.domain.registerMemory(device.iface, 0, operand, 8, access)
                val cm = a.domain.registerMemory(device.iface, 0, compare, 8, access)
                val rm = a.domain.registerMemory(device.iface, 0, result, 8, access)
                val size = 20_000
                val local = a.domain.registerMemory(device.iface, 0, device.alloc(size), size, access)
                val remote =
                    b.domain.registerMemory(device.iface, 0, device.alloc(size), size, MrAccess.REMOTE or access)
                val t = AtomicDatatype.INT64
                val sum = AtomicOp.SUM
                val stop = java.util.concurrent.atomic.AtomicBoolean()
                val target = Thread { while (!stop.get()) b.domain.progress() }.also { it.start() } // serves them
                try {
                    // suspend
                    runBlocking {
                        device.putLong(operand, 1)
                        a.ep.atomic(om, 0, 1, toB, 0, cmr.key, t, sum)
                        device.putLong(operand, 2)
                        a.ep.fetchAtomic(om, 0, 1, rm, 0, toB, 0, cmr.key, t, sum)
                        device.getLong(result) shouldBe 101L
                        device.putLong(operand, 50)
                        device.putLong(compare, 103)
                        a.ep.compareAtomic(om, 0, 1, cm, 0, rm, 0, toB, 0, cmr.key, t, AtomicOp.CSWAP)
                        device.getLong(result) shouldBe 103L
                    }
                    device.getLong(counter) shouldBe 50L
                    // future
                    device.putLong(operand, 4)
                    a.ep.atomicAsync(om, 0, 1, toB, 0, cmr.key, t, sum).get(10, TimeUnit.SECONDS)
                    a.ep.fetchAtomicAsync(om, 0, 1, rm, 0, toB, 0, cmr.key, t, sum).get(10, TimeUnit.SECONDS)
                    device.getLong(result) shouldBe 54L
                    device.putLong(compare, 58)
                    a.ep
                        .compareAtomicAsync(om, 0, 1, cm, 0, rm, 0, toB, 0, cmr.key, t, AtomicOp.CSWAP)
                        .get(10, TimeUnit.SECONDS)
                    device.getLong(result) shouldBe 58L
                    device.getLong(counter) shouldBe 4L
                    // blocking
                    device.putLong(operand, 6)
                    a.ep.atomicBlocking(om, 0, 1, toB, 0, cmr.key, t, sum, 10_000)
                    a.ep.fetchAtomicBlocking(om, 0, 1, rm, 0, toB, 0, cmr.key, t, sum, 10_000)
                    device.getLong(result) shouldBe 10L
                    device.putLong(compare, 16)
                    device.putLong(operand, 1)
                    a.ep.compareAtomicBlocking(om, 0, 1, cm, 0, rm, 0, toB, 0, cmr.key, t, AtomicOp.CSWAP, 10_000)
                    device.getLong(result) shouldBe 16L
                    device.getLong(counter) shouldBe 1L
                    // 9 atomics: 9 operands and 3 compares copied out of the device, 6 results copied in
                    ca.fromBytes.get() shouldBe 8L * 12
                    ca.toBytes.get() shouldBe 8L * 6
                    // RMA future and blocking forms
                    ca.reset()
                    device.put(local.address, pattern(size, 21))
                    a.ep.writeAsync(local, 0, size, toB, 0, remote.key).get(10, TimeUnit.SECONDS)
                    device.get(remote.address, size).contentEquals(pattern(size, 21)) shouldBe true
                    device.put(remote.address, pattern(size, 22))
                    a.ep.readBlocking(local, 0, size, toB, 0, remote.key, 10_000)
                    device.get(local.address, size).contentEquals(pattern(size, 22)) shouldBe true
                    device.put(local.address, pattern(size, 23))
                    a.ep.writeBlocking(local, 0, size, toB, 0, remote.key, 10_000)
                    a.ep.readAsync(local, 0, size, toB, 0, remote.key).get(10, TimeUnit.SECONDS)
                    device.get(remote.address, size).contentEquals(pattern(size, 23)) shouldBe true
                    ca.fromBytes.get() shouldBe 2L * size
                    ca.toBytes.get() shouldBe 2L * size
                    // A failing copy: the blocking form throws the copy's errno, and the next one goes through.
                    ca.failNext.set(Errno.ENODEV)
                    val e =
                        io.kotest.assertions.throwables.shouldThrow<FabricException> {
                            a.ep.atomicBlocking(om, 0, 1, toB, 0, cmr.key, t, sum, 10_000)
                        }
                    e.code shouldBe Errno.ENODEV
                    device.getLong(counter) shouldBe 1L
                    device.putLong(operand, 1)
                    a.ep.atomicBlocking(om, 0, 1, toB, 0, cmr.key, t, sum, 10_000)
                    device.getLong(counter) shouldBe 2L
                } finally {
                    stop.set(true)
                    target.join()
                }
            }
        }

        test(
            "a deferred region copy stages device memory through the overrides at its threshold, and fails as errors"
        ) {
            TestFabric(1).use { f ->
                val n = f.nodes[0]
                val d = n.domain
                val copies = device.copies().also { it.setOn(d) shouldBe listOf(0, 0) }
                val size = 4096
                val devA = d.registerMemory(device.iface, 0, device.alloc(size), size, MrAccess.READ or MrAccess.WRITE)
                val devB = d.registerMemory(device.iface, 0, device.alloc(size), size, MrAccess.READ or MrAccess.WRITE)
                val hostIn = UnsafeBuffer(ByteBuffer.allocateDirect(size)).also { b -> b.putBytes(0, pattern(size, 9)) }
                val hostOut = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                val hin = d.registerMemory(hostIn, MrAccess.READ)
                val hout = d.registerMemory(hostOut, MrAccess.WRITE)
                val start = d.counter()
                val mid = d.counter()
                val mid2 = d.counter()
                val end = d.counter()
                // host → device A → device B → host, chained by counters
                d.deferredWork.queue(DeferredWork(start, 1, DeferredOp.RegionCopy(n.ep, hin, 0, devA, 0, size), mid))
                d.deferredWork.queue(DeferredWork(mid, 1, DeferredOp.RegionCopy(n.ep, devA, 0, devB, 0, size), mid2))
                d.deferredWork.queue(DeferredWork(mid2, 1, DeferredOp.RegionCopy(n.ep, devB, 0, hout, 0, size), end))
                copies.toBytes.get() shouldBe 0L
                start.add(1)
                end.value shouldBe 1L
                val back = ByteArray(size).also { hostOut.getBytes(0, it) }
                back.contentEquals(pattern(size, 9)) shouldBe true
                copies.toBytes.get() shouldBe 2L * size
                copies.fromBytes.get() shouldBe 2L * size
                // A failing copy: the error side of its completion counter.
                val t = d.counter()
                val done = d.counter()
                copies.failNext.set(Errno.ENODEV)
                d.deferredWork.queue(DeferredWork(t, 1, DeferredOp.RegionCopy(n.ep, devA, 0, hout, 0, size), done))
                t.add(1)
                done.errorValue shouldBe 1L
                done.value shouldBe 0L
            }
        }

        test(
            "a deferred region reduce stages device operands through the overrides, keeps operand order, fails as errors"
        ) {
            TestFabric(1).use { f ->
                val n = f.nodes[0]
                val d = n.domain
                val copies = device.copies().also { it.setOn(d) shouldBe listOf(0, 0) }
                // dst = src * 10 + dst when srcFirst, dst * 10 + src otherwise: the order shows
                val ordered =
                    object : LocalReduction {
                        override fun elementSize(): Int = 8

                        override fun reduce(
                            src: org.agrona.DirectBuffer,
                            srcOffset: Int,
                            dst: org.agrona.MutableDirectBuffer,
                            dstOffset: Int,
                            count: Int,
                            srcFirst: Boolean,
                        ): Int {
                            for (i in 0 until count) {
                                val s = src.getLong(srcOffset + i * 8)
                                val t = dst.getLong(dstOffset + i * 8)
                                dst.putLong(dstOffset + i * 8, if (srcFirst) s * 10 + t else t * 10 + s)
                            }
                            return 0
                        }
                    }
                val count = 1000
                val size = count * 8
                val rw = MrAccess.READ or MrAccess.WRITE
                val devA = d.registerMemory(device.iface, 0, device.alloc(size), size, rw)
                val devB = d.registerMemory(device.iface, 0, device.alloc(size), size, rw)
                val hostBuf = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                val host = d.registerMemory(hostBuf, rw)
                for (i in 0 until count) {
                    device.putLong(devA.address + i * 8L, i.toLong())
                    device.putLong(devB.address + i * 8L, 1)
                    hostBuf.putLong(i * 8, 2)
                }
                val t = d.counter()
                val mid = d.counter()
                val end = d.counter()
                // device into device (src first), then device into host memory (dst first)
                d.deferredWork.queue(
                    DeferredWork(t, 1, DeferredOp.RegionReduce(n.ep, ordered, devA, 0, devB, 0, count, true), mid)
                )
                d.deferredWork.queue(
                    DeferredWork(mid, 1, DeferredOp.RegionReduce(n.ep, ordered, devB, 0, host, 0, count, false), end)
                )
                t.add(1)
                end.value shouldBe 1L
                for (i in 0 until count) {
                    device.getLong(devB.address + i * 8L) shouldBe i * 10L + 1
                    hostBuf.getLong(i * 8) shouldBe 20L + i * 10 + 1
                }
                copies.fromBytes.get() shouldBe 3L * size // A and B for the first, B for the second
                copies.toBytes.get() shouldBe 1L * size // B back
                // A failing copy: the error side of its counter, and the device destination left as it was.
                val t2 = d.counter()
                val done = d.counter()
                copies.failTo.set(Errno.ENODEV)
                d.deferredWork.queue(
                    DeferredWork(t2, 1, DeferredOp.RegionReduce(n.ep, ordered, devA, 0, devB, 0, count, true), done)
                )
                t2.add(1)
                done.errorValue shouldBe 1L
                done.value shouldBe 0L
                // A range outside a region is refused when queued, naming it.
                io.kotest.assertions.throwables
                    .shouldThrow<FabricException> {
                        DeferredWork(t2, 1, DeferredOp.RegionReduce(n.ep, ordered, devA, 8, devB, 0, count, true), done)
                            .let { d.deferredWork.queue(it) }
                    }
                    .message shouldContain "memory region ${devA.key}"
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
            "$rail: a warm ping-pong between device buffers allocates nothing per message, staged whole or in chunks"
        ) {
            for (chunk in listOf(CoreParams.HMEM_CHUNK.default, 16 shl 10)) TestFabric(
                    rail = rail,
                    eagerSize = eager,
                    settings = TestFabric.SETTINGS.with(CoreParams.HMEM_CHUNK, chunk),
                )
                .use { f ->
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
                                if (rc == 1) got++
                                else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
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
