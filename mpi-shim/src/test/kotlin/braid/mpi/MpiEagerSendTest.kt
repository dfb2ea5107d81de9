package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/**
 * Small sends over shm go as injects ([SendOp.post]): complete at their post, with no completion read for them; a send
 * the ring has no room for is posted as any other and still arrives, in order.
 */
class MpiEagerSendTest :
    FunSpec({
        test("a small isend over shm is complete at its post; a synchronous one is not made so") {
            val sent = CountDownLatch(1)
            runRanks(2) { mpi ->
                val w = mpi.world
                val b = ByteBuffer.allocateDirect(64)
                if (w.rank == 0) {
                    val polls = mpi.polls
                    val r = w.isend(b.putInt(0, 42), 64, Datatype.BYTE, 1, 3)
                    // No progress was driven, yet the request is done: the rail copied the bytes at the post.
                    r.isComplete shouldBe true
                    mpi.polls shouldBe polls
                    r.waitFor().error shouldBe ErrorClass.SUCCESS
                    sent.countDown()
                    // Synchronous: completes only once the receive matched, after rank 1 posts it.
                    val s = w.issend(b, 64, Datatype.BYTE, 1, 4)
                    s.waitFor().error shouldBe ErrorClass.SUCCESS
                } else {
                    check(sent.await(30, TimeUnit.SECONDS)) { "rank 0 never sent" }
                    w.recv(b, 64, Datatype.BYTE, 0, 3, Status()).bytes shouldBe 64L
                    b.getInt(0) shouldBe 42
                    w.recv(b, 64, Datatype.BYTE, 0, 4, Status()).bytes shouldBe 64L
                }
            }
        }

        test("sends beyond what the ring holds, the receiver late, all arrive in order") {
            // 4 KiB each (within the inject size): 2,048 of them are twice the 4 MiB ring, so later ones find no room.
            val n = 2048
            val posted = CountDownLatch(1)
            runRanks(2, seconds = 120) { mpi ->
                val w = mpi.world
                if (w.rank == 0) {
                    val room = ByteBuffer.allocateDirect(4096 * n)
                    val reqs =
                        Array(n) { i -> w.isend(room.slice(4096 * i, 4096).putInt(0, i), 4096, Datatype.BYTE, 1, 5) }
                    // Some found the ring full and wait in the rail or the MPI layer, incomplete.
                    reqs.count { !it.isComplete } shouldBeGreaterThan 0
                    posted.countDown()
                    Request.waitAll(reqs, null)
                } else {
                    check(posted.await(60, TimeUnit.SECONDS)) { "rank 0 never posted" }
                    val inb = ByteBuffer.allocateDirect(4096)
                    val st = Status()
                    for (i in 0 until n) {
                        w.recv(inb, 4096, Datatype.BYTE, 0, 5, st)
                        check(inb.getInt(0) == i && st.bytes == 4096L) { "message $i carries ${inb.getInt(0)}" }
                    }
                }
            }
        }
    })
