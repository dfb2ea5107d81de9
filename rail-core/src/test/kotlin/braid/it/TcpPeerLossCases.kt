package braid.it

import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.core.Rail
import braid.core.TestFabric
import braid.provider.tcp.tcp
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.TimeUnit
import org.agrona.concurrent.UnsafeBuffer

/** A way to make the peer process on host 0 fall silent ([begin]) and to undo it ([end]). */
class Silence(val how: String, val begin: (Hosts, ChildProcess) -> Unit, val end: (Hosts, ChildProcess) -> Unit) {
    companion object {
        val SIGSTOP =
            Silence("stopped with SIGSTOP", { _, kid -> signal(kid, "STOP") }, { _, kid -> signal(kid, "CONT") })

        fun signal(kid: ChildProcess, sig: String) {
            val rc =
                ChildProcess.command("kill", "-$sig", "${kid.pid()}").start().use {
                    it.awaitExit(Duration.ofSeconds(10))
                }
            check(rc == 0) { "kill -$sig ${kid.pid()} failed" }
        }
    }
}

/** Drives [node] until [done], failing with [what] and the child's output after [seconds]. */
fun until(what: String, node: TestFabric.Node, kid: ChildProcess, seconds: Long = 60, done: () -> Boolean) {
    val deadline = Deadline.of("$what", Duration.ofSeconds(seconds))
    while (!done()) {
        node.domain.progress()
        deadline.check { "child output:\n${kid.output()}" }
    }
}

/**
 * What the tcp rail does when a peer process dies or falls silent: the peer runs [PeerMain] on host 0 of [open]'s
 * hosts, the test's endpoint listens on their [Hosts.iface]. Each spec that places processes somewhere runs these, with
 * the ways of silencing a peer it has.
 */
fun FunSpec.tcpPeerLossCases(open: () -> Hosts, silences: List<Silence>) {
    val main = PeerMain::class.java.name

    test("a sender killed (-9) mid-transfer fails the receive it was filling and the receives waiting on it") {
        val dir = Files.createTempDirectory("braid-tcp-it")
        open().use { hosts ->
            TestFabric(1, Rail.tcp(hosts.iface)).use { f ->
                val me = f.nodes[0]
                Rendezvous.publish(dir, "rx", me.ep.address)
                val size = 64 shl 20
                val kid =
                    hosts.start(
                        0,
                        main,
                        PeerMain.args("tcp", "big-send", dir, "tx", "rx", size),
                        dir.resolve("tx.log").toFile(),
                        jvmArgs = listOf("-Xmx128m", "-XX:MaxDirectMemorySize=256m"),
                    )
                val tx = me.av.insert(Rendezvous.lookup(dir, "tx"))
                val big = UnsafeBuffer(ByteBuffer.allocateDirect(size))
                me.ep.tryTrecv(big, 0, size, tx, PeerMain.BIG_TAG, 0, "big") shouldBe 0
                me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, tx, PeerMain.BIG_TAG + 1, 0, "never") shouldBe 0
                // Read until the message is partly here, then stop reading and kill the sender.
                until("the first bytes of the message", me, kid) { me.ep.tcp.stats.inflightBytes() > 0 }
                kid.process().destroyForcibly()
                kid.process().waitFor(10, TimeUnit.SECONDS)
                val errors =
                    me.await(2, millis = 10_000)
                        .map { it.shouldBeInstanceOf<CompletionError>() }
                        .associateBy { it.context }
                errors.getValue("big").message shouldContain "mid-transfer"
                errors.getValue("big").len shouldBeGreaterThan 0L
                (errors.getValue("big").err in listOf(Errno.ECONNRESET, Errno.EHOSTDOWN)) shouldBe true
                errors.getValue("never").err shouldBe Errno.EHOSTDOWN
            }
        }
    }

    test("a receiver killed (-9) turns the sends waiting on it into error completions naming it") {
        val dir = Files.createTempDirectory("braid-tcp-it")
        open().use { hosts ->
            TestFabric(1, Rail.tcp(hosts.iface), eagerSize = 1024).use { f ->
                val me = f.nodes[0]
                val kid = hosts.start(0, main, PeerMain.args("tcp", "hold", dir, "rx"), dir.resolve("rx.log").toFile())
                val rx = me.av.insert(Rendezvous.lookup(dir, "rx"))
                me.ep.tryTsend(
                    UnsafeBuffer(ByteBuffer.allocateDirect(1 shl 20)),
                    0,
                    1 shl 20,
                    rx,
                    1,
                    "rendezvous",
                ) shouldBe 0
                me.ep.trySendmsg(
                    UnsafeBuffer(ByteArray(16)),
                    0,
                    16,
                    rx,
                    2,
                    0,
                    OpFlags.TAGGED or OpFlags.DELIVERY_COMPLETE,
                    "delivery",
                ) shouldBe 0
                until("the connection", me, kid) { me.ep.tcp.stats.establishedCount() == 1 }
                repeat(100) { me.domain.progress() }
                kid.process().destroyForcibly()
                val errors =
                    me.await(2, millis = 10_000)
                        .map { it.shouldBeInstanceOf<CompletionError>() }
                        .associateBy { it.context }
                val name = me.av.straddr(rx)
                errors.getValue("rendezvous").message shouldContain name
                errors.getValue("delivery").message shouldContain name
            }
        }
    }

    for (silence in silences) {
        test("a peer ${silence.how} is declared dead after the time-out: what waits on it fails with EHOSTDOWN") {
            val dir = Files.createTempDirectory("braid-tcp-it")
            open().use { hosts ->
                TestFabric(
                        1,
                        Rail.tcp(hosts.iface),
                        settings = TestFabric.SETTINGS.with(braid.provider.tcp.TcpParams.TIMEOUT_MS, 1000L),
                    )
                    .use { f ->
                        val me = f.nodes[0]
                        val kid =
                            hosts.start(
                                0,
                                main,
                                PeerMain.args("tcp", "hold", dir, "peer"),
                                dir.resolve("peer.log").toFile(),
                            )
                        val peer = me.av.insert(Rendezvous.lookup(dir, "peer"))
                        me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, peer, 1, 0, "from-peer") shouldBe 0
                        me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, FiAddr.UNSPEC, 1, 0, "from-anyone") shouldBe 0
                        me.ep.tryTsend(UnsafeBuffer(ByteArray(100_000)), 0, 100_000, peer, 2, "to-peer") shouldBe 0
                        until("the connection", me, kid) { me.ep.tcp.stats.establishedCount() == 1 }
                        silence.begin(hosts, kid)
                        try {
                            val silent = System.nanoTime()
                            val errors =
                                me.await(2, millis = 15_000)
                                    .map { it.shouldBeInstanceOf<CompletionError>() }
                                    .associateBy { it.context }
                            println(
                                "tcp: a peer ${silence.how} was declared dead ${(System.nanoTime() - silent) / 1_000_000} ms after it fell silent (time-out 1000 ms)"
                            )
                            errors.getValue("from-peer").err shouldBe Errno.EHOSTDOWN
                            errors.getValue("to-peer").err shouldBe Errno.EHOSTDOWN
                            errors.getValue("to-peer").message shouldContain "stopped, hung or unreachable"
                            me.ep.srx.postedCount shouldBe 1 // the any-source receive still waits
                        } finally {
                            silence.end(hosts, kid)
                        }
                    }
            }
        }
    }
}
