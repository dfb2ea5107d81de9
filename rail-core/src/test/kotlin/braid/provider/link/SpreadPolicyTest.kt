package braid.provider.link

import braid.core.Braid
import braid.core.Completion
import braid.core.CqFormat
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Hints
import braid.core.Info
import braid.core.Rail
import braid.core.RailAttr
import braid.core.Settings
import braid.core.TestFabric
import braid.core.buf
import braid.core.driveUntil
import braid.core.sendAsync
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * ROUND_ROBIN and STRIPE over this host's two interfaces (lo and eth0, no shm, so same-process peers take the network):
 * one sender's messages of mixed sizes, tagged and untagged, to any-source and directed receives, each matched once and
 * in the order sent, every byte checked; striped parts in proportion to the weights.
 */
class SpreadPolicyTest :
    FunSpec({
        val twoRails = "tcp:lo+tcp:eth0"
        val haveEth0 =
            runCatching { Braid.getInfo(Hints(provider = "tcp", domainName = "eth0", settings = TestFabric.SETTINGS)) }
                .isSuccess

        fun settings(policy: String): Settings =
            TestFabric.SETTINGS.with(LinkParams.POLICY, policy).with(LinkParams.STRIPE_THRESHOLD, 16 * 1024)

        /**
         * Message [i]'s length: mostly small (eager and rendezvous), every seventh 20–150 KiB (striped under STRIPE).
         */
        fun size(i: Int): Int =
            when {
                i % 7 == 3 -> 20_000 + (i * 7919) % 130_000
                i % 5 == 0 -> 0
                else -> (i * 131) % 3000
            }

        fun byteOf(i: Int, j: Int): Byte = (i * 31 + j * 7).toByte()

        for (policy in listOf(LinkShape.ROUND_ROBIN, LinkShape.STRIPE)) {
            test("$policy: every message is matched once and in the order sent, whatever rail carried it").config(
                enabled = haveEth0
            ) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(policy)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val fromA = f.addrs[1][0]
                    val n = 120
                    val tagged = (0 until n).filter { it % 3 != 1 }
                    val untagged = (0 until n).filter { it % 3 == 1 }
                    val buffers = HashMap<String, UnsafeBuffer>()
                    fun post(k: Int) {
                        val t = k < tagged.size
                        val index = if (t) k else k - tagged.size
                        val name = (if (t) "t" else "u") + index
                        val buf = UnsafeBuffer(ByteBuffer.allocateDirect(160_000))
                        buffers[name] = buf
                        val from = if (index % 2 == 0) FiAddr.UNSPEC else fromA
                        val rc =
                            if (t) b.ep.tryTrecv(buf, 0, buf.capacity(), from, 0, -1L, name)
                            else b.ep.tryRecv(buf, 0, buf.capacity(), from, name)
                        rc shouldBe 0
                    }
                    // Half the receives wait before the messages come; the rest are posted after, so those arrive
                    // unexpected (or early, held by the reorder stage).
                    // Receive k is the k-th of its kind posted (tagged ones 0 until tagged.size, then untagged).
                    val order = tagged.indices.map { it } + untagged.indices.map { tagged.size + it }
                    val (before, after) =
                        order.partition { k ->
                            if (k < tagged.size) k < tagged.size / 2 else k - tagged.size < untagged.size / 2
                        }
                    before.forEach(::post)
                    val sent = ArrayList<UnsafeBuffer>()
                    for (i in 0 until n) {
                        val msg = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size(i), 1)), 0, size(i))
                        for (j in 0 until size(i)) msg.putByte(j, byteOf(i, j))
                        sent += msg
                        val rc =
                            if (i % 3 != 1) a.ep.tryTsenddata(msg, 0, size(i), i.toLong(), toB, 5, "s$i")
                            else a.ep.trySenddata(msg, 0, size(i), i.toLong(), toB, "s$i")
                        rc shouldBe 0
                    }
                    driveUntil("half the messages reach b", listOf(a, b)) {
                        b.ep.stats().rails.sumOf { it.messagesReceived } >= n / 2
                    }
                    after.forEach(::post)
                    val got = b.await(n, 30_000, others = listOf(a))
                    a.await(n, 30_000, others = listOf(b)).forEach { (it is Completion) shouldBe true }
                    for (c in got) {
                        c as Completion
                        val name = c.context as String
                        val index = name.substring(1).toInt()
                        val i = c.data.toInt()
                        // The k-th receive of a kind got the k-th message of that kind: sent order kept.
                        i shouldBe (if (name[0] == 't') tagged[index] else untagged[index])
                        c.len shouldBe size(i).toLong()
                        val buf = buffers[name]!!
                        for (j in 0 until size(i)) if (buf.getByte(j) != byteOf(i, j)) error("$name byte $j wrong")
                    }
                    val sentStats = a.ep.stats()
                    sentStats.rail("tcp:lo")!!.messagesSent shouldBeGreaterThan 10
                    sentStats.rail("tcp:eth0")!!.messagesSent shouldBeGreaterThan 10
                    if (policy == LinkShape.STRIPE) {
                        sentStats.rail("tcp:lo")!!.fragments shouldBe sentStats.rail("tcp:eth0")!!.fragments
                        sentStats.rail("tcp:lo")!!.fragments shouldBeGreaterThan 0
                        b.ep.stats().rails.sumOf { it.reordered } shouldBeGreaterThan 0
                        b.ep.stats().render() shouldContain "reordered"
                    }
                }
            }
        }

        test("STRIPE splits a large message by the rails' weights, each part straight into the receive").config(
            enabled = haveEth0
        ) {
            val info =
                Braid.getInfo(
                        Hints(provider = "link", settings = settings(LinkShape.STRIPE).with(LinkParams.LINKS, twoRails))
                    )
                    .first()
            val weighted =
                info.copy(
                    rails =
                        info.rails.map { r ->
                            r.copy(rail = RailAttr(r.rail!!.name, if (r.domainName == "lo") 3.0 else 1.0))
                        }
                )
            val fabric = Braid.fabric(weighted)
            try {
                val nodes = listOf(weighted, weighted).map { TestFabric.Node(fabric.domain(it), CqFormat.TAGGED) }
                nodes.forEach { it.ep.enable() }
                val (a, b) = nodes
                val toB = a.av.insert(b.ep.address)
                b.av.insert(a.ep.address)
                val length = 1 shl 20
                val count = 8
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(length))
                for (k in 0 until count) {
                    val msg = UnsafeBuffer(ByteBuffer.allocateDirect(length))
                    for (j in 0 until length step 4096) msg.putByte(j, (k + j / 4096).toByte())
                    b.ep.tryTrecv(rx, 0, length, FiAddr.UNSPEC, 1, 0, "r$k") shouldBe 0
                    a.ep.tryTsend(msg, 0, length, toB, 1, "s$k") shouldBe 0
                    (b.await(1, others = listOf(a)).single() as Completion).len shouldBe length.toLong()
                    for (j in 0 until length step 4096) rx.getByte(j) shouldBe (k + j / 4096).toByte()
                    a.await(1, others = listOf(b))
                }
                val stats = a.ep.stats()
                val lo = stats.rail("tcp:lo")!!.bytesSent.toDouble()
                val eth0 = stats.rail("tcp:eth0")!!.bytesSent.toDouble()
                (lo + eth0) shouldBe (count.toDouble() * length)
                // 3:1 by weight, to the alignment of the parts.
                (kotlin.math.abs(lo / (lo + eth0) - 0.75) < 0.001) shouldBe true
                stats.rail("tcp:lo")!!.fragments shouldBe count.toLong()
                nodes.forEach { it.ep.close() }
            } finally {
                fabric.close()
            }
        }

        test(
                "ROUND_ROBIN: after a rail is reset, messages go on over the other in order; with none left the send is refused naming the rails"
            )
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(LinkShape.ROUND_ROBIN)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val rx = UnsafeBuffer(ByteArray(16))
                    fun exchange(from: Int, until: Int) {
                        for (i in from until until) {
                            a.ep.tryTsenddata(buf("m$i"), 0, 2 + i / 10, i.toLong(), toB, 3, null) shouldBe 0
                        }
                        for (i in from until until) {
                            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 3, 0, "r$i") shouldBe 0
                            (b.await(1, others = listOf(a)).single() as Completion).data shouldBe i.toLong()
                        }
                        a.await(until - from, others = listOf(b))
                    }
                    exchange(0, 4)
                    // tcp:lo's connection is reset under both ends.
                    val link = a.ep.transport as LinkTransport
                    val mine = link.rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    mine.peerFor(toB)!!.conn!!.channel.close()
                    val theirs = (b.ep.transport as LinkTransport).rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    driveUntil("both ends see tcp:lo gone", listOf(a, b)) {
                        mine.peerFor(toB)?.dead == true && theirs.peerFor(f.addrs[1][0])?.dead == true
                    }
                    exchange(4, 12)
                    a.ep.stats().rail("tcp:lo")!!.failovers shouldBe 1
                    // b's rails both go away: tcp:lo may have reconnected by now (a reset rail is retried while
                    // another reaches the peer), so it is closed too.
                    (b.ep.transport as LinkTransport).rail("tcp:eth0")!!.close()
                    (b.ep.transport as LinkTransport).rail("tcp:lo")!!.close()
                    val other = link.rail("tcp:eth0") as braid.provider.tcp.TcpTransport
                    driveUntil("a sees b gone on both rails", listOf(a, b)) {
                        other.peerFor(toB)?.dead == true && !mine.connected(toB)
                    }
                    val refusal =
                        shouldThrow<java.util.concurrent.ExecutionException> {
                                a.ep.sendAsync(buf("last"), 0, 4, toB).get()
                            }
                            .cause!!
                            .message!!
                    refusal shouldContain "tried: 'tcp:lo' (peer gone), 'tcp:eth0' (peer gone)"
                }
            }

        test(
                "ROUND_ROBIN without resending: a rail that fails the messages it holds: they fail at the sender, the rest arrive once and in order, nothing hangs"
            )
            .config(enabled = haveEth0) {
                val noResend = settings(LinkShape.ROUND_ROBIN).with(LinkParams.RESEND_BYTES, 0)
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = noResend).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val n = 200
                    val msg = UnsafeBuffer(ByteArray(2000))
                    // Every send is posted before anything is driven; then tcp:lo's connection to b is closed before
                    // it is up: what waits in its queue fails, one message in two.
                    for (i in 0 until n) a.ep.tryTsenddata(msg, 0, 100 + i * 9, i.toLong(), toB, 3, i) shouldBe 0
                    val link = a.ep.transport as LinkTransport
                    (link.rail("tcp:lo") as braid.provider.tcp.TcpTransport).peerFor(toB)!!.conn?.channel?.close()
                    val got = ArrayList<Long>()
                    val rx = UnsafeBuffer(ByteArray(2000))
                    var posted = 0
                    val sent = ArrayList<Any>()
                    driveUntil(
                        "every send completes and every message that did not fail arrives",
                        listOf(a, b),
                        30_000,
                    ) {
                        if (posted == got.size) {
                            b.ep.tryTrecv(rx, 0, 2000, FiAddr.UNSPEC, 3, 0, posted) shouldBe 0
                            posted++
                        }
                        if (b.cq.readFrom(b.entry) == 1) got += b.entry.data
                        if (sent.size < n) sent.addAll(a.await(1, 30_000, others = listOf(b)))
                        sent.size == n && got.size == n - sent.count { it is braid.core.CompletionError }
                    }
                    val failed = sent.filterIsInstance<braid.core.CompletionError>().map { it.context as Int }.toSet()
                    (failed.size in 1 until n) shouldBe true
                    // Once each, in the order sent, and exactly the messages that did not fail.
                    got shouldBe got.sorted().distinct()
                    got.map { it.toInt() }.toSet() shouldBe (0 until n).toSet() - failed
                    (b.ep.transport as LinkTransport).reorder!!.skipped shouldBeGreaterThan 0L
                }
            }

        for (policy in listOf(LinkShape.ROUND_ROBIN, LinkShape.PER_PEER)) {
            test(
                    "$policy: a rail that dies holding messages: they go again on the other rail, every one arrives once and in order, none fails"
                )
                .config(enabled = haveEth0) {
                    val jfr = java.nio.file.Files.createTempFile("braid-failover", ".jfr")
                    val recording = jdk.jfr.Recording()
                    recording.enable("io.braid.Failover")
                    recording.start()
                    var cut = ""
                    var resent = 0L
                    TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(policy)).use { f ->
                        val (a, b) = f.nodes
                        val toB = f.addrs[0][1]
                        val n = 200
                        val msg = UnsafeBuffer(ByteArray(2000))
                        // Eager messages (this fabric's eager size is 1 KiB): a link keeps copies of those.
                        for (i in 0 until n) a.ep.tryTsenddata(msg, 0, 100 + i * 4, i.toLong(), toB, 3, i) shouldBe 0
                        val link = a.ep.transport as LinkTransport
                        val first = link.routeName(toB)!!
                        // Under PER_PEER every message is on the pinned rail; under ROUND_ROBIN half on each.
                        cut = if (policy == LinkShape.PER_PEER) first else "tcp:lo"
                        (link.rail(cut) as braid.provider.tcp.TcpTransport).peerFor(toB)!!.conn?.channel?.close()
                        val got = ArrayList<Long>()
                        val rx = UnsafeBuffer(ByteArray(2000))
                        var posted = 0
                        val sent = ArrayList<Any>()
                        driveUntil("every send completes and every message arrives", listOf(a, b), 30_000) {
                            if (posted == got.size && posted < n) {
                                b.ep.tryTrecv(rx, 0, 2000, FiAddr.UNSPEC, 3, 0, posted) shouldBe 0
                                posted++
                            }
                            if (b.cq.readFrom(b.entry) == 1) got += b.entry.data
                            if (sent.size < n) sent.addAll(a.await(1, 30_000, others = listOf(b)))
                            sent.size == n && got.size == n
                        }
                        sent.filterIsInstance<braid.core.CompletionError>() shouldBe emptyList()
                        got shouldBe (0 until n).map { it.toLong() }
                        val stats = a.ep.stats()
                        stats.rails.sumOf { it.retransmissions } shouldBeGreaterThan 0L
                        stats.rail(cut)!!.failovers shouldBe 1L
                        resent = stats.rails.sumOf { it.retransmissions }
                    }
                    // Each move of resent messages off the dead rail is a JFR event naming both rails.
                    recording.stop()
                    recording.dump(jfr)
                    recording.close()
                    val events =
                        jdk.jfr.consumer.RecordingFile.readAllEvents(jfr).filter {
                            it.eventType.name == "io.braid.Failover"
                        }
                    java.nio.file.Files.deleteIfExists(jfr)
                    events.map { it.getString("fromRail") }.toSet() shouldBe setOf(cut)
                    events.all { it.getString("toRail") != cut } shouldBe true
                    events.sumOf { it.getLong("resent") } shouldBe resent
                }
        }

        test(
                "ROUND_ROBIN: a connection that is gone when a send writes to it: the message that send wrote goes again on the other rail, every one arrives once and in order"
            )
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(LinkShape.ROUND_ROBIN)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val n = 40
                    val size = 32
                    // One receive more than messages: a message that came twice would take it.
                    val rx = Array(n + 1) { UnsafeBuffer(ByteArray(size)) }
                    for (i in 0..n) b.ep.tryTrecv(rx[i], 0, size, FiAddr.UNSPEC, 0, -1L, i) shouldBe 0
                    val tx = Array(n) { i -> UnsafeBuffer(ByteArray(size)).also { it.putInt(0, i) } }
                    // Both rails connected: the first messages go one on each.
                    for (i in 0 until 4) a.ep.tryTsend(tx[i], 0, size, toB, i.toLong(), i) shouldBe 0
                    b.await(4, others = listOf(a))
                    a.await(4, others = listOf(b))
                    // tcp:lo's socket is reset under a, and nothing is driven: the next send the round robin gives
                    // tcp:lo is written into its buffer and completed, and the flush within that very send finds the
                    // connection gone (as a sender whose socket `ss -K` killed does). That message's bytes died with
                    // the connection; the copy the link kept must go again.
                    val lo = (a.ep.transport as LinkTransport).rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    val channel = lo.peerFor(toB)!!.conn!!.channel
                    channel.setOption(java.net.StandardSocketOptions.SO_LINGER, 0)
                    channel.close()
                    for (i in 4 until n) a.ep.tryTsend(tx[i], 0, size, toB, i.toLong(), i) shouldBe 0
                    (a.ep.transport as LinkTransport).railFailed(toB, "tcp:lo") shouldBe true
                    val got = ArrayList<Int>()
                    var sent = 0
                    driveUntil(
                        "every message to arrive",
                        listOf(a, b),
                        30_000,
                        seen = {
                            "${got.size} arrived; a: ${(a.ep.transport as LinkTransport).debugState(toB)}\n" +
                                "b: ${(b.ep.transport as LinkTransport).debugState(f.addrs[1][0])}"
                        },
                    ) {
                        when (b.cq.readFrom(b.entry)) {
                            1 -> {
                                // The k-th receive posted got the k-th message sent.
                                val k = b.entry.context as Int
                                b.entry.tag shouldBe k.toLong()
                                rx[k].getInt(0) shouldBe k
                                got += k
                            }
                            -braid.core.Errno.EAVAIL -> {
                                b.cq.readErr(b.error)
                                error("receive failed: ${b.error.message}")
                            }
                        }
                        when (a.cq.readFrom(a.entry)) {
                            1 -> sent++
                            -braid.core.Errno.EAVAIL -> {
                                a.cq.readErr(a.error)
                                error("send failed: ${a.error.message}")
                            }
                        }
                        got.size == n - 4 && sent == n - 4
                    }
                    got shouldBe (4 until n).toList()
                    a.ep.stats().rail("tcp:eth0")!!.retransmissions shouldBeGreaterThan 0L
                    // Nothing more arrives: no message came twice.
                    repeat(2000) {
                        a.domain.progress()
                        b.domain.progress()
                    }
                    b.cq.readFrom(b.entry) shouldBe -braid.core.Errno.EAGAIN
                }
            }

        test("ROUND_ROBIN: a ping-pong's messages carry the link's acknowledgements, with no frame of their own")
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(LinkShape.ROUND_ROBIN)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val ping = UnsafeBuffer(ByteArray(64))
                    val rxA = UnsafeBuffer(ByteArray(64))
                    val rxB = UnsafeBuffer(ByteArray(64))
                    val rounds = 200
                    for (i in 0 until rounds) {
                        // The ping goes first: between a reply's arrival and it, nothing drives a's progress, so no
                        // pause can send the acknowledgement due for the reply before the ping carries it.
                        ping.putInt(0, i)
                        a.ep.tryTinject(ping, 0, 64, toB, 3) shouldBe 0
                        b.ep.tryTrecv(rxB, 0, 64, FiAddr.UNSPEC, 3, 0, "b$i") shouldBe 0
                        a.ep.tryTrecv(rxA, 0, 64, FiAddr.UNSPEC, 4, 0, "a$i") shouldBe 0
                        (b.await(1, others = listOf(a)).single() as Completion).context shouldBe "b$i"
                        rxB.getInt(0) shouldBe i
                        b.ep.tryTinject(rxB, 0, 64, toA, 4) shouldBe 0
                        (a.await(1, others = listOf(b)).single() as Completion).context shouldBe "a$i"
                        rxA.getInt(0) shouldBe i
                    }
                    val mine = a.ep.transport as LinkTransport
                    val theirs = b.ep.transport as LinkTransport
                    // Both rails carried pings and replies; every reply acknowledged its ping, every ping the reply
                    // before it, and no acknowledgement needed a frame (a write, a packet) of its own.
                    a.ep.stats().rail("tcp:lo")!!.messagesSent shouldBeGreaterThan 10
                    a.ep.stats().rail("tcp:eth0")!!.messagesSent shouldBeGreaterThan 10
                    theirs.reorder!!.acksCarried shouldBeGreaterThan (rounds - 3).toLong()
                    mine.reorder!!.acksCarried shouldBeGreaterThan (rounds - 3).toLong()
                    theirs.reorder!!.acksSent shouldBe 0L
                    mine.reorder!!.acksSent shouldBe 0L
                    // The acknowledgements freed the copies kept for resending: a keeps none, b its last reply's.
                    mine.debugState(toB) shouldContain "kept none"
                    theirs.debugState(toA) shouldContain "kept 1 from $rounds "
                }
            }

        test(
                "ROUND_ROBIN to a peer of a smaller eager size and a small share: the credit kept back for resends is " +
                    "what the peer lends for them, every message arrives once and in order, and a rail that dies " +
                    "costs none of them"
            )
            .config(enabled = haveEth0) {
                // a sends whole up to 16 KiB, b takes whole up to 1 KiB and lends a's rails a few KiB each: had a kept
                // back credit for a 16 KiB resend (its own eager size) it could never send, since b lends for a 1 KiB
                // one.
                TestFabric(
                        rail = Rail.link(twoRails, twoRails),
                        settings = settings(LinkShape.ROUND_ROBIN),
                        eagerSizes = listOf(16 * 1024, 1024),
                        unexpectedBytes = 12 * 1024,
                    )
                    .use { f ->
                        val (a, b) = f.nodes
                        val toB = f.addrs[0][1]
                        val toA = f.addrs[1][0]
                        val link = a.ep.transport as LinkTransport
                        val n = 60
                        fun len(i: Int) = if (i == n - 5) 4000 else 16 + (i * 97) % 900
                        val sent = ArrayList<UnsafeBuffer>()
                        val rx = UnsafeBuffer(ByteArray(4096 * n))
                        fun post(i: Int) {
                            b.ep.tryTrecv(rx, i * 4096, 4096, FiAddr.UNSPEC, 3, 0, "r$i") shouldBe 0
                        }
                        (0 until n).forEach(::post)
                        for (i in 0 until n) {
                            val m = UnsafeBuffer(ByteArray(len(i)))
                            for (j in 0 until len(i)) m.putByte(j, byteOf(i, j))
                            sent += m
                            val deadline = System.nanoTime() + 20_000_000_000L
                            while (true) {
                                val rc = a.ep.tryTsenddata(m, 0, len(i), i.toLong(), toB, 3, "s$i")
                                if (rc == 0) break
                                rc shouldBe -braid.core.Errno.EAGAIN
                                if (System.nanoTime() - deadline > 0)
                                    error("message $i never sent: ${link.debugState(toB)}")
                                a.domain.progress()
                                b.domain.progress()
                            }
                            if (i == n / 2 + 5) {
                                // A rail dies with messages in flight: those it carried go again on the other.
                                (link.rail("tcp:lo") as braid.provider.tcp.TcpTransport)
                                    .peerFor(toB)!!
                                    .conn!!
                                    .channel
                                    .close()
                            }
                        }
                        val got = b.await(n, 30_000, others = listOf(a)).map { it as Completion }
                        // Each message once, and receive k (posted k-th) got message k: matched in the order sent.
                        got.map { it.data.toInt() }.sorted() shouldBe (0 until n).toList()
                        for (c in got) (c.context as String).substring(1).toInt() shouldBe c.data.toInt()
                        for (c in got) {
                            val i = c.data.toInt()
                            c.len shouldBe len(i).toLong()
                            for (j in 0 until len(i)) if (rx.getByte(i * 4096 + j) != byteOf(i, j))
                                error("$i byte $j wrong")
                        }
                        a.await(n, 30_000, others = listOf(b)).forEach { (it is Completion) shouldBe true }
                        // Kept for resending: what b's eager size covers (the 4000-byte message went unkept).
                        link.keepLimitTo(toB) shouldBe 1024
                        (b.ep.transport as LinkTransport).keepLimitTo(toA) shouldBe 1024
                    }
            }

        test("ROUND_ROBIN: a reset rail reconnects, is re-admitted and carries messages again, in order, none lost")
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(LinkShape.ROUND_ROBIN)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val rx = UnsafeBuffer(ByteArray(16))
                    fun exchange(from: Int, until: Int) {
                        for (i in from until until) {
                            a.ep.tryTsenddata(buf("m$i"), 0, 2 + i / 10, i.toLong(), toB, 3, null) shouldBe 0
                        }
                        for (i in from until until) {
                            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 3, 0, "r$i") shouldBe 0
                            (b.await(1, others = listOf(a)).single() as Completion).data shouldBe i.toLong()
                        }
                        a.await(until - from, others = listOf(b))
                    }
                    exchange(0, 4)
                    val link = a.ep.transport as LinkTransport
                    val theirLink = b.ep.transport as LinkTransport
                    val mine = link.rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    mine.peerFor(toB)!!.conn!!.channel.close()
                    driveUntil("a's link fails tcp:lo for b", listOf(a, b)) { link.railFailed(toB, "tcp:lo") }
                    exchange(4, 12)
                    driveUntil("both links re-admit tcp:lo", listOf(a, b), 30_000) {
                        !link.railFailed(toB, "tcp:lo") && !theirLink.railFailed(toA, "tcp:lo") && mine.connected(toB)
                    }
                    val before = a.ep.stats().rail("tcp:lo")!!.messagesSent
                    exchange(12, 20)
                    val stats = a.ep.stats().rail("tcp:lo")!!
                    (stats.messagesSent - before) shouldBeGreaterThan 0L
                    stats.failovers shouldBe 1L
                }
            }

        test(
                "ROUND_ROBIN: a send that finds every other rail failed takes a failed rail reconnected since, before the retry tick re-admits it; never the connection it lost"
            )
            .config(enabled = haveEth0) {
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = settings(LinkShape.ROUND_ROBIN)).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val rx = UnsafeBuffer(ByteArray(16))
                    fun exchange(from: Int, until: Int) {
                        for (i in from until until) {
                            a.ep.tryTsenddata(buf("m$i"), 0, 2, i.toLong(), toB, 3, null) shouldBe 0
                        }
                        for (i in from until until) {
                            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 3, 0, "r$i") shouldBe 0
                            (b.await(1, others = listOf(a)).single() as Completion).data shouldBe i.toLong()
                        }
                        a.await(until - from, others = listOf(b))
                    }
                    exchange(0, 4)
                    val link = a.ep.transport as LinkTransport
                    val theirLink = b.ep.transport as LinkTransport
                    // No retry tick comes while the test runs: the test reconnects tcp:lo itself, as a tick would.
                    val hour = 3_600_000_000_000L
                    link.retryEvery(hour, System.nanoTime() + hour)
                    theirLink.retryEvery(hour, System.nanoTime() + hour)
                    val lo = link.rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    val eth0 = link.rail("tcp:eth0") as braid.provider.tcp.TcpTransport
                    fun cut(mine: braid.provider.tcp.TcpTransport, name: String) {
                        val theirs = theirLink.rail(name) as braid.provider.tcp.TcpTransport
                        mine.peerFor(toB)!!.conn!!.channel.close()
                        driveUntil("both ends see $name gone", listOf(a, b)) {
                            mine.peerFor(toB)?.dead == true &&
                                theirs.peerFor(toA)?.dead == true &&
                                link.railFailed(toB, name)
                        }
                    }
                    cut(lo, "tcp:lo")
                    val lost = lo.connectionGeneration(toB)
                    lo.reconnect(toB) shouldBe true
                    driveUntil("tcp:lo connected again", listOf(a, b)) { lo.connected(toB) }
                    lo.connectionGeneration(toB) shouldBe lost + 1
                    exchange(4, 8) // over tcp:eth0: tcp:lo is still failed for b
                    link.railFailed(toB, "tcp:lo") shouldBe true
                    // tcp:eth0 goes too: of a's rails to b only the reconnected tcp:lo is left, still failed.
                    cut(eth0, "tcp:eth0")
                    link.railFailed(toB, "tcp:lo") shouldBe true
                    // The send takes it (it was refused with EHOSTDOWN until the next tick re-admitted it).
                    exchange(8, 12)
                    link.railFailed(toB, "tcp:lo") shouldBe false
                    link.railFailed(toB, "tcp:eth0") shouldBe true
                    a.ep.stats().rail("tcp:lo")!!.failovers shouldBe 1L
                    // The link hears of a loss on tcp:lo before tcp has read the reset: that connection still reports
                    // itself connected, and is not taken back (what was sent there would be lost).
                    link.railLost("tcp:lo", toB)
                    lo.connected(toB) shouldBe true
                    a.ep.tryTsend(buf("x"), 0, 1, toB, 3, null) shouldBe -braid.core.Errno.EHOSTDOWN
                }
            }

        test(
                "ROUND_ROBIN: a rail reset while every credit of the other is taken by messages held behind the lost ones: those go again there anyway, every message arrives once and in order"
            )
            .config(enabled = haveEth0) {
                // A small window: 409 messages of 32 B fill a rail's credit. A long time-out: no heartbeat carries
                // credit back while the test runs.
                val small =
                    settings(LinkShape.ROUND_ROBIN)
                        .with(braid.provider.tcp.TcpParams.WINDOW, 64 * 1024)
                        .with(braid.provider.tcp.TcpParams.TIMEOUT_MS, 600_000L)
                TestFabric(rail = Rail.link(twoRails, twoRails), settings = small).use { f ->
                    val (a, b) = f.nodes
                    val toB = f.addrs[0][1]
                    val toA = f.addrs[1][0]
                    val n = 1600
                    val size = 32
                    val rx = Array(n) { UnsafeBuffer(ByteArray(size)) }
                    for (i in 0 until n) b.ep.tryTrecv(rx[i], 0, size, FiAddr.UNSPEC, 0, -1L, i) shouldBe 0
                    val tx = Array(n) { i -> UnsafeBuffer(ByteArray(size)).also { it.putInt(0, i) } }
                    // Both rails connected and granted their credit; b's messages back carry the credit a's freed.
                    for (i in 0 until 4) a.ep.tryTsend(tx[i], 0, size, toB, i.toLong(), i) shouldBe 0
                    b.await(4, others = listOf(a))
                    a.await(4, others = listOf(b))
                    val back = UnsafeBuffer(ByteArray(size))
                    for (i in 0 until 4) {
                        a.ep.tryTrecv(back, 0, size, FiAddr.UNSPEC, 0, -1L, null) shouldBe 0
                        b.ep.tryTsend(back, 0, size, toA, 0, null) shouldBe 0
                    }
                    a.await(4, others = listOf(b))
                    b.await(4, others = listOf(a))
                    // a sends the rest while b reads nothing: each rail carries what its credit allows (the rest waits
                    // at a), half the messages each.
                    for (i in 4 until n) a.ep.tryTsend(tx[i], 0, size, toB, i.toLong(), i) shouldBe 0
                    repeat(2000) { a.domain.progress() }
                    // b resets tcp:lo, losing what it had not read of it. What tcp:eth0 carried then waits at b behind
                    // the first message lost, and holds all of tcp:eth0's credit: the lost messages, sent again over
                    // tcp:eth0, must still get through (on the head of credit a link's rail keeps for them; without
                    // it both ends wait for ever, as MultiRailCrossHostIT's reset stream once did).
                    val lo = (b.ep.transport as LinkTransport).rail("tcp:lo") as braid.provider.tcp.TcpTransport
                    val channel = lo.peerFor(toA)!!.conn!!.channel
                    channel.setOption(java.net.StandardSocketOptions.SO_LINGER, 0)
                    channel.close()
                    val got = ArrayList<Long>()
                    var sent = 0
                    driveUntil(
                        "every message to arrive",
                        listOf(a, b),
                        30_000,
                        seen = {
                            "${got.size} arrived; a: ${(a.ep.transport as LinkTransport).debugState(toB)}\n" +
                                "b: ${(b.ep.transport as LinkTransport).debugState(toA)}"
                        },
                    ) {
                        when (b.cq.readFrom(b.entry)) {
                            1 -> {
                                // The k-th receive posted got the k-th message sent, whole (the receives may complete
                                // out of turn: a message tcp sent as a rendezvous for lack of credit completes later).
                                val k = b.entry.context as Int
                                b.entry.tag shouldBe k.toLong()
                                rx[k].getInt(0) shouldBe k
                                got += b.entry.tag
                            }
                            -braid.core.Errno.EAVAIL -> {
                                b.cq.readErr(b.error)
                                error("receive failed: ${b.error.message}")
                            }
                        }
                        when (a.cq.readFrom(a.entry)) {
                            1 -> sent++
                            -braid.core.Errno.EAVAIL -> {
                                a.cq.readErr(a.error)
                                error("send failed: ${a.error.message}")
                            }
                        }
                        got.size == n - 4 && sent == n - 4
                    }
                    got.sorted() shouldBe (4L until n.toLong()).toList()
                    a.ep.stats().rail("tcp:eth0")!!.retransmissions shouldBeGreaterThan 0L
                }
            }

        test("ROUND_ROBIN and STRIPE refuse a rail that cannot carry the sequence numbers, naming it and the fix") {
            val rails = listOf(LinkShape.Rail("tcp:eth0", "tcp", listOf("eth0")), LinkShape.Rail("fast", "ofi"))
            for (policy in listOf(LinkShape.ROUND_ROBIN, LinkShape.STRIPE)) {
                val p = LinkShape.problems(rails, policy).single { it.kind == LinkShapeProblem.Kind.UNSEQUENCED_RAIL }
                p.path shouldBe "rails[1].provider"
                p.message("x", rails) shouldContain
                    "rail 'fast' in link 'x': provider 'ofi' cannot carry the sequence numbers"
                p.hint shouldContain "use policy PER_PEER"
            }
            LinkShape.problems(rails, LinkShape.PER_PEER).none {
                it.kind == LinkShapeProblem.Kind.UNSEQUENCED_RAIL
            } shouldBe true
        }

        test("a striping threshold below the eager size is refused naming the setting, the value and the fix").config(
            enabled = haveEth0
        ) {
            val low =
                Settings.ofEnvironment(mapOf("BRAID_LINK_POLICY" to "STRIPE", "BRAID_LINK_STRIPE_THRESHOLD" to "100"))
            val info: Info =
                Braid.getInfo(Hints(provider = "link", settings = low.with(LinkParams.LINKS, twoRails))).first()
            val fabric = Braid.fabric(info)
            val message =
                try {
                    shouldThrow<FabricException> { fabric.domain(info) }.message!!
                } finally {
                    fabric.close()
                }
            message shouldContain "BRAID_LINK_STRIPE_THRESHOLD"
            message shouldContain "striping threshold of 100 bytes, below the eager size"
            message shouldContain "set BRAID_LINK_STRIPE_THRESHOLD to at least"
        }
    })
