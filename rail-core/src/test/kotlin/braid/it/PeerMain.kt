package braid.it

import braid.core.AddressVector
import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CompletionQueue
import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Hints
import braid.core.MrAccess
import braid.core.OpFlags
import braid.testsupport.Deadline
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The other processes of the multi-process tests, on any provider. Usage: `PeerMain PROVIDER MODE DIR NAME ARGS…`;
 * addresses are exchanged through files in DIR. PROVIDER is `shm`, `tcp`, `link` (`shm+tcp`) or `link:LINKS` (a link
 * string, e.g. `link:shm+tcp:braid0+tcp:braid1`, with `@2,1` after it for the network rails' weights); tcp runs on the
 * interface `BRAID_TCP_IFACE` names, `lo` if unset. Every mode prints a line starting OK when it succeeds; [childMain]
 * exits 0 then, or 1 with the failure ([braid.testsupport.ChildProcess.awaitOk] checks both).
 * - `send DIR NAME RECEIVER SENDER_INDEX COUNT`: sends the [Traffic] stream to RECEIVER.
 * - `failover-send DIR NAME RECEIVER SENDER_INDEX COUNT`: as `send`, over a link of several rails, with a cut between
 *   the halves ([Node.failoverSend]).
 * - `stripe-send DIR NAME RECEIVER SENDER_INDEX COUNT`: as `send`, then prints the bytes each rail carried as parts of
 *   striped messages (`striped bytes: tcp:braid0=N …`) and the endpoint's statistics.
 * - `stream-send DIR NAME RECEIVER COUNT SIZE whole|readmit|lossy`: COUNT messages of SIZE bytes (tag = index,
 *   [Traffic]'s bytes), 64 in flight; marks `NAME-phase1` a quarter of the way, so a test can cut a rail mid-stream.
 *   `whole`: every send must succeed, then it waits for the receiver's mark and prints its statistics. `readmit`: as
 *   `whole`, and it marks `NAME-failed` once a rail failed for the receiver (the test then restores it); it sends the
 *   last [READMIT_TAIL] messages only once that rail is re-admitted, and prints how many of them the rail carried.
 *   `lossy` (every rail to the receiver is cut): it stops at the first error completion and prints it and how long
 *   after the test's `cut` mark it came.
 * - `stream-recv DIR NAME SENDER COUNT SIZE`: receives them with any-source receives, checking that each arrives once,
 *   in order, intact; prints the longest stall between two messages and its statistics.
 * - `recv DIR NAME COUNT SENDER…`: receives COUNT messages from each SENDER with any-source receives and checks every
 *   byte, exactly once, in order per sender.
 * - `send-refused DIR NAME RECEIVER`: sends a small and a large message to RECEIVER, which holds another job key; both
 *   must fail with EACCES. Prints their messages, then drives progress until RECEIVER marks itself done.
 * - `slow-send DIR NAME RECEIVER SIZE`: sends one SIZE-byte message, drives progress slowly for a while, prints STALLED
 *   and stops driving it.
 * - `hold DIR NAME`: publishes its address and drives progress until killed; receives nothing.
 * - `big-send DIR NAME RECEIVER SIZE` / `big-recv DIR NAME SENDER SIZE`: one message of SIZE bytes (up to 2 GiB - 1,
 *   tag [BIG_TAG]), checked byte by byte; the sender prints SENDING once it is posted.
 * - `mesh DIR NAME COUNT PROCESS@HOST…`: every process named sends every other one COUNT tagged and COUNT untagged
 *   messages ([Mesh]) and receives theirs with any-source receives; then checks its per-rail counters against where its
 *   peers are (same HOST: shm, else the network).
 *
 * RMA and atomics (the `rma-` modes publish their address themselves, once their region exists):
 * - `rma-target DIR NAME INITIATOR`: the peer of [DeferredWorkMultiProcessIT]'s initiator: registers region [Rma.KEY]
 *   ([Rma.REGION] bytes, INT64 [Rma.START] at 0, a pattern at [Rma.PATTERN_AT]), sends the initiator an untagged and a
 *   tagged (tag 9) message, receives its untagged and tagged (tag 7) messages, and once the initiator marks itself done
 *   checks what its deferred writes and atomics left in the region.
 * - `rma-fetch-add DIR NAME TARGET INDEX COUNT`: COUNT fetch-adds of INDEX+1 to TARGET's region [Rma.KEY] at 0, a
 *   window of them in flight, writing each fetched old value to NAME.fetched.
 * - `rma-serve DIR NAME`: registers region [Rma.KEY] ([Rma.REGION] bytes) and drives progress until DIR holds
 *   `stop.done` (a target for benchmarks).
 */
object PeerMain {
    const val BIG_TAG = 7L

    /** `stream-send … readmit`: the messages sent once the failed rail is back. */
    const val READMIT_TAIL = 10_000

    /** A stream end that sees nothing move this long prints its link's state once (the deadline is longer). */
    const val STALL_REPORT_NANOS = 10_000_000_000L

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val mode = args[1]
        val node = Node(args[0], Paths.get(args[2]), args[3], publish = !mode.startsWith("rma-"))
        when (mode) {
            "send" -> node.send(args[4], args[5].toInt(), args[6].toInt())
            "failover-send" -> node.failoverSend(args[4], args[5].toInt(), args[6].toInt())
            "stripe-send" -> node.stripeSend(args[4], args[5].toInt(), args[6].toInt())
            "recv" -> node.recv(args[4].toInt(), args.drop(5))
            "stream-send" -> node.streamSend(args[4], args[5].toInt(), args[6].toInt(), args[7])
            "stream-recv" -> node.streamRecv(args[4], args[5].toInt(), args[6].toInt())
            "send-refused" -> node.sendRefused(args[4])
            "slow-send" -> node.slowSend(args[4], args[5].toInt())
            "hold" -> node.hold()
            "big-send" -> node.bigSend(args[4], args[5].toInt())
            "big-recv" -> node.bigRecv(args[4], args[5].toInt())
            "mesh" -> Mesh(node, args[4].toInt(), args.drop(5)).run()
            "rma-target" -> node.rmaTarget(args[4])
            "rma-fetch-add" -> node.rmaFetchAdd(args[4], args[5].toInt(), args[6].toInt())
            "rma-serve" -> node.rmaServe()
            else -> error("unknown mode $mode")
        }
        node.close()
    }

    /** The arguments that run [mode] of [provider] (everything after the main class). */
    fun args(provider: String, mode: String, dir: Path, name: String, vararg rest: Any): List<String> =
        listOf(provider, mode, "$dir", name) + rest.map { it.toString() }

    /** The hints a child uses for [provider]. */
    fun hints(provider: String): Hints =
        when (provider) {
            "shm" -> Hints(provider = "shm")
            "tcp" -> Hints(provider = "tcp", domainName = System.getenv("BRAID_TCP_IFACE") ?: "lo")
            "link" ->
                Hints(provider = "link")
                    .with(braid.provider.link.LinkParams.LINKS, "shm+tcp:${System.getenv("BRAID_TCP_IFACE") ?: "lo"}")
            else ->
                if (provider.startsWith("link:"))
                    Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, provider.removePrefix("link:"))
                else error("unknown provider '$provider' (shm, tcp, link, link:LINKSTRING)")
        }

    /**
     * [info] with the weights a `link:LINKS@W1,W2` provider names given to its network rails, in order (a link string
     * carries no weights; a topology file would).
     */
    fun weighted(provider: String, info: braid.core.Info): braid.core.Info {
        val weights = provider.substringAfter('@', "").takeIf { it.isNotEmpty() }?.split(',')?.map { it.toDouble() }
        if (weights == null) return info
        var k = 0
        return info.withRails(
            info.rails.map { r -> if (r.provider == "shm") r else r.withRail(r.rail!!.withWeight(weights[k++])) }
        )
    }

    /** What the `rma-` modes and their tests share: the target's region and the messages exchanged. */
    object Rma {
        const val KEY = 77L
        const val REGION = 4096
        const val START = 1000L
        const val PATTERN_AT = 512
        const val PATTERN_LENGTH = 256
        const val WRITE_AT = 100
        const val WRITTEN = "written-by-deferred-work"
        const val FROM_TARGET = "untagged-from-target"
        const val TAGGED_FROM_TARGET = "tagged-from-target"
        const val TO_TARGET = "deferred-send"
        const val TAGGED_TO_TARGET = "deferred-tsend"
        /** What the initiator's deferred atomics leave at offset 0: +5, +10, then CSWAP(1015 -> FINAL). */
        const val FINAL = 7L

        fun pattern(i: Int): Byte = (i * 31 + 7).toByte()
    }

    /**
     * One endpoint of [provider] with its own fabric, domain, CQ and AV; it publishes its address in [dir] as [name] at
     * once, or when [publish] is called if [publish] is false here.
     */
    class Node(provider: String, val dir: Path, val name: String, publish: Boolean = true) : AutoCloseable {
        private val info = weighted(provider, Braid.getInfo(hints(provider.substringBefore('@'))).first())
        private val fabric = Braid.fabric(info)
        val domain: Domain = fabric.domain(info)
        val cq: CompletionQueue = domain.completionQueue()
        val av: AddressVector = domain.addressVector()
        val ep: Endpoint =
            domain.endpoint().also {
                it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                it.bind(av)
                it.enable()
            }
        val c = Completion()
        private val e = CompletionError()

        init {
            if (publish) publish()
        }

        fun publish() = Rendezvous.publish(dir, name, ep.address)

        operator fun component1(): Domain = domain

        operator fun component2(): CompletionQueue = cq

        operator fun component3(): AddressVector = av

        operator fun component4(): Endpoint = ep

        fun peer(other: String): Long = av.insert(Rendezvous.lookup(dir, other))

        /** Reads one completion, failing on an error completion; returns its context or null if none yet. */
        fun poll(): Any? =
            when (val rc = cq.readFrom(c)) {
                1 -> c.context ?: NO_CONTEXT
                -Errno.EAGAIN -> null
                -Errno.EAVAIL -> {
                    cq.readErr(e)
                    error("error completion: ${Errno.name(e.err)} ${e.message}")
                }
                else -> error("cq read returned $rc")
            }

        fun mark() = Rendezvous.mark(dir, name)

        fun awaitMark(other: String, deadline: Deadline) {
            while (!Rendezvous.marked(dir, other)) {
                domain.progress()
                deadline.check { "no mark from '$other' yet" }
                Thread.sleep(1)
            }
        }

        fun send(receiver: String, sender: Int, count: Int) {
            sendRange(peer(receiver), sender, 0, count)
            awaitMark(receiver, Deadline.of("the receiver's mark", Duration.ofSeconds(300)))
            println("OK sent $count")
        }

        fun stripeSend(receiver: String, sender: Int, count: Int) {
            sendRange(peer(receiver), sender, 0, count)
            awaitMark(receiver, Deadline.of("the receiver's mark", Duration.ofSeconds(300)))
            val stats = ep.stats()
            println("striped bytes: " + stats.rails.joinToString(" ") { "${it.rail}=${it.fragmentBytes}" })
            println(stats.render())
            println("OK stripe-send $count")
        }

        /**
         * `failover-send`: sends the first half of the [Traffic] stream, marks `NAME-phase1`, waits for the test's mark
         * `cut` (it has cut a NIC), drives progress until the rail its receiver was pinned to has declared the receiver
         * gone, then sends the second half (the link posts it on the surviving rail) and waits for the receiver's mark.
         */
        fun failoverSend(receiver: String, sender: Int, count: Int) {
            val dest = peer(receiver)
            val deadline = Deadline.of("the failover", Duration.ofSeconds(300))
            sendRange(dest, sender, 0, count / 2)
            val link = ep.transport as braid.provider.link.LinkTransport
            val pinned = link.routeName(dest)!!
            Rendezvous.mark(dir, "$name-phase1")
            awaitMark("cut", deadline)
            val cutAt = System.nanoTime()
            while (!link.rail(pinned)!!.peerGone(dest)) {
                domain.progress()
                deadline.check { "rail $pinned never declared $receiver gone" }
                Thread.sleep(1)
            }
            println("rail $pinned lost $receiver ${(System.nanoTime() - cutAt) / 1_000_000} ms after the cut")
            val resumed = System.nanoTime()
            sendRange(dest, sender, count / 2, count)
            val now = link.routeName(dest)
            check(now != null && now != pinned) { "$receiver is still routed over $now" }
            println("second half over $now in ${(System.nanoTime() - resumed) / 1_000_000} ms; ${ep.stats().render()}")
            awaitMark(receiver, deadline)
            println("OK failover-send $count")
        }

        fun streamSend(receiver: String, count: Int, size: Int, how: String) {
            val lossy = how == "lossy"
            val readmit = how == "readmit"
            val dest = peer(receiver)
            val link = ep.transport as braid.provider.link.LinkTransport
            val rails = ep.stats().rails.map { it.rail }
            var failedRail: String? = null
            var tailFrom = -1L
            // Not before the receiver has this sender in its AV: until then its messages pass unordered.
            val ready = Deadline.of("the receiver's AV", Duration.ofSeconds(120))
            while (!Rendezvous.marked(dir, "$receiver-ready")) {
                domain.progress()
                ready.check { "no mark from '$receiver' yet" }
                Thread.sleep(1)
            }
            val window = 64
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(size)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            val free = ArrayDeque((0 until window).toList())
            var seq = 0
            var done = 0
            var cutAt = 0L
            var looked = 0L
            var refused = false
            var lastDone = System.nanoTime()
            var stallReported = false
            val deadline = Deadline.of("the stream", Duration.ofSeconds(400))
            while (done < count) {
                if (readmit && failedRail == null && System.nanoTime() - looked > 5_000_000) {
                    looked = System.nanoTime()
                    failedRail = rails.firstOrNull { link.railFailed(dest, it) }
                    if (failedRail != null) Rendezvous.mark(dir, "$name-failed")
                }
                if (readmit && seq == count - READMIT_TAIL && tailFrom < 0) {
                    // The tail waits for the failed rail to come back.
                    val rail = checkNotNull(failedRail) { "no rail failed before the tail of the stream" }
                    val since = System.nanoTime()
                    while (link.railFailed(dest, rail)) {
                        domain.progress()
                        deadline.check { "rail $rail never re-admitted" }
                    }
                    println("rail $rail re-admitted ${(System.nanoTime() - since) / 1_000_000} ms after the tail began")
                    tailFrom = ep.stats().rail(rail)!!.messagesSent
                }
                while (seq < count && free.isNotEmpty() && !(readmit && seq == count - READMIT_TAIL && tailFrom < 0)) {
                    val slot = free.first()
                    Traffic.fill(slots[slot], 0, seq, size)
                    val rc = ep.tryTsend(slots[slot], 0, size, dest, seq.toLong(), contexts[slot])
                    if (rc == -Errno.EAGAIN) break
                    if (lossy && rc < 0) {
                        if (!refused) println("send refused after the cut: ${Errno.name(rc)}")
                        refused = true
                        break
                    }
                    check(rc == 0) { "tsend returned ${Errno.name(rc)}" }
                    free.removeFirst()
                    seq++
                    if (seq == count / 4) Rendezvous.mark(dir, "$name-phase1")
                }
                if (lossy && cutAt == 0L && System.nanoTime() - looked > 5_000_000) {
                    looked = System.nanoTime()
                    if (Rendezvous.marked(dir, "cut")) cutAt = looked
                }
                val rc = cq.readFrom(c)
                if (rc == -Errno.EAVAIL) {
                    cq.readErr(e)
                    check(lossy) { "error completion: ${Errno.name(e.err)} ${e.message}" }
                    val after = if (cutAt == 0L) -1 else (System.nanoTime() - cutAt) / 1_000_000
                    println("error completion ${after} ms after the cut: ${Errno.name(e.err)} ${e.message}")
                    println("OK stream-lost after $done")
                    return
                }
                if (rc != 1) {
                    check(rc == -Errno.EAGAIN) { "cq read returned $rc" }
                    deadline.check { "sent $done of $count; ${link.debugState(dest)}" }
                    if (System.nanoTime() - lastDone > STALL_REPORT_NANOS && !stallReported) {
                        stallReported = true
                        println("no completion for 10 s after $done: ${link.debugState(dest)}")
                    }
                    continue
                }
                lastDone = System.nanoTime()
                free.addLast(c.context as Int)
                done++
            }
            check(!lossy) { "every send completed although every rail was cut" }
            awaitMark(receiver, deadline)
            if (readmit) {
                val carried = ep.stats().rail(failedRail!!)!!.messagesSent - tailFrom
                println("re-admitted rail $failedRail carried $carried of the last $READMIT_TAIL messages")
            }
            println(ep.stats().render())
            println("OK stream-send $count")
        }

        fun streamRecv(sender: String, count: Int, size: Int) {
            val src = peer(sender)
            val link = ep.transport as braid.provider.link.LinkTransport
            var stallReported = false
            Rendezvous.mark(dir, "$name-ready")
            val window = 64
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(size)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            // Message k must match the k-th receive posted (every receive takes any message): that is the order.
            val postSeq = LongArray(window)
            var posts = 0L
            fun post(slot: Int) {
                check(ep.tryTrecv(slots[slot], 0, size, FiAddr.UNSPEC, 0, -1L, contexts[slot]) == 0)
                postSeq[slot] = posts++
            }
            for (s in 0 until window) post(s)
            val seen = java.util.BitSet(count)
            var got = 0
            var last = System.nanoTime()
            var stall = 0L
            var stallAt = 0
            val deadline = Deadline.of("every message to arrive", Duration.ofSeconds(400))
            while (got < count) {
                val ctx = poll()
                if (ctx == null) {
                    deadline.check { "received $got of $count; ${link.debugState(src)}" }
                    if (System.nanoTime() - last > STALL_REPORT_NANOS && !stallReported) {
                        stallReported = true
                        println("nothing for 10 s after $got: ${link.debugState(src)}")
                    }
                    continue
                }
                val slot = ctx as Int
                val k = c.tag
                check(k in 0 until count && !seen.get(k.toInt())) { "message $k arrived twice" }
                check(k == postSeq[slot]) {
                    "message $k matched receive ${postSeq[slot]} (lost, repeated or out of order)"
                }
                check(c.len == size.toLong()) { "message $k has ${c.len} bytes, expected $size" }
                val bad = Traffic.check(slots[slot], 0, k.toInt(), size)
                check(bad < 0) { "message $k corrupt at byte $bad" }
                seen.set(k.toInt())
                val now = System.nanoTime()
                if (got > 0 && now - last > stall) {
                    stall = now - last
                    stallAt = k.toInt()
                }
                last = now
                got++
                post(slot)
            }
            mark()
            println("longest stall ${stall / 1_000_000} ms, before message $stallAt")
            println(ep.stats().render())
            println("OK stream-received $count")
        }

        /** Sends messages [from] until [until] of [sender]'s [Traffic] stream to [dest], a window at a time. */
        private fun sendRange(dest: Long, sender: Int, from: Int, until: Int) {
            val count = until
            val window = 8
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            val free = ArrayDeque((0 until window).toList())
            var seq = from
            var done = from
            val deadline = Deadline.of("every send to complete", Duration.ofSeconds(300))
            while (done < count) {
                while (seq < count && free.isNotEmpty()) {
                    val slot = free.first()
                    val size = Traffic.size(sender, seq)
                    Traffic.fill(slots[slot], sender, seq, size)
                    val rc = ep.tryTsend(slots[slot], 0, size, dest, Traffic.tag(sender, seq), contexts[slot])
                    if (rc == -Errno.EAGAIN) break
                    check(rc == 0) { "tsend returned ${Errno.name(rc)}" }
                    free.removeFirst()
                    seq++
                }
                val ctx = poll()
                if (ctx == null) {
                    deadline.check { "sent $done of $count" }
                    continue
                }
                free.addLast(ctx as Int)
                done++
            }
        }

        fun recv(count: Int, senders: List<String>) {
            val sources = senders.map { peer(it) }
            val window = 8
            val slots = Array(window) { UnsafeBuffer(ByteBuffer.allocateDirect(Traffic.MAX_SIZE)) }
            val contexts = Array(window) { Integer.valueOf(it) }
            val postSeq = LongArray(window)
            var posts = 0L
            val total = count * senders.size
            // For each sender: the post sequence of the receive each message matched, by message seq.
            val matchedAt = Array(senders.size) { LongArray(count) { -1 } }
            fun post(slot: Int) {
                check(ep.tryTrecv(slots[slot], 0, Traffic.MAX_SIZE, FiAddr.UNSPEC, 0, -1L, contexts[slot]) == 0)
                postSeq[slot] = posts++
            }
            for (s in 0 until window) post(s)
            var got = 0
            val deadline = Deadline.of("every message to arrive", Duration.ofSeconds(300))
            while (got < total) {
                val ctx = poll()
                if (ctx == null) {
                    deadline.check { "received $got of $total" }
                    continue
                }
                val slot = ctx as Int
                val sender = (c.tag ushr 32).toInt()
                val seq = (c.tag and 0xffff_ffffL).toInt()
                check(sender in senders.indices && seq in 0 until count) {
                    "unexpected tag 0x${java.lang.Long.toHexString(c.tag)}"
                }
                check(c.source == sources[sender]) {
                    "message $sender/$seq reports source ${c.source}, expected ${sources[sender]}"
                }
                check(matchedAt[sender][seq] == -1L) { "message $sender/$seq delivered twice" }
                val size = Traffic.size(sender, seq)
                check(c.len == size.toLong()) { "message $sender/$seq has ${c.len} bytes, expected $size" }
                val bad = Traffic.check(slots[slot], sender, seq, size)
                check(bad < 0) { "message $sender/$seq corrupt at byte $bad of $size" }
                matchedAt[sender][seq] = postSeq[slot]
                got++
                post(slot)
            }
            for (s in senders.indices) {
                for (seq in 1 until count) {
                    check(matchedAt[s][seq] > matchedAt[s][seq - 1]) {
                        "sender $s: message $seq matched before message ${seq - 1}"
                    }
                }
            }
            mark()
            println("OK received $total")
        }

        fun sendRefused(receiver: String) {
            val dest = peer(receiver)
            val small = UnsafeBuffer(ByteArray(16))
            val large = UnsafeBuffer(ByteBuffer.allocateDirect(1 shl 20))
            check(ep.tryTsend(small, 0, 16, dest, 1, "small") == 0)
            check(ep.tryTsend(large, 0, 1 shl 20, dest, 2, "large") == 0)
            val refused = HashMap<Any?, String>()
            val deadline = Deadline.of("two sends to be refused", Duration.ofSeconds(60))
            while (refused.size < 2) {
                deadline.check { "refused $refused" }
                when (val rc = cq.readFrom(c)) {
                    1 -> error("send '${c.context}' completed: the receiver took it")
                    -Errno.EAVAIL -> {
                        cq.readErr(e)
                        check(e.err == Errno.EACCES) {
                            "send '${e.context}' failed with ${Errno.name(e.err)}, expected EACCES: ${e.message}"
                        }
                        refused[e.context] = e.message
                    }
                    -Errno.EAGAIN -> {}
                    else -> error("cq read returned $rc")
                }
            }
            val again = ep.tryTsend(small, 0, 16, dest, 3, null)
            check(again == -Errno.EACCES) { "a send after the refusal returned ${Errno.name(again)}, expected EACCES" }
            println("OK refused: ${refused.values.joinToString(" | ")}")
            System.out.flush()
            awaitMark(receiver, deadline)
        }

        fun slowSend(receiver: String, size: Int) {
            val dest = peer(receiver)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            Traffic.fill(buffer, 0, 0, size)
            check(ep.tryTsend(buffer, 0, size, dest, 1, "slow") == 0)
            println("SENDING through a ${ep.info.settings[braid.provider.shm.ShmParams.RING_SIZE]}-byte ring")
            // Drive the transfer for a while, then stop driving it: the receiver is left mid-transfer.
            repeat(200) {
                if (poll() != null) println("COMPLETED early: the whole message was sent")
                Thread.sleep(2)
            }
            println("STALLED")
            System.out.flush()
            Thread.sleep(600_000)
        }

        fun hold() {
            println("HOLDING")
            System.out.flush()
            val deadline = Deadline.of("the parent to end this holding peer", Duration.ofSeconds(600))
            while (!deadline.expired()) {
                domain.progress()
                Thread.sleep(1)
            }
        }

        fun bigSend(receiver: String, size: Int) {
            val dest = peer(receiver)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            Traffic.fill(buffer, 7, 7, size)
            check(ep.tryTsend(buffer, 0, size, dest, BIG_TAG, "big") == 0)
            println("SENDING $size bytes")
            System.out.flush()
            val deadline = Deadline.of("the $size-byte send to complete", Duration.ofSeconds(300))
            while (poll() == null) deadline.check()
            awaitMark(receiver, deadline)
            println("OK sent $size bytes")
        }

        fun bigRecv(sender: String, size: Int) {
            val src = peer(sender)
            val buffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))
            check(ep.tryTrecv(buffer, 0, size, src, BIG_TAG, 0, "big") == 0)
            val deadline = Deadline.of("the $size-byte receive to complete", Duration.ofSeconds(300))
            while (poll() == null) deadline.check()
            check(c.len == size.toLong()) { "received ${c.len} bytes, expected $size" }
            val bad = Traffic.check(buffer, 7, 7, size)
            check(bad < 0) { "the $size-byte message is corrupt at byte $bad" }
            mark()
            println("OK received $size bytes intact")
        }

        fun rmaTarget(initiator: String) {
            val region = domain.registerMemory(ByteBuffer.allocateDirect(Rma.REGION), MrAccess.REMOTE, Rma.KEY)
            region.buffer.putLong(0, Rma.START)
            for (i in 0 until Rma.PATTERN_LENGTH) region.buffer.putByte(Rma.PATTERN_AT + i, Rma.pattern(i))
            publish()
            val peer = peer(initiator)
            val rx = UnsafeBuffer(ByteArray(64))
            val trx = UnsafeBuffer(ByteArray(64))
            check(ep.tryRecv(rx, 0, 64, peer, "recv") == 0)
            check(ep.tryTrecv(trx, 0, 64, peer, 7, 0, "trecv") == 0)
            check(ep.trySend(UnsafeBuffer(Rma.FROM_TARGET.toByteArray()), 0, Rma.FROM_TARGET.length, peer, "send") == 0)
            check(
                ep.tryTsend(
                    UnsafeBuffer(Rma.TAGGED_FROM_TARGET.toByteArray()),
                    0,
                    Rma.TAGGED_FROM_TARGET.length,
                    peer,
                    9,
                    "tsend",
                ) == 0
            )
            val done = HashMap<Any, Long>()
            val deadline = Deadline.of("4 completions and the initiator's mark", Duration.ofSeconds(120))
            while (done.size < 4 || !Rendezvous.marked(dir, initiator)) {
                poll()?.let { done[it] = c.len }
                deadline.check { "completions $done, initiator done ${Rendezvous.marked(dir, initiator)}" }
            }
            fun text(b: UnsafeBuffer, len: Long) = String(ByteArray(len.toInt()).also { b.getBytes(0, it) })
            check(text(rx, done.getValue("recv")) == Rma.TO_TARGET) { "received '${text(rx, done.getValue("recv"))}'" }
            check(text(trx, done.getValue("trecv")) == Rma.TAGGED_TO_TARGET) {
                "received tagged '${text(trx, done.getValue("trecv"))}'"
            }
            val written = String(ByteArray(Rma.WRITTEN.length).also { region.buffer.getBytes(Rma.WRITE_AT, it) })
            check(written == Rma.WRITTEN) { "the deferred write left '$written'" }
            check(region.buffer.getLong(0) == Rma.FINAL) {
                "the deferred atomics left ${region.buffer.getLong(0)}, expected ${Rma.FINAL}"
            }
            // Linger so the initiator's last completions are not cut short by our close.
            val linger = System.nanoTime() + 200_000_000L
            while (System.nanoTime() < linger) domain.progress()
            println("OK the target's region holds what the deferred work wrote")
        }

        fun rmaFetchAdd(target: String, index: Int, count: Int) {
            publish()
            val dest = peer(target)
            val window = 16
            val operand = UnsafeBuffer(ByteBuffer.allocateDirect(8)).also { it.putLong(0, index + 1L) }
            val results = UnsafeBuffer(ByteBuffer.allocateDirect(8 * count))
            var posted = 0
            var completed = 0
            val deadline = Deadline.of("every fetch-add to complete", Duration.ofSeconds(180))
            while (completed < count) {
                while (posted < count && posted - completed < window) {
                    val rc =
                        ep.tryFetchAtomic(
                            operand,
                            0,
                            1,
                            results,
                            8 * posted,
                            dest,
                            0,
                            Rma.KEY,
                            AtomicDatatype.INT64,
                            AtomicOp.SUM,
                            null,
                        )
                    if (rc == -Errno.EAGAIN) break
                    check(rc == 0) { "fetch-add returned ${Errno.name(rc)}" }
                    posted++
                }
                if (poll() != null) completed++
                deadline.check { "$completed of $count completed" }
            }
            val out = StringBuilder()
            for (i in 0 until count) out.append(results.getLong(8 * i)).append(' ').append(index + 1).append('\n')
            Files.writeString(dir.resolve("$name.fetched"), out)
            mark()
            println("OK $count fetch-adds")
        }

        fun rmaServe() {
            domain.registerMemory(ByteBuffer.allocateDirect(Rma.REGION), MrAccess.REMOTE, Rma.KEY)
            publish()
            var n = 0
            val deadline = Deadline.of("the 'stop' mark", Duration.ofSeconds(600))
            while (++n and 0xfff != 0 || !Rendezvous.marked(dir, "stop")) {
                domain.progress()
                if (n and 0xfff == 0) deadline.check()
            }
            println("OK served until stopped")
        }

        override fun close() {
            ep.close()
            fabric.close()
        }
    }

    private val NO_CONTEXT = Any()
}
