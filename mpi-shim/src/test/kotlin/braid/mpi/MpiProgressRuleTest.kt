package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * MPI's progress rule: a rank blocked in one call still moves its other operations forward. The case that breaks a
 * blocking collective which waits only on its own schedule (as an offloaded call carried inline on the waiting thread
 * would, if it drove the domain but not braid.mpi's own progress): sends that the endpoint pushed back sit in the MPI
 * layer's backlog, and only braid.mpi's progress hands them to the endpoint. The peer needs every one of them before it
 * joins the collective, so a wait that does not drive that progress never ends. The ranks share a host, so the
 * allreduce goes through the intra-node offload and is carried inline by the waiting thread: the spec holds that path.
 */
/** The most sends rank 0 posts while looking for a backlog (the endpoint pushes back after about 75,000). */
private const val MAX = 400_000

class MpiProgressRuleTest :
    FunSpec({
        test("sends left in the MPI backlog go out while their rank waits in a blocking collective") {
            val posted = CountDownLatch(1)
            val count = AtomicInteger()
            runRanks(
                2,
                seconds = 240,
                settings = { braid.core.Settings.NONE.with(braid.mpi.MpiParams.COLL_OFFLOAD, true) },
            ) { mpi ->
                val w = mpi.world
                val sum = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder())
                if (w.rank == 0) {
                    // Sends until the endpoint (rings full, its own queue at the tx size) pushes back and the MPI
                    // layer holds some; rank 1 reads none until then.
                    // Each send its own 64 bytes (a send's buffer is the sender's again only at its completion).
                    val room = ByteBuffer.allocateDirect(64 * MAX)
                    val reqs = ArrayList<Request>()
                    while (mpi.backlogged < 16 && reqs.size < MAX) {
                        val b = room.slice(64 * reqs.size, 64).putInt(0, reqs.size)
                        reqs += w.isend(b, 64, Datatype.BYTE, 1, 7)
                    }
                    mpi.backlogged shouldBeGreaterThan 0
                    count.set(reqs.size)
                    posted.countDown()
                    w.allreduce(
                        ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, 1),
                        sum,
                        1,
                        Datatype.INT,
                        Op.SUM,
                    )
                    Request.waitAll(reqs.toTypedArray(), null)
                } else {
                    check(posted.await(200, TimeUnit.SECONDS)) { "rank 0 never filled its backlog" }
                    val inb = ByteBuffer.allocateDirect(64)
                    val st = Status()
                    for (i in 0 until count.get()) {
                        w.recv(inb, 64, Datatype.BYTE, 0, 7, st)
                        check(inb.getInt(0) == i) { "message $i carries ${inb.getInt(0)}" }
                    }
                    w.allreduce(
                        ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, 1),
                        sum,
                        1,
                        Datatype.INT,
                        Op.SUM,
                    )
                }
                sum.getInt(0) shouldBe 2
                // The case this spec is for: the blocking allreduce went through the intra-node offload, its phase
                // carried inline on the waiting thread.
                val binding = w.coll.group.offload
                withClue("rank ${w.rank}'s world group has no offload: ranks on one host must be paired with it") {
                    binding.shouldNotBeNull()
                }
                withClue("rank ${w.rank}'s blocking allreduce was not carried inline through the offload") {
                    binding!!.inlineCalls shouldBeGreaterThan 0L
                }
            }
        }
    })
