package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * The matching rules every rail must keep, whatever its transport: the earliest posted receive wins, directed receives
 * take only their sender's messages, ignore masks, truncation, PEEK / CLAIM / DISCARD, cancel, the EAVAIL rule, inject,
 * remote CQ data and delivery-complete. Each rail's spec runs these with [open] (`count` endpoints, eager limit
 * `eagerSize`) and adds its own rail-specific cases (push-back, ordering under its flow control, …). A rail that cannot
 * tell when the receiving application has the data (the native rail, whose messages land in its own receive buffers)
 * runs it with [deliveryComplete] false.
 */
fun FunSpec.matchingContract(deliveryComplete: Boolean = true, open: (count: Int, eagerSize: Int) -> TestFabric) {
    fun UnsafeBuffer.send(f: TestFabric, from: Int, to: Int, tag: Long, ctx: Any? = null) =
        f.nodes[from].ep.tryTsend(this, 0, capacity(), f.addrs[from][to], tag, ctx) shouldBe 0

    test("the earliest posted receive wins whether it names the sender or accepts any source") {
        open(3, 1024).use { f ->
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
            bufs[0].text(2) shouldBe "a1"
            bufs[1].text(2) shouldBe "a2"
            bufs[2].text(2) shouldBe "b1"
        }
    }

    test("a directed receive takes only its sender's message, leaving an earlier one from another sender") {
        open(3, 1024).use { f ->
            val (a, b, c) = f.nodes
            buf("from-b").send(f, 1, 2, 9)
            c.await(0, others = listOf(b))
            repeat(20) { c.domain.progress() }
            buf("from-a").send(f, 0, 2, 9)
            repeat(20) {
                a.domain.progress()
                c.domain.progress()
            }
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

    test("the ignore mask selects which tag bits must match") {
        open(2, 1024).use { f ->
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
        test(
            "a $label message larger than its buffer delivers what fits, reports ETRUNC, and the next message is intact"
        ) {
            open(2, 1024).use { f ->
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
        open(2, 1024).use { f ->
            val (a, b) = f.nodes
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "peek-none", OpFlags.PEEK) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<CompletionError>().err shouldBe Errno.ENOMSG
            f.nodes[0].ep.tryTsenddata(buf("peeked"), 0, 6, 77, f.addrs[0][1], 3, null) shouldBe 0
            repeat(10) {
                a.domain.progress()
                b.domain.progress()
            }
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "peek", OpFlags.PEEK) shouldBe 0
            val peek = b.await(1).single().shouldBeInstanceOf<Completion>()
            peek.len shouldBe 6
            peek.tag shouldBe 3
            peek.data shouldBe 77
            (peek.flags and OpFlags.REMOTE_CQ_DATA) shouldBe OpFlags.REMOTE_CQ_DATA
            b.ep.srx.unexpectedCount shouldBe 1
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 3, 0, "recv") shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().data shouldBe 77
            rx.text(6) shouldBe "peeked"
        }
    }

    test("PEEK|CLAIM reserves a message for a later CLAIM receive that no other receive can take") {
        open(2, 1024).use { f ->
            val (a, b) = f.nodes
            buf("claimed").send(f, 0, 1, 4)
            repeat(10) {
                a.domain.progress()
                b.domain.progress()
            }
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
        open(2, 256).use { f ->
            val (a, b) = f.nodes
            buf("drop-me").send(f, 0, 1, 6, "s1")
            UnsafeBuffer(ByteArray(10_000)).send(f, 0, 1, 6, "s2")
            repeat(20) {
                a.domain.progress()
                b.domain.progress()
            }
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
        open(2, 1024).use { f ->
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
        open(2, 1024).use { f ->
            val (a, b) = f.nodes
            val rx = List(3) { UnsafeBuffer(ByteArray(8)) }
            b.ep.tryTrecv(rx[0], 0, 8, FiAddr.UNSPEC, 1, 0, "first") shouldBe 0
            b.ep.tryTrecv(rx[1], 0, 8, FiAddr.UNSPEC, 2, 0, "cancelled") shouldBe 0
            b.ep.tryTrecv(rx[2], 0, 8, FiAddr.UNSPEC, 3, 0, "third") shouldBe 0
            buf("1").send(f, 0, 1, 1)
            repeat(10) {
                a.domain.progress()
                b.domain.progress()
            }
            b.ep.cancel("cancelled") shouldBe 0
            buf("3").send(f, 0, 1, 3)
            repeat(10) {
                a.domain.progress()
                b.domain.progress()
            }
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
        open(2, 1024).use { f ->
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
            a.ep.tryTinject(
                UnsafeBuffer(ByteArray(f.info.txAttr.injectSize + 1)),
                0,
                f.info.txAttr.injectSize + 1,
                f.addrs[0][1],
                11,
            ) shouldBe -Errno.EMSGSIZE
        }
    }

    test("untagged messages carry remote CQ data and match untagged receives only") {
        open(2, 1024).use { f ->
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

    if (deliveryComplete)
        test("delivery-complete sends complete only once the receiver has the data") {
            open(2, 256).use { f ->
                val (a, b) = f.nodes
                for ((i, size) in listOf(16, 4096).withIndex()) {
                    a.ep.trySendmsg(
                        UnsafeBuffer(ByteArray(size)),
                        0,
                        size,
                        f.addrs[0][1],
                        i.toLong(),
                        0,
                        OpFlags.TAGGED or OpFlags.DELIVERY_COMPLETE,
                        "dc$i",
                    ) shouldBe 0
                    repeat(20) {
                        a.domain.progress()
                        b.domain.progress()
                    }
                    a.cq.read(Completion()) shouldBe -Errno.EAGAIN // unexpected at the receiver: not delivered yet
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(size)), 0, size, FiAddr.UNSPEC, i.toLong(), 0, null) shouldBe 0
                    b.await(1, others = listOf(a))
                    a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>().context shouldBe "dc$i"
                }
            }
        }
}

/**
 * What every rail does with messages from a sender not yet in the receiver's AV: they wait unexpected with no known
 * source and any-source receives take them; once the sender is inserted the rest are its messages, also for receives
 * directed at it that were posted before the rail's next progress call. [info] opens the rail; its two endpoints start
 * with the sender (a) knowing the receiver (b) and b not knowing a.
 */
fun FunSpec.lateSenderContract(info: () -> Info) {
    fun lateSender(block: (a: TestFabric.Node, b: TestFabric.Node, bInA: Long) -> Unit) {
        val i = info()
        val fabric = Braid.fabric(i)
        val nodes = List(2) { TestFabric.Node(fabric.domain(i), CqFormat.TAGGED) }
        try {
            nodes.forEach { it.ep.enable() }
            val (a, b) = nodes
            block(a, b, a.av.insert(b.ep.address))
        } finally {
            nodes.forEach { it.ep.close() }
            fabric.close()
        }
    }

    fun arrived(a: TestFabric.Node, b: TestFabric.Node, count: Int) {
        driveUntil(
            "$count messages to arrive unexpected",
            listOf(a, b),
            seen = { "${b.ep.srx.unexpectedCount} arrived" },
        ) {
            b.ep.srx.unexpectedCount >= count
        }
    }

    test(
        "a message from a sender not yet in the AV matches any-source receives and is re-keyed once the sender is inserted"
    ) {
        lateSender { a, b, bInA ->
            a.ep.tryTsend(buf("first"), 0, 5, bInA, 1, null) shouldBe 0
            a.ep.tryTsend(buf("second"), 0, 6, bInA, 1, null) shouldBe 0
            arrived(a, b, 2)
            val rx = UnsafeBuffer(ByteArray(8))
            b.ep.tryTrecv(rx, 0, 8, FiAddr.UNSPEC, 1, 0, null) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().source shouldBe FiAddr.NOTAVAIL
            rx.text(5) shouldBe "first"
            val aInB = b.av.insert(a.ep.address)
            b.domain.progress() // the rail re-keys the message before the receive is posted (the next case posts first)
            b.ep.tryTrecv(rx, 0, 8, aInB, 1, 0, null) shouldBe 0
            b.await(1).single().shouldBeInstanceOf<Completion>().source shouldBe aInB
            rx.text(6) shouldBe "second"
        }
    }

    test(
        "receives directed at a sender inserted after its messages arrived, posted before the next progress call, take them once and in order"
    ) {
        lateSender { a, b, bInA ->
            val i = info()
            val bigSize =
                (i.rails + i).maxOf { it.endpointAttr.eagerSize } + 4096 // past every rail's eager limit: rendezvous
            val big = UnsafeBuffer(ByteArray(bigSize) { it.toByte() })
            a.ep.tryTsend(buf("first"), 0, 5, bInA, 1, "s1") shouldBe 0
            a.ep.tryTsend(big, 0, bigSize, bInA, 1, "s2") shouldBe 0
            a.ep.trySend(buf("plain"), 0, 5, bInA, "s3") shouldBe 0
            arrived(a, b, 3)
            val rx1 = UnsafeBuffer(ByteArray(8))
            val rx2 = UnsafeBuffer(ByteArray(bigSize))
            val rx3 = UnsafeBuffer(ByteArray(8))
            // Insert and post with no progress in between, not even the rail's own threads'.
            val aInB =
                synchronized(b.domain.lock) {
                    val aInB = b.av.insert(a.ep.address)
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, aInB, 2, 0, "other-tag") shouldBe 0
                    b.ep.tryTrecv(rx1, 0, 8, aInB, 1, 0, "rx1") shouldBe 0
                    b.ep.tryTrecv(rx2, 0, bigSize, aInB, 1, 0, "rx2") shouldBe 0
                    b.ep.tryRecv(rx3, 0, 8, aInB, "rx3") shouldBe 0
                    aInB
                }
            val got =
                b.await(3, others = listOf(a)).map { it.shouldBeInstanceOf<Completion>() }.associateBy { it.context }
            got.keys shouldBe setOf("rx1", "rx2", "rx3")
            got.values.forEach { it.source shouldBe aInB }
            got.getValue("rx1").len shouldBe 5L
            got.getValue("rx2").len shouldBe bigSize.toLong()
            rx1.text(5) shouldBe "first"
            (0 until bigSize step 509).forEach { rx2.getByte(it) shouldBe it.toByte() }
            rx3.text(5) shouldBe "plain"
            a.await(3, others = listOf(b)).map { it.shouldBeInstanceOf<Completion>().context }.toSet() shouldBe
                setOf("s1", "s2", "s3")
            repeat(20) {
                a.domain.progress()
                b.domain.progress()
            }
            b.cq.read(Completion()) shouldBe -Errno.EAGAIN // each message completed one receive, once
            b.ep.srx.postedCount shouldBe 1 // the receive for another tag still waits
            b.ep.srx.unexpectedCount shouldBe 0
        }
    }
}
