package braid.it

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.provider.ofi.OfiParams
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Paths
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * A native peer killed mid-transfer: every send started to it ends — completed, or failed with an error completion
 * naming the native rail — within the liveness timeout ([OfiParams.TX_TIMEOUT], 2 s here), never a hang. rxm over tcp
 * reports the reset connection itself; shm's queue to a dead process only fills, and the timeout fails what waits.
 */
class OfiPeerDeathIT :
    FunSpec({
        for (provider in listOf("ofi:tcp:lo", "ofi:shm")) test(
            "$provider: sends to a peer killed mid-stream end in completions or error completions within the liveness timeout"
        ) {
            val dir = Files.createTempDirectory("braid-ofi-death")
            val info = Braid.getInfo(Hints(provider = provider).with(OfiParams.TX_TIMEOUT, 2_000L)).first()
            val fabric = Braid.fabric(info)
            val kid =
                ChildProcess.jvm(OfiSinkMain::class.java.name, provider, "$dir").output(dir.resolve("sink.log")).start()
            try {
                val domain = fabric.domain(info)
                val cq = domain.completionQueue(CqFormat.TAGGED)
                val av = domain.addressVector()
                val ep =
                    domain.endpoint().apply {
                        bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(av)
                        enable()
                    }
                val sink = av.insert(Rendezvous.lookup(dir, "sink"))
                val payload = UnsafeBuffer(ByteBuffer.allocateDirect(4096))
                var started = 0
                var done = 0
                val errors = ArrayList<CompletionError>()
                val c = Completion()
                val e = CompletionError()
                fun drain() {
                    domain.progress()
                    while (cq.read(c) == 1) done++
                    while (cq.readErr(e) == 1) {
                        errors +=
                            CompletionError().also {
                                it.context = e.context
                                it.err = e.err
                                it.message = e.message
                            }
                    }
                }
                // Mid-stream: the sink has taken messages and more are in flight when it dies.
                val streaming = Deadline.of("the sink to receive", Duration.ofSeconds(60))
                while (done < 200 || "RECEIVING" !in kid.output()) {
                    if (started - done - errors.size < 32 && ep.tryTsend(payload, 0, 4096, sink, 1, started) == 0)
                        started++
                    drain()
                    streaming.check { "sink output:\n${kid.output()}" }
                }
                if (provider == "ofi:shm") {
                    // libfabric's shm takes a spin lock in the peer's shared region for each send; a peer killed
                    // while inside libfabric can die holding it, and every later send spins for ever in native code
                    // (seen in 1.17: pthread_spin_lock). So the sink is told to step out of libfabric first, with
                    // the messages in flight to it still unread, and killed there.
                    Files.createFile(dir.resolve("stop"))
                    val stopping = Deadline.of("the sink to step out of libfabric", Duration.ofSeconds(30))
                    while ("STOPPED" !in kid.output()) {
                        drain()
                        stopping.check { "sink output:\n${kid.output()}" }
                    }
                }
                kid.process().destroyForcibly().waitFor()
                // Keep sending to the dead peer for a while; each send is accepted, refused, or fails later.
                val after = System.nanoTime()
                while (System.nanoTime() - after < 3_000_000_000L && started < 5_000) {
                    when (val rc = ep.tryTsend(payload, 0, 4096, sink, 1, started)) {
                        0 -> started++
                        -Errno.EAGAIN -> {}
                        else -> withClue("tsend to the dead peer") { rc shouldBe -Errno.EAGAIN }
                    }
                    drain()
                }
                val ending = Deadline.of("every send to the killed peer to end", Duration.ofSeconds(30))
                while (done + errors.size < started) {
                    drain()
                    ending.check { "$started started, $done completed, ${errors.size} failed\n${ep.describe()}" }
                }
                (done + errors.size) shouldBe started
                errors.size shouldBeGreaterThan 0
                for (err in errors) withClue(err.message) {
                    err.message shouldContain "ofi:"
                    err.err shouldBeGreaterThan 0
                }
                println(
                    "$provider: $started started, $done completed, ${errors.size} failed; first: ${errors.first().message}"
                )
            } finally {
                kid.close()
                fabric.close()
            }
        }
    })

/** The peer OfiPeerDeathIT kills: a native endpoint that publishes its address and receives until it dies. */
object OfiSinkMain {
    @JvmStatic
    fun main(args: Array<String>) {
        val offered = Braid.getInfo(Hints(provider = args[0])).first()
        // Progressed by this loop alone (no engine thread), so that when it stops nothing of this process is inside
        // libfabric (see the shm case above).
        val info = offered.copy(domainAttr = offered.domainAttr.copy(progress = ProgressModel.MANUAL))
        val fabric = Braid.fabric(info)
        val domain = fabric.domain(info)
        val cq = domain.completionQueue(CqFormat.TAGGED)
        val ep =
            domain.endpoint().apply {
                bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                bind(domain.addressVector())
                enable()
            }
        val buffers = Array(8) { UnsafeBuffer(ByteBuffer.allocateDirect(64 shl 10)) }
        for (i in buffers.indices) check(ep.tryTrecv(buffers[i], 0, 64 shl 10, FiAddr.UNSPEC, 0, -1L, i) == 0)
        Rendezvous.publish(Paths.get(args[1]), "sink", ep.address)
        val c = Completion()
        val stop = Paths.get(args[1]).resolve("stop")
        var got = 0L
        var polls = 0
        while (true) {
            domain.progress()
            if (cq.read(c) == 1) {
                if (got++ == 0L) println("RECEIVING")
                val i = c.context as Int
                check(ep.tryTrecv(buffers[i], 0, 64 shl 10, FiAddr.UNSPEC, 0, -1L, i) == 0)
            }
            if (++polls and 1023 == 0 && Files.exists(stop)) {
                println("STOPPED")
                Thread.sleep(Long.MAX_VALUE)
            }
        }
    }
}
