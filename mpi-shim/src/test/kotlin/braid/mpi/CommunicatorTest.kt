package braid.mpi

import braid.mpi.testing.MemoryJob
import braid.mpi.testing.intAt
import braid.mpi.testing.ints
import braid.mpi.testing.runRanks
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.time.Duration
import java.util.UUID
import kotlin.concurrent.thread

class CommunicatorTest :
    FunSpec({
        test("traffic on a parent and its dup, split and create at once, with the same ranks and tags, never crosses") {
            runRanks(4) { mpi ->
                val w = mpi.world
                val dup = w.dup()
                val split = w.split(w.rank % 2, -w.rank)!! // reversed order by key
                split.size shouldBe 2
                split.rank shouldBe (if (w.rank < 2) 1 else 0)
                val evens = w.create(w.getGroup().incl(intArrayOf(0, 2)))
                (evens != null) shouldBe (w.rank % 2 == 0)
                val comms = listOfNotNull(w, dup, split, evens)
                // Every communicator: each rank sends its (comm index, rank) to every other rank, tag 0, all at once.
                val reqs = ArrayList<Request>()
                val inbox = HashMap<Pair<Int, Int>, ByteBuffer>()
                comms.forEachIndexed { ci, c ->
                    for (peer in 0 until c.size) if (peer != c.rank) {
                        val b = ByteBuffer.allocate(8)
                        inbox[ci to peer] = b
                        reqs += c.irecv(b, 2, Datatype.INT, peer, 0)
                    }
                }
                comms.forEachIndexed { ci, c ->
                    for (peer in 0 until c.size) if (peer != c.rank)
                        reqs += c.isend(ints(ci, c.rank), 2, Datatype.INT, peer, 0)
                }
                Request.waitAll(reqs.toTypedArray())
                inbox.forEach { (k, b) ->
                    b.intAt(0) shouldBe k.first
                    b.intAt(1) shouldBe k.second
                }
                w.compare(dup) shouldBe Group.CONGRUENT
                w.compare(w) shouldBe Group.IDENT
                dup.free()
                split.free()
                evens?.free()
            }
        }

        test("context ids freed are reused, and 200 dup/free rounds leave the world working") {
            runRanks(3) { mpi ->
                repeat(200) { mpi.world.dup().free() }
                val c = mpi.world.dup()
                c.context shouldBe ContextIdPool.FIRST_FREE
                val b = ByteBuffer.allocate(4)
                c.sendRecv(ints(c.rank), 1, Datatype.INT, (c.rank + 1) % 3, 0, b, 1, Datatype.INT, (c.rank + 2) % 3, 0)
                b.intAt(0) shouldBe (c.rank + 2) % 3
            }
        }

        test("group algebra: incl, excl, ranges, union, intersection, difference, translate and compare") {
            runRanks(1) { mpi ->
                val g = Group(IntArray(8) { it }, 0)
                g.incl(intArrayOf(5, 1, 3)).procs.toList() shouldBe listOf(5, 1, 3)
                g.excl(intArrayOf(0, 7)).procs.toList() shouldBe listOf(1, 2, 3, 4, 5, 6)
                g.rangeIncl(arrayOf(intArrayOf(0, 6, 3), intArrayOf(7, 7, 1))).procs.toList() shouldBe
                    listOf(0, 3, 6, 7)
                g.rangeIncl(arrayOf(intArrayOf(5, 1, -2))).procs.toList() shouldBe listOf(5, 3, 1)
                g.rangeExcl(arrayOf(intArrayOf(1, 7, 2))).procs.toList() shouldBe listOf(0, 2, 4, 6)
                val a = g.incl(intArrayOf(1, 2, 3))
                val b = g.incl(intArrayOf(3, 4, 1))
                Group.union(a, b).procs.toList() shouldBe listOf(1, 2, 3, 4)
                Group.intersection(a, b).procs.toList() shouldBe listOf(1, 3)
                Group.difference(a, b).procs.toList() shouldBe listOf(2)
                a.translateRanks(intArrayOf(0, 1, 2, Mpi.PROC_NULL), b).toList() shouldBe
                    listOf(2, Mpi.UNDEFINED, 0, Mpi.PROC_NULL)
                a.compare(g.incl(intArrayOf(1, 2, 3))) shouldBe Group.IDENT
                a.compare(g.incl(intArrayOf(3, 2, 1))) shouldBe Group.SIMILAR
                a.compare(b) shouldBe Group.UNEQUAL
                a.rank shouldBe Mpi.UNDEFINED
                g.rank shouldBe 0
                mpi.world.getGroup().size shouldBe 1
            }
        }

        test(
            "an intercommunicator between even and odd ranks carries messages by remote rank, and merges low group first"
        ) {
            runRanks(5) { mpi ->
                val w = mpi.world
                val mine = w.split(w.rank % 2, w.rank)!!
                // Leaders: world rank 0 (evens) and world rank 1 (odds).
                val inter = mine.createIntercomm(0, w, if (w.rank % 2 == 0) 1 else 0, 11)
                inter.isInter shouldBe true
                inter.size shouldBe mine.size
                inter.remoteSize shouldBe (if (w.rank % 2 == 0) 2 else 3)
                // Every local rank r sends to remote rank r % remoteSize; receive from everyone that targets us.
                val reqs = ArrayList<Request>()
                reqs += inter.isend(ints(w.rank), 1, Datatype.INT, inter.rank % inter.remoteSize, 3)
                val senders = (0 until inter.remoteSize).filter { it % inter.size == inter.rank }
                val got =
                    senders.map { s -> ByteBuffer.allocate(4).also { reqs += inter.irecv(it, 1, Datatype.INT, s, 3) } }
                Request.waitAll(reqs.toTypedArray())
                senders.forEachIndexed { i, s -> got[i].intAt(0) shouldBe (if (w.rank % 2 == 0) 2 * s + 1 else 2 * s) }
                val merged = inter.merge(high = w.rank % 2 == 1)
                merged.size shouldBe 5
                merged.rank shouldBe (if (w.rank % 2 == 0) w.rank / 2 else 3 + w.rank / 2)
                val b = ByteBuffer.allocate(4)
                merged.sendRecv(
                    ints(merged.rank),
                    1,
                    Datatype.INT,
                    (merged.rank + 1) % 5,
                    1,
                    b,
                    1,
                    Datatype.INT,
                    (merged.rank + 4) % 5,
                    1,
                )
                b.intAt(0) shouldBe (merged.rank + 4) % 5
                val d = inter.dup()
                d.remoteSize shouldBe inter.remoteSize
                d.free()
                inter.free()
                merged.free()
            }
        }

        test("two separately started jobs connect through a published port and talk over the intercommunicator") {
            val service = "braid-test-" + UUID.randomUUID()
            var serverFailure: Throwable? = null
            val server =
                thread(name = "server-job") {
                    try {
                        runRanks(2, job = MemoryJob(2)) { mpi ->
                            val port =
                                if (mpi.world.rank == 0) mpi.openPort().also { mpi.publishName(service, it) } else ""
                            val inter = mpi.world.accept(port, 0)
                            inter.remoteSize shouldBe 3
                            val b = ByteBuffer.allocate(4)
                            for (s in 0 until 3) if (s % 2 == mpi.world.rank) {
                                val st = inter.recv(b, 1, Datatype.INT, s, 1)
                                st.source shouldBe s
                                b.intAt(0) shouldBe 1000 + s
                            }
                            inter.send(ints(2000 + mpi.world.rank), 1, Datatype.INT, 0, 2)
                            if (mpi.world.rank == 0) {
                                mpi.unpublishName(service, port)
                                mpi.closePort(port)
                            }
                        }
                    } catch (t: Throwable) {
                        serverFailure = t
                    }
                }
            runRanks(3) { mpi ->
                var port = ""
                if (mpi.world.rank == 0) {
                    val deadline = Deadline.of("the server to publish '$service'", Duration.ofSeconds(30))
                    while (true) {
                        port = runCatching { mpi.lookupName(service) }.getOrNull() ?: ""
                        if (port.isNotEmpty()) break
                        deadline.check()
                        Thread.sleep(10)
                    }
                }
                val inter = mpi.world.connect(port, 0)
                inter.remoteSize shouldBe 2
                inter.send(ints(1000 + mpi.world.rank), 1, Datatype.INT, mpi.world.rank % 2, 1)
                if (mpi.world.rank == 0) {
                    val b = ByteBuffer.allocate(4)
                    val got =
                        (0 until 2)
                            .map {
                                inter.recv(b, 1, Datatype.INT, Mpi.ANY_SOURCE, 2).let { s -> s.source to b.intAt(0) }
                            }
                            .toSet()
                    got shouldBe setOf(0 to 2000, 1 to 2001)
                }
            }
            server.join(60_000)
            check(!server.isAlive) { "the server job did not finish" }
            serverFailure?.let { throw it }
        }
    })
