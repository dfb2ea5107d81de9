package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer

/**
 * Once warm, braid.mpi's point-to-point path allocates nothing per message: a ping-pong of a
 * contiguous built-in type between two ranks (each its own shm endpoint, one thread each),
 * eager (64 B) and rendezvous (64 KiB, over the rail's 16 KiB eager limit), through blocking
 * send/recv and through isend/irecv + wait with recycled requests. Counted with the JVM's
 * per-thread allocation counter on each rank's thread (bytes, not time); every round checks the
 * bytes and the status, so a ping-pong that moved nothing fails.
 */
/** One round of a ping-pong; an `Int` parameter that is not boxed (as a Kotlin `(Int) -> Unit` would be). */
private fun interface Round {
    fun run(i: Int)
}

class MpiHotPathAllocationTest : FunSpec({
    val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
    val sizes = listOf(64 to 20_000, 65_536 to 4_000) // (bytes, rounds)

    /** Runs [round] [n] times to warm up, then [n] times counted; asserts < 1 byte per message (2 per round). */
    fun allocatesNothing(what: String, size: Int, n: Int, round: Round) {
        for (i in 0 until n) round.run(i)
        val tid = Thread.currentThread().id
        val before = threads.getThreadAllocatedBytes(tid)
        for (i in 0 until n) round.run(n + i)
        val allocated = threads.getThreadAllocatedBytes(tid) - before
        withClue("$what, $size-byte messages: $allocated bytes allocated over ${n * 2} messages") { (allocated / (n * 2)) shouldBeLessThan 1L }
    }

    /** Checks a received round: the status names the peer, the tag and [size] bytes, and the data carries round [i]. */
    fun checkRound(st: Status, buf: ByteBuffer, size: Int, peer: Int, i: Int) {
        check(st.source == peer && st.tag == 1 && st.bytes == size.toLong() && st.error == ErrorClass.SUCCESS) { "round $i: status $st" }
        check(buf.getInt(0) == i) { "round $i: the message carries round ${buf.getInt(0)}" }
    }

    // MULTIPLE takes the process's lock on every post and poll; SINGLE takes none.
    for (level in listOf(ThreadLevel.MULTIPLE, ThreadLevel.SINGLE)) test("a warm blocking send/recv ping-pong allocates nothing per message, eager or rendezvous ($level)") {
        runRanks(2, seconds = 300, level = level) { mpi ->
            val w = mpi.world
            val peer = 1 - w.rank
            for ((size, n) in sizes) {
                val out = ByteBuffer.allocateDirect(size)
                val inb = ByteBuffer.allocateDirect(size)
                val st = Status()
                allocatesNothing("blocking rank ${w.rank}", size, n) { i ->
                    out.putInt(0, i)
                    if (w.rank == 0) {
                        w.send(out, size, Datatype.BYTE, peer, 1)
                        w.recv(inb, size, Datatype.BYTE, peer, 1, st)
                    } else {
                        w.recv(inb, size, Datatype.BYTE, peer, 1, st)
                        w.send(out, size, Datatype.BYTE, peer, 1)
                    }
                    checkRound(st, inb, size, peer, i)
                }
            }
        }
    }

    test("a warm isend/irecv + wait ping-pong with recycled requests allocates nothing per message, eager or rendezvous") {
        runRanks(2, seconds = 300) { mpi ->
            val w = mpi.world
            val peer = 1 - w.rank
            for ((size, n) in sizes) {
                val out = ByteBuffer.allocateDirect(size)
                val inb = ByteBuffer.allocateDirect(size)
                val st = Status()
                val sent = Status()
                allocatesNothing("nonblocking rank ${w.rank}", size, n) { i ->
                    out.putInt(0, i)
                    val r = w.irecv(inb, size, Datatype.BYTE, peer, 1)
                    if (w.rank == 1) { r.waitFor(st); r.recycle() }
                    val s = w.isend(out, size, Datatype.BYTE, peer, 1)
                    s.waitFor(sent)
                    s.recycle()
                    if (w.rank == 0) { r.waitFor(st); r.recycle() }
                    checkRound(st, inb, size, peer, i)
                }
            }
        }
    }

    test("a recycled request is what the next nonblocking call returns, and one in flight cannot be recycled") {
        runRanks(2) { mpi ->
            val w = mpi.world
            val b = ByteBuffer.allocate(4)
            if (w.rank == 0) {
                val r = w.irecv(b, 1, Datatype.INT, 1, 7)
                val e = shouldThrow<MPIException> { r.recycle() }
                e.errorClass shouldBe ErrorClass.ERR_REQUEST
                w.send(b, 1, Datatype.INT, 1, 8) // lets rank 1 send
                val s = r.waitFor()
                s.source shouldBe 1
                r.isNull shouldBe true
                r.recycle()
                w.irecv(b, 1, Datatype.INT, 1, 9) shouldBeSameInstanceAs r
                r.isNull shouldBe false
                r.waitFor().tag shouldBe 9
            } else {
                w.recv(b, 1, Datatype.INT, 0, 8)
                w.send(b, 1, Datatype.INT, 0, 7)
                w.send(b, 1, Datatype.INT, 0, 9)
            }
        }
    }
})
