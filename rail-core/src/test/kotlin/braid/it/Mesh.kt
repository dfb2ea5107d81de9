package braid.it

import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.testsupport.Deadline
import java.nio.ByteBuffer
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * `PeerMain … mesh`: [node] and the other processes of [placement] (`NAME@HOST`, this one included) send each other
 * [count] tagged and [count] untagged messages of the [Traffic] sizes, all at once, and receive them with any-source
 * receives, so on a link endpoint shm (same-host senders) and the network rail (the others) race for the same receives.
 *
 * Checked: every message arrives once, intact, from the source it names, matched in order per source and kind (a tagged
 * message's sequence is in its tag, an untagged one's in its remote CQ data); every receive completes once. Then, once
 * every process is done, the endpoint's per-rail counters must show exactly the same-host traffic on shm and the rest
 * on the network rails together; with several network rails and several remote peers, more than one rail carried them
 * (the link's PER_PEER policy spreads the peers).
 */
internal class Mesh(private val node: PeerMain.Node, private val count: Int, placement: List<String>) {
    private val procs = placement.map { it.substringBefore('@') to it.substringAfter('@', "") }
    private val me =
        procs.indexOfFirst { it.first == node.name }.also { check(it >= 0) { "${node.name} is not in $placement" } }
    private val others = procs.indices.filter { it != me }
    private val sameHost = others.filter { procs[it].second == procs[me].second }

    private class Slot(val index: Int, val kind: Int) {
        val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE))
        var postSeq = 0L
        var posted = false
    }

    /** The [Traffic] stream a process sends of a kind (0 tagged, 1 untagged): the same to every receiver. */
    private fun stream(process: Int, kind: Int): Int = process * 2 + kind

    fun run() {
        val addr = LongArray(procs.size) { i -> if (i == me) FiAddr.UNSPEC else node.peer(procs[i].first) }
        val senderOf = HashMap<Long, Int>().apply { for (i in others) put(addr[i], i) }
        val sendSlots = Array(8) { Slot(it, -1) }
        val free = ArrayDeque(sendSlots.toList())
        val channels = others.flatMap { d -> listOf(d to 0, d to 1) }
        val nextSeq = IntArray(channels.size)
        var rr = 0
        var sendsDone = 0
        val sendsTotal = channels.size * count

        val recvSlots = Array(8) { Slot(it, it % 2) }
        var posts = 0L
        fun post(s: Slot) {
            val rc =
                if (s.kind == 0) node.ep.tryTrecv(s.buffer, 0, Traffic.MAX_SIZE, FiAddr.UNSPEC, 0, -1L, s)
                else node.ep.tryRecv(s.buffer, 0, Traffic.MAX_SIZE, FiAddr.UNSPEC, s)
            check(rc == 0) { "posting a receive returned ${Errno.name(rc)}" }
            s.posted = true
            s.postSeq = posts++
        }
        recvSlots.forEach { post(it) }
        // matchedAt[sender][kind][seq]: the post sequence of the receive the message matched.
        val matchedAt = Array(procs.size) { Array(2) { LongArray(count) { -1 } } }
        var received = 0
        val receiveTotal = others.size * 2 * count

        val c = node.c
        val deadline = Deadline.of("every send and receive of the mesh", Duration.ofSeconds(400))
        while (sendsDone < sendsTotal || received < receiveTotal) {
            var tries = 0
            while (free.isNotEmpty() && tries < channels.size) {
                val ch = rr
                rr = (rr + 1) % channels.size
                tries++
                val seq = nextSeq[ch]
                if (seq == count) continue
                val (dest, kind) = channels[ch]
                val slot = free.first()
                val size = Traffic.size(stream(me, kind), seq)
                Traffic.fill(slot.buffer, stream(me, kind), seq, size)
                val rc =
                    if (kind == 0)
                        node.ep.tryTsend(slot.buffer, 0, size, addr[dest], Traffic.tag(stream(me, 0), seq), slot)
                    else node.ep.trySenddata(slot.buffer, 0, size, seq.toLong(), addr[dest], slot)
                if (rc == -Errno.EAGAIN) continue
                check(rc == 0) { "send to ${procs[dest].first} returned ${Errno.name(rc)}" }
                free.removeFirst()
                nextSeq[ch]++
                tries = 0
            }
            val ctx = node.poll()
            if (ctx == null) {
                deadline.check { "sent $sendsDone of $sendsTotal, received $received of $receiveTotal" }
                continue
            }
            val slot = ctx as Slot
            if (c.flags and OpFlags.SEND != 0L) {
                free.addLast(slot)
                sendsDone++
                continue
            }
            check(slot.posted) { "receive ${slot.index} completed twice" }
            slot.posted = false
            val sender = senderOf[c.source] ?: error("a message from source ${c.source}, which is none of the peers")
            val kind = slot.kind
            val seq =
                if (kind == 0) {
                    check((c.tag ushr 32).toInt() == stream(sender, 0)) {
                        "tag 0x${java.lang.Long.toHexString(c.tag)} from ${procs[sender].first} names stream ${c.tag ushr 32}"
                    }
                    (c.tag and 0xffff_ffffL).toInt()
                } else {
                    check(c.flags and OpFlags.REMOTE_CQ_DATA != 0L) {
                        "an untagged message from ${procs[sender].first} without its sequence number"
                    }
                    c.data.toInt()
                }
            val what = "${if (kind == 0) "tagged" else "untagged"} message $seq from ${procs[sender].first}"
            check(seq in 0 until count) { "$what: no such message" }
            check(matchedAt[sender][kind][seq] == -1L) { "$what delivered twice" }
            val size = Traffic.size(stream(sender, kind), seq)
            check(c.len == size.toLong()) { "$what has ${c.len} bytes, expected $size" }
            val bad = Traffic.check(slot.buffer, stream(sender, kind), seq, size)
            check(bad < 0) { "$what corrupt at byte $bad of $size" }
            matchedAt[sender][kind][seq] = slot.postSeq
            received++
            post(slot)
        }
        for (s in others) for (kind in 0..1) for (seq in 1 until count) {
            check(matchedAt[s][kind][seq] > matchedAt[s][kind][seq - 1]) {
                "${procs[s].first}, kind $kind: message $seq matched before message ${seq - 1}"
            }
        }
        node.mark()
        for (i in others) node.awaitMark(procs[i].first, deadline)
        checkRails()
        println("OK mesh: ${node.name} sent $sendsTotal and received $receiveTotal messages")
    }

    /**
     * The per-rail counters: shm carried exactly the same-host messages, the network rails together exactly the rest.
     */
    private fun checkRails() {
        val stats = node.ep.stats()
        println(stats.render())
        fun bytes(process: Int): Long =
            (0..1).sumOf { kind -> (0 until count).sumOf { Traffic.size(stream(process, kind), it).toLong() } }
        // Under STRIPE (two network rails of equal weight) a message above the threshold travels as two parts, each
        // counted as a message of its rail.
        val striping = System.getenv("BRAID_LINK_POLICY") == "STRIPE"
        val threshold = System.getenv("BRAID_LINK_STRIPE_THRESHOLD")?.toLong() ?: (256L shl 10)
        fun parts(process: Int): Long =
            if (!striping) 0
            else
                (0..1).sumOf { kind ->
                    (0 until count).count { Traffic.size(stream(process, kind), it) > threshold }.toLong()
                }
        val remote = others - sameHost.toSet()
        val expected =
            mapOf(
                "shm" to
                    listOf(
                        sameHost.size * 2L * count,
                        sameHost.size * bytes(me),
                        sameHost.size * 2L * count,
                        sameHost.sumOf { bytes(it) },
                    ),
                NETWORK to
                    listOf(
                        remote.size * (2L * count + parts(me)),
                        remote.size * bytes(me),
                        remote.sumOf { 2L * count + parts(it) },
                        remote.sumOf { bytes(it) },
                    ),
            )
        val network = stats.rails.filter { it.rail != "shm" }
        if (network.isEmpty()) error("no network rail in the endpoint's stats: $stats")
        for ((rail, want) in expected) {
            val rails = if (rail == NETWORK) network else listOfNotNull(stats.rail(rail))
            if (rails.isEmpty()) error("no $rail rail in the endpoint's stats: $stats")
            val got =
                listOf(
                    rails.sumOf { it.messagesSent },
                    rails.sumOf { it.bytesSent },
                    rails.sumOf { it.messagesReceived },
                    rails.sumOf { it.bytesReceived },
                )
            check(got == want) {
                "$rail rail carried (messages sent, bytes sent, messages received, bytes received) $got, expected $want"
            }
        }
        if (network.size > 1 && remote.size > 1) {
            val used = network.filter { it.messagesSent > 0 }.map { it.rail }
            check(used.size > 1) {
                "${remote.size} remote peers all went over ${used.joinToString()} of ${network.map { it.rail }}"
            }
        }
    }

    private companion object {
        /** The network rails together (tcp alone, or several). */
        const val NETWORK = "the network"
    }
}
