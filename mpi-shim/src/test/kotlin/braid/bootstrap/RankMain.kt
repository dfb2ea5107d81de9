package braid.bootstrap

import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.Hints
import braid.core.OpFlags
import braid.it.childMain
import braid.testsupport.Deadline
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * One rank of a launcher test, started by a real launcher (`mpiexec.mpich`, `mpirun.openmpi`, `braid run`). `exchange`:
 * detect the bootstrap, open a Braid endpoint (`BRAID_TEST_PROVIDER`, default shm), put its address blob and a ~10 KiB
 * value, fence, read every other rank's, insert the addresses into the AV and exchange one tagged message with each
 * rank; prints `OK rank R of N KIND`. `abort CODE`: the exchange, then rank 1 aborts with CODE while the others wait in
 * a fence. `die`: the exchange, then rank 1 kills itself with SIGKILL while the others wait in a fence. `singleton`:
 * checks the world of one.
 */
object RankMain {
    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        when (args.firstOrNull() ?: "exchange") {
            "exchange" -> Bootstrap.detect().use { exchange(it) }
            "abort" ->
                Bootstrap.detect().use { boot ->
                    exchange(boot)
                    if (boot.rank == 1) boot.abort(args[1].toInt(), "rank 1 was told to abort")
                    awaitEnd(boot)
                }
            "die" ->
                Bootstrap.detect().use { boot ->
                    exchange(boot)
                    if (boot.rank == 1) {
                        System.out.flush()
                        ProcessBuilder("kill", "-KILL", ProcessHandle.current().pid().toString()).start().waitFor()
                        Thread.sleep(60_000)
                    }
                    awaitEnd(boot)
                }
            "singleton" ->
                Bootstrap.detect().use { boot ->
                    check(boot.kind == "singleton" && boot.size == 1 && boot.rank == 0) { "not a singleton: $boot" }
                    exchange(boot)
                }
            else -> error("unknown mode ${args[0]}")
        }
    }

    /**
     * Waits in a fence rank 1 never enters, then sleeps: the launcher must end this process. (Hydra's PMI-2 fence lets
     * the survivors through once a rank is dead; that is the launcher's choice.)
     */
    private fun awaitEnd(boot: Bootstrap) {
        try {
            boot.fence()
        } catch (e: BootstrapException) {
            println("rank ${boot.rank}: the fence failed as the job ended: ${e.message}")
        }
        Thread.sleep(120_000)
        println("FAILED: rank ${boot.rank} was not ended by the launcher within 120 s of rank 1 leaving")
    }

    /** This process's network namespace (`net:[INODE]`): which host it is on when hosts are namespaces. */
    fun netNamespace(): String =
        java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/ns/net")).toString()

    /** The ~10 KiB value rank [rank] puts: every byte value, in an order that depends on the rank. */
    fun bigValue(rank: Int): ByteArray = ByteArray(10_000 + 37 * rank) { ((it * 31 + rank * 7) % 256).toByte() }

    private fun exchange(boot: Bootstrap) {
        val provider = System.getenv("BRAID_TEST_PROVIDER") ?: "shm"
        val info = Braid.getInfo(Hints(caps = Caps.TAGGED, provider = provider)).first()
        val fabric = Braid.fabric(info)
        fabric.use {
            val domain = fabric.domain(info)
            val cq = domain.completionQueue(CqFormat.TAGGED)
            val av = domain.addressVector()
            val ep =
                domain.endpoint().apply {
                    bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                    bind(av)
                    enable()
                }
            boot.put("addr", ep.address)
            boot.put("big", bigValue(boot.rank))
            boot.fence()
            val me = boot.rank
            val n = boot.size
            val peers = LongArray(n)
            for (r in 0 until n) {
                val blob = boot.get(r, "addr")
                if (r == me) check(blob.contentEquals(ep.address)) { "rank $me read back another address than its own" }
                peers[r] = av.insert(blob)
                val big = boot.get(r, "big")
                check(big.contentEquals(bigValue(r))) {
                    "rank $r's ${bigValue(r).size}-byte value came back as ${big.size} bytes that differ"
                }
            }
            val rx = Array(n) { UnsafeBuffer(ByteArray(64)) }
            val tx = Array(n) { r -> UnsafeBuffer("from $me to $r".toByteArray()) }
            var expected = 0
            for (r in 0 until n) if (r != me) {
                check(ep.tryTrecv(rx[r], 0, 64, peers[r], r.toLong(), 0, "rx$r") == 0) { "trecv from $r refused" }
                expected++
            }
            val c = Completion()
            var done = 0
            val deadline = Deadline.of("rank $me's sends and receives to complete", Duration.ofSeconds(60))
            fun poll() {
                when (val rc = cq.read(c)) {
                    1 -> done++
                    -Errno.EAVAIL -> {
                        val e = CompletionError()
                        cq.readErr(e)
                        error("rank $me: an operation failed: $e")
                    }
                    else -> check(rc == -Errno.EAGAIN) { "cq.read returned $rc" }
                }
                deadline.check { "$done of ${2 * expected} completions" }
            }
            for (r in 0 until n) if (r != me) {
                while (true) {
                    val rc = ep.tryTsend(tx[r], 0, tx[r].capacity(), peers[r], me.toLong(), "tx$r")
                    if (rc == 0) break
                    check(rc == -Errno.EAGAIN) { "tsend to $r returned $rc" }
                    poll()
                }
            }
            while (done < 2 * expected) poll()
            for (r in 0 until n) if (r != me) {
                val text = String(rx[r].byteArray(), 0, "from $r to $me".length)
                check(text == "from $r to $me") { "rank $me got '$text' from rank $r" }
            }
            // Nobody closes its endpoint while another may still be sending to it.
            boot.fence()
            ep.close()
            println("OK rank $me of $n ${boot.kind} ${netNamespace()}")
        }
    }
}
