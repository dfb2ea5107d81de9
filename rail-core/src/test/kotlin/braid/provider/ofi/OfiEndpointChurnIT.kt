package braid.provider.ofi

import braid.core.Braid
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Domain
import braid.core.Endpoint
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import braid.core.ProgressModel
import braid.it.Rendezvous
import braid.it.childMain
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Paths
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * Native endpoints opened and closed many times over in one domain, then real traffic between two processes: what
 * `braid pingpong -p ofi:*`'s JIT warm-up does before the peer connects. Each of two fresh JVMs ([OfiChurnMain]) opens
 * its session endpoint, then [OfiChurnMain.GENERATIONS] self-addressed endpoints, each with its own CQ and AV, that
 * carry messages to themselves with data checks and are closed again, with compiled code trapping SIGSEGV in between
 * ([JitWorkload]) as the JIT's does during a warm-up; then the two session endpoints exchange
 * [OfiChurnMain.ROUND_TRIPS] checked round trips both ways.
 *
 * Over ofi:shm, without [OfiSignals] this fails every time: the JVM's first SIGSEGV runs libfabric shm's handler, which
 * unlinks the session endpoint's shared-memory file, so the peer cannot map it (its sends time out, or it dies with
 * SIGSEGV in `smr_progress_connreq`). Fresh JVMs, because shm installs its handler once per process.
 */
class OfiEndpointChurnIT :
    FunSpec({
        for (provider in listOf("ofi:shm", "ofi:tcp:lo")) test(
            "$provider: endpoints opened and closed ${OfiChurnMain.GENERATIONS} times in a domain, then traffic " +
                "between two processes"
        ) {
            val dir = Files.createTempDirectory("braid-ofi-churn")
            val kids =
                listOf("a", "b").map { role ->
                    ChildProcess.jvm(OfiChurnMain::class.java.name, provider, "$dir", role)
                        .name("churn-$role")
                        .output(dir.resolve("$role.log"))
                        .start()
                }
            try {
                ChildProcess.awaitAllOk(kids, Duration.ofSeconds(240))
                for (k in kids) k.output() shouldContain "OK ${OfiChurnMain.ROUND_TRIPS} round trips"
            } finally {
                kids.forEach { it.close() }
            }
        }
    })

/**
 * One side of [OfiEndpointChurnIT]: `provider dir role` (role `a` sends first). Progressed by its own loop alone; sends
 * time out after 20 s ([OfiParams.TX_TIMEOUT]) so a peer that cannot be reached ends the run with an error, not a hang.
 */
object OfiChurnMain {
    const val GENERATIONS = 60
    const val ROUND_TRIPS = 2_000
    private const val SELF_TRIPS = 50
    private const val SIZE = 64
    private val STALL: Duration = Duration.ofSeconds(60)

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val (provider, dirName, role) = args
        val dir = Paths.get(dirName)
        val offered = Braid.getInfo(Hints(provider = provider).with(OfiParams.TX_TIMEOUT, 20_000L)).first()
        val info = offered.copy(domainAttr = offered.domainAttr.copy(progress = ProgressModel.MANUAL))
        Braid.fabric(info).use { fabric ->
            val domain = fabric.domain(info)
            val session = Side(domain)
            for (g in 0 until GENERATIONS) {
                Side(domain).use { self -> self.trips(self.av.insert(self.ep.address), SELF_TRIPS, first = true) }
                if (g % 10 == 0) JitWorkload.run(2)
            }
            println("CHURNED $GENERATIONS generations; SIGSEGV handler put back ${OfiSignals.restored} times")
            Rendezvous.publish(dir, role, session.ep.address)
            val peer = session.av.insert(Rendezvous.lookup(dir, if (role == "a") "b" else "a"))
            session.trips(peer, ROUND_TRIPS, first = role == "a")
            println("OK $ROUND_TRIPS round trips")
            // The peer may still be reading this side's last message: wait for its word before closing.
            Rendezvous.mark(dir, role)
            val done = Deadline.of("the peer to finish", STALL)
            while (!Rendezvous.marked(dir, if (role == "a") "b" else "a")) {
                domain.progress()
                done.check()
            }
            session.close()
        }
    }

    /** An endpoint with its own CQ and AV in [domain], and the round trips it runs, with data checks. */
    private class Side(val domain: Domain) : AutoCloseable {
        val av = domain.addressVector()
        val cq = domain.completionQueue(CqFormat.TAGGED)
        val ep: Endpoint = domain.endpoint()
        private val tx = UnsafeBuffer(ByteBuffer.allocateDirect(SIZE))
        private val rx = UnsafeBuffer(ByteBuffer.allocateDirect(SIZE))
        private val c = Completion()
        private val e = CompletionError()
        private var sent = 0
        private var received = 0

        init {
            ep.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
            ep.bind(av)
            ep.enable()
        }

        /** [n] round trips with [dest]: send then receive when [first], else receive then send. */
        fun trips(dest: Long, n: Int, first: Boolean) {
            for (i in 0 until n) {
                if (first) {
                    send(dest)
                    receive()
                } else {
                    receive()
                    send(dest)
                }
            }
        }

        private fun send(dest: Long) {
            for (k in 0 until SIZE) tx.putByte(k, (sent * 7 + k).toByte())
            sent++
            val posted = Deadline.of("a send to be taken", STALL)
            while (ep.tryTsend(tx, 0, SIZE, dest, 5, "tx") != 0) {
                domain.progress()
                posted.check()
            }
            await("tx")
        }

        private fun receive() {
            check(ep.tryTrecv(rx, 0, SIZE, FiAddr.UNSPEC, 5, 0, "rx") == 0) { "trecv refused" }
            await("rx")
            for (k in 0 until SIZE) check(rx.getByte(k) == (received * 7 + k).toByte()) {
                "message $received: byte $k is wrong"
            }
            received++
        }

        private fun await(what: String) {
            val deadline = Deadline.of("completion '$what'", STALL)
            while (true) {
                domain.progress()
                if (cq.read(c) == 1) {
                    if (c.context == what) return
                    error("completion '${c.context}' while waiting for '$what'")
                }
                if (cq.readErr(e) == 1) error("error completion while waiting for '$what': ${e.message}")
                deadline.check()
            }
        }

        override fun close() {
            ep.close()
            cq.close()
            av.close()
        }
    }
}
