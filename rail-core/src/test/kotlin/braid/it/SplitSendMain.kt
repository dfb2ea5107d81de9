package braid.it

import braid.core.Errno
import braid.testsupport.Deadline
import java.nio.ByteBuffer
import java.nio.file.Paths
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The sender of [ShmSplitCopyIT] over shm. Usage: `SplitSendMain DIR NAME RECEIVER MODE ROUNDS SIZE@OFFSET…`: ROUNDS
 * times, message i of the list (tag round × cases + i) carries SIZE bytes of [Traffic]'s pattern (sender 3, seq = tag),
 * sent from OFFSET bytes into its own direct buffer.
 * - MODE `drive`: sends one message at a time, driving progress until it completes; then prints `PUSHED n` (the chunks
 *   it pushed into the receiver in split copies, from its endpoint's description), waits for the receiver's mark and
 *   prints OK.
 * - MODE `idle`: posts every message at once (one round), prints POSTED and never drives progress again: the receiver
 *   has to copy everything itself.
 */
object SplitSendMain {
    const val SENDER = 3

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val node = PeerMain.Node("shm", Paths.get(args[0]), args[1])
        val dest = node.peer(args[2])
        val mode = args[3]
        val rounds = args[4].toInt()
        val cases = args.drop(5).map { c -> c.split('@').let { it[0].toInt() to it[1].toInt() } }
        val buffers =
            cases.map { (size, offset) -> UnsafeBuffer(ByteBuffer.allocateDirect(size + offset), offset, size) }
        val deadline = Deadline.of("every split-copy send to complete", Duration.ofSeconds(300))
        for (round in 0 until rounds) for ((i, c) in cases.withIndex()) {
            val seq = round * cases.size + i
            Traffic.fill(buffers[i], SENDER, seq, c.first)
            val rc = node.ep.tryTsend(buffers[i], 0, c.first, dest, seq.toLong(), "m$seq")
            check(rc == 0) { "tsend of message $seq returned ${Errno.name(rc)}" }
            if (mode == "idle") {
                check(rounds == 1) { "idle mode posts one round (its buffers are not reused)" }
                continue
            }
            while (node.poll() == null) deadline.check { "message $seq (${c.first} bytes) not sent" }
        }
        if (mode == "idle") {
            println("POSTED")
            System.out.flush()
            Thread.sleep(600_000)
        }
        val pushed = Regex("chunks pushed (\\d+)").findAll(node.ep.describe()).sumOf { it.groupValues[1].toLong() }
        println("PUSHED $pushed")
        System.out.flush()
        node.awaitMark(args[2], deadline)
        node.close()
        println("OK sent ${rounds * cases.size} messages")
    }
}
