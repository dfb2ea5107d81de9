package braid.it

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CoreParams
import braid.core.Errno
import braid.core.FiAddr
import braid.core.OpFlags
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactlyInAnyOrder
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * The job key on same-host rails: a receiver whose key is `alpha` matches the messages of a same-host process with key
 * `alpha` and none of those of processes with key `beta` or with no key, over shm and over a link (whose same-host
 * peers take shm). Real processes, real shm files.
 */
class JobKeyIT :
    FunSpec({
        for (provider in listOf("shm", "link")) {
            test(
                "$provider: a receiver with key alpha matches its alpha peer's messages and none from same-host peers with key beta or no key, which are refused and told so"
            ) {
                val dir = Files.createTempDirectory("braid-key-it")
                val info = Braid.getInfo(PeerMain.hints(provider)).first().let { it.with(CoreParams.JOB_KEY, "alpha") }
                val fabric = Braid.fabric(info)
                val domain = fabric.domain(info)
                val cq = domain.completionQueue()
                val eq = fabric.eventQueue()
                val ep =
                    domain.endpoint().also {
                        it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        it.bind(domain.addressVector())
                        it.bind(eq)
                        it.enable()
                    }
                Rendezvous.publish(dir, "receiver", ep.address)
                val peers =
                    listOf(
                        Triple("friend", 1L, mapOf("BRAID_JOB_KEY" to "alpha")),
                        Triple("beta", 2L, mapOf("BRAID_JOB_KEY" to "beta")),
                        Triple("keyless", 3L, emptyMap()),
                    )
                val kids =
                    peers.map { (name, tag, env) ->
                        ChildProcess.jvm(JobKeyPeer::class.java.name, provider, "$dir", name, "$tag")
                            .env(env)
                            .output(dir.resolve("$name.log"))
                            .start()
                    }
                try {
                    val buffers =
                        List(3 * JobKeyPeer.MESSAGES) { UnsafeBuffer(ByteBuffer.allocateDirect(JobKeyPeer.LARGE)) }
                    for ((i, b) in buffers.withIndex()) {
                        val tag = 1L + i / JobKeyPeer.MESSAGES
                        ep.tryTrecv(b, 0, b.capacity(), FiAddr.UNSPEC, tag, 0, "rx-tag$tag-$i") shouldBe 0
                    }
                    val matched = ArrayList<Long>()
                    val refusals = ArrayList<String>()
                    val c = Completion()
                    val err = CompletionError()
                    val deadline =
                        Deadline.of("every message matched and both intruders refused", Duration.ofSeconds(120))
                    // Until the friend's messages are in and both intruders have seen their refusal.
                    var spins = 0
                    fun intrudersRefused() = ++spins % 1024 == 0 && kids.drop(1).all { "REFUSED" in it.output() }
                    while (matched.size < JobKeyPeer.MESSAGES || refusals.size < 2 || !intrudersRefused()) {
                        deadline.check {
                            "waited 120 s for ${JobKeyPeer.MESSAGES} messages of the alpha peer (got tags $matched), two refusals (got $refusals) and both intruders to see theirs:\n" +
                                kids.joinToString("\n") { it.output() }
                        }
                        when (cq.readFrom(c)) {
                            1 -> {
                                check(c.tag == 1L) {
                                    "matched a message with tag ${c.tag}, from a peer without key alpha"
                                }
                                matched += c.tag
                            }
                            -Errno.EAVAIL -> {
                                cq.readErr(err)
                                error("error completion: ${Errno.name(err.err)} ${err.message}")
                            }
                        }
                        if (eq.readErr(err) == 1) {
                            err.err shouldBe Errno.EACCES
                            refusals += err.message
                        }
                        Thread.onSpinWait()
                    }
                    repeat(1000) { domain.progress() } // anything an intruder sent had its chance to be matched
                    cq.readFrom(c) shouldBe -Errno.EAGAIN
                    matched shouldBe List(JobKeyPeer.MESSAGES) { 1L }
                    ep.srx.unexpectedCount shouldBe 0
                    refusals.forEach { it shouldContain "does not hold this job's key" }
                    Rendezvous.mark(dir, "receiver")
                    kids[0].awaitOk(Duration.ofSeconds(60)) shouldContain "OK sent"
                    for (k in kids.drop(1)) {
                        val out = k.awaitOk(Duration.ofSeconds(60))
                        out shouldContain "EACCES"
                        out shouldContain
                            "completed 0," // checked before the first write: no send of an intruder completed ok
                    }
                    refusals.map { it.substringAfter("(process ").substringBefore(")") } shouldContainExactlyInAnyOrder
                        kids.drop(1).map { "${it.process().pid()}" }
                } finally {
                    kids.forEach { it.close() }
                    ep.close()
                    fabric.close()
                    dir.toFile().deleteRecursively()
                }
            }
        }
    })

/**
 * A same-host sender for [JobKeyIT] with the job key of its environment: `JobKeyPeer PROVIDER DIR NAME TAG` sends
 * [MESSAGES] messages with TAG (eager ones and a rendezvous one of [LARGE] bytes) to the process published as
 * `receiver`, prints `REFUSED` with the error once a send fails with EACCES, and exits once the receiver marks itself
 * done, printing OK with what it saw.
 */
object JobKeyPeer {
    const val MESSAGES = 4
    const val LARGE = 256 * 1024

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val (provider, dirName, name, tagText) = args
        val dir = Path.of(dirName)
        val tag = tagText.toLong()
        PeerMain.Node(provider, dir, name).use { node ->
            val dest = node.peer("receiver")
            val sizes = List(MESSAGES) { if (it == MESSAGES - 1) LARGE else 16 + it }
            val buffers = sizes.map { UnsafeBuffer(ByteBuffer.allocateDirect(it)) }
            val errors = ArrayList<String>()
            var completed = 0
            var posted = 0
            val err = CompletionError()
            val deadline = Deadline.of("the receiver to finish", Duration.ofSeconds(120))
            while (!Rendezvous.marked(dir, "receiver")) {
                deadline.check { "completed $completed, errors $errors" }
                if (posted < MESSAGES) {
                    val rc = node.ep.tryTsend(buffers[posted], 0, sizes[posted], dest, tag, posted)
                    when (rc) {
                        0 -> posted++
                        -Errno.EAGAIN -> {}
                        else -> {
                            errors += "send $posted: ${Errno.name(-rc)}"
                            posted++
                            println("REFUSED ${Errno.name(-rc)}")
                        }
                    }
                }
                when (node.cq.readFrom(node.c)) {
                    1 -> completed++
                    -Errno.EAVAIL -> {
                        node.cq.readErr(err)
                        errors += "${Errno.name(err.err)}: ${err.message}"
                        if (err.err == Errno.EACCES) println("REFUSED ${err.message}")
                        System.out.flush()
                    }
                }
                node.domain.progress()
            }
            println("OK sent $posted, completed $completed, errors $errors")
        }
    }
}
