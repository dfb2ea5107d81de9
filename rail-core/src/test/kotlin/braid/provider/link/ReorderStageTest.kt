package braid.provider.link

import braid.core.AddressVector
import braid.core.FiAddr
import braid.core.MemoryRegion
import braid.core.RxEntry
import braid.core.SharedReceiveContext
import braid.core.SrxPeer
import braid.provider.RailHost
import braid.provider.UnexpectedBounds
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.agrona.concurrent.UnsafeBuffer

/**
 * The reorder stage alone, in process and deterministic: messages handed over in any order reach the receive context in
 * each sender's order, striped parts land at their offsets in the one receive, and a lost rail's gaps are skipped.
 */
class ReorderStageTest :
    FunSpec({
        /** The endpoint as the stage sees it: a real receive context, completions recorded. */
        class Host : RailHost {
            override val name = "test endpoint"
            override val srx = SharedReceiveContext(1000)
            override val av: AddressVector? = null
            override val bounds = UnexpectedBounds(1 shl 20, { srx }, 10)
            override val hmemOps = braid.core.HmemOverrides(null)
            val completed = ArrayList<Pair<Any?, Long>>()
            val failed = ArrayList<Pair<Any?, String>>()

            override fun txComplete(context: Any?, flags: Long, len: Long, tag: Long) {
                completed += context to len
            }

            override fun txError(context: Any?, flags: Long, len: Long, tag: Long, err: Int, message: String) {
                failed += context to message
            }

            override fun rxComplete(e: RxEntry, msgSize: Long) {
                completed += e.context to msgSize
                srx.freeEntry(e)
            }

            override fun rxError(
                context: Any?,
                flags: Long,
                len: Long,
                data: Long,
                tag: Long,
                olen: Long,
                err: Int,
                source: Long,
                message: String,
            ) {
                failed += context to message
            }

            override fun rmaComplete(context: Any?, flags: Long, len: Long) = Unit

            override fun rmaError(context: Any?, flags: Long, len: Long, err: Int, message: String) = Unit

            override fun remoteAccess(which: Long) = Unit

            override fun region(key: Long): MemoryRegion? = null

            override fun peerDown(addr: Long, message: String) = Unit

            override fun eventError(err: Int, message: String) = Unit

            override fun <T> cycle(body: () -> T): T = body()
        }

        /**
         * A rail as the stage sees it: what it holds is the message's id; starting one records the id against the
         * receive's context and, for a part, fills its view with the id and completes it through the link's host.
         */
        class Rail(private val host: RailHost, private val name: String = "rail") : SrxPeer {
            val started = ArrayList<Pair<Any?, Int>>()
            val discarded = ArrayList<Int>()

            override fun startMsg(entry: RxEntry) = start(entry)

            override fun startTag(entry: RxEntry) = start(entry)

            override fun discardMsg(entry: RxEntry) {
                discarded += entry.peerContext as Int
            }

            override fun discardTag(entry: RxEntry) = discardMsg(entry)

            private fun start(e: RxEntry) {
                val id = e.peerContext as Int
                started += e.context to id
                for (i in 0 until e.buffer.capacity()) e.buffer.putByte(i, id.toByte())
                host.rxComplete(e, e.size)
            }

            override fun toString() = name
        }

        val src = 7L
        val buffer = UnsafeBuffer(ByteArray(64))

        fun post(
            host: Host,
            context: String,
            tagged: Boolean = true,
            from: Long = FiAddr.UNSPEC,
            into: UnsafeBuffer = buffer,
        ) = host.srx.post(tagged, from, 0, -1L, 0, context, into, 0, into.capacity())

        fun ReorderStage.whole(rail: Rail, seq: Long, id: Int, tagged: Boolean = true, from: Long = src) =
            arrive(from, seq, 0, tagged, 1, 8, false, 0, rail, id)

        test("messages handed over out of order are matched in their sender's order") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            for (k in 1..5) post(host, "r$k")
            for (seq in listOf(3L, 1L, 5L, 2L, 4L)) stage.whole(rail, seq, id = seq.toInt())
            rail.started shouldContainExactly (1..5).map { "r$it" to it }
            stage.depthMax shouldBe 2
            stage.depth shouldBe 0
        }

        test("early messages wait outside the receive context, then queue there in order for later receives") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            stage.whole(rail, 2, 2)
            stage.whole(rail, 3, 3, tagged = false)
            host.srx.unexpectedCount shouldBe 0 // the receive context never sees a message early
            stage.isNext(src, 1) shouldBe true
            stage.isNext(src, 2) shouldBe false
            stage.whole(rail, 1, 1)
            host.srx.unexpectedCount shouldBe 3
            post(host, "a")
            post(host, "b")
            post(host, "u", tagged = false, from = src)
            rail.started shouldContainExactly listOf("a" to 1, "b" to 2, "u" to 3)
        }

        test("each sender has its own order, and a sender outside the AV passes as it comes") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            for (k in 1..4) post(host, "r$k")
            stage.whole(rail, 2, 12, from = 8)
            stage.whole(rail, 1, 99, from = FiAddr.NOTAVAIL)
            stage.whole(rail, 2, 22, from = 9)
            stage.whole(rail, 1, 11, from = 8)
            rail.started.map { it.second } shouldContainExactly listOf(99, 11, 12)
            stage.whole(rail, 1, 21, from = 9)
            rail.started.map { it.second } shouldContainExactly listOf(99, 11, 12, 21)
        }

        test("a striped message's parts land at their offsets in one receive, matched before a later small message") {
            val host = Host()
            val stage = ReorderStage(host)
            val a = Rail(LinkRailHost(host, "a", stage), "a")
            val b = Rail(LinkRailHost(host, "b", stage), "b")
            val big = UnsafeBuffer(ByteArray(48))
            post(host, "big", into = big)
            post(host, "small")
            // seq 1, 2: the two parts of a 48-byte message (32 + 16); seq 3 a small message that overtook them.
            stage.whole(a, 3, 3)
            stage.arrive(src, 2, LinkTransport.stripeWord(32, 48), true, 1, 16, false, 0, b, 2)
            host.srx.unexpectedCount shouldBe 0
            stage.arrive(src, 1, LinkTransport.stripeWord(0, 48), true, 1, 32, false, 0, a, 1)
            host.completed shouldContainExactly listOf("big" to 48L, "small" to 8L)
            (0 until 48).map { big.getByte(it).toInt() } shouldBe List(32) { 1 } + List(16) { 2 }
            stage.rail("a").handed shouldBe 2
            stage.rail("b").depthMax shouldBe 1
        }

        test("two striped messages in a row: the second's parts join it, whichever arrives when") {
            val host = Host()
            val stage = ReorderStage(host)
            val a = Rail(LinkRailHost(host, "a", stage), "a")
            val first = UnsafeBuffer(ByteArray(40))
            val second = UnsafeBuffer(ByteArray(30))
            post(host, "first", into = first)
            post(host, "second", into = second)
            // The first's second part and the second's first part come before the first's first part.
            stage.arrive(src, 2, LinkTransport.stripeWord(20, 40), true, 1, 20, false, 0, a, 2)
            stage.arrive(src, 3, LinkTransport.stripeWord(0, 30), true, 1, 10, false, 0, a, 3)
            stage.arrive(src, 1, LinkTransport.stripeWord(0, 40), true, 1, 20, false, 0, a, 1)
            host.completed shouldContainExactly listOf("first" to 40L)
            stage.arrive(src, 4, LinkTransport.stripeWord(10, 30), true, 1, 20, false, 0, a, 4)
            host.completed shouldContainExactly listOf("first" to 40L, "second" to 30L)
            a.discarded shouldBe emptyList()
            (0 until 30).map { second.getByte(it).toInt() } shouldBe List(10) { 3 } + List(20) { 4 }
        }

        test("a striped message that arrives before its receive waits whole, and is discarded whole") {
            val host = Host()
            val stage = ReorderStage(host)
            val a = Rail(LinkRailHost(host, "a", stage))
            stage.arrive(src, 1, LinkTransport.stripeWord(0, 40), true, 1, 20, false, 0, a, 1)
            stage.arrive(src, 2, LinkTransport.stripeWord(20, 40), true, 1, 20, false, 0, a, 2)
            host.srx.unexpectedCount shouldBe 1
            a.started shouldBe emptyList()
            post(host, "late")
            host.completed shouldContainExactly listOf("late" to 40L)
            stage.arrive(src, 3, LinkTransport.stripeWord(0, 40), true, 1, 20, false, 0, a, 3)
            val e = host.srx.peek(true, FiAddr.UNSPEC, 0, -1L)!!
            host.srx.remove(e)
            e.peer!!.discardTag(e)
            stage.arrive(src, 4, LinkTransport.stripeWord(20, 40), true, 1, 20, false, 0, a, 4)
            a.discarded shouldContainExactly listOf(3, 4)
        }

        test("when a rail loses the sender, the messages after the gaps it leaves go on in order") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            for (k in 1..3) post(host, "r$k")
            stage.whole(rail, 4, 4)
            stage.whole(rail, 2, 2)
            stage.whole(rail, 6, 6)
            rail.started shouldBe emptyList()
            stage.skipGaps(src)
            rail.started.map { it.second } shouldContainExactly listOf(2, 4, 6)
            stage.isNext(src, 7) shouldBe true
        }

        test("a number its sender says failed is skipped, whether the SKIP comes before or after what follows it") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            for (k in 1..3) post(host, "r$k")
            stage.whole(rail, 1, 1)
            stage.skip(src, 3) // ahead of its turn: holds the place of 3
            stage.whole(rail, 4, 4)
            rail.started.map { it.second } shouldContainExactly listOf(1)
            stage.skip(src, 2)
            rail.started.map { it.second } shouldContainExactly listOf(1, 4)
            stage.skip(src, 2) // once is enough: a second is ignored
            stage.whole(rail, 5, 5)
            rail.started.map { it.second } shouldContainExactly listOf(1, 4, 5)
            stage.skipped shouldBe 2
        }

        test("a striped message one of whose parts its sender says failed completes in error, naming the part") {
            val host = Host()
            val stage = ReorderStage(host)
            val a = Rail(LinkRailHost(host, "a", stage), "a")
            post(host, "striped", into = UnsafeBuffer(ByteArray(40)))
            post(host, "next")
            stage.arrive(src, 1, LinkTransport.stripeWord(0, 40), true, 1, 20, false, 0, a, 1)
            stage.skip(src, 2)
            stage.whole(a, 3, 3)
            host.failed.single().let { (context, message) ->
                context shouldBe "striped"
                message shouldContain "part 2 of this striped message failed"
            }
            host.completed shouldContainExactly listOf("next" to 8L)
        }

        test("after a rail to a sender died, a gap nothing fills is given up on after the gap time-out, not before") {
            val host = Host()
            val stage = ReorderStage(host)
            val rail = Rail(host)
            for (k in 1..3) post(host, "r$k")
            stage.whole(rail, 1, 1)
            stage.watching shouldBe false
            stage.skipGaps(src) // the sender's rail died with message 2 in flight, nothing held yet
            stage.whole(rail, 3, 3)
            val t0 = 1_000L
            stage.tick(t0)
            stage.tick(t0 + ReorderStage.GAP_TIMEOUT_NANOS - 1)
            rail.started.map { it.second } shouldContainExactly listOf(1)
            stage.tick(t0 + ReorderStage.GAP_TIMEOUT_NANOS)
            rail.started.map { it.second } shouldContainExactly listOf(1, 3)
            stage.gapsGivenUp shouldBe 1
            // A gap that fills in time costs nothing.
            stage.whole(rail, 5, 5)
            stage.tick(t0 * 5)
            stage.whole(rail, 4, 4)
            stage.tick(t0 * 5 + ReorderStage.GAP_TIMEOUT_NANOS)
            stage.gapsGivenUp shouldBe 1
        }
    })
