package braid.provider.tcp

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.core.TestFabric
import braid.core.buf
import braid.core.text
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/** The matching rules of the shared receive context, exercised through real tcp endpoints on 127.0.0.1 (the tcp twin of MatchingTest). */
class TcpMatchingTest : FunSpec({
    fun UnsafeBuffer.send(f: TcpTestFabric, from: Int, to: Int, tag: Long, ctx: Any? = null) =
        f.nodes[from].ep.tryTsend(this, 0, capacity(), f.addrs[from][to], tag, ctx) shouldBe 0

    test("the earliest posted receive wins whether it names the sender or accepts any source") {
        TcpTestFabric(3).use { f ->
            val (a, b, c) = f.nodes
            val bufs = List(4) { UnsafeBuffer(ByteArray(8)) }
            val fromA = f.addrs[2][0]
            c.ep.tryTrecv(bufs[0], 0, 8, FiAddr.UNSPEC, 5, 0, "any-1") shouldBe 0
            c.ep.tryTrecv(bufs[1], 0, 8, fromA, 5, 0, "from-a") shouldBe 0
            c.ep.tryTrecv(bufs[2], 0, 8, FiAddr.UNSPEC, 5, 0, "any-2") shouldBe 0
            buf("a1").send(f, 0, 2, 5)
            c.await(1, others = listOf(a)).map { (it as Completion).context } shouldContainExactly listOf("any-1")
            buf("a2").send(f, 0, 2, 5)
            c.await(1, others = listOf(a)).map { (it as Completion).context } shouldContainExactly listOf("from-a")
            buf("b1").send(f, 1, 2, 5)
            c.await(1, others = listOf(b)).map { (it as Completion).context } shouldContainExactly listOf("any-2")
            bufs[0].text(2) shouldBe "a1"; bufs[1].text(2) shouldBe "a2"; bufs[2].text(2) shouldBe "b1"
        }
    }

    test("a directed receive takes only its sender's message, leaving an earlier one from another sender") {
        TcpTestFabric(3).use { f ->
            val (a, b, c) = f.nodes
            buf("from-b").send(f, 1, 2, 9)
            c.await(0, others = listOf(b)); repeat(20) { c.domain.progress() }
            buf("from-a").send(f, 0, 2, 9)
            repeat(20) { a.domain.progress(); c.domain.progress() }
            val rx = UnsafeBuffer(ByteArray(16))
            c.ep.tryTrecv(rx, 0, 16, f.addrs[2][0], 9, 0, "directed") shouldBe 0
            val got = c.await(1).single() as Completion
            got.source shouldBe f.addrs[2][0]
            rx.text(6) shouldBe "from-a"
            val rx2 = UnsafeBuffer(ByteArray(16))
            c.ep.tryTrecv(rx2, 0, 16, FiAddr.UNSPEC, 9, 0, "any") shouldBe 0
            (c.await(1).single() as Completion).source shouldBe f.addrs[2][1]
            rx2.text(6) shouldBe "from-b"
        }
    }

    test("messages from one sender match in the order sent, across unexpected and posted receives") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val n = 500
            for (i in 0 until n) {
                val out = UnsafeBuffer(ByteArray(4)).also { it.putInt(0, i) } // a send's buffer is the sender's until it completes
                while (a.ep.tryTsend(out, 0, 4, f.addrs[0][1], 42, null).also { if (it == -Errno.EAGAIN) a.domain.progress() } == -Errno.EAGAIN) Unit
                if (i == n / 2) { // the first half arrive unexpected
                    val deadline = System.nanoTime() + 10_000_000_000L
                    while (b.ep.srx.unexpectedCount <= n / 2) { a.domain.progress(); b.domain.progress(); check(System.nanoTime() < deadline) { "only ${b.ep.srx.unexpectedCount} arrived" } }
                }
            }
            val seen = ArrayList<Int>()
            val rx = UnsafeBuffer(ByteArray(4))
            repeat(n) {
                b.ep.tryTrecv(rx, 0, 4, FiAddr.UNSPEC, 0, -1L, null) shouldBe 0
                b.await(1, others = listOf(a))
                seen += rx.getInt(0)
            }
            seen shouldBe (0 until n).toList()
        }
    }

    test("the ignore mask selects which tag bits must match") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 0x1200, 0x00FF, "masked") shouldBe 0
            buf("no").send(f, 0, 1, 0x1312)
            buf("yes").send(f, 0, 1, 0x12AB)
            val got = b.await(1, others = listOf(a)).single() as Completion
            got.tag shouldBe 0x12AB
            rx.text(3) shouldBe "yes"
            b.ep.srx.unexpectedCount shouldBe 1
        }
    }

    for ((label, size) in listOf("eager" to 100, "rendezvous" to 50_000)) {
        test("a $label message larger than its buffer delivers what fits, reports ETRUNC, and the next message is intact") {
            TcpTestFabric(eagerSize = 1024).use { f ->
                val (a, b) = f.nodes
                val big = UnsafeBuffer(ByteArray(size) { (it % 251).toByte() })
                big.send(f, 0, 1, 1)
                buf("next").send(f, 0, 1, 2)
                val small = UnsafeBuffer(ByteArray(10))
                b.ep.tryTrecv(small, 0, 10, FiAddr.UNSPEC, 1, 0, "small") shouldBe 0
                val err = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<CompletionError>()
                err.err shouldBe Errno.ETRUNC
                err.len shouldBe 10
                err.olen shouldBe (size - 10).toLong()
                err.context shouldBe "small"
                err.message shouldContain "truncated"
                (0 until 10).map { small.getByte(it).toInt() } shouldBe (0 until 10).toList()
                val rx = UnsafeBuffer(ByteArray(8))
                b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 2, 0, "next") shouldBe 0
                (b.await(1, others = listOf(a)).single() as Completion).len shouldBe 4
                rx.text(4) shouldBe "next"
                a.await(2).forEach { it.shouldBeInstanceOf<Completion>() } // both sends complete normally
            }
        }
    }

    test("PEEK reports a waiting message without taking it, and ENOMSG when there is none") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "peek-none", OpFlags.PEEK) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<CompletionError>().err shouldBe Errno.ENOMSG
            f.nodes[0].ep.tryTsenddata(buf("peeked"), 0, 6, 77, f.addrs[0][1], 3, null) shouldBe 0
            repeat(10) { a.domain.progress(); b.domain.progress() }
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "peek", OpFlags.PEEK) shouldBe 0
            val peek = b.await(1).single().shouldBeInstanceOf<Completion>()
            peek.len shouldBe 6; peek.tag shouldBe 3; peek.data shouldBe 77
            (peek.flags and OpFlags.REMOTE_CQ_DATA) shouldBe OpFlags.REMOTE_CQ_DATA
            b.ep.srx.unexpectedCount shouldBe 1
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "recv") shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().data shouldBe 77
            rx.text(6) shouldBe "peeked"
        }
    }

    test("PEEK|CLAIM reserves a message for a later CLAIM receive that no other receive can take") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            buf("claimed").send(f, 0, 1, 4)
            repeat(10) { a.domain.progress(); b.domain.progress() }
            val ctx = Any()
            val rx = UnsafeBuffer(ByteArray(16))
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 4, 0, ctx, OpFlags.PEEK or OpFlags.CLAIM) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().len shouldBe 7
            // A plain receive cannot take it now.
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 4, 0, ctx, OpFlags.PEEK) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<CompletionError>().err shouldBe Errno.ENOMSG
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 4, 0, ctx, OpFlags.CLAIM) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().context shouldBe ctx
            rx.text(7) shouldBe "claimed"
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 4, 0, ctx, OpFlags.CLAIM) shouldBe -Errno.ENOENT
        }
    }

    test("PEEK|DISCARD and CLAIM|DISCARD drop the message, eager or rendezvous, and the sender still completes") {
        TcpTestFabric(eagerSize = 256).use { f ->
            val (a, b) = f.nodes
            buf("drop-me").send(f, 0, 1, 6, "s1")
            UnsafeBuffer(ByteArray(10_000)).send(f, 0, 1, 6, "s2")
            repeat(20) { a.domain.progress(); b.domain.progress() }
            val rx = UnsafeBuffer(ByteArray(16))
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 6, 0, "d1", OpFlags.PEEK or OpFlags.DISCARD) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().len shouldBe 7
            val ctx = Any()
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 6, 0, ctx, OpFlags.PEEK or OpFlags.CLAIM) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().len shouldBe 10_000
            b.ep.tryTrecv(rx, 0, 16, FiAddr.UNSPEC, 6, 0, ctx, OpFlags.CLAIM or OpFlags.DISCARD) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().len shouldBe 10_000
            b.ep.srx.unexpectedCount shouldBe 0
            a.await(2, others = listOf(b)).map { (it as Completion).context }.toSet() shouldBe setOf("s1", "s2")
        }
    }

    test("a cancelled receive completes with ECANCELED and the message goes to the next receive") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 8, 0, "cancel-me") shouldBe 0
            b.ep.cancel("cancel-me") shouldBe 0
            b.ep.cancel("cancel-me") shouldBe -Errno.ENOENT
            val err = b.await(1).single().shouldBeInstanceOf<CompletionError>()
            err.err shouldBe Errno.ECANCELED
            err.context shouldBe "cancel-me"
            buf("later").send(f, 0, 1, 8)
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 8, 0, "second") shouldBe 0
            b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().context shouldBe "second"
        }
    }

    test("an error entry must be read before the completions written after it (EAVAIL)") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val rx = List(3) { UnsafeBuffer(ByteArray(8)) }
            b.ep.tryTrecv(rx[0], 0, 8, FiAddr.UNSPEC, 1, 0, "first") shouldBe 0
            b.ep.tryTrecv(rx[1], 0, 8, FiAddr.UNSPEC, 2, 0, "cancelled") shouldBe 0
            b.ep.tryTrecv(rx[2], 0, 8, FiAddr.UNSPEC, 3, 0, "third") shouldBe 0
            buf("1").send(f, 0, 1, 1)
            repeat(10) { a.domain.progress(); b.domain.progress() }
            b.ep.cancel("cancelled") shouldBe 0
            buf("3").send(f, 0, 1, 3)
            repeat(10) { a.domain.progress(); b.domain.progress() }
            val c = Completion()
            b.cq.read(c) shouldBe 1
            c.context shouldBe "first"
            b.cq.read(c) shouldBe -Errno.EAVAIL
            b.cq.read(c) shouldBe -Errno.EAVAIL
            val e = CompletionError()
            b.cq.readErr(e) shouldBe 1
            e.context shouldBe "cancelled"
            b.cq.readErr(e) shouldBe -Errno.EAGAIN
            b.cq.read(c) shouldBe 1
            c.context shouldBe "third"
        }
    }

    test("inject returns with the buffer reusable and writes no completion") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val out = buf("original")
            a.ep.tryTinject(out, 0, 8, f.addrs[0][1], 11) shouldBe 0
            out.putBytes(0, "CLOBBER!".toByteArray())
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 11, 0, null) shouldBe 0
            b.await(1, others = listOf(a))
            rx.text() shouldBe "original"
            repeat(10) { a.domain.progress() }
            a.cq.read(Completion()) shouldBe -Errno.EAGAIN
            a.ep.tryTinject(UnsafeBuffer(ByteArray(f.info.txAttr.injectSize + 1)), 0, f.info.txAttr.injectSize + 1, f.addrs[0][1], 11) shouldBe -Errno.EMSGSIZE
        }
    }

    test("untagged messages carry remote CQ data and match untagged receives only") {
        TcpTestFabric().use { f ->
            val (a, b) = f.nodes
            val tagged = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(tagged, 0, 8, FiAddr.UNSPEC, 0, -1L, "tagged") shouldBe 0
            a.ep.trySenddata(buf("msg"), 0, 3, 0xCAFE, f.addrs[0][1], "s") shouldBe 0
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryRecv(rx, 0, 8, FiAddr.UNSPEC, "untagged") shouldBe 0
            val got = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
            got.context shouldBe "untagged"
            got.data shouldBe 0xCAFE
            (got.flags and OpFlags.MSG) shouldBe OpFlags.MSG
            rx.text(3) shouldBe "msg"
        }
    }

    test("delivery-complete sends complete only once the receiver has the data") {
        TcpTestFabric(eagerSize = 256).use { f ->
            val (a, b) = f.nodes
            for ((i, size) in listOf(16, 4096).withIndex()) {
                a.ep.trySendmsg(UnsafeBuffer(ByteArray(size)), 0, size, f.addrs[0][1], i.toLong(), 0, OpFlags.TAGGED or OpFlags.DELIVERY_COMPLETE, "dc$i") shouldBe 0
                repeat(20) { a.domain.progress(); b.domain.progress() }
                a.cq.read(Completion()) shouldBe -Errno.EAGAIN // unexpected at the receiver: not delivered yet
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(size)), 0, size, FiAddr.UNSPEC, i.toLong(), 0, null) shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>().context shouldBe "dc$i"
            }
        }
    }

    test("past the credit window the sender is pushed back (EAGAIN on inject), holds stay within the window, and nothing is dropped") {
        TcpTestFabric(unexpectedLimit = 8, bufferSize = 4096, eagerSize = 64).use { f ->
            val (a, b) = f.nodes
            val window = b.ep.tcp.window
            val n = 2000
            val out = UnsafeBuffer(ByteArray(32))
            var sent = 0
            var refusals = 0
            while (sent < n && refusals < 1000) {
                out.putInt(0, sent)
                val rc = a.ep.tryTinject(out, 0, 32, f.addrs[0][1], 1)
                if (rc == 0) { sent++; refusals = 0 } else { rc shouldBe -Errno.EAGAIN; refusals++; b.domain.progress(); a.domain.progress() }
            }
            (sent < n) shouldBe true // the window filled with held messages: pushed back
            (b.ep.srx.unexpectedCount * TcpFrameDescriptor.frameCost(32) <= window) shouldBe true
            (b.ep.tcp.heldBytesMax <= window) shouldBe true
            val rx = UnsafeBuffer(ByteArray(32))
            for (i in 0 until n) {
                if (sent < n) {
                    out.putInt(0, sent)
                    if (a.ep.tryTinject(out, 0, 32, f.addrs[0][1], 1) == 0) sent++
                }
                b.ep.tryTrecv(rx, 0, 32, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
                b.await(1, others = listOf(a))
                rx.getInt(0) shouldBe i
            }
            sent shouldBe n
            (b.ep.srx.stats().unexpectedMax * TcpFrameDescriptor.frameCost(32) <= window) shouldBe true
        }
    }

    test("a matched rendezvous message completes even while its sender is pushed back behind it") {
        TcpTestFabric(unexpectedLimit = 1, bufferSize = 4096, eagerSize = 1024).use { f ->
            val (a, b) = f.nodes
            val big = UnsafeBuffer(ByteArray(100_000) { it.toByte() })
            val rx = UnsafeBuffer(ByteArray(100_000))
            b.ep.tryTrecv(rx, 0, rx.capacity(), FiAddr.UNSPEC, 1, 0, "big") shouldBe 0
            big.send(f, 0, 1, 1, "big-send")
            // Unexpected messages until the sender has no credit left: they queue behind the big one's DATA.
            val small = UnsafeBuffer(ByteArray(1000))
            var t = 2L
            while (true) {
                val rc = a.ep.tryTsend(small, 0, 1000, f.addrs[0][1], t, null)
                if (rc != 0) break
                if (++t > 2000) break
                a.domain.progress(); b.domain.progress()
            }
            val got = b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>()
            got.context shouldBe "big"
            (0 until 100_000 step 997).forEach { rx.getByte(it) shouldBe it.toByte() }
            (b.ep.srx.unexpectedCount > 1) shouldBe true
        }
    }

    test("a message from a sender not yet in the AV matches any-source receives and is re-keyed once the sender is inserted") {
        val info = TcpTestFabric.loopbackInfo()
        val fabric = Braid.fabric(info)
        val nodes = List(2) { TestFabric.Node(fabric.domain(info), CqFormat.TAGGED) }
        try {
            nodes.forEach { it.ep.enable() }
            val (a, b) = nodes
            val bInA = a.av.insert(b.ep.address)
            a.ep.tryTsend(buf("first"), 0, 5, bInA, 1, null) shouldBe 0
            a.ep.tryTsend(buf("second"), 0, 6, bInA, 1, null) shouldBe 0
            repeat(10) { a.domain.progress(); b.domain.progress() }
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
            b.await(1, others = listOf(a)).single().shouldBeInstanceOf<Completion>().source shouldBe FiAddr.NOTAVAIL
            rx.text(5) shouldBe "first"
            val aInB = b.av.insert(a.ep.address)
            b.domain.progress()
            b.ep.tryTrecv(rx, 0, 8, aInB, 1, 0, null) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().source shouldBe aInB
            rx.text(6) shouldBe "second"
        } finally {
            nodes.forEach { it.ep.close() }
            fabric.close()
        }
    }
})
