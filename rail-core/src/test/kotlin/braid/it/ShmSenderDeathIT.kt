package braid.it

import braid.core.Braid
import braid.core.Caps
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.Event
import braid.core.EventType
import braid.core.OpFlags
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * A sender that dies at the worst moment of a ring record's life, claimed and not committed, leaves no ring stuck: the
 * receiver still finds it gone, fails what waits on it and reports PEER_DOWN within the liveness period (issue 11, item
 * 1).
 */
class ShmSenderDeathIT :
    FunSpec({
        // A link's shm rail is the same ring code, but the link routes the peer's messages and fans
        // its death out to the link's address: both are checked.
        for (provider in listOf("shm", "link")) test(
            "$provider: a sender killed between claiming and committing a ring record leaves no ring stuck: receives directed at it fail and PEER_DOWN arrives"
        ) {
            val dir = Files.createTempDirectory("braid-it")
            val info = Braid.getInfo(PeerMain.hints(provider).copy(caps = Caps.MSG or Caps.TAGGED)).first()
            val fabric = Braid.fabric(info)
            try {
                val domain = fabric.domain(info)
                val cq = domain.completionQueue(CqFormat.TAGGED)
                val av = domain.addressVector()
                val eq = fabric.eventQueue()
                val ep =
                    domain.endpoint().apply {
                        bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(av)
                        bind(eq)
                        enable()
                    }
                Rendezvous.publish(dir, "rx", ep.address)
                val kid =
                    ChildProcess.jvm(PeerMain::class.java.name, provider, "send", "$dir", "tx", "rx", "0", "1")
                        .output(dir.resolve("tx.log"))
                        .jvmArgs("-Xmx256m", "-Dbraid.shm.testStallAfterClaim=true")
                        .start()
                try {
                    val tx = av.insert(Rendezvous.lookup(dir, "tx"))
                    ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, tx, 12345, 0, "directed") shouldBe 0
                    var deadline = Deadline.of("the sender to claim a record", Duration.ofSeconds(60))
                    while ("CLAIMED" !in kid.output()) {
                        domain.progress()
                        deadline.check { "child output:\n${kid.output()}" }
                    }
                    repeat(1000) { domain.progress() }
                    fun shmChannelsLive() =
                        ep.describe().lines().count { it.trimStart().startsWith("from ") && "dead false" in it }
                    withClue(ep.describe()) {
                        shmChannelsLive() shouldBe 1
                    } // the sender's ring, through the link's shm rail too
                    kid.process().destroyForcibly().waitFor()
                    val err = CompletionError()
                    deadline = Deadline.of("the receive directed at the killed sender to fail", Duration.ofSeconds(10))
                    while (true) {
                        domain.progress()
                        if (cq.readErr(err) == 1) break
                        deadline.check { ep.describe() }
                    }
                    err.context shouldBe "directed"
                    err.err shouldBe Errno.EHOSTDOWN
                    // A link also has the peer's tcp connection (the directed receive opens it), whose reset may report
                    // first, or,
                    // when the connection was still being made as the sender died, its refusal.
                    if (provider == "shm") err.message shouldContain "died"
                    else
                        withClue(err.message) {
                            listOf("died", "reset the connection", "refused the connection").any {
                                it in err.message
                            } shouldBe true
                        }
                    val event = Event()
                    eq.read(event) shouldBe 1
                    event.type shouldBe EventType.PEER_DOWN
                    event.data shouldBe tx
                    // Whichever rail saw it first, the shm rail finds the sender dead too, its ring not stuck.
                    val dead =
                        Deadline.of("the shm channel from the killed sender to turn dead", Duration.ofSeconds(10))
                    while (shmChannelsLive() > 0) {
                        domain.progress()
                        dead.check { ep.describe() }
                    }
                    eq.read(event) shouldBe -Errno.EAGAIN // one PEER_DOWN for the peer, not one per rail
                } finally {
                    kid.close()
                }
            } finally {
                fabric.close()
            }
        }
    })
