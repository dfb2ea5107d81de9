package braid.mpi

import braid.mpi.testing.runRanks
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer

/**
 * Once warm, braid.mpi's point-to-point path allocates nothing per message: a ping-pong of a contiguous built-in type
 * between two ranks (each its own shm endpoint, one thread each), eager (64 B and 64 KiB) and rendezvous (256 KiB, over
 * the 64 KiB eager limit), through blocking send/recv and through isend/irecv + wait with recycled requests. Counted
 * with the JVM's per-thread allocation counter on each rank's thread (bytes, not time); every round checks the bytes
 * and the status, so a ping-pong that moved nothing fails.
 */
/** One round of a ping-pong; an `Int` parameter that is not boxed (as a Kotlin `(Int) -> Unit` would be). */
private fun interface Round {
    fun run(i: Int)
}

class MpiHotPathAllocationTest :
    FunSpec({
        val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean
        // (bytes, rounds): eager, eager at the MPI layer's 64 KiB limit, and rendezvous beyond it.
        val sizes = listOf(64 to 20_000, 65_536 to 5_000, 256 * 1024 to 1_000)

        /**
         * Has each rank receive two eager messages of [size] before posting their receives, so the rail's pools for
         * unexpected messages hold buffers of that size before counting starts (a ping-pong meets an unexpected message
         * only when the receiver is late, so otherwise the first one can fall inside the counted rounds).
         */
        fun primeUnexpected(w: Comm, size: Int, out: ByteBuffer, inb: ByteBuffer) {
            if (size > MpiOptions.DEFAULT_SHM_EAGER_SIZE) return
            val peer = 1 - w.rank
            w.send(out, size, Datatype.BYTE, peer, 9)
            w.send(out, size, Datatype.BYTE, peer, 10)
            w.probe(peer, 10)
            w.recv(inb, size, Datatype.BYTE, peer, 9)
            w.recv(inb, size, Datatype.BYTE, peer, 10)
        }

        /**
         * Runs [round] [n] times to warm up, then three counted windows of [n] rounds, and asserts < 1 byte per message
         * (2 per round) in the least of them ([SteadyAllocation]: a window before C2 has compiled the path can count
         * what a compiled path does not allocate, and an allocation per message shows in every window). The windows are
         * fixed, not "until one is clean", so both ranks always run the same number of rounds.
         */
        fun allocatesNothing(what: String, size: Int, n: Int, round: Round) {
            for (i in 0 until n) round.run(i)
            var least = Long.MAX_VALUE
            for (w in 1..3) {
                val base = w * n
                least = minOf(least, SteadyAllocation.of { for (i in 0 until n) round.run(base + i) })
            }
            withClue(
                "$what, $size-byte messages: $least bytes allocated over ${n * 2} messages (the least of 3 windows)"
            ) {
                (least / (n * 2)) shouldBeLessThan 1L
            }
        }

        /**
         * Checks a received round: the status names the peer, the tag and [size] bytes, and the data carries round [i].
         */
        fun checkRound(st: Status, buf: ByteBuffer, size: Int, peer: Int, i: Int) {
            check(st.source == peer && st.tag == 1 && st.bytes == size.toLong() && st.error == ErrorClass.SUCCESS) {
                "round $i: status $st"
            }
            check(buf.getInt(0) == i) { "round $i: the message carries round ${buf.getInt(0)}" }
        }

        // MULTIPLE takes the process's lock on every post and poll; SINGLE takes none.
        for (level in listOf(ThreadLevel.MULTIPLE, ThreadLevel.SINGLE)) test(
            "a warm blocking send/recv ping-pong allocates nothing per message, eager or rendezvous ($level)"
        ) {
            runRanks(2, seconds = 300, level = level) { mpi ->
                val w = mpi.world
                val peer = 1 - w.rank
                for ((size, n) in sizes) {
                    val out = ByteBuffer.allocateDirect(size)
                    val inb = ByteBuffer.allocateDirect(size)
                    val st = Status()
                    primeUnexpected(w, size, out, inb)
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

        test(
            "a warm isend/irecv + wait ping-pong with recycled requests allocates nothing per message, eager or rendezvous"
        ) {
            runRanks(2, seconds = 300) { mpi ->
                val w = mpi.world
                val peer = 1 - w.rank
                for ((size, n) in sizes) {
                    val out = ByteBuffer.allocateDirect(size)
                    val inb = ByteBuffer.allocateDirect(size)
                    val st = Status()
                    val sent = Status()
                    primeUnexpected(w, size, out, inb)
                    allocatesNothing("nonblocking rank ${w.rank}", size, n) { i ->
                        out.putInt(0, i)
                        val r = w.irecv(inb, size, Datatype.BYTE, peer, 1)
                        if (w.rank == 1) {
                            r.waitFor(st)
                            r.recycle()
                        }
                        val s = w.isend(out, size, Datatype.BYTE, peer, 1)
                        s.waitFor(sent)
                        s.recycle()
                        if (w.rank == 0) {
                            r.waitFor(st)
                            r.recycle()
                        }
                        checkRound(st, inb, size, peer, i)
                    }
                }
            }
        }

        // MULTIPLE: the domain and the process take their locks; SINGLE: a solo domain (Threading.DOMAIN), no lock.
        for (level in listOf(ThreadLevel.MULTIPLE, ThreadLevel.SINGLE)) test(
            "a warm window of 64 isends and irecvs, waitAll into the caller's statuses and recycled, allocates nothing per message ($level)"
        ) {
            runRanks(2, seconds = 300, level = level) { mpi ->
                check(mpi.domain.isSolo == (level != ThreadLevel.MULTIPLE)) {
                    "$level: domain solo ${mpi.domain.isSolo}"
                }
                val w = mpi.world
                val peer = 1 - w.rank
                val window = 64
                val bufs = Array(window) { ByteBuffer.allocateDirect(64) }
                val reqs = arrayOfNulls<Request>(window)
                val statuses = Array(window) { Status() }
                val ack = ByteBuffer.allocateDirect(4)
                val ackStatus = Status()
                val n = 500
                // n warm-up rounds, then three windows of n counted on their own; the least is judged (as
                // allocatesNothing does).
                val counted = LongArray(4)
                val tid = Thread.currentThread().id
                for (round in 0 until 4 * n) {
                    val before = threads.getThreadAllocatedBytes(tid)
                    for (k in 0 until window) {
                        reqs[k] =
                            if (w.rank == 0) w.isend(bufs[k].putInt(0, round * window + k), 64, Datatype.BYTE, peer, 2)
                            else w.irecv(bufs[k], 64, Datatype.BYTE, peer, 2)
                    }
                    Request.waitAll(reqs, statuses)
                    Request.recycleAll(reqs)
                    // The receiver acknowledges each window (as osu_bw does), so the sender cannot run ahead and grow
                    // its unexpected queue.
                    if (w.rank == 0) w.recv(ack, 4, Datatype.BYTE, peer, 3, ackStatus)
                    else w.send(ack, 4, Datatype.BYTE, peer, 3)
                    counted[round / n] += threads.getThreadAllocatedBytes(tid) - before
                    if (w.rank == 1)
                        for (k in 0 until window) {
                            val st = statuses[k]
                            check(
                                st.index == k &&
                                    st.source == 0 &&
                                    st.bytes == 64L &&
                                    bufs[k].getInt(0) == round * window + k
                            ) {
                                "round $round, message $k: $st carrying ${bufs[k].getInt(0)}"
                            }
                        }
                }
                val least = minOf(counted[1], counted[2], counted[3])
                withClue(
                    "rank ${w.rank}: $least bytes allocated over ${n * window} messages (the least of 3 windows: ${counted.drop(1)})"
                ) {
                    (least / (n * window)) shouldBeLessThan 1L
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
