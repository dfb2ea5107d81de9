package braid.samples

import braid.bootstrap.Bootstrap
import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.Hints
import braid.core.OpFlags
import braid.core.Settings
import kotlin.system.exitProcess
import org.agrona.concurrent.UnsafeBuffer

/**
 * An example job: every rank finds the others through whatever launcher started it ([Bootstrap.detect]: `braid run`,
 * `mpiexec`, `srun`, `mpirun`, or none), opens an endpoint (`BRAID_PROVIDER`, default shm:
 * [CommandParams.HELLO_PROVIDER]), publishes its address, and passes one tagged message around the ring (to rank + 1,
 * from rank − 1).
 *
 * ```
 * bin/braid run -n 4 java -cp samples/target/braid.jar braid.samples.HelloJob
 * mpiexec.mpich -n 4 java -cp samples/target/braid.jar braid.samples.HelloJob
 * ```
 *
 * With `BRAID_STARTUP_T0` (epoch milliseconds, set by `bench/startup.sh` just before launching), each rank also prints
 * `startup-ms R MS`: from the launch to its first message received.
 */
public object HelloJob {
    @JvmStatic
    public fun main(args: Array<String>) {
        val t0 = Settings.DEFAULT[CommandParams.STARTUP_T0].takeIf { it > 0 }
        Bootstrap.detect().use { boot ->
            val info =
                Braid.getInfo(Hints(caps = Caps.TAGGED, provider = Settings.DEFAULT[CommandParams.HELLO_PROVIDER]))
                    .first()
            Braid.fabric(info).use { fabric ->
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
                boot.fence()
                val n = boot.size
                val me = boot.rank
                if (n > 1) {
                    // One AV entry per peer: with two ranks, next and prev are the same rank.
                    val next = av.insert(boot.get((me + 1) % n, "addr"))
                    val prev = if (n == 2) next else av.insert(boot.get((me + n - 1) % n, "addr"))
                    val rx = UnsafeBuffer(ByteArray(64))
                    val tx = UnsafeBuffer("hello from $me".toByteArray())
                    check(ep.tryTrecv(rx, 0, 64, prev, 1, 0, "rx") == 0)
                    var sent = false
                    var received = false
                    var done = 0
                    val c = Completion()
                    val deadline = System.nanoTime() + 60_000_000_000L
                    while (done < 2) {
                        if (!sent) sent = ep.tryTsend(tx, 0, tx.capacity(), next, 1, "tx") == 0
                        when (cq.read(c)) {
                            1 -> {
                                done++
                                if (c.context == "rx" && !received) {
                                    received = true
                                    if (t0 != null) println("startup-ms $me ${System.currentTimeMillis() - t0}")
                                }
                            }
                            -Errno.EAVAIL -> {
                                val e = CompletionError()
                                cq.readErr(e)
                                error("rank $me: $e")
                            }
                        }
                        if (System.nanoTime() > deadline) {
                            System.err.println("rank $me: no message from rank ${(me + n - 1) % n} within 60 s")
                            exitProcess(1)
                        }
                    }
                    val text = String(rx.byteArray(), 0, "hello from ${(me + n - 1) % n}".length)
                    println("rank $me of $n (${boot.kind}): got '$text'")
                } else {
                    println("rank 0 of 1 (${boot.kind}): alone")
                }
                boot.fence()
                ep.close()
            }
        }
    }
}
