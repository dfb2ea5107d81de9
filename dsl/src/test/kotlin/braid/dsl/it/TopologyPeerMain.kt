package braid.dsl.it

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.dsl.OpenLink
import braid.dsl.Topology
import braid.dsl.topology
import braid.testsupport.Deadline
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.nio.file.StandardCopyOption
import java.time.Duration
import kotlin.system.exitProcess
import org.agrona.concurrent.UnsafeBuffer

/**
 * One process of [TopologyMultiProcessIT]: opens the link a config file describes (through [topology] and
 * [Topology.open], the environment layer included), exchanges addresses through files in a directory, then `first`
 * sends [COUNT] tagged messages of sizes from 0 B to 256 KiB (eager and rendezvous) with a pattern, `second` checks
 * each and sends them back, `first` checks those. Prints the per-rail stats and `OK`, or `FAILED: why` and exits 1.
 *
 * Args: `first|second DIR CONFIG`.
 */
object TopologyPeerMain {
    const val COUNT = 140
    private val SIZES = intArrayOf(0, 1, 64, 4096, 8192, 70_000, 262_144)
    private val TIMEOUT: Duration = Duration.ofSeconds(60)

    @JvmStatic
    fun main(args: Array<String>) {
        val (role, dir, config) = Triple(args[0], Paths.get(args[1]), args[2])
        val other = if (role == "first") "second" else "first"
        try {
            Topology.open(topology { file(config) }).use { link ->
                println("opened ${link.info.domainName}: ${link.resolved!!.opened.joinToString { it.rail.linkPart }}")
                publish(dir, role, link.address)
                val peer = link.av.insert(lookup(dir, other))
                if (role == "first") {
                    for (i in 0 until COUNT) send(link, peer, i)
                    for (i in 0 until COUNT) receive(link, peer, i)
                } else {
                    for (i in 0 until COUNT) receive(link, peer, i)
                    for (i in 0 until COUNT) send(link, peer, i)
                }
                // Neither closes before both are done, so no message in flight is cut off.
                Files.write(dir.resolve("$role.done"), ByteArray(0))
                val deadline = Deadline.of("the $other process to finish", TIMEOUT)
                while (!Files.exists(dir.resolve("$other.done"))) {
                    link.domain.progress()
                    deadline.check()
                }
                val stats = link.endpoint.stats()
                println(
                    "rails: " + stats.rails.joinToString(" ") { "${it.rail}=${it.messagesSent}/${it.messagesReceived}" }
                )
                println("OK")
            }
        } catch (e: Throwable) {
            println("FAILED: $e")
            e.printStackTrace(System.out)
            System.out.flush()
            exitProcess(1)
        }
        exitProcess(0)
    }

    private fun size(i: Int) = SIZES[i % SIZES.size]

    private fun pattern(i: Int, at: Int): Byte = (i * 31 + at * 7 + 1).toByte()

    private fun send(link: OpenLink, peer: Long, i: Int) {
        val n = size(i)
        val buf = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(n, 1)))
        for (at in 0 until n) buf.putByte(at, pattern(i, at))
        val deadline = Deadline.of("send $i to be accepted (not EAGAIN)", TIMEOUT)
        while (true) {
            val rc = link.endpoint.tryTsend(buf, 0, n, peer, i.toLong(), "send $i")
            if (rc == 0) break
            check(rc == -Errno.EAGAIN) { "send $i: ${Errno.name(rc)}" }
            link.domain.progress()
            deadline.check()
        }
        await(link, "send $i")
    }

    private fun receive(link: OpenLink, peer: Long, i: Int) {
        val n = size(i)
        val buf = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(n, 1)))
        check(link.endpoint.tryTrecv(buf, 0, n, peer, i.toLong(), 0, "receive $i") == 0) { "posting receive $i failed" }
        val c = await(link, "receive $i")
        check(c.len == n.toLong() && c.tag == i.toLong()) {
            "receive $i: got ${c.len} bytes with tag ${c.tag}, expected $n bytes with tag $i"
        }
        for (at in 0 until n) check(buf.getByte(at) == pattern(i, at)) { "receive $i: byte $at is corrupt" }
    }

    private fun await(link: OpenLink, what: String): Completion {
        val c = Completion()
        val deadline = Deadline.of("$what: its completion", TIMEOUT)
        while (true) {
            when (val rc = link.cq.read(c)) {
                1 -> {
                    check(c.context == what) { "expected the completion of $what, got one of ${c.context}" }
                    return c
                }
                -Errno.EAVAIL -> {
                    val e = CompletionError()
                    link.cq.readErr(e)
                    error("$what failed: ${Errno.name(e.err)}: ${e.message}")
                }
                -Errno.EAGAIN -> deadline.check()
                else -> error("$what: reading the CQ returned ${Errno.name(rc)}")
            }
        }
    }

    private fun publish(dir: Path, name: String, address: ByteArray) {
        val tmp = dir.resolve("$name.tmp")
        Files.write(tmp, address)
        Files.move(tmp, dir.resolve("$name.addr"), StandardCopyOption.ATOMIC_MOVE)
    }

    private fun lookup(dir: Path, name: String): ByteArray {
        val f = dir.resolve("$name.addr")
        val deadline = Deadline.of("the address of '$name' in $dir", TIMEOUT)
        while (!Files.exists(f)) {
            deadline.check()
            Thread.sleep(5)
        }
        return Files.readAllBytes(f)
    }
}
