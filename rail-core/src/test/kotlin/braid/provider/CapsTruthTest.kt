package braid.provider

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Braid
import braid.core.Caps
import braid.core.CqFormat
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.Errno
import braid.core.Fabric
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Info
import braid.core.MrAccess
import braid.core.ProgressEngine
import braid.core.TestFabric
import braid.core.fetchAtomic
import braid.core.read
import braid.core.recv
import braid.core.send
import braid.core.trecv
import braid.core.tsend
import braid.core.write
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.ByteOrder
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/**
 * Caps that tell the truth: for every provider, `getInfo` answers a request for each capability the provider claims
 * (alone, and all together), and an endpoint opened from that answer carries each one — messages, tagged messages, RMA
 * writes and reads, atomics, triggered operations, source addresses and directed receives. LOCAL_COMM and REMOTE_COMM
 * are carried by the multi-process and cross-host specs (`*IT`), which need other processes or hosts.
 */
class CapsTruthTest :
    FunSpec({
        val providers =
            listOf(
                "shm" to Hints(provider = "shm"),
                "tcp" to Hints(provider = "tcp", domainName = "lo"),
                "link" to Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, "shm+tcp:lo"),
                "ofi:tcp" to Hints(provider = "ofi:tcp:lo"),
                "ofi:shm" to Hints(provider = "ofi:shm"),
                // sockets: the one 1.17 provider with a native deferred-work queue (FI_QUEUE_WORK), so TRIGGER rides
                // it.
                "ofi:sockets" to Hints(provider = "ofi:sockets:lo"),
            )
        val exercisedElsewhere = Caps.LOCAL_COMM or Caps.REMOTE_COMM

        for ((name, base) in providers) {
            test("$name: getInfo grants every capability $name claims, alone and all together") {
                val claimed = Braid.getInfo(base).first().caps
                val missing = mutableListOf<String>()
                for (bit in 0 until 64) {
                    val cap = 1L shl bit
                    if (claimed and cap == 0L) continue
                    if (Braid.getInfo(base.copy(caps = cap)).isEmpty()) missing += Caps.toString(cap)
                }
                missing.shouldBeEmpty()
                Braid.getInfo(base.copy(caps = claimed)).shouldNotBeEmpty()
            }

            test("$name: an endpoint opened for all its claimed capabilities carries each of them") {
                val claimed = Braid.getInfo(base).first().caps
                val info = Braid.getInfo(base.copy(caps = claimed and Caps.PRIMARY)).first()
                val exercised = exerciseAll(info)
                val unexercised = claimed and (exercised or exercisedElsewhere).inv()
                Caps.toString(unexercised) shouldBe Caps.toString(0)
            }
        }

        test("an endpoint opened without RMA and atomics refuses them with EOPNOTSUPP naming the missing capability") {
            val info = Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm")).first()
            (info.caps and (Caps.RMA or Caps.ATOMIC)) shouldBe 0L
            val fabric = Braid.fabric(info)
            try {
                val a = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
                val b = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
                a.ep.enable()
                b.ep.enable()
                val aToB = a.av.insert(b.ep.address)
                val mr = b.domain.registerMemory(ByteBuffer.allocateDirect(64), MrAccess.REMOTE)
                val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
                a.ep.tryWrite(ByteBuffer.wrap("rma!".toByteArray()), aToB, 8, mr.key, null) shouldBe -Errno.EOPNOTSUPP
                a.ep.tryAtomic(one, aToB, 16, mr.key, AtomicDatatype.INT64, AtomicOp.SUM, null) shouldBe
                    -Errno.EOPNOTSUPP
                val w =
                    shouldThrow<FabricException> {
                        runBlocking { a.ep.write(ByteBuffer.wrap("rma!".toByteArray()), aToB, 8, mr.key) }
                    }
                w.code shouldBe Errno.EOPNOTSUPP
                w.message shouldContain "without Caps.RMA"
                val f =
                    shouldThrow<FabricException> {
                        runBlocking {
                            a.ep.fetchAtomic(
                                one,
                                ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()),
                                aToB,
                                16,
                                mr.key,
                                AtomicDatatype.INT64,
                                AtomicOp.SUM,
                            )
                        }
                    }
                f.code shouldBe Errno.EOPNOTSUPP
                f.message shouldContain "without Caps.ATOMIC"
                val d =
                    shouldThrow<FabricException> {
                        val write =
                            DeferredOp.Write(
                                a.ep,
                                org.agrona.concurrent.UnsafeBuffer(ByteArray(4)),
                                0,
                                4,
                                aToB,
                                8,
                                mr.key,
                            )
                        a.domain.deferredWork.queue(DeferredWork(a.domain.counter(), 1, write))
                    }
                d.code shouldBe Errno.EOPNOTSUPP
                d.message shouldContain "without Caps.RMA"
                mr.byteBuffer().getLong(8) shouldBe 0L // nothing reached the target
            } finally {
                fabric.close()
            }
        }

        test("hints asking the link for RMA and atomics find it (it carries them through both rails)") {
            val info =
                Braid.getInfo(
                        Hints(caps = Caps.TAGGED or Caps.RMA_ALL or Caps.TRIGGER, provider = "link")
                            .with(braid.provider.link.LinkParams.LINKS, "shm+tcp:lo")
                    )
                    .first()
            (info.caps and Caps.RMA_ALL) shouldBe Caps.RMA_ALL
        }
    })

/** Opens two endpoints from [info] and uses each capability it claims; returns the capabilities used. */
private fun exerciseAll(info: Info): Long {
    val fabric: Fabric = Braid.fabric(info)
    try {
        val a = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
        val b = TestFabric.Node(fabric.domain(info), CqFormat.TAGGED)
        a.ep.enable()
        b.ep.enable()
        val aToB = a.av.insert(b.ep.address)
        val bToA = b.av.insert(a.ep.address)
        var done = 0L
        ProgressEngine.thread(b.domain).use {
            runBlocking {
                withTimeout(30_000) {
                    val caps = info.caps
                    if (caps and (Caps.MSG or Caps.SEND or Caps.RECV) != 0L) {
                        val rx = ByteBuffer.allocate(8)
                        val r = async(Dispatchers.Default) { b.ep.recv(rx, FiAddr.UNSPEC) }
                        a.ep.send(ByteBuffer.wrap("msg".toByteArray()), aToB)
                        val c = r.await()
                        c.len shouldBe 3L
                        if (caps and Caps.SOURCE != 0L) {
                            c.source shouldBe bToA
                            done = done or Caps.SOURCE
                        }
                        done = done or Caps.MSG or Caps.SEND or Caps.RECV
                    }
                    if (caps and Caps.TAGGED != 0L) {
                        val rx = ByteBuffer.allocateDirect(8)
                        val r =
                            async(Dispatchers.Default) {
                                b.ep.trecv(rx, if (caps and Caps.DIRECTED_RECV != 0L) bToA else FiAddr.UNSPEC, 5)
                            }
                        a.ep.tsend(ByteBuffer.wrap("tag".toByteArray()), aToB, 5)
                        r.await().tag shouldBe 5L
                        done = done or Caps.TAGGED or (caps and Caps.DIRECTED_RECV)
                    }
                    if (caps and Caps.RMA_ALL != 0L) {
                        val mr = b.domain.registerMemory(ByteBuffer.allocateDirect(64), MrAccess.REMOTE)
                        a.ep.write(ByteBuffer.wrap("rma!".toByteArray()), aToB, 8, mr.key)
                        val back = ByteBuffer.allocate(4)
                        a.ep.read(back, aToB, 8, mr.key)
                        String(back.array()) shouldBe "rma!"
                        done = done or Caps.RMA or Caps.WRITE or Caps.READ or Caps.REMOTE_WRITE or Caps.REMOTE_READ
                        val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
                        val old = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder())
                        a.ep.fetchAtomic(one, old, aToB, 16, mr.key, AtomicDatatype.INT64, AtomicOp.SUM)
                        a.ep.fetchAtomic(one, old, aToB, 16, mr.key, AtomicDatatype.INT64, AtomicOp.SUM)
                        old.getLong(0) shouldBe 1L
                        mr.byteBuffer().getLong(16) shouldBe 2L
                        done = done or Caps.ATOMIC
                    }
                    if (caps and Caps.HMEM != 0L) {
                        // Device memory no rail can address, moved only by the override functions.
                        val dev = braid.core.TestDevice(4096, "caps-truth")
                        val copies = dev.copies()
                        copies.setOn(a.domain) shouldBe listOf(0, 0)
                        copies.setOn(b.domain) shouldBe listOf(0, 0)
                        val src = dev.alloc(4).also { dev.put(it, "hmem".toByteArray()) }
                        val dst = dev.alloc(4)
                        val out = a.domain.registerMemory(dev.iface, 0, src, 4, MrAccess.SEND)
                        val into = b.domain.registerMemory(dev.iface, 0, dst, 4, MrAccess.RECV)
                        val r = async(Dispatchers.Default) { b.ep.trecv(into, 0, 4, FiAddr.UNSPEC, 11) }
                        a.ep.tsend(out, 0, 4, aToB, 11)
                        r.await().len shouldBe 4L
                        String(dev.get(dst, 4)) shouldBe "hmem"
                        copies.toBytes.get() shouldBe 4L
                        done = done or Caps.HMEM
                    }
                    if (caps and Caps.TRIGGER != 0L) {
                        val trigger = a.domain.counter()
                        val rx = ByteBuffer.allocate(8)
                        val r = async(Dispatchers.Default) { b.ep.trecv(rx, FiAddr.UNSPEC, 9) }
                        // Off-heap, so a native deferred-work queue may take it (ofi:sockets).
                        val payload =
                            org.agrona.concurrent.UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(4)).also {
                                it.putBytes(0, "trig".toByteArray())
                            }
                        a.domain.deferredWork.queue(
                            DeferredWork(trigger, 1, DeferredOp.Tsend(a.ep, payload, 0, 4, aToB, 9))
                        )
                        trigger.add(1)
                        val deadline = Deadline.of("the triggered send's receive")
                        while (!r.isCompleted) {
                            a.domain.progress()
                            kotlinx.coroutines.yield()
                            deadline.check()
                        }
                        r.await().len shouldBe 4L
                        done = done or Caps.TRIGGER
                    }
                }
            }
        }
        return done
    } finally {
        fabric.close()
    }
}
