package braid.provider.tcp

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CoreParams
import braid.core.CqFormat
import braid.core.Errno
import braid.core.Event
import braid.core.EventType
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.core.driveUntil
import braid.core.text
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.time.Duration
import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger
import org.agrona.concurrent.UnsafeBuffer

/** Connections of the tcp rail: setup races, the job key, corrupt and truncated frames, dead and silent peers. */
class TcpConnectionTest :
    FunSpec({

        /** Log records of the tcp rail while [block] runs. */
        fun <T> captureLog(block: (List<String>) -> T): T {
            val records = java.util.Collections.synchronizedList(ArrayList<String>())
            val handler =
                object : Handler() {
                    override fun publish(record: LogRecord) {
                        records += record.message
                    }

                    override fun flush() {}

                    override fun close() {}
                }
            val logger = Logger.getLogger("braid.provider.tcp")
            logger.addHandler(handler)
            try {
                return block(records)
            } finally {
                logger.removeHandler(handler)
            }
        }

        /** Runs [block] while a thread drives [node]'s progress (a raw peer blocks on its socket meanwhile). */
        fun <T> driving(node: TestFabric.Node, block: () -> T): T {
            val run = java.util.concurrent.atomic.AtomicBoolean(true)
            val t = Thread {
                while (run.get()) {
                    node.domain.progress()
                    Thread.onSpinWait()
                }
            }
            t.start()
            try {
                return block()
            } finally {
                run.set(false)
                t.join(10_000)
            }
        }

        test(
            "two endpoints that connect to each other at once end with one connection, and each keeps its send order"
        ) {
            repeat(20) { trial ->
                TestFabric(rail = Rail.TCP, eagerSize = 256).use { f ->
                    val (a, b) = f.nodes
                    val n = 60
                    val sizes = IntArray(n) { if (it % 7 == 3) 5000 else it } // eager and rendezvous, interleaved
                    val outs =
                        List(n) { i ->
                            UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(4, sizes[i]))).also { it.putInt(0, i) }
                        }
                    // Both send before either drives progress: both open a connection.
                    for (i in 0 until n) {
                        a.ep.tryTsend(outs[i], 0, maxOf(4, sizes[i]), f.addrs[0][1], 1, "tx") shouldBe 0
                        b.ep.tryTsend(outs[i], 0, maxOf(4, sizes[i]), f.addrs[1][0], 1, "tx") shouldBe 0
                    }
                    val sendsDone = IntArray(2)
                    for ((k, pair) in listOf(a to b, b to a).withIndex()) {
                        val (node, other) = pair
                        val rx = UnsafeBuffer(ByteBuffer.allocateDirect(8192))
                        for (i in 0 until n) {
                            node.ep.tryTrecv(rx, 0, 8192, FiAddr.UNSPEC, 1, 0, "rx") shouldBe 0
                            while (true) { // send completions come on the same CQ: count them, wait for the receive
                                val c = node.await(1, others = listOf(other)).single().shouldBeInstanceOf<Completion>()
                                if (c.context == "rx") break
                                sendsDone[k]++
                            }
                            withClue("trial $trial: message $i") { rx.getInt(0) shouldBe i }
                        }
                    }
                    a.await(n - sendsDone[0], others = listOf(b)).forEach { it.shouldBeInstanceOf<Completion>() }
                    b.await(n - sendsDone[1], others = listOf(a)).forEach { it.shouldBeInstanceOf<Completion>() }
                    driveUntil("the losing connection to close", f.nodes) {
                        a.ep.tcp.stats.connectionCount() == 1 && b.ep.tcp.stats.connectionCount() == 1
                    }
                    withClue("trial $trial:\n${a.ep.describe()}\n${b.ep.describe()}") {
                        a.ep.tcp.stats.establishedCount() shouldBe 1
                        b.ep.tcp.stats.establishedCount() shouldBe 1
                        (a.ep.tcp.stats.connectionsOpened + b.ep.tcp.stats.connectionsOpened) shouldBe
                            2 // both tried: it was simultaneous
                    }
                }
            }
        }

        test(
            "a peer holding another job key is refused and logged, its sends fail with EACCES, and nothing it sent is matched"
        ) {
            captureLog { log ->
                for (keys in listOf(listOf("alpha", "beta"), listOf("", "beta"))) {
                    TestFabric(rail = Rail.TCP, keys = keys, eagerSize = 256).use { f ->
                        val (a, b) = f.nodes
                        val rx = UnsafeBuffer(ByteArray(16))
                        b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 0, -1L, "any") shouldBe 0
                        a.ep.tryTsend(buf("secret"), 0, 6, f.addrs[0][1], 1, "small") shouldBe 0
                        a.ep.tryTsend(UnsafeBuffer(ByteArray(5000)), 0, 5000, f.addrs[0][1], 2, "large") shouldBe 0
                        val errors = a.await(2, others = listOf(b)).map { it.shouldBeInstanceOf<CompletionError>() }
                        errors.map { it.context } shouldContainExactlyInAnyOrder listOf("small", "large")
                        errors.forEach {
                            it.err shouldBe Errno.EACCES
                            it.message shouldContain "job's key"
                        }
                        repeat(200) {
                            a.domain.progress()
                            b.domain.progress()
                        }
                        b.cq.read(Completion()) shouldBe -Errno.EAGAIN
                        b.ep.srx.postedCount shouldBe 1
                        b.ep.srx.unexpectedCount shouldBe 0
                        a.ep.tryTsend(buf("again"), 0, 5, f.addrs[0][1], 1, null) shouldBe -Errno.EACCES
                    }
                }
                log.any { "job's key" in it } shouldBe true
            }
        }

        test(
            "DomainAttr.jobKey is the key a domain's endpoints present, over the environment's, and is never printed"
        ) {
            val base = Rail.TCP.info()
            // The environment says "env"; the key set through the API is the one used.
            fun keyed(key: String) =
                base
                    .withSettings(base.settings.withEnvironment(mapOf("BRAID_JOB_KEY" to "env")))
                    .with(CoreParams.JOB_KEY, key)
            keyed("s3cret").toString() shouldNotContain "s3cret"
            captureLog { _ ->
                for ((keys, accepted) in listOf(listOf("k1", "k1") to true, listOf("k1", "k2") to false)) {
                    Braid.fabric(base).use { fabric ->
                        // The environment's key (here: the override every test endpoint gets) is not the one used.
                        val (a, b) = keys.map { TestFabric.Node(fabric.domain(keyed(it)), CqFormat.TAGGED) }
                        a.ep.enable()
                        b.ep.enable()
                        val ab = a.av.insert(b.ep.address)
                        b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 0, -1L, "rx") shouldBe 0
                        a.ep.tryTsend(buf("hello"), 0, 5, ab, 1, "tx") shouldBe 0
                        val sent = a.await(1, others = listOf(b)).single()
                        withClue("keys $keys") {
                            if (accepted) {
                                sent.shouldBeInstanceOf<Completion>().context shouldBe "tx"
                                b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().len shouldBe 5
                            } else {
                                sent.shouldBeInstanceOf<CompletionError>().err shouldBe Errno.EACCES
                            }
                        }
                        a.ep.close()
                        b.ep.close()
                    }
                }
            }
        }

        test("garbage instead of a hello closes the connection, logged, and nothing is matched") {
            captureLog { log ->
                TestFabric(1, Rail.TCP).use { f ->
                    val b = f.nodes[0]
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 0, -1L, "any") shouldBe 0
                    RawTcpPeer().use { raw ->
                        driving(b) {
                            raw.connect(b.ep.address, handshake = false)
                            raw.send(ByteArray(200) { (it * 31 + 7).toByte() })
                            raw.closedByPeer() shouldBe true
                        }
                    }
                    b.cq.read(Completion()) shouldBe -Errno.EAGAIN
                    b.ep.srx.postedCount shouldBe 1
                    b.ep.tcp.stats.connectionCount() shouldBe 0
                }
                log.any { "corrupt frame" in it } shouldBe true
            }
        }

        test("a wrong key proven in AUTH closes the connection, and a message sent right behind it is never matched") {
            captureLog { log ->
                TestFabric(1, Rail.TCP).use { f ->
                    val b = f.nodes[0]
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 0, -1L, "any") shouldBe 0
                    RawTcpPeer(jobKey = "not the job's").use { raw ->
                        driving(b) {
                            raw.connect(b.ep.address, behindAuth = raw.eager(1, "intruder".toByteArray())) shouldBe -1
                        }
                    }
                    repeat(100) { b.domain.progress() }
                    b.cq.read(Completion()) shouldBe -Errno.EAGAIN
                    b.ep.srx.postedCount shouldBe 1
                    b.ep.srx.unexpectedCount shouldBe 0
                }
                log.any { "job's key" in it } shouldBe true
            }
        }

        test(
            "garbage after a valid handshake closes only that connection: its operations fail, another peer keeps working"
        ) {
            TestFabric(2, Rail.TCP, eagerSize = 256).use { f ->
                val (a, b) = f.nodes
                RawTcpPeer().use { raw ->
                    val r = b.av.insert(raw.address)
                    driving(b) { raw.connect(b.ep.address) shouldBe TcpFrameDescriptor.WELCOME }
                    // A message from the raw peer is matched normally first.
                    val rx = UnsafeBuffer(ByteArray(16))
                    b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 5, 0, "ok") shouldBe 0
                    raw.send(raw.eager(5, "valid".toByteArray()))
                    b.await(1).single().shouldBeInstanceOf<Completion>().source shouldBe r
                    rx.text(5) shouldBe "valid"
                    // Operations in flight on that connection: a receive directed at it, a rendezvous send to it.
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, r, 6, 0, "from-raw") shouldBe 0
                    b.ep.tryTsend(UnsafeBuffer(ByteArray(100_000)), 0, 100_000, r, 7, "to-raw") shouldBe 0
                    repeat(20) { b.domain.progress() }
                    raw.send(ByteArray(64) { 0x42 })
                    val errors = b.await(2).map { it.shouldBeInstanceOf<CompletionError>() }.associateBy { it.context }
                    errors.getValue("to-raw").err shouldBe Errno.EIO
                    errors.getValue("to-raw").message shouldContain "corrupt frame"
                    errors.getValue("from-raw").err shouldBe Errno.EHOSTDOWN
                    errors.getValue("from-raw").message shouldContain TcpAddress.idString(raw.id)
                    raw.closedByPeer() shouldBe true
                }
                // The other peer is untouched.
                val rx = UnsafeBuffer(ByteArray(16))
                b.ep.tryTrecv(rx, 0, 16, f.addrs[1][0], 9, 0, "from-a") shouldBe 0
                a.ep.tryTsend(buf("still here"), 0, 10, f.addrs[0][1], 9, "a-send") shouldBe 0
                b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().context shouldBe "from-a"
                rx.text(10) shouldBe "still here"
            }
        }

        for ((label, cut) in listOf("in the middle of a payload" to 10, "in the middle of a header" to -20)) {
            test(
                "a stream that ends $label is a truncated frame: the receive it was filling fails, other peers are untouched"
            ) {
                TestFabric(2, Rail.TCP, eagerSize = 4096).use { f ->
                    val (a, b) = f.nodes
                    RawTcpPeer().use { raw ->
                        val r = b.av.insert(raw.address)
                        driving(b) { raw.connect(b.ep.address) shouldBe TcpFrameDescriptor.WELCOME }
                        b.ep.tryTrecv(UnsafeBuffer(ByteArray(2000)), 0, 2000, r, 3, 0, "filling") shouldBe 0
                        val frame = raw.eager(3, ByteArray(1000) { it.toByte() })
                        val keep =
                            if (cut > 0) TcpFrameDescriptor.HEADER_LENGTH + cut
                            else TcpFrameDescriptor.HEADER_LENGTH + cut
                        raw.send(frame.copyOf(keep))
                        repeat(50) { b.domain.progress() }
                        raw.shutdown()
                        val err = b.await(1).single().shouldBeInstanceOf<CompletionError>()
                        err.context shouldBe "filling"
                        err.message shouldContain "truncated frame"
                    }
                    val rx = UnsafeBuffer(ByteArray(16))
                    b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 9, 0, "from-a") shouldBe 0
                    a.ep.tryTsend(buf("fine"), 0, 4, f.addrs[0][1], 9, null) shouldBe 0
                    b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().context shouldBe "from-a"
                }
            }
        }

        test(
            "a frame that promises more bytes and then goes silent is closed by the time-out, not waited on for ever"
        ) {
            TestFabric(1, Rail.TCP, settings = TestFabric.SETTINGS.with(TcpParams.TIMEOUT_MS, 300L)).use { f ->
                val b = f.nodes[0]
                RawTcpPeer().use { raw ->
                    val r = b.av.insert(raw.address)
                    driving(b) { raw.connect(b.ep.address) shouldBe TcpFrameDescriptor.WELCOME }
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(2000)), 0, 2000, r, 3, 0, "filling") shouldBe 0
                    raw.send(raw.eager(3, ByteArray(1000)).copyOf(TcpFrameDescriptor.HEADER_LENGTH + 100))
                    val err = b.await(1, millis = 10_000).single().shouldBeInstanceOf<CompletionError>()
                    err.context shouldBe "filling"
                    err.err shouldBe Errno.EHOSTDOWN
                    err.message shouldContain "BRAID_TCP_TIMEOUT_MS"
                }
            }
        }

        test(
            "an endpoint that closes fails what its peers still wait on from it with ECONNRESET, naming it, and reports PEER_DOWN"
        ) {
            TestFabric(2, Rail.TCP, eagerSize = 256).use { f ->
                val (a, b) = f.nodes
                // Connect first, then leave a rendezvous send waiting on b and a receive directed at b.
                a.ep.tryTsend(buf("hi"), 0, 2, f.addrs[0][1], 1, "hi") shouldBe 0
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                a.ep.tryTsend(UnsafeBuffer(ByteArray(50_000)), 0, 50_000, f.addrs[0][1], 2, "waiting") shouldBe 0
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 3, 0, "from-b") shouldBe 0
                repeat(50) {
                    a.domain.progress()
                    b.domain.progress()
                }
                val bName = TcpAddressDescriptor.parse(b.ep.address).render()
                b.ep.close()
                val errors = a.await(2).map { it.shouldBeInstanceOf<CompletionError>() }.associateBy { it.context }
                errors.getValue("waiting").err shouldBe Errno.ECONNRESET
                errors.getValue("waiting").message shouldContain bName
                errors.getValue("waiting").message shouldContain "closed its endpoint"
                errors.getValue("from-b").err shouldBe Errno.EHOSTDOWN
                a.ep.tryTsend(buf("x"), 0, 1, f.addrs[0][1], 1, null) shouldBe -Errno.EHOSTDOWN
                val ev = Event()
                f.eqs[0].read(ev) shouldBe 1
                ev.type shouldBe EventType.PEER_DOWN
                ev.data shouldBe f.addrs[0][1]
                ev.message shouldContain bName
            }
        }

        test(
            "a peer that stops answering (its domain frozen, as a stopped process) is declared dead after the time-out"
        ) {
            TestFabric(2, Rail.TCP, settings = TestFabric.SETTINGS.with(TcpParams.TIMEOUT_MS, 400L)).use { f ->
                val (a, b) = f.nodes
                a.ep.tryTsend(buf("hi"), 0, 2, f.addrs[0][1], 1, null) shouldBe 0
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 2, 0, "from-b") shouldBe 0
                // Idle well past the time-out while both run: heartbeats keep the connection alive.
                val idleUntil = System.nanoTime() + 1_200_000_000L
                while (System.nanoTime() < idleUntil) {
                    a.domain.progress()
                    Thread.sleep(5)
                }
                a.cq.read(Completion()) shouldBe -Errno.EAGAIN
                // Now b stops: nothing of it runs, not even its keepalive thread's work.
                val frozen = java.util.concurrent.CountDownLatch(1)
                val release = java.util.concurrent.CountDownLatch(1)
                val freezer = Thread {
                    synchronized(b.domain.lock) {
                        frozen.countDown()
                        release.await()
                    }
                }
                freezer.start()
                try {
                    frozen.await()
                    val err = a.await(1, millis = 10_000).single().shouldBeInstanceOf<CompletionError>()
                    err.context shouldBe "from-b"
                    err.err shouldBe Errno.EHOSTDOWN
                    err.message shouldContain "stopped, hung or unreachable"
                } finally {
                    release.countDown()
                    freezer.join()
                }
            }
        }

        test("a receive directed at a peer that never sent fails once that peer is gone") {
            TestFabric(2, Rail.TCP).use { f ->
                val (a, b) = f.nodes
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 1, 0, "from-b") shouldBe 0
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "from-anyone") shouldBe 0
                // The keepalive connects to b because a receive waits for it alone.
                driveUntil("a connection to the silent peer", f.nodes) { a.ep.tcp.stats.establishedCount() == 1 }
                b.ep.close()
                val err = a.await(1).single().shouldBeInstanceOf<CompletionError>()
                err.context shouldBe "from-b"
                err.err shouldBe Errno.EHOSTDOWN
                a.ep.srx.postedCount shouldBe 1 // the any-source receive still waits
            }
        }

        test("a send to an address where nothing listens fails with ECONNREFUSED and a PEER_DOWN event") {
            val gone = TestFabric(1, Rail.TCP).use { it.nodes[0].ep.address }
            TestFabric(1, Rail.TCP).use { f ->
                val a = f.nodes[0]
                val dead = a.av.insert(gone)
                a.ep.tryTsend(buf("anyone?"), 0, 7, dead, 1, "lost") shouldBe 0
                val err = a.await(1).single().shouldBeInstanceOf<CompletionError>()
                err.err shouldBe Errno.ECONNREFUSED
                err.message shouldContain TcpAddressDescriptor.parse(gone).render()
                val ev = Event()
                f.eqs[0].read(ev) shouldBe 1
                ev.type shouldBe EventType.PEER_DOWN
                ev.data shouldBe dead
            }
        }

        test("an endpoint sends to itself") {
            TestFabric(1, Rail.TCP, eagerSize = 256).use { f ->
                val a = f.nodes[0]
                val rx = UnsafeBuffer(ByteArray(10_000))
                a.ep.tryTrecv(rx, 0, 10_000, FiAddr.UNSPEC, 1, 0, "rx") shouldBe 0
                a.ep.tryTsend(buf("me"), 0, 2, f.addrs[0][0], 1, "small") shouldBe 0
                a.ep.tryTsend(UnsafeBuffer(ByteArray(10_000) { 7 }), 0, 10_000, f.addrs[0][0], 2, "large") shouldBe 0
                a.ep.tryTrecv(UnsafeBuffer(ByteArray(10_000)), 0, 10_000, f.addrs[0][0], 2, 0, "rx-large") shouldBe 0
                a.await(4).map { (it as Completion).context }.toSet() shouldBe setOf("rx", "small", "large", "rx-large")
                rx.text(2) shouldBe "me"
            }
        }

        test("closing an endpoint ends its keepalive thread") {
            // Threads of endpoints closed by earlier tests end asynchronously: let them finish first.
            val settle = System.nanoTime() + 5_000_000_000L
            while (TcpKeepalive.running.get() != 0 && System.nanoTime() < settle) Thread.sleep(10)
            val before = TcpKeepalive.running.get()
            TestFabric(2, Rail.TCP).use { TcpKeepalive.running.get() shouldBe before + 2 }
            Deadline.await<Int>(
                "the closed endpoints' keepalive threads to end (count above the earlier tests')",
                Duration.ofSeconds(10),
                { TcpKeepalive.running.get() - before },
            ) {
                it == 0
            }
        }
    })
