package braid.core

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import org.agrona.concurrent.UnsafeBuffer

/** The matching engine on its own, driven through its owner operations as a provider drives it. */
class SharedReceiveContextTest :
    FunSpec({
        /** A provider that records which unexpected messages the owner started or discarded. */
        class RecordingPeer : SrxPeer {
            val started = ArrayList<RxEntry>()
            val discarded = ArrayList<RxEntry>()

            override fun startMsg(entry: RxEntry) {
                started += entry
            }

            override fun startTag(entry: RxEntry) {
                started += entry
            }

            override fun discardMsg(entry: RxEntry) {
                discarded += entry
            }

            override fun discardTag(entry: RxEntry) {
                discarded += entry
            }
        }

        fun SharedReceiveContext.arrive(peer: SrxPeer, src: Long, tag: Long, id: Int): RxEntry? {
            val e = getTag(src, tag, 8)
            if (isMatched(e)) return e
            e.peerContext = id
            queueTag(e, peer)
            return null
        }

        val buffer = UnsafeBuffer(ByteArray(8))

        test("a directed receive finds its sender's message in O(1) among a million unexpected messages from others") {
            val srx = SharedReceiveContext(unexpectedLimit = 2_000_000)
            val peer = RecordingPeer()
            for (i in 0 until 1_000_000) srx.arrive(peer, src = (i % 1000).toLong() + 10, tag = 1, id = i)
            srx.arrive(peer, src = 5, tag = 1, id = -5)
            val before = srx.examined
            srx.post(true, 5, 1, 0, 0, "directed", buffer, 0, 8) shouldBe srx.let { peer.started.last() }
            (srx.examined - before) shouldBeLessThan 3
            peer.started.single().peerContext shouldBe -5
            srx.unexpectedCount shouldBe 1_000_000
        }

        test(
            "an any-source receive for an exact tag finds its message in O(1) behind a million unexpected messages of other tags"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 2_000_000)
            val peer = RecordingPeer()
            for (i in 0 until 1_000_000) srx.arrive(
                peer,
                src = (i % 1000).toLong() + 10,
                tag = 2 + (i % 5000).toLong(),
                id = i,
            )
            srx.arrive(peer, src = 7, tag = 1, id = -1)
            val before = srx.examined
            srx.post(true, FiAddr.UNSPEC, 1, 0, 0, "any", buffer, 0, 8)!!.peerContext shouldBe -1
            (srx.examined - before) shouldBeLessThan 3
            srx.unexpectedCount shouldBe 1_000_000
        }

        test(
            "exact-tag any-source receives keep arrival order across senders, per-sender order, and agree with masked and directed receives"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            // tag 5 from senders 1, 2, 1; tag 6 from 2; tag 5 from 2; then one whose sender is not yet known
            val arrivals =
                listOf(Triple(1L, 5L, 1), Triple(2L, 5L, 2), Triple(1L, 5L, 3), Triple(2L, 6L, 4), Triple(2L, 5L, 5))
            for ((src, tag, id) in arrivals) srx.arrive(peer, src, tag, id)
            srx.arrive(peer, FiAddr.NOTAVAIL, 5, 6)
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe 1
            srx.post(true, 2, 5, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe
                2 // directed takes 2's first tag-5 message
            srx.post(true, FiAddr.UNSPEC, 4, 3, 0, null, buffer, 0, 8)!!.peerContext shouldBe
                3 // masked (4..7): earliest eligible
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe 5
            srx.foreachUnspecAddr { 1L }
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe
                6 // re-keyed, still findable by tag
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, null, buffer, 0, 8) shouldBe null
            srx.post(true, FiAddr.UNSPEC, 6, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe 4
            srx.unexpectedCount shouldBe 0
        }

        test(
            "a message taken by peek and claim or discard leaves its tag's list, so an exact-tag any-source receive never finds it again"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.arrive(peer, 1, 9, 1)
            srx.arrive(peer, 2, 9, 2)
            srx.arrive(peer, 3, 9, 3)
            srx.claim(srx.peek(true, FiAddr.UNSPEC, 9, 0)!!, "claimed")
            srx.remove(srx.peek(true, 2, 9, 0)!!)
            srx.post(true, FiAddr.UNSPEC, 9, 0, 0, null, buffer, 0, 8)!!.peerContext shouldBe 3
            srx.post(true, FiAddr.UNSPEC, 9, 0, 0, null, buffer, 0, 8) shouldBe null
            srx.takeClaimed("claimed")!!.peerContext shouldBe 1
        }

        test("an arriving message looks only at its sender's directed receives and the any-source ones") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            for (src in 100L until 100_100L) srx.post(true, src, 7, 0, 0, "r$src", buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 7, 0, 0, "any", buffer, 0, 8)
            val before = srx.examined
            srx.arrive(peer, 99_999, 7, 0)!!.context shouldBe "r99999"
            (srx.examined - before) shouldBeLessThan 3
            srx.arrive(peer, 5, 7, 0)!!.context shouldBe "any"
        }

        test("order holds between directed and any-source receives posted in between") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.post(true, 1, 3, 0, 0, "d1", buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 3, 0, 0, "w1", buffer, 0, 8)
            srx.post(true, 1, 3, 0, 0, "d2", buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 3, 0, 0, "w2", buffer, 0, 8)
            listOf(1L, 2L, 1L, 1L).map { srx.arrive(peer, it, 3, 0)!!.context } shouldBe listOf("d1", "w1", "d2", "w2")
        }

        test(
            "a wildcard receive takes the earliest unexpected message across senders, and per sender in arrival order"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            val arrivals = listOf(3L to 1, 4L to 2, 3L to 3, 5L to 4, 4L to 5)
            for ((src, id) in arrivals) srx.arrive(peer, src, 9, id)
            srx.post(true, 4, 9, 0, 0, null, buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 9, 0, 0, null, buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 9, 0, 0, null, buffer, 0, 8)
            srx.post(true, 4, 9, 0, 0, null, buffer, 0, 8)
            srx.post(true, FiAddr.UNSPEC, 9, 0, 0, null, buffer, 0, 8)
            peer.started.map { it.peerContext } shouldBe listOf(2, 1, 3, 5, 4)
        }

        test("messages that arrived before their sender was known join its queue in arrival order once resolved") {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 1).also { it shouldBe null }
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 2)
            srx.foreachUnspecAddr { e -> if (e.peerContext == 1 || e.peerContext == 2) 7L else FiAddr.NOTAVAIL }
            srx.arrive(peer, 7, 1, 3)
            repeat(3) { srx.post(true, 7, 1, 0, 0, null, buffer, 0, 8) }
            peer.started.map { it.peerContext } shouldBe listOf(1, 2, 3)
        }

        test(
            "a receive directed at a sender, posted while its message waits with no known source, takes it once the sender resolves, exactly once"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 1) shouldBe null
            srx.post(true, 7, 1, 0, 0, "rx", buffer, 0, 8) shouldBe null // the SRX cannot tell the message is 7's yet
            srx.stats().let {
                it.posted shouldBe 1
                it.unexpected shouldBe 1
            }
            srx.foreachUnspecAddr { 7L }
            val matched = peer.started.single()
            matched.peerContext shouldBe 1
            matched.context shouldBe "rx"
            matched.addr shouldBe 7L
            srx.stats().let {
                it.posted shouldBe 0
                it.unexpected shouldBe 0
                it.postedMax shouldBe 1
                it.unexpectedMax shouldBe 1
            }
            srx.foreachUnspecAddr { 7L }
            srx.arrive(peer, 7, 1, 2) shouldBe null // the receive is gone: a later message waits
            peer.started.size shouldBe 1
        }

        test(
            "at resolution the earliest posted receive takes the earliest-arrived message; later ones wait their turn"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 1)
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 2)
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 3)
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 99) // another sender, still unknown
            srx.post(true, 7, 1, 0, 0, "r1", buffer, 0, 8)
            srx.post(true, 7, 1, 0, 0, "r2", buffer, 0, 8)
            srx.foreachUnspecAddr { e -> if (e.peerContext != 99) 7L else FiAddr.NOTAVAIL }
            peer.started.map { it.peerContext to it.context } shouldBe listOf(1 to "r1", 2 to "r2")
            srx.arrive(peer, 7, 1, 4) shouldBe null
            srx.post(true, 7, 1, 0, 0, "r3", buffer, 0, 8)
            srx.post(true, 7, 1, 0, 0, "r4", buffer, 0, 8)
            peer.started.drop(2).map { it.peerContext to it.context } shouldBe listOf(3 to "r3", 4 to "r4")
            srx.unexpectedCount shouldBe 1
            srx.postedCount shouldBe 0
        }

        test(
            "at resolution a directed receive whose tag does not match is left posted; a masked one that matches takes the message"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.arrive(peer, FiAddr.NOTAVAIL, 0x21, 1)
            srx.post(true, 7, 0x22, 0, 0, "other-tag", buffer, 0, 8)
            srx.post(true, 8, 0x21, 0, 0, "other-sender", buffer, 0, 8)
            srx.foreachUnspecAddr { 7L }
            peer.started shouldBe emptyList()
            srx.stats().let {
                it.posted shouldBe 2
                it.unexpected shouldBe 1
            }
            srx.post(true, 7, 0x20, 0x0f, 0, "masked", buffer, 0, 8)!!.peerContext shouldBe 1
            srx.arrive(peer, FiAddr.NOTAVAIL, 0x32, 2)
            srx.post(true, 9, 0x32, 0, 0, "tag-2", buffer, 0, 8)
            srx.post(true, 9, 0x30, 0x0f, 0, "masked-2", buffer, 0, 8)
            srx.foreachUnspecAddr { 9L }
            peer.started.map { it.context } shouldBe listOf("masked", "tag-2")
            srx.postedCount shouldBe 3
        }

        test("at resolution untagged messages match only untagged receives and tagged only tagged") {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            val untagged =
                srx.getMsg(FiAddr.NOTAVAIL, 8).also {
                    it.peerContext = "msg"
                    srx.queueMsg(it, peer)
                }
            srx.arrive(peer, FiAddr.NOTAVAIL, 5, 1)
            srx.post(true, 7, 0, -1L, 0, "trecv-any-tag", buffer, 0, 8)
            srx.post(false, 7, 0, 0, 0, "recv", buffer, 0, 8)
            srx.foreachUnspecAddr { 7L }
            peer.started.associate { it.context to it.peerContext } shouldBe
                mapOf("trecv-any-tag" to 1, "recv" to "msg")
            peer.started.filter { !it.tagged } shouldBe listOf(untagged)
            srx.stats().let {
                it.posted shouldBe 0
                it.unexpected shouldBe 0
            }
        }

        test("a receive posted from inside a start at resolution (a triggered receive) sees consistent queues") {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val matched = HashMap<Any?, Any?>()
            val peer =
                object : SrxPeer {
                    override fun startMsg(entry: RxEntry) = startTag(entry)

                    override fun startTag(entry: RxEntry) {
                        matched[entry.context] = entry.peerContext
                        if (entry.peerContext == 1) srx.post(true, 7, 1, 0, 0, "posted-in-start", buffer, 0, 8)
                    }

                    override fun discardMsg(entry: RxEntry) = Unit

                    override fun discardTag(entry: RxEntry) = Unit
                }
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 1)
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 2)
            srx.arrive(peer, FiAddr.NOTAVAIL, 1, 3)
            srx.post(true, 7, 1, 0, 0, "r1", buffer, 0, 8)
            srx.post(true, 7, 1, 0, 0, "r2", buffer, 0, 8)
            srx.foreachUnspecAddr { 7L }
            // r2 was posted before the receive posted from r1's start: it takes the second message.
            matched shouldBe mapOf("r1" to 1, "r2" to 2, "posted-in-start" to 3)
            srx.stats().let {
                it.posted shouldBe 0
                it.unexpected shouldBe 0
            }
        }

        test("the untagged and tagged queues never match each other") {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            srx.post(false, FiAddr.UNSPEC, 0, 0, 0, "msg", buffer, 0, 8)
            srx.arrive(peer, 1, 0, 1) shouldBe null
            srx.getMsg(1, 8).context shouldBe "msg"
        }

        // ## Exact-tag bins (any-source receives with no ignored bits) against the other kinds ##

        fun SharedReceiveContext.postAny(tag: Long, ignore: Long, context: String) =
            post(true, FiAddr.UNSPEC, tag, ignore, 0, context, buffer, 0, 8) shouldBe null

        test("an arriving message looks at one bin's head among exact-tag receives for a hundred thousand other tags") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            for (tag in 0L until 100_000L) srx.postAny(tag, 0, "t$tag")
            val before = srx.examined
            srx.arrive(peer, 3, 99_999, 0)!!.context shouldBe "t99999"
            (srx.examined - before) shouldBeLessThan 3
            srx.arrive(peer, 3, 99_999, 0) shouldBe null // its bin emptied and left; the message waits
            srx.postedCount shouldBe 99_999
        }

        test(
            "a masked receive posted before exact-tag ones takes the message first, and the bin keeps its order after"
        ) {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.postAny(4, 3, "m1") // tags 4..7
            srx.postAny(5, 0, "e1")
            srx.postAny(5, 0, "e2")
            srx.postAny(0, -1L, "any") // any source, any tag
            listOf(5L, 5L, 6L, 5L).map { srx.arrive(peer, 1, it, 0)!!.context } shouldBe listOf("m1", "e1", "any", "e2")
            srx.postedCount shouldBe 0
        }

        test("exact-tag receives posted before a masked one take the message first; the masked one waits its turn") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.postAny(5, 0, "e1")
            srx.postAny(4, 3, "m1")
            srx.postAny(5, 0, "e2")
            srx.postAny(6, 0, "f1")
            listOf(5L, 6L, 5L, 5L).map { srx.arrive(peer, 1, it, 0)?.context } shouldBe listOf("e1", "m1", "e2", null)
            srx.postedCount shouldBe 1 // f1: tag 6 went to the earlier masked receive
        }

        test("any source and any tag interleaved with exact-tag and directed receives: posting order decides") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.postAny(0, -1L, "any1")
            srx.postAny(5, 0, "e1")
            srx.post(true, 1, 5, 0, 0, "d1", buffer, 0, 8)
            srx.postAny(0, -1L, "any2")
            srx.post(true, 1, 5, 0, 0, "d2", buffer, 0, 8)
            srx.postAny(5, 0, "e2")
            listOf(1L, 2L, 1L, 1L, 1L, 2L).map { srx.arrive(peer, it, 5, 0)!!.context } shouldBe
                listOf("any1", "e1", "d1", "any2", "d2", "e2")
            srx.postedCount shouldBe 0
        }

        test("a directed receive posted before an exact-tag any-source one wins, and loses to an earlier one") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.post(true, 1, 5, 0, 0, "d1", buffer, 0, 8)
            srx.postAny(5, 0, "e1")
            srx.postAny(5, 0, "e2")
            srx.post(true, 1, 5, 0, 0, "d2", buffer, 0, 8)
            listOf(1L, 1L, 2L, 1L).map { srx.arrive(peer, it, 5, 0)!!.context } shouldBe listOf("d1", "e1", "e2", "d2")
        }

        test("unexpected messages go in arrival order to exact-tag, masked and any-tag receives posted after them") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            for ((src, tag, id) in listOf(Triple(1L, 5L, 1), Triple(2L, 6L, 2), Triple(3L, 5L, 3), Triple(1L, 7L, 4))) {
                srx.arrive(peer, src, tag, id) shouldBe null
            }
            srx.post(true, FiAddr.UNSPEC, 0, -1L, 0, "any", buffer, 0, 8)!!.peerContext shouldBe 1
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, "e", buffer, 0, 8)!!.peerContext shouldBe 3
            srx.post(true, FiAddr.UNSPEC, 4, 3, 0, "m", buffer, 0, 8)!!.peerContext shouldBe 2
            srx.post(true, 1, 0, -1L, 0, "d", buffer, 0, 8)!!.peerContext shouldBe 4
            srx.unexpectedCount shouldBe 0
            srx.postedCount shouldBe 0
        }

        test("cancelling receives in a bin (head, middle, last) leaves the others matching in posting order") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            for (c in listOf("e1", "e2", "e3", "e4")) srx.postAny(5, 0, c)
            srx.cancel("e2")!!.context shouldBe "e2"
            srx.cancel("e1")!!.context shouldBe "e1"
            srx.cancel("e2") shouldBe null
            srx.arrive(peer, 1, 5, 0)!!.context shouldBe "e3"
            srx.cancel("e3") shouldBe null // already matched
            srx.cancel("e4")!!.context shouldBe "e4" // the last: the bin empties and leaves
            srx.postedCount shouldBe 0
            srx.arrive(peer, 1, 5, 1) shouldBe null
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, "e5", buffer, 0, 8)!!.peerContext shouldBe 1
            srx.postAny(5, 0, "e6")
            srx.arrive(peer, 1, 5, 0)!!.context shouldBe "e6"
        }

        test("a bin emptied and reused for an unexpected tag's list is never taken for a receive bin") {
            val srx = SharedReceiveContext(unexpectedLimit = 10)
            val peer = RecordingPeer()
            srx.postAny(9, 0, "other") // keeps the bins' map non-empty throughout
            srx.postAny(5, 0, "e1")
            srx.arrive(peer, 1, 5, 0)!!.context shouldBe "e1" // tag 5's bin empties: pooled
            srx.arrive(peer, 1, 5, 1) shouldBe null // its list now holds unexpected tag-5 messages
            srx.arrive(peer, 2, 5, 2) shouldBe null
            srx.unexpectedCount shouldBe 2
            srx.post(true, FiAddr.UNSPEC, 5, 0, 0, "e2", buffer, 0, 8)!!.peerContext shouldBe 1
            srx.arrive(peer, 1, 9, 3)!!.context shouldBe "other"
            srx.postedCount shouldBe 0
            srx.unexpectedCount shouldBe 1
        }

        test("entries are pooled: steady matching allocates no new entries") {
            val srx = SharedReceiveContext(unexpectedLimit = 100)
            val peer = RecordingPeer()
            val seen = java.util.Collections.newSetFromMap(java.util.IdentityHashMap<RxEntry, Boolean>())
            repeat(1000) {
                srx.post(true, FiAddr.UNSPEC, 1, 0, 0, null, buffer, 0, 8)
                val e = srx.getTag(1, 1, 8)
                seen += e
                srx.freeEntry(e)
            }
            seen.size shouldBe 1
        }
    })
