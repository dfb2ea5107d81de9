package braid.it

import braid.core.Braid
import braid.core.CompletionError
import braid.core.Errno
import braid.core.Event
import braid.core.EventType
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import braid.core.TestFabric
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/** Separate JVM processes over real shared-memory files. */
class ShmMultiProcessIT :
    FunSpec({
        val main = PeerMain::class.java.name

        fun tempDir(): Path = Files.createTempDirectory("braid-it")

        fun children(dir: Path, vararg specs: List<String>, env: Map<String, String> = emptyMap()): List<ChildProcess> =
            specs.mapIndexed { i, args ->
                ChildProcess.jvm(main, listOf("shm") + args).env(env).output(dir.resolve("child$i.log")).start()
            }

        test(
            "two processes exchange 100,000 tagged messages of 0 B..64 KiB and some of 1..4 MiB, each once, intact, in order"
        ) {
            val dir = tempDir()
            val kids =
                children(
                    dir,
                    listOf("recv", "$dir", "rx", "100000", "tx0"),
                    listOf("send", "$dir", "tx0", "rx", "0", "100000"),
                )
            try {
                ChildProcess.awaitAllOk(kids, Duration.ofSeconds(600))
            } finally {
                kids.forEach { it.close() }
            }
        }

        for ((how, env) in
            listOf(
                "single-copy pulls" to mapOf("BRAID_SHM_PULL_SIZE" to "0"),
                "fragments streamed through the ring" to mapOf("BRAID_SHM_CMA" to "0"),
            )) {
            test(
                "two senders race for one any-source receiver, large messages by $how: every message matched once, in order per sender"
            ) {
                val dir = tempDir()
                val kids =
                    children(
                        dir,
                        listOf("recv", "$dir", "rx", "20000", "tx0", "tx1"),
                        listOf("send", "$dir", "tx0", "rx", "0", "20000"),
                        listOf("send", "$dir", "tx1", "rx", "1", "20000"),
                        env = env,
                    )
                try {
                    ChildProcess.awaitAllOk(kids, Duration.ofSeconds(600))
                } finally {
                    kids.forEach { it.close() }
                }
            }
        }

        for ((how, env) in
            listOf(
                "single-copy pull" to mapOf("BRAID_SHM_PULL_SIZE" to "0"),
                "fragments through a 1 MiB ring" to mapOf("BRAID_SHM_CMA" to "0", "BRAID_SHM_RING_SIZE" to "1048576"),
            )) {
            test("a 1 GiB message crosses by $how, intact") {
                val dir = tempDir()
                val size = (1 shl 30).toString()
                val jvm = listOf("-Xmx64m", "-XX:MaxDirectMemorySize=1100m")
                val kids =
                    listOf(
                        ChildProcess.jvm(main, "shm", "big-recv", "$dir", "rx", "tx", size)
                            .env(env)
                            .jvmArgs(jvm)
                            .output(dir.resolve("rx.log"))
                            .start(),
                        ChildProcess.jvm(main, "shm", "big-send", "$dir", "tx", "rx", size)
                            .env(env)
                            .jvmArgs(jvm)
                            .output(dir.resolve("tx.log"))
                            .start(),
                    )
                try {
                    ChildProcess.awaitAllOk(kids, Duration.ofSeconds(600))
                } finally {
                    kids.forEach { it.close() }
                }
            }
        }

        test(
            "a sender killed mid-transfer fails the receive it was filling and the receives waiting on it, without a hang"
        ) {
            val dir = tempDir()
            TestFabric(1).use { f ->
                val me = f.nodes[0]
                val eq = f.fabric.eventQueue()
                Rendezvous.publish(dir, "rx", me.ep.address)
                // A tiny ring and a sender that stops driving progress leave the 32 MiB transfer
                // half done; with single-copy pulls off, the data has to stream through that ring.
                val kid =
                    ChildProcess.jvm(main, "shm", "slow-send", "$dir", "tx", "rx", "${32 shl 20}")
                        .env(mapOf("BRAID_SHM_RING_SIZE" to "4096", "BRAID_SHM_CMA" to "0"))
                        .output(dir.resolve("tx.log"))
                        .start()
                try {
                    val tx = me.av.insert(Rendezvous.lookup(dir, "tx"))
                    val big = UnsafeBuffer(ByteBuffer.allocateDirect(32 shl 20))
                    me.ep.tryTrecv(big, 0, big.capacity(), tx, 1, 0, "big") shouldBe 0
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, tx, 2, 0, "never") shouldBe 0
                    val deadline = Deadline.of("the sender to stall", Duration.ofSeconds(60))
                    while ("STALLED" !in kid.output()) {
                        me.domain.progress()
                        deadline.check { "child output:\n${kid.output()}" }
                    }
                    repeat(1000) { me.domain.progress() }
                    kid.process().destroyForcibly()
                    val errors =
                        me.await(2, millis = 10_000)
                            .map { it.shouldBeInstanceOf<CompletionError>() }
                            .associateBy { it.context }
                    errors.getValue("big").err shouldBe Errno.EIO
                    errors.getValue("big").message shouldContain "mid-transfer"
                    errors.getValue("big").len shouldBeGreaterThan 0L
                    errors.getValue("never").err shouldBe Errno.EHOSTDOWN
                } finally {
                    kid.close()
                    eq.close()
                }
            }
        }

        test("a receive from a peer that never sent fails once that peer dies, even while it is an unreaped zombie") {
            val dir = tempDir()
            TestFabric(1).use { f ->
                val me = f.nodes[0]
                val eq = f.fabric.eventQueue()
                // `exec sleep` leaves the JVM's parent a process that never reaps it: killed, it stays a zombie.
                val cmd =
                    "'${ChildProcess.java()}' -Xmx64m -cp '${System.getProperty("java.class.path")}' $main shm hold '$dir' silent > '$dir/silent.log' 2>&1 & exec sleep 120"
                val parent = ChildProcess.command("bash", "-c", cmd).start()
                try {
                    val silent = me.av.insert(Rendezvous.lookup(dir, "silent"))
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, silent, 1, 0, "from-silent") shouldBe 0
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "from-anyone") shouldBe 0
                    repeat(1000) { me.domain.progress() }
                    val child = parent.process().toHandle().children().findFirst().orElseThrow()
                    child.destroyForcibly()
                    val err = me.await(1, millis = 10_000).single().shouldBeInstanceOf<CompletionError>()
                    err.context shouldBe "from-silent"
                    err.err shouldBe Errno.EHOSTDOWN
                    err.message shouldContain "not running"
                    java.nio.file.Files.readString(java.nio.file.Paths.get("/proc/${child.pid()}/stat"))
                        .substringAfterLast(')')
                        .trim()
                        .first() shouldBe 'Z'
                    me.ep.srx.postedCount shouldBe 1 // the any-source receive still waits: others may send
                } finally {
                    parent.close()
                    eq.close()
                }
            }
        }

        test("a receiver that dies turns the sends waiting on it into error completions and a PEER_DOWN event") {
            val dir = tempDir()
            val info = Braid.getInfo(Hints(provider = "shm")).first()
            Braid.fabric(info).use { fabric ->
                val domain = fabric.domain(info)
                val cq = domain.completionQueue()
                val av = domain.addressVector()
                val eq = fabric.eventQueue()
                val ep =
                    domain.endpoint().also {
                        it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        it.bind(av)
                        it.bind(eq)
                        it.enable()
                    }
                val kid = ChildProcess.jvm(main, "shm", "hold", "$dir", "rx").output(dir.resolve("rx.log")).start()
                try {
                    val rx = av.insert(Rendezvous.lookup(dir, "rx"))
                    val big = UnsafeBuffer(ByteBuffer.allocateDirect(1 shl 20))
                    ep.tryTsend(big, 0, big.capacity(), rx, 1, "rendezvous") shouldBe 0
                    ep.trySendmsg(
                        UnsafeBuffer(ByteArray(16)),
                        0,
                        16,
                        rx,
                        2,
                        0,
                        OpFlags.TAGGED or OpFlags.DELIVERY_COMPLETE,
                        "delivery",
                    ) shouldBe 0
                    repeat(100) { domain.progress() }
                    kid.process().destroyForcibly()
                    val got = HashMap<Any?, CompletionError>()
                    val deadline = Deadline.of("two error completions", Duration.ofSeconds(10))
                    val err = CompletionError()
                    while (got.size < 2) {
                        deadline.check { got }
                        if (cq.read(braid.core.Completion()) == -Errno.EAVAIL) {
                            cq.readErr(err)
                            got[err.context] =
                                CompletionError().also {
                                    it.err = err.err
                                    it.message = err.message
                                }
                        }
                    }
                    got.getValue("rendezvous").err shouldBe Errno.EHOSTDOWN
                    got.getValue("delivery").message shouldContain "died"
                    val ev = Event()
                    eq.read(ev) shouldBe 1
                    ev.type shouldBe EventType.PEER_DOWN
                    ev.data shouldBe rx
                    ep.tryTsend(big, 0, 8, rx, 1, null) shouldBe -Errno.EHOSTDOWN
                } finally {
                    kid.close()
                    ep.close()
                }
            }
        }

        test("files left by a process that died are reclaimed by the next one that starts") {
            val dir = tempDir()
            val kid = ChildProcess.jvm(main, "shm", "hold", "$dir", "dead").output(dir.resolve("dead.log")).start()
            try {
                Rendezvous.lookup(dir, "dead")
                val pid = kid.process().pid()
                TestFabric(1).use { f ->
                    // Give the dying process a channel too: send it a message.
                    val dest = f.nodes[0].av.insert(Rendezvous.lookup(dir, "dead"))
                    f.nodes[0].ep.tryTinject(UnsafeBuffer(ByteArray(8)), 0, 8, dest, 0) shouldBe 0
                    kid.process().destroyForcibly().waitFor()
                    fun leftovers() =
                        Files.list(shmDir()).use { s ->
                            s.filter { it.fileName.toString().contains("braid-$pid-") }.count()
                        }
                    leftovers() shouldBe 2L // its endpoint file, and the channel file to it
                    f.nodes[0].ep.close()
                    leftovers() shouldBe 1L // we removed the channel we created to a dead receiver
                    Braid.fabric(f.info).use { it.domain(f.info).close() } // a new domain sweeps the rest
                    leftovers() shouldBe 0L
                }
            } finally {
                kid.close()
            }
        }
    })

private fun shmDir(): Path =
    if (Files.isDirectory(Paths.get("/dev/shm"))) Paths.get("/dev/shm")
    else Paths.get(System.getProperty("java.io.tmpdir"), "braid-shm")
