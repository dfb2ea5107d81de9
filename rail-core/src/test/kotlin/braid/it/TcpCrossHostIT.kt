package braid.it

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Endpoint
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.provider.tcp.RawPeerMain
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.annotation.EnabledIf
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import java.nio.file.Files
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The tcp rail between hosts: processes in network namespaces joined through veth pairs and a bridge ([NetnsHosts]);
 * the test's own endpoint is on the bridge. Needs root (skipped, saying so, without it; CI requires it).
 */
@EnabledIf(NetnsUsable::class)
class TcpCrossHostIT :
    FunSpec({
        val main = PeerMain::class.java.name

        tcpPeerLossCases(
            { NetnsHosts(1) },
            listOf(
                Silence.SIGSTOP,
                Silence(
                    "whose link went down (silence, no reset)",
                    { h, _ -> (h as NetnsHosts).unplug(h.hosts[0]) },
                    { h, _ -> (h as NetnsHosts).plug(h.hosts[0]) },
                ),
            ),
        )

        test("a process on another host holding another job key is refused both ways, and nothing it sent is matched") {
            val dir = Files.createTempDirectory("braid-netns-it")
            NetnsHosts(1).use { net ->
                TestFabric(1, Rail.tcp(net.iface), keys = listOf("alpha")).use { f ->
                    val me = f.nodes[0]
                    Rendezvous.publish(dir, "root", me.ep.address)
                    me.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, FiAddr.UNSPEC, 0, -1L, "any") shouldBe 0
                    val kid =
                        net.start(
                            net.hosts[0],
                            main,
                            PeerMain.args("tcp", "send-refused", dir, "intruder", "root"),
                            dir.resolve("intruder.log").toFile(),
                            mapOf("BRAID_JOB_KEY" to "beta"),
                        )
                    until("the intruder's sends to be refused", me, kid) { "OK refused" in kid.output() }
                    kid.output() shouldContain "job's key"
                    val intruder = me.av.insert(Rendezvous.lookup(dir, "intruder"))
                    me.ep.tryTsend(buf("secret"), 0, 6, intruder, 1, "to-intruder") shouldBe 0
                    val err = me.await(1, millis = 30_000).single().shouldBeInstanceOf<CompletionError>()
                    err.context shouldBe "to-intruder"
                    err.err shouldBe Errno.EACCES
                    Rendezvous.mark(dir, "root")
                    kid.awaitOk(Duration.ofSeconds(60))
                    repeat(100) { me.domain.progress() }
                    me.cq.read(Completion()) shouldBe -Errno.EAGAIN
                    me.ep.srx.postedCount shouldBe 1
                    me.ep.srx.unexpectedCount shouldBe 0
                }
            }
        }

        for ((mode, what) in
            listOf(
                "garbage" to "garbage after a valid handshake",
                "truncated" to "a frame cut short by the end of the stream",
            )) {
            test(
                "$what from another host closes that connection, fails its operations, and a third host's stream goes on intact"
            ) {
                val dir = Files.createTempDirectory("braid-netns-it")
                NetnsHosts(2).use { net ->
                    TestFabric(1, Rail.tcp(net.iface), eagerSize = 4096).use { f ->
                        val me = f.nodes[0]
                        Rendezvous.publish(dir, "root", me.ep.address)
                        val count = 600
                        val good =
                            net.start(
                                net.hosts[1],
                                main,
                                PeerMain.args("tcp", "send", dir, "good", "root", 0, count),
                                dir.resolve("good.log").toFile(),
                            )
                        val raw =
                            net.start(
                                net.hosts[0],
                                RawPeerMain::class.java.name,
                                listOf(mode, "$dir", "raw", "root"),
                                dir.resolve("raw.log").toFile(),
                            )
                        val inbox = Inbox(me, listOf(good, raw))
                        inbox.until("the raw peer's handshake") { Rendezvous.published(dir, "raw") }
                        val r = me.av.insert(Rendezvous.lookup(dir, "raw"))
                        val stream = TrafficIn(me.ep, me.av.insert(Rendezvous.lookup(dir, "good")), 0, count)
                        me.ep.tryTrecv(
                            UnsafeBuffer(ByteArray(16)),
                            0,
                            16,
                            FiAddr.UNSPEC,
                            RawPeerMain.VALID_TAG,
                            0,
                            "valid",
                        ) shouldBe 0
                        stream.post()
                        inbox.until("the raw peer's valid message and half the good stream") {
                            "valid" in inbox.done && stream.next >= count / 2
                        }
                        // Operations in flight on the raw peer's connection: a receive it is to fill, a rendezvous send
                        // to it.
                        me.ep.tryTrecv(
                            UnsafeBuffer(ByteArray(2000)),
                            0,
                            2000,
                            r,
                            RawPeerMain.CUT_TAG,
                            0,
                            "from-raw",
                        ) shouldBe 0
                        me.ep.tryTsend(
                            UnsafeBuffer(ByteBuffer.allocateDirect(100_000)),
                            0,
                            100_000,
                            r,
                            9,
                            "to-raw",
                        ) shouldBe 0
                        repeat(20) { me.domain.progress() }
                        Rendezvous.mark(dir, RawPeerMain.GO)
                        inbox.until("error completions for both operations on the raw peer") { inbox.errors.size >= 2 }
                        raw.awaitOk(Duration.ofSeconds(60))
                        val fromRaw = inbox.errors.getValue("from-raw")
                        val toRaw = inbox.errors.getValue("to-raw")
                        if (mode == "garbage") {
                            toRaw.err shouldBe Errno.EIO
                            toRaw.message shouldContain "corrupt frame"
                            fromRaw.err shouldBe Errno.EHOSTDOWN
                        } else {
                            fromRaw.message shouldContain "truncated frame"
                            toRaw.err shouldBe Errno.ECONNRESET
                        }
                        inbox.until("the rest of the good stream") { stream.next == count }
                        Rendezvous.mark(dir, "root")
                        good.awaitOk(Duration.ofSeconds(60))
                        inbox.errors.keys shouldBe setOf("from-raw", "to-raw")
                    }
                }
            }
        }
    })

/**
 * Receives sender [sender]'s [Traffic] stream from [source] with one directed receive at a time, checking every byte.
 */
private class TrafficIn(
    private val ep: Endpoint,
    private val source: Long,
    private val sender: Int,
    private val count: Int,
) {
    private val slot = UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE))
    var next = 0
        private set

    fun post() {
        if (next < count) check(ep.tryTrecv(slot, 0, Traffic.MAX_SIZE, source, Traffic.tag(sender, next), 0, this) == 0)
    }

    fun complete(c: Completion) {
        val size = Traffic.size(sender, next)
        check(c.source == source && c.len == size.toLong()) {
            "message $sender/$next: ${c.len} bytes from ${c.source}, expected $size from $source"
        }
        val bad = Traffic.check(slot, sender, next, size)
        check(bad < 0) { "message $sender/$next corrupt at byte $bad of $size" }
        next++
        post()
    }
}

/** The completions of [node]: streams fed, contexts of other successes, errors by context. */
private class Inbox(private val node: TestFabric.Node, private val kids: List<ChildProcess>) {
    val done = HashSet<Any?>()
    val errors = HashMap<Any?, CompletionError>()

    fun until(what: String, seconds: Long = 60, cond: () -> Boolean) {
        val deadline = Deadline.of("$what", Duration.ofSeconds(seconds))
        while (!cond()) {
            when (node.cq.readFrom(node.entry)) {
                1 -> (node.entry.context as? TrafficIn)?.complete(node.entry) ?: done.add(node.entry.context)
                -Errno.EAVAIL -> {
                    val e = CompletionError()
                    node.cq.readErr(e)
                    errors[e.context] = e
                }
            }
            deadline.check { "errors $errors; children:\n${kids.joinToString("\n") { it.output() }}" }
        }
    }
}
