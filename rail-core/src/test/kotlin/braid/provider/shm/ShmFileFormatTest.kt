package braid.provider.shm

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.EventQueue
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import braid.core.buf
import braid.core.text
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Files
import java.nio.file.Path
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * shm files of another format version, or not shm files at all, are refused by name: a channel file announced on an
 * endpoint's doorbell, and a peer's endpoint file a sender connects to. The files are written here by hand, as another
 * Braid build would write them.
 */
class ShmFileFormatTest :
    FunSpec({
        /** An enabled shm endpoint with an event queue, and its name. */
        class Node : AutoCloseable {
            val info = Braid.getInfo(Hints(provider = "shm")).first()
            val fabric = Braid.fabric(info)
            val domain = fabric.domain(info)
            val cq = domain.completionQueue()
            val av = domain.addressVector()
            val eq: EventQueue = fabric.eventQueue()
            val ep =
                domain.endpoint().also {
                    it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(av)
                    it.bind(eq)
                    it.enable()
                }
            val name: String = ShmAddressDescriptor.parse(ep.address).name

            /** Drives progress until an error event arrives; returns it. */
            fun awaitError(): CompletionError {
                val err = CompletionError()
                val deadline = Deadline.of("an error event on the endpoint's event queue")
                while (eq.readErr(err) != 1) {
                    domain.progress()
                    deadline.check()
                }
                return err
            }

            override fun close() = fabric.close()
        }

        /** A file's bytes with [magic] and [version] at the start and [fill] writing the rest. */
        fun fileBytes(length: Int, magic: Int, version: Int, fill: ByteBuffer.() -> Unit = {}): ByteArray {
            val b = ByteBuffer.allocate(length).order(ByteOrder.nativeOrder())
            b.putInt(ShmFileHeader.MAGIC_OFFSET, magic).putInt(ShmFileHeader.VERSION_OFFSET, version).fill()
            return b.array()
        }

        /** A channel file as the sender of [version] lays one out: 4 KiB rings, sender open. */
        fun channelBytes(magic: Int, version: Int): ByteArray =
            fileBytes(ChannelFileDescriptor.length(4096), magic, version) {
                putInt(ChannelFileDescriptor.DATA_CAPACITY_OFFSET, 4096)
                putInt(ChannelFileDescriptor.CTRL_CAPACITY_OFFSET, ChannelFileDescriptor.CTRL_CAPACITY)
                putInt(ChannelFileDescriptor.SENDER_STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
            }

        /**
         * Writes [bytes] to [path], announces it on [receiver]'s doorbell as a sender does, and returns the refusal.
         */
        fun announce(receiver: Node, path: Path, bytes: ByteArray): CompletionError {
            Files.write(path, bytes)
            val epFile = ShmDirectory.mapExisting(ShmDirectory.endpointFile(receiver.name))!!
            try {
                val doorbell =
                    ManyToOneRingBuffer(
                        UnsafeBuffer(
                            epFile.buffer,
                            EndpointFileDescriptor.DOORBELL_OFFSET,
                            EndpointFileDescriptor.DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
                        )
                    )
                val fileName = path.fileName.toString().toByteArray()
                doorbell.write(EndpointFileDescriptor.MSG_CONNECT, UnsafeBuffer(fileName), 0, fileName.size) shouldBe
                    true
            } finally {
                epFile.unmap()
            }
            return receiver.awaitError()
        }

        test(
            "a channel file of another format version is refused when attached, naming the file, the version found and the one expected"
        ) {
            Node().use { r ->
                val path = ShmDirectory.channelFile(r.name, ShmDirectory.newEndpointName())
                try {
                    val err =
                        announce(r, path, channelBytes(ChannelFileDescriptor.MAGIC, ChannelFileDescriptor.VERSION + 1))
                    err.err shouldBe Errno.EINVAL
                    err.message shouldContain "shm endpoint ${r.name} refused the channel from "
                    err.message shouldContain
                        "shm: $path: channel file format version ${ChannelFileDescriptor.VERSION + 1}, but this build reads version ${ChannelFileDescriptor.VERSION} only"
                    // Left as it was: the receiver did not mark it open.
                    ByteBuffer.wrap(Files.readAllBytes(path))
                        .order(ByteOrder.nativeOrder())
                        .getInt(ChannelFileDescriptor.RECEIVER_STATE_OFFSET) shouldBe 0
                } finally {
                    Files.deleteIfExists(path)
                }
            }
        }

        test(
            "a file with a bad magic announced as a channel is refused naming the magic found and expected; the endpoint goes on receiving"
        ) {
            Node().use { r ->
                val path = ShmDirectory.channelFile(r.name, ShmDirectory.newEndpointName())
                try {
                    val err = announce(r, path, channelBytes(0x12345678, ChannelFileDescriptor.VERSION))
                    err.message shouldContain
                        "shm: $path: not a channel file: magic 0x12345678, expected 0x42524443 (\"BRDC\")"
                } finally {
                    Files.deleteIfExists(path)
                }
                // A real sender still gets through.
                Node().use { sender ->
                    val rx = UnsafeBuffer(ByteArray(5))
                    r.ep.tryRecv(rx, 0, 5, FiAddr.UNSPEC, "rx") shouldBe 0
                    sender.ep.trySend(buf("hello"), 0, 5, sender.av.insert(r.ep.address), "tx") shouldBe 0
                    val c = Completion()
                    val deadline = Deadline.of("the message from a real sender")
                    while (r.cq.readFrom(c) != 1) {
                        sender.domain.progress()
                        deadline.check()
                    }
                    c.context shouldBe "rx"
                    rx.text() shouldBe "hello"
                }
            }
        }

        test(
            "a peer's endpoint file of another format version is refused when a sender connects, naming the file and both versions"
        ) {
            Node().use { sender ->
                val peer = ShmDirectory.newEndpointName()
                val path = ShmDirectory.endpointFile(peer)
                try {
                    Files.write(
                        path,
                        fileBytes(EndpointFileDescriptor.length(), EndpointFileDescriptor.MAGIC, 9) {
                            putInt(EndpointFileDescriptor.STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
                        },
                    )
                    val dest = sender.av.insert(ShmAddressDescriptor.encode(ShmProvider.hostId, peer))
                    sender.ep.trySend(buf("x"), 0, 1, dest, "tx") shouldBe -Errno.EHOSTUNREACH
                    val err = CompletionError()
                    sender.eq.readErr(err) shouldBe 1
                    err.err shouldBe Errno.EHOSTUNREACH
                    err.message shouldContain
                        "shm: peer $peer: shm: $path: endpoint file format version 9, but this build reads version ${EndpointFileDescriptor.VERSION} only"
                } finally {
                    Files.deleteIfExists(path)
                }
            }
        }

        test(
            "the header check throws a FabricException naming the file for a short file, a bad magic, another version and a bad ring"
        ) {
            val path = ShmDirectory.root.resolve("not-mapped.ch")
            fun refused(bytes: ByteArray): String =
                shouldThrow<FabricException> { ChannelFileDescriptor.check(UnsafeBuffer(bytes), path) }
                    .also { it.code shouldBe Errno.EINVAL }
                    .message!!
            refused(ByteArray(6)) shouldContain "shm: $path: 6 bytes, too short for the header of a channel file"
            refused(channelBytes(EndpointFileDescriptor.MAGIC, 1)) shouldContain "not a channel file: magic 0x42524445"
            refused(channelBytes(ChannelFileDescriptor.MAGIC, 2)) shouldContain
                "channel file format version 2, but this build reads version ${ChannelFileDescriptor.VERSION} only"
            refused(
                channelBytes(ChannelFileDescriptor.MAGIC, ChannelFileDescriptor.VERSION)
                    .copyOf(ChannelFileDescriptor.length(4096) - 1)
            ) shouldContain "shorter than the ${ChannelFileDescriptor.length(4096)} its 4096-byte rings take"
            refused(
                fileBytes(
                    ChannelFileDescriptor.length(4096),
                    ChannelFileDescriptor.MAGIC,
                    ChannelFileDescriptor.VERSION,
                ) {
                    putInt(ChannelFileDescriptor.DATA_CAPACITY_OFFSET, 3000)
                }
            ) shouldContain "ring capacity 3000 is not a power of two"
            ChannelFileDescriptor.check(
                UnsafeBuffer(channelBytes(ChannelFileDescriptor.MAGIC, ChannelFileDescriptor.VERSION)),
                path,
            ) shouldBe 4096
        }
    })
