package braid.core

import braid.core.shm.SharedMemoryDir
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * Named address vectors shared by the processes of a host (`fi_av_attr.name`, `FI_READ`): one creator inserts, the
 * others map the same table read-only and reach the same peers under the same fi_addrs.
 */
class SharedAddressVectorTest :
    FunSpec({
        val dir = Files.createTempDirectory("braid-av")
        val settings = TestFabric.SETTINGS.with(SharedMemoryDir.DIR, dir.toString())
        fun shmDomain(fabric: Fabric? = null): Pair<Fabric, Domain> {
            val info = Braid.getInfo(Hints(provider = "shm", settings = settings)).first()
            val f = fabric ?: Braid.fabric(info)
            return f to f.domain(info)
        }
        var serial = 0
        fun name() = "t${ProcessHandle.current().pid()}-${serial++}"

        test("a read-only opener reaches the creator's peers under the same fi_addrs, in both directions") {
            val (fabric, creatorDomain) = shmDomain()
            val (_, readerDomain) = shmDomain(fabric)
            try {
                val avName = name()
                val shared = creatorDomain.createSharedAddressVector(avName, 16)
                val reader = readerDomain.openSharedAddressVector(avName)
                reader.isReadOnly shouldBe true
                val a = creatorDomain.endpoint()
                val b = readerDomain.endpoint()
                val cqA = creatorDomain.completionQueue(CqFormat.TAGGED)
                val cqB = readerDomain.completionQueue(CqFormat.TAGGED)
                a.bind(cqA, OpFlags.TRANSMIT or OpFlags.RECV)
                b.bind(cqB, OpFlags.TRANSMIT or OpFlags.RECV)
                a.bind(shared)
                b.bind(reader) // bound while empty: the creator's inserts reach it through the shared file
                a.enable()
                b.enable()
                val fiA = shared.insert(a.address)
                val fiB = shared.insert(b.address)
                reader.count shouldBe 2
                reader.lookup(fiA).toList() shouldBe a.address.toList()
                reader.query() shouldBe AvAttr(AvType.TABLE, 2, avName)

                val rx = UnsafeBuffer(ByteArray(16))
                a.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 7, 0, "a-rx") shouldBe 0
                b.tryTsend(UnsafeBuffer("from b".toByteArray()), 0, 6, fiA, 7, "b-tx") shouldBe 0
                val entry = Completion()
                fun await(cq: CompletionQueue, context: String) {
                    val deadline = Deadline.of("the completion of $context", Duration.ofSeconds(10))
                    while (!(cq.readFrom(entry) == 1 && entry.context == context)) {
                        creatorDomain.progress()
                        readerDomain.progress()
                        deadline.check()
                    }
                }
                await(cqA, "a-rx")
                entry.source shouldBe fiB // the creator resolved the reader's address in the shared table
                String(ByteArray(6).also { rx.getBytes(0, it) }) shouldBe "from b"

                b.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 8, 0, "b-rx") shouldBe 0
                a.tryTsend(UnsafeBuffer("from a".toByteArray()), 0, 6, fiB, 8, "a-tx") shouldBe 0
                await(cqB, "b-rx")
                entry.source shouldBe fiA // and the reader resolved the creator's in its read-only mapping
                String(ByteArray(6).also { rx.getBytes(0, it) }) shouldBe "from a"
                a.close()
                b.close()
                reader.close()
                shared.close()
            } finally {
                fabric.close()
            }
        }

        test("an insert or remove through a read-only AV is refused naming the AV and who may insert") {
            val (fabric, domain) = shmDomain()
            try {
                val avName = name()
                val shared = domain.createSharedAddressVector(avName, 4)
                val fi = shared.insert(AvScale.blob("shm", 1))
                val reader = domain.openSharedAddressVector(avName)
                val e = shouldThrow<FabricException> { reader.insert(AvScale.blob("shm", 2)) }
                e.code shouldBe Errno.EACCES
                e.message shouldContain "'$avName'"
                e.message shouldContain "read-only (FI_READ)"
                e.message shouldContain "pid ${ProcessHandle.current().pid()}"
                shouldThrow<FabricException> { reader.remove(fi) }.code shouldBe Errno.EACCES
                reader.count shouldBe 1 // nothing changed
                reader.close()
                shared.close()
            } finally {
                fabric.close()
            }
        }

        test("names, counts and missing AVs are refused with what to do") {
            val (fabric, domain) = shmDomain()
            try {
                shouldThrow<FabricException> { domain.openSharedAddressVector("nobody-made-this") }
                    .let {
                        it.code shouldBe Errno.ENOENT
                        it.message shouldContain "create it first"
                    }
                shouldThrow<FabricException> { domain.createSharedAddressVector("a/b", 4) }.message shouldContain
                    "'a/b'"
                shouldThrow<FabricException> { domain.createSharedAddressVector(name(), 0) }.message shouldContain
                    "count 0"
                val avName = name()
                val first = domain.createSharedAddressVector(avName, 2)
                shouldThrow<FabricException> { domain.createSharedAddressVector(avName, 2) }.code shouldBe Errno.EBUSY
                first.insert(AvScale.blob("shm", 1))
                first.insert(AvScale.blob("shm", 2))
                shouldThrow<FabricException> { first.insert(AvScale.blob("shm", 3)) }
                    .let {
                        it.code shouldBe Errno.ENOSPC
                        it.message shouldContain "larger count"
                    }
                first.close()
                Files.exists(dir.resolve("braid-av-$avName")) shouldBe false // the creator's close removes the name
            } finally {
                fabric.close()
            }
        }

        test("another process maps the creator's table read-only and sees every fi_addr as the creator does") {
            val (fabric, domain) = shmDomain()
            try {
                val avName = name()
                val n = 10_000
                val shared = domain.createSharedAddressVector(avName, n, AvType.MAP)
                val fis = shared.insert(List(n) { AvScale.blob("shm", it) })
                shared.remove(fis[5]) // a removed slot stays empty for readers
                val kid =
                    ChildProcess.jvm(
                            SharedAvReader::class.java.name,
                            dir.toString(),
                            avName,
                            "${fis[0]}",
                            "${fis[n - 1]}",
                            "${fis[5]}",
                        )
                        .start()
                val out = kid.awaitOk(Duration.ofSeconds(60))
                out shouldContain "count ${n - 1}"
                out shouldContain "type MAP"
                out shouldContain "first ${AvScale.blob("shm", 0).toList()}"
                out shouldContain "last ${AvScale.blob("shm", n - 1).toList()}"
                out shouldContain "removed absent"
                out shouldContain "insert refused EACCES"
                // The readers' cost: the table is one file per host, its pages shared by every process that maps it.
                val bytes = shared.storageBytes()[1]
                bytes shouldBeLessThan n * 1024L
                shared.close()
            } finally {
                fabric.close()
            }
        }
    })

/** The child of the multi-process spec: opens the named AV read-only and prints what it sees. */
object SharedAvReader {
    @JvmStatic
    fun main(args: Array<String>) {
        val (dir, name, first, last, removed) = args
        val settings = TestFabric.SETTINGS.with(SharedMemoryDir.DIR, dir)
        val info = Braid.getInfo(Hints(provider = "shm", settings = settings)).first()
        Braid.fabric(info).use { fabric ->
            val av = fabric.domain(info).openSharedAddressVector(name)
            println("count ${av.count}")
            println("type ${av.type}")
            println("first ${av.lookup(first.toLong()).toList()}")
            println("last ${av.lookup(last.toLong()).toList()}")
            println(if (av.contains(removed.toLong())) "removed present" else "removed absent")
            try {
                av.insert(AvScale.blob("shm", 1))
                println("insert accepted")
            } catch (e: FabricException) {
                println("insert refused ${Errno.name(e.code)}")
            }
            av.close()
        }
        println("OK")
    }
}
