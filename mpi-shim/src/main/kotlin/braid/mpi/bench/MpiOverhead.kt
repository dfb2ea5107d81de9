package braid.mpi.bench

import braid.bench.LocalEndpoints
import braid.bootstrap.FileBootstrap
import braid.core.Completion
import braid.core.Errno
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.nio.file.Files
import kotlin.concurrent.thread
import org.agrona.concurrent.UnsafeBuffer

/**
 * The CPU cost of the MPI layer, measured so that a loaded machine does not swamp it: one thread plays both ranks of an
 * eager ping-pong (each message is in the ring before its receive is posted, so nothing waits), and the thread's CPU
 * time per round trip is printed for raw rail-core tagged messages on two shm endpoints and for braid.mpi's blocking
 * send/recv and isend/irecv + wait on two ranks. The difference is what braid.mpi adds per round trip (two messages).
 * Uses only calls every braid.mpi version has, so it runs unchanged against an older tree. The two ranks are two
 * threads of this process on a [FileBootstrap] in a temporary directory. After the README's build: `java -cp
 * samples/target/braid.jar braid.mpi.bench.MpiOverhead [SIZE] [ROUNDS]`; prints `overhead KIND SIZE NS_PER_ROUND_TRIP`.
 */
public object MpiOverhead {
    private val cpu = ManagementFactory.getThreadMXBean()

    @JvmStatic
    public fun main(args: Array<String>) {
        val size = args.getOrNull(0)?.toInt() ?: 64
        val rounds = args.getOrNull(1)?.toInt() ?: 200_000
        println("overhead raw $size ${measureRaw(rounds) { raw(size) }}")
        val dir = Files.createTempDirectory("braid-mpi-overhead").toFile()
        val opened = arrayOfNulls<Mpi>(2)
        List(2) { r ->
                thread { opened[r] = Mpi.init(FileBootstrap(dir, r, 2), options = MpiOptions().provider("shm")) }
            }
            .forEach { it.join() }
        val (a, b) = opened.map { it!! }
        try {
            val buf = ByteBuffer.allocateDirect(maxOf(size, 1))
            val wa = a.world
            val wb = b.world
            println(
                "overhead mpi-blocking $size ${measure(rounds) { n -> repeat(n) {
                wa.send(buf, size, Datatype.BYTE, 1, 1)
 wb.recv(buf, size, Datatype.BYTE, 0, 1)
                wb.send(buf, size, Datatype.BYTE, 0, 2)
 wa.recv(buf, size, Datatype.BYTE, 1, 2)
            } }}"
            )
            println(
                "overhead mpi-nonblocking $size ${measure(rounds) { n -> repeat(n) {
                val s = wa.isend(buf, size, Datatype.BYTE, 1, 1)
 val r = wb.irecv(buf, size, Datatype.BYTE, 0, 1)
                s.waitFor()
 r.waitFor()
                val s2 = wb.isend(buf, size, Datatype.BYTE, 0, 2)
 val r2 = wa.irecv(buf, size, Datatype.BYTE, 1, 2)
                s2.waitFor()
 r2.waitFor()
            } }}"
            )
        } finally {
            a.close()
            b.close()
            dir.deleteRecursively()
        }
    }

    /**
     * Runs [body] for [rounds] twice to warm up (the JIT settles late on a busy machine), then three times timed; the
     * least of the thread's CPU ns per round.
     */
    private fun measure(rounds: Int, body: (Int) -> Unit): Long {
        repeat(2) { body(rounds) }
        return (0 until 3).minOf {
            val t0 = cpu.currentThreadCpuTime
            body(rounds)
            (cpu.currentThreadCpuTime - t0) / rounds
        }
    }

    private var rawFabric: LocalEndpoints? = null

    private fun raw(size: Int): (Int) -> Unit {
        val f = LocalEndpoints(2, LocalEndpoints.info("shm")).also { rawFabric = it }
        val (a, b) = f.nodes
        val toB = f.addr(0, 1)
        val toA = f.addr(1, 0)
        val out = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 1)))
        val inb = UnsafeBuffer(ByteBuffer.allocateDirect(maxOf(size, 1)))
        val c = Completion()
        val ctx = Any()
        fun drain(n: LocalEndpoints.Node, count: Int) {
            var got = 0
            while (got < count) {
                val rc = n.cq.read(c)
                if (rc == 1) got++ else check(rc == -Errno.EAGAIN) { "cq read returned ${Errno.name(rc)}" }
            }
        }
        return { n ->
            repeat(n) {
                check(a.ep.tryTsend(out, 0, size, toB, 1, ctx) == 0)
                check(b.ep.tryTrecv(inb, 0, size, toA, 1, 0, ctx) == 0)
                drain(a, 1)
                drain(b, 1)
                check(b.ep.tryTsend(out, 0, size, toA, 2, ctx) == 0)
                check(a.ep.tryTrecv(inb, 0, size, toB, 2, 0, ctx) == 0)
                drain(b, 1)
                drain(a, 1)
            }
        }
    }

    private fun measureRaw(rounds: Int, make: () -> (Int) -> Unit): Long =
        try {
            measure(rounds, make())
        } finally {
            rawFabric?.close()
        }
}
