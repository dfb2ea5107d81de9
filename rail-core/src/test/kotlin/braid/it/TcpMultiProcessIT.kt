package braid.it

import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.TestFabric
import braid.provider.tcp.TcpSettings
import braid.provider.tcp.TcpTestFabric
import braid.provider.tcp.tcp
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/** Separate JVM processes over real tcp sockets on 127.0.0.1. */
class TcpMultiProcessIT : FunSpec({
    val main = TcpPeerMain::class.java.name

    fun tempDir(): Path = Files.createTempDirectory("braid-tcp-it")

    fun children(dir: Path, vararg specs: List<String>): List<ChildJvm> =
        specs.mapIndexed { i, args -> ChildJvm(main, args, emptyMap(), dir.resolve("child$i.log").toFile()) }

    fun List<ChildJvm>.awaitAll(seconds: Long) = forEach { child ->
        val rc = child.await(seconds)
        if (rc != 0) error("child exited $rc:\n${child.output()}")
        child.output() shouldContain "OK"
    }

    /** Drives [node] until [done], failing with [what] and the child's output after [seconds]. */
    fun until(what: String, node: TestFabric.Node, kid: ChildJvm, seconds: Long = 60, done: () -> Boolean) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
        while (!done()) {
            node.domain.progress()
            check(System.nanoTime() < deadline) { "timed out waiting for $what; child output:\n${kid.output()}" }
        }
    }

    fun signal(kid: ChildJvm, sig: String) {
        val rc = ProcessBuilder("kill", "-$sig", kid.process.pid().toString()).inheritIO().start().waitFor()
        check(rc == 0) { "kill -$sig ${kid.process.pid()} failed" }
    }

    test("two processes exchange 20,000 tagged messages of 0 B..64 KiB and some of 1..4 MiB over tcp, each once, intact, in order") {
        val dir = tempDir()
        val kids = children(dir, listOf("recv", "$dir", "rx", "20000", "tx0"), listOf("send", "$dir", "tx0", "rx", "0", "20000"))
        try { kids.awaitAll(300) } finally { kids.forEach { it.close() } }
    }

    test("two sender processes race for one any-source receiver over tcp: every message matched once, in order per sender") {
        val dir = tempDir()
        val kids = children(
            dir,
            listOf("recv", "$dir", "rx", "6000", "tx0", "tx1"),
            listOf("send", "$dir", "tx0", "rx", "0", "6000"),
            listOf("send", "$dir", "tx1", "rx", "1", "6000"),
        )
        try { kids.awaitAll(300) } finally { kids.forEach { it.close() } }
    }

    test("a sender killed (-9) mid-transfer fails the receive it was filling and the receives waiting on it") {
        val dir = tempDir()
        TcpTestFabric(1).use { f ->
            val me = f.nodes[0]
            Rendezvous.publish(dir, "rx", me.ep.address)
            val size = 64 shl 20
            val kid = ChildJvm(main, listOf("big-send", "$dir", "tx", "rx", "$size"), log = dir.resolve("tx.log").toFile(), jvmArgs = listOf("-Xmx128m", "-XX:MaxDirectMemorySize=256m"))
            try {
                val tx = me.av.insert(Rendezvous.lookup(dir, "tx"))
                val big = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                me.ep.tryTrecv(big, 0, size, tx, 1, 0, "big") shouldBe 0
                me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, tx, 2, 0, "never") shouldBe 0
                // Read until the message is partly here, then stop reading and kill the sender.
                until("the first bytes of the message", me, kid) { me.ep.tcp.inflightBytes() > 0 }
                kid.process.destroyForcibly()
                kid.process.waitFor(10, TimeUnit.SECONDS)
                val errors = me.await(2, millis = 10_000).map { it.shouldBeInstanceOf<CompletionError>() }.associateBy { it.context }
                errors.getValue("big").message shouldContain "mid-transfer"
                errors.getValue("big").len shouldBeGreaterThan 0L
                (errors.getValue("big").err in listOf(Errno.ECONNRESET, Errno.EHOSTDOWN)) shouldBe true
                errors.getValue("never").err shouldBe Errno.EHOSTDOWN
            } finally {
                kid.close()
            }
        }
    }

    test("a receiver killed (-9) turns the sends waiting on it into error completions naming it") {
        val dir = tempDir()
        TcpTestFabric(1, eagerSize = 1024).use { f ->
            val me = f.nodes[0]
            val kid = ChildJvm(main, listOf("hold", "$dir", "rx"), log = dir.resolve("rx.log").toFile())
            try {
                val rx = me.av.insert(Rendezvous.lookup(dir, "rx"))
                me.ep.tryTsend(UnsafeBuffer(ByteBuffer.allocateDirect(1 shl 20)), 0, 1 shl 20, rx, 1, "rendezvous") shouldBe 0
                me.ep.trySendmsg(UnsafeBuffer(ByteArray(16)), 0, 16, rx, 2, 0, braid.core.OpFlags.TAGGED or braid.core.OpFlags.DELIVERY_COMPLETE, "delivery") shouldBe 0
                until("the connection", me, kid) { me.ep.tcp.establishedCount() == 1 }
                repeat(100) { me.domain.progress() }
                kid.process.destroyForcibly()
                val errors = me.await(2, millis = 10_000).map { it.shouldBeInstanceOf<CompletionError>() }.associateBy { it.context }
                val name = me.av.straddr(rx)
                errors.getValue("rendezvous").message shouldContain name
                errors.getValue("delivery").message shouldContain name
            } finally {
                kid.close()
            }
        }
    }

    test("a peer process stopped with SIGSTOP is declared dead after the time-out: what waits on it fails with EHOSTDOWN") {
        val dir = tempDir()
        TcpTestFabric(1, settings = TcpSettings(timeoutMillis = 1000)).use { f ->
            val me = f.nodes[0]
            val kid = ChildJvm(main, listOf("hold", "$dir", "peer"), log = dir.resolve("peer.log").toFile())
            try {
                val peer = me.av.insert(Rendezvous.lookup(dir, "peer"))
                me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, peer, 1, 0, "from-peer") shouldBe 0
                me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "from-anyone") shouldBe 0
                me.ep.tryTsend(UnsafeBuffer(ByteArray(100_000)), 0, 100_000, peer, 2, "to-peer") shouldBe 0
                until("the connection", me, kid) { me.ep.tcp.establishedCount() == 1 }
                signal(kid, "STOP")
                try {
                    val errors = me.await(2, millis = 15_000).map { it.shouldBeInstanceOf<CompletionError>() }.associateBy { it.context }
                    errors.getValue("from-peer").err shouldBe Errno.EHOSTDOWN
                    errors.getValue("to-peer").err shouldBe Errno.EHOSTDOWN
                    errors.getValue("to-peer").message shouldContain "stopped, hung or unreachable"
                    me.ep.srx.postedCount shouldBe 1 // the any-source receive still waits
                } finally {
                    signal(kid, "CONT")
                }
            } finally {
                kid.close()
            }
        }
    }
})
