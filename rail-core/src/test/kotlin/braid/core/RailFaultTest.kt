package braid.core

import braid.provider.shm.ChannelFileDescriptor
import braid.provider.shm.FrameDescriptor
import braid.provider.shm.ShmAddressDescriptor
import braid.provider.shm.ShmDirectory
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.channels.FileChannel
import java.nio.file.StandardOpenOption
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.RecordDescriptor as RingBufferDescriptor

/**
 * A provider that throws from its duty cycle (here: shm copying out a message head that someone else corrupted in its
 * channel file) does not take the progress engine down with it: the engine keeps driving the domain, the broken rail's
 * operations fail, and the failure is reported.
 */
class RailFaultTest :
    FunSpec({
        test(
            "a rail that throws in its duty cycle fails its operations and reports it; the progress engine and the domain's other endpoints go on"
        ) {
            val info =
                Braid.getInfo(Hints(caps = Caps.MSG or Caps.TAGGED, provider = "shm")).first().let {
                    it.with(braid.provider.shm.ShmParams.RING_SIZE, 1 shl 16)
                        .copy(endpointAttr = it.endpointAttr.copy(eagerSize = 1024))
                }
            val fabric = Braid.fabric(info)
            try {
                val sender = fabric.domain(info)
                val sCq = sender.completionQueue(CqFormat.TAGGED)
                val sAv = sender.addressVector()
                val a =
                    sender.endpoint().apply {
                        bind(sCq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(sAv)
                        enable()
                    }

                val target = fabric.domain(info)
                val cq = target.completionQueue(CqFormat.TAGGED)
                val av = target.addressVector()
                val eq = fabric.eventQueue()
                val broken =
                    target.endpoint().apply {
                        bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(av)
                        bind(eq)
                        enable()
                    }
                val healthy =
                    target.endpoint().apply {
                        bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(av)
                        enable()
                    }
                val fromA = av.insert(a.address)
                val toBroken = sAv.insert(broken.address)
                val toHealthy = sAv.insert(healthy.address)

                // A receive directed at the sender, which only the broken rail could fill.
                broken.tryTrecv(UnsafeBuffer(ByteArray(64)), 0, 64, fromA, 99, 0, "directed") shouldBe 0
                a.tryTsend(UnsafeBuffer(ByteArray(16)), 0, 16, toBroken, 1, "first") shouldBe 0

                // Corrupt the message head the sender wrote: its length now runs far past the ring, and
                // copying it out throws inside the rail's duty cycle.
                val receiver = ShmAddressDescriptor.parse(broken.address).name
                val from = ShmAddressDescriptor.parse(a.address).name
                FileChannel.open(
                        ShmDirectory.channelFile(receiver, from),
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE,
                    )
                    .use { ch ->
                        val map = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size())
                        UnsafeBuffer(map)
                            .putLong(
                                ChannelFileDescriptor.DATA_RING_OFFSET +
                                    RingBufferDescriptor.HEADER_LENGTH +
                                    FrameDescriptor.LENGTH_OFFSET,
                                1L shl 20,
                            )
                    }

                val engine = ProgressEngine.thread(target)
                try {
                    val err = CompletionError()
                    Deadline.await("the rail's failure on the event queue") { eq.readErr(err) == 1 }
                    err.err shouldBe Errno.EIO
                    err.message shouldContain "failed in its duty cycle"
                    val c = CompletionError()
                    Deadline.await("the directed receive to fail") { cq.readErr(c) == 1 }
                    c.context shouldBe "directed"
                    engine.isRunning shouldBe true

                    // The same engine still drives the domain's healthy endpoint.
                    healthy.tryTrecv(UnsafeBuffer(ByteArray(64)), 0, 64, FiAddr.UNSPEC, 7, 0, "healthy") shouldBe 0
                    a.tryTsend(UnsafeBuffer(ByteArray(32)), 0, 32, toHealthy, 7, "second") shouldBe 0
                    val done = Completion()
                    Deadline.await("the healthy endpoint's receive") {
                        sender.progress()
                        sCq.read(done)
                        cq.read(done) == 1 && done.context == "healthy"
                    }
                    done.len shouldBe 32L
                    engine.isRunning shouldBe true
                } finally {
                    engine.close()
                }
            } finally {
                fabric.close()
            }
        }
    })
