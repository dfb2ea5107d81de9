package braid.mpi

import braid.mpi.testing.intAt
import braid.mpi.testing.ints
import braid.mpi.testing.runRanks
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.util.concurrent.ConcurrentHashMap

class PointToPointTest :
    FunSpec({
        test(
            "ANY_SOURCE/ANY_TAG receives take every message of three racing senders exactly once, in each sender's order"
        ) {
            val perSender = 300
            runRanks(4) { mpi ->
                val w = mpi.world
                if (w.rank == 0) {
                    val next = IntArray(4)
                    repeat(3 * perSender) {
                        val b = ByteBuffer.allocate(8)
                        val s = w.recv(b, 2, Datatype.INT, Mpi.ANY_SOURCE, Mpi.ANY_TAG)
                        s.getCount(Datatype.INT) shouldBe 2
                        b.intAt(0) shouldBe s.source
                        b.intAt(1) shouldBe next[s.source]
                        s.tag shouldBe next[s.source] % 7
                        next[s.source]++
                    }
                    next.toList() shouldBe listOf(0, perSender, perSender, perSender)
                    w.iprobe(Mpi.ANY_SOURCE, Mpi.ANY_TAG) shouldBe null
                } else {
                    val reqs = Array(perSender) { i -> w.isend(ints(w.rank, i), 2, Datatype.INT, 0, i % 7) }
                    Request.waitAll(reqs)
                }
            }
        }

        test("messages from one sender are non-overtaking across eager and rendezvous sizes") {
            val sizes = listOf(8, 200_000, 1, 65_536, 0, 1 shl 20, 16, 40_000, 3)
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 1) {
                    val reqs =
                        sizes.mapIndexed { i, n ->
                            val b = ByteBuffer.allocateDirect(maxOf(n, 1))
                            for (j in 0 until n) b.put(j, (i * 31 + j).toByte())
                            w.isend(b, n, Datatype.BYTE, 0, 5)
                        }
                    Request.waitAll(reqs.toTypedArray())
                } else {
                    // Post after the sender has queued everything, so the small ones are unexpected.
                    sizes.forEachIndexed { i, n ->
                        val b = ByteBuffer.allocateDirect(1 shl 20)
                        val s = w.recv(b, 1 shl 20, Datatype.BYTE, 1, 5)
                        s.getCount(Datatype.BYTE) shouldBe n
                        for (j in 0 until n) if (b.get(j) != (i * 31 + j).toByte()) error("message $i byte $j differs")
                    }
                }
            }
        }

        test("probe reports source, tag and count, and the receive that follows takes that message") {
            runRanks(3) { mpi ->
                val w = mpi.world
                when (w.rank) {
                    1 -> w.send(ints(1, 2, 3), 3, Datatype.INT, 0, 42)
                    2 -> w.send(ints(9), 1, Datatype.INT, 0, 43)
                    0 -> {
                        val s = w.probe(Mpi.ANY_SOURCE, 42)
                        s.source shouldBe 1
                        s.tag shouldBe 42
                        s.getCount(Datatype.INT) shouldBe 3
                        val b = ByteBuffer.allocate(12)
                        w.recv(b, 3, Datatype.INT, s.source, s.tag).getCount(Datatype.INT) shouldBe 3
                        b.intAt(2) shouldBe 3
                        val t = w.probe(2, Mpi.ANY_TAG)
                        t.tag shouldBe 43
                        w.recv(ByteBuffer.allocate(4), 1, Datatype.INT, 2, 43)
                    }
                }
            }
        }

        test("a message reserved by mprobe is never taken by a receive racing it; the receive gets the next one") {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 1) {
                    w.send(ints(100), 1, Datatype.INT, 0, 5)
                    w.send(ints(200), 1, Datatype.INT, 0, 5)
                } else {
                    val m = w.mprobe(1, 5)
                    m.status.getCount(Datatype.INT) shouldBe 1
                    val rb1 = ByteBuffer.allocate(4)
                    val racing = w.irecv(rb1, 1, Datatype.INT, 1, 5)
                    val rb = ByteBuffer.allocate(4)
                    val r2 = w.irecv(rb, 1, Datatype.INT, Mpi.ANY_SOURCE, Mpi.ANY_TAG)
                    racing.waitFor().tag shouldBe 5
                    rb1.intAt(0) shouldBe 200
                    val mb = ByteBuffer.allocate(4)
                    m.mrecv(mb, 1, Datatype.INT)
                    mb.intAt(0) shouldBe 100
                    r2.cancel()
                    r2.waitFor().isCancelled shouldBe true
                }
            }
        }

        test("threads racing mprobe+mrecv against plain receives take each message exactly once") {
            val n = 400
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 1) {
                    Request.waitAll(Array(n) { w.isend(ints(it), 1, Datatype.INT, 0, 9) })
                } else {
                    val seen = ConcurrentHashMap.newKeySet<Int>()
                    val a =
                        Thread {
                                repeat(n / 2) {
                                    val m = w.mprobe(1, 9)
                                    val b = ByteBuffer.allocate(4)
                                    m.mrecv(b, 1, Datatype.INT)
                                    check(seen.add(b.intAt(0))) { "message ${b.intAt(0)} received twice" }
                                }
                            }
                            .apply { start() }
                    repeat(n / 2) {
                        val b = ByteBuffer.allocate(4)
                        w.recv(b, 1, Datatype.INT, 1, 9)
                        check(seen.add(b.intAt(0))) { "message ${b.intAt(0)} received twice" }
                    }
                    a.join(30_000)
                    check(!a.isAlive) { "the mprobe thread did not finish within 30 s" }
                    seen.size shouldBe n
                }
            }
        }

        test("a cancelled receive reports cancelled and the message goes to a later receive") {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 0) {
                    val r = w.irecv(ByteBuffer.allocate(4), 1, Datatype.INT, 1, 3)
                    r.cancel()
                    r.waitFor().isCancelled shouldBe true
                    w.barrier()
                    val b = ByteBuffer.allocate(4)
                    w.recv(b, 1, Datatype.INT, 1, 3).isCancelled shouldBe false
                    b.intAt(0) shouldBe 77
                } else {
                    w.barrier()
                    w.send(ints(77), 1, Datatype.INT, 0, 3)
                }
            }
        }

        test(
            "exact, ANY_SOURCE, ANY_TAG and both-wildcard receives match in posting order, around a cancelled one and unexpected messages"
        ) {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 0) {
                    val bufs = Array(6) { ByteBuffer.allocate(4) }
                    val r =
                        arrayOf(
                            w.irecv(bufs[0], 1, Datatype.INT, 1, 5),
                            w.irecv(bufs[1], 1, Datatype.INT, Mpi.ANY_SOURCE, Mpi.ANY_TAG),
                            w.irecv(bufs[2], 1, Datatype.INT, 1, 5),
                            w.irecv(bufs[3], 1, Datatype.INT, Mpi.ANY_SOURCE, 5),
                            w.irecv(bufs[4], 1, Datatype.INT, 1, Mpi.ANY_TAG),
                            w.irecv(bufs[5], 1, Datatype.INT, 1, 5),
                        )
                    r[2].test() shouldBe null // posts them all: the cancel below takes one out of the endpoint's queue
                    r[2].cancel()
                    r[2].waitFor().isCancelled shouldBe true
                    w.barrier()
                    for (i in r.indices) if (i != 2) r[i].waitFor().isCancelled shouldBe false
                    bufs.map { it.intAt(0) } shouldBe listOf(0, 1, 0, 2, 3, 4)
                    w.barrier() // rank 1's next messages arrive before any receive names them
                    w.barrier()
                    val b = ByteBuffer.allocate(4)
                    w.recv(b, 1, Datatype.INT, Mpi.ANY_SOURCE, 8).tag shouldBe 8
                    b.intAt(0) shouldBe 11
                    w.recv(b, 1, Datatype.INT, Mpi.ANY_SOURCE, Mpi.ANY_TAG).tag shouldBe 7
                    b.intAt(0) shouldBe 10
                    w.recv(b, 1, Datatype.INT, 1, 7).tag shouldBe 7
                    b.intAt(0) shouldBe 12
                } else {
                    w.barrier()
                    for (i in 0 until 5) w.send(ints(i), 1, Datatype.INT, 0, 5)
                    w.barrier()
                    for ((tag, v) in listOf(7 to 10, 8 to 11, 7 to 12)) w.send(ints(v), 1, Datatype.INT, 0, tag)
                    w.barrier()
                }
            }
        }

        test("a synchronous send does not complete before its receive is posted, where a standard one does") {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 1) {
                    val standard = w.isend(ints(1), 1, Datatype.INT, 0, 1)
                    standard.waitFor() // eager: completes with no receive posted
                    val sync = w.issend(ints(2), 1, Datatype.INT, 0, 2)
                    repeat(20_000) { sync.test() shouldBe null }
                    w.barrier() // "post your receive now" (the collective's traffic is apart from the pending send)
                    sync.waitFor().isCancelled shouldBe false
                } else {
                    w.barrier()
                    val b = ByteBuffer.allocate(4)
                    w.recv(b, 1, Datatype.INT, 1, 2)
                    b.intAt(0) shouldBe 2
                    w.recv(b, 1, Datatype.INT, 1, 1)
                    b.intAt(0) shouldBe 1
                }
            }
        }

        test(
            "a buffered send completes at once from the attached buffer; one larger than the buffer raises MPI_ERR_BUFFER"
        ) {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 1) {
                    mpi.bufferAttach(ByteBuffer.allocate(4 * 100 + 2 * Mpi.BSEND_OVERHEAD))
                    val data = ints(*IntArray(100) { it })
                    w.bsend(data, 100, Datatype.INT, 0, 4)
                    data.putInt(0, -1) // the copy was taken: changing the source no longer matters
                    val e = shouldThrow<MPIException> { w.bsend(ByteBuffer.allocate(4000), 1000, Datatype.INT, 0, 4) }
                    e.errorClass shouldBe ErrorClass.ERR_BUFFER
                    e.message shouldContain "do not fit the attached buffer"
                    mpi.bufferDetach().capacity() shouldBe 528
                } else {
                    val b = ByteBuffer.allocate(400)
                    w.recv(b, 100, Datatype.INT, 1, 4)
                    b.intAt(0) shouldBe 0
                    b.intAt(99) shouldBe 99
                }
            }
        }

        test("persistent requests start, complete and start again; PROC_NULL completes at once with source PROC_NULL") {
            runRanks(2) { mpi ->
                val w = mpi.world
                val b = ByteBuffer.allocate(4)
                val p = if (w.rank == 0) w.sendInit(b, 1, Datatype.INT, 1, 6) else w.recvInit(b, 1, Datatype.INT, 0, 6)
                for (i in 0 until 5) {
                    if (w.rank == 0) b.putInt(0, i * 10)
                    p.start()
                    p.isActive shouldBe true
                    p.waitFor()
                    p.isActive shouldBe false
                    if (w.rank == 1) b.intAt(0) shouldBe i * 10
                }
                p.free()
                val s = w.recv(ByteBuffer.allocate(4), 1, Datatype.INT, Mpi.PROC_NULL, 1)
                s.source shouldBe Mpi.PROC_NULL
                s.getCount(Datatype.INT) shouldBe 0
                w.send(ints(1), 1, Datatype.INT, Mpi.PROC_NULL, 1)
            }
        }

        test("sendrecv_replace passes values around a ring; waitany, waitsome and testall report every request once") {
            runRanks(3) { mpi ->
                val w = mpi.world
                val b = ints(w.rank)
                val s = w.sendRecvReplace(b, 1, Datatype.INT, (w.rank + 1) % 3, 8, (w.rank + 2) % 3, 8)
                s.source shouldBe (w.rank + 2) % 3
                b.intAt(0) shouldBe (w.rank + 2) % 3
                val into = ByteBuffer.allocate(8)
                val r =
                    w.sendRecv(
                        ints(w.rank, 5),
                        2,
                        Datatype.INT,
                        (w.rank + 1) % 3,
                        2,
                        into,
                        2,
                        Datatype.INT,
                        (w.rank + 2) % 3,
                        2,
                    )
                r.getCount(Datatype.INT) shouldBe 2
                into.intAt(0) shouldBe (w.rank + 2) % 3

                val peer = (w.rank + 1) % 3
                val from = (w.rank + 2) % 3
                val bufs = Array(4) { ByteBuffer.allocate(4) }
                val recvs: Array<Request?> = Array(4) { w.irecv(bufs[it], 1, Datatype.INT, from, 20 + it) }
                val sends = Array(4) { w.isend(ints(it), 1, Datatype.INT, peer, 20 + it) }
                val seen = HashSet<Int>()
                val any = Request.waitAny(recvs)
                seen += any.index
                while (seen.size < 4) Request.waitSome(recvs).forEach {
                    check(seen.add(it.index)) { "index ${it.index} reported twice" }
                }
                Request.waitAny(recvs).index shouldBe Mpi.UNDEFINED
                var all: Array<Status>? = null
                val deadline = Deadline.of("every send to test complete")
                while (all == null) {
                    all = Request.testAll(sends)
                    deadline.check()
                }
                all.size shouldBe 4
                bufs.mapIndexed { i, bb -> bb.intAt(0) shouldBe i }
            }
        }

        test("testAll, testSome and testAny over a window of 64 drive progress once per call, not once per request") {
            runRanks(2) { mpi ->
                val w = mpi.world
                val peer = 1 - w.rank
                val window = 64
                val bufs = Array(window) { ByteBuffer.allocateDirect(4) }
                if (w.rank == 0) {
                    val reqs = Array<Request?>(window) { k -> w.irecv(bufs[k], 1, Datatype.INT, peer, 5) }
                    // Nothing has been sent yet: each call finds nothing, after exactly one round.
                    var before = mpi.polls
                    Request.testAll(reqs) shouldBe null
                    mpi.polls - before shouldBe 1
                    before = mpi.polls
                    Request.testSome(reqs).size shouldBe 0
                    mpi.polls - before shouldBe 1
                    before = mpi.polls
                    Request.testAny(reqs) shouldBe null
                    mpi.polls - before shouldBe 1
                    w.send(bufs[0], 0, Datatype.INT, peer, 6) // lets rank 1 send the window
                    Request.waitAll(reqs, null)
                    bufs.mapIndexed { k, b -> b.getInt(0) shouldBe k }
                    // All done: a test finds it without driving anything.
                    before = mpi.polls
                    Request.testAll(reqs)!!.size shouldBe window
                    mpi.polls - before shouldBe 0
                } else {
                    w.recv(bufs[0], 0, Datatype.INT, peer, 6)
                    for (k in 0 until window) w.send(bufs[k].putInt(0, k), 1, Datatype.INT, peer, 5)
                }
            }
        }

        test("a message longer than the receive raises MPI_ERR_TRUNCATE with the sizes") {
            runRanks(2) { mpi ->
                val w = mpi.world
                if (w.rank == 0) w.send(ints(1, 2, 3, 4), 4, Datatype.INT, 1, 0)
                else {
                    val e = shouldThrow<MPIException> { w.recv(ByteBuffer.allocate(8), 2, Datatype.INT, 0, 0) }
                    e.errorClass shouldBe ErrorClass.ERR_TRUNCATE
                    e.message shouldContain "16 bytes"
                }
            }
        }
    })
