package braid.mpi

import braid.mpi.testing.intAt
import braid.mpi.testing.ints
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder

class CommExtrasTest :
    FunSpec({
        test("an Info keeps keys in the order set, copies on dup, and names a missing key or a freed object") {
            val info = Info()
            info.set("b", "1")
            info.set("a", "2")
            info.set("b", "3")
            (0 until info.size()).map { info.getKey(it) } shouldBe listOf("b", "a")
            val copy = info.dup()
            info.delete("b")
            copy.get("b") shouldBe "3"
            info.get("b") shouldBe null
            shouldThrow<MPIException> { info.delete("b") }.errorClass shouldBe ErrorClass.ERR_INFO_NOKEY
            info.free()
            info.isNull shouldBe true
            shouldThrow<MPIException> { info.size() }.errorClass shouldBe ErrorClass.ERR_INFO
        }

        test("alltoallw and ialltoallw move a block of its own datatype to and from each rank") {
            runRanks(3) { mpi ->
                val w = mpi.world
                val r = w.rank
                // To rank i: i+1 ints starting at int 4*i; from rank i: r+1 ints into int 4*i.
                val send = ByteBuffer.allocateDirect(48).order(ByteOrder.nativeOrder())
                for (k in 0 until 12) send.putInt(4 * k, 100 * r + k)
                val counts = IntArray(3) { it + 1 }
                val displs = IntArray(3) { 16 * it }
                val types = Array(3) { Datatype.INT }
                for (nonblocking in listOf(false, true)) {
                    val recv = ByteBuffer.allocateDirect(48).order(ByteOrder.nativeOrder())
                    val rcounts = IntArray(3) { r + 1 }
                    if (nonblocking) w.ialltoallw(send, counts, displs, types, recv, rcounts, displs, types).waitFor()
                    else w.alltoallw(send, counts, displs, types, recv, rcounts, displs, types)
                    for (i in 0 until 3) for (k in 0..r) recv.intAt(4 * i + k) shouldBe 100 * i + 4 * r + k
                }
                shouldThrow<MPIException> { w.alltoallw(send, IntArray(2), displs, types, send, counts, displs, types) }
                    .errorClass shouldBe ErrorClass.ERR_ARG
            }
        }

        test("createGroup is collective over the group only: the other ranks do not call it") {
            runRanks(4) { mpi ->
                val w = mpi.world
                if (w.rank != 2) {
                    val c = w.createGroup(w.getGroup().excl(intArrayOf(2)), 5)
                    c.size shouldBe 3
                    val sum = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder())
                    val one = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, 1)
                    c.allreduce(one, sum, 1, Datatype.INT, Op.SUM)
                    sum.intAt(0) shouldBe 3
                    c.free()
                }
                w.barrier()
            }
        }

        test("splitType(TYPE_SHARED) groups the ranks of one host; the keys HOST, IO and LASTUSEDCODE answer") {
            runRanks(3) { mpi ->
                val w = mpi.world
                w.splitType(Comm.TYPE_SHARED, 0)!!.size shouldBe 3
                w.splitType(Mpi.UNDEFINED, 0) shouldBe null
                w.getAttr(Comm.HOST) shouldBe Mpi.PROC_NULL
                w.getAttr(Comm.IO) shouldBe Mpi.ANY_SOURCE
                (w.getAttr(Comm.LASTUSEDCODE) as Int) shouldBe ErrorClass.lastUsedCode()
            }
        }

        test("disconnect waits for both sides and frees; pack and unpack on a communicator round-trip") {
            runRanks(2) { mpi ->
                val d = mpi.world.dup()
                val packed = ByteBuffer.allocate(d.packSize(3, Datatype.INT).toInt())
                d.pack(ints(4, 5, 6), 0, 3, Datatype.INT, packed, 0) shouldBe 12
                val back = ByteBuffer.allocate(12)
                d.unpack(packed, 0, back, 0, 3, Datatype.INT) shouldBe 12
                back.intAt(2) shouldBe 6
                d.disconnect()
                shouldThrow<MPIException> { d.barrier() }.errorClass shouldBe ErrorClass.ERR_COMM
            }
        }

        test("peekStatus reports a completed receive without spending it; GROUP_EMPTY is empty") {
            runRanks(2) { mpi ->
                val w = mpi.world
                val buf = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder())
                if (w.rank == 0) w.send(ints(9), 1, Datatype.INT, 1, 3)
                else {
                    val r = w.irecv(buf, 1, Datatype.INT, 0, 3)
                    var s: Status? = null
                    while (s == null) s = r.peekStatus()
                    s.tag shouldBe 3
                    r.isNull shouldBe false
                    r.waitFor().source shouldBe 0
                    r.isNull shouldBe true
                }
                Group.EMPTY.size shouldBe 0
            }
        }
    })
