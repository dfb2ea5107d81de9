package braid.it

import braid.core.Braid
import braid.core.Hints
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.core.trecv
import braid.core.tsend
import braid.testsupport.Deadline
import java.nio.file.Paths
import java.time.Duration
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer

/**
 * The other process of [ProgressMultiProcessIT], under automatic progress (an engine thread). Usage: `ProgressPeerMain
 * pingers DIR NAME PEER COUNT`: runs COUNT coroutines on one thread, each sending message i (tag i) to PEER and then
 * suspended until PEER's reply (tag i) comes back; checks every reply, then waits for PEER to finish; prints OK and
 * exits through [childMain].
 */
object ProgressPeerMain {
    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        check(args[0] == "pingers") { "unknown mode ${args[0]}" }
        val dir = Paths.get(args[1])
        val name = args[2]
        val peerName = args[3]
        val count = args[4].toInt()
        val info = Braid.getInfo(Hints(provider = "shm", progress = ProgressModel.AUTO)).first()
        Braid.fabric(info).use { fabric ->
            val domain = fabric.domain(info)
            check(domain.progressModel == ProgressModel.AUTO) {
                "expected automatic progress, got ${domain.progressModel}"
            }
            val cq = domain.completionQueue()
            val av = domain.addressVector()
            val ep =
                domain.endpoint().also {
                    it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(av)
                    it.enable()
                }
            Rendezvous.publish(dir, name, ep.address)
            val peer = av.insert(Rendezvous.lookup(dir, peerName))
            runBlocking {
                (0 until count)
                    .map { i ->
                        async {
                            val out = UnsafeBuffer(ByteArray(MESSAGE))
                            Pings.fill(out, i, 1)
                            ep.tsend(out, 0, MESSAGE, peer, i.toLong())
                            val back = UnsafeBuffer(ByteArray(MESSAGE))
                            val c = ep.trecv(back, 0, MESSAGE, peer, i.toLong())
                            check(c.len == MESSAGE.toLong() && Pings.check(back, i) == 2) { "reply $i wrong: $c" }
                        }
                    }
                    .awaitAll()
            }
            val deadline = Deadline.of("'$peerName' to finish", Duration.ofSeconds(120))
            while (!Rendezvous.marked(dir, peerName)) {
                deadline.check()
                Thread.sleep(1)
            }
            ep.close()
        }
        println("OK $count pings answered")
    }

    const val MESSAGE: Int = 64
}

/** 64-byte messages that carry their number and which way they go. */
object Pings {
    fun fill(b: UnsafeBuffer, i: Int, which: Int) {
        b.putInt(0, i)
        b.putInt(4, which)
        for (k in 8 until b.capacity()) b.putByte(k, (i * 13 + which + k).toByte())
    }

    /** Returns which way the message went, after checking every byte. */
    fun check(b: UnsafeBuffer, i: Int): Int {
        check(b.getInt(0) == i) { "message ${b.getInt(0)} where $i was expected" }
        val which = b.getInt(4)
        for (k in 8 until b.capacity()) check(b.getByte(k) == (i * 13 + which + k).toByte()) {
            "message $i corrupt at byte $k"
        }
        return which
    }
}
