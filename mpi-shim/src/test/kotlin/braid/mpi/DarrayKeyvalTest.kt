package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer

class DarrayTest :
    FunSpec({
        val B = Datatype.DISTRIBUTE_BLOCK
        val C = Datatype.DISTRIBUTE_CYCLIC
        val N = Datatype.DISTRIBUTE_NONE
        val D = Datatype.DISTRIBUTE_DFLT_DARG

        /** A global array of [n] ints whose element i holds i. */
        fun global(n: Int) = ByteBuffer.allocate(n * 4).also { b -> for (i in 0 until n) b.putInt(i * 4, i) }

        /** The global indices a darray type picks, in its type-map order. */
        fun picks(t: Datatype, n: Int): List<Int> {
            val packed = ByteBuffer.allocate((t.size).toInt())
            t.pack(global(n), 0, 1, packed, 0)
            return List((t.size / 4).toInt()) { packed.getInt(it * 4) }
        }

        test("4x6 ints, block rows by cyclic(2) columns on a 2x2 grid, C order: the elements worked out by hand") {
            val r1 =
                Datatype.darray(
                        4,
                        1,
                        intArrayOf(4, 6),
                        intArrayOf(B, C),
                        intArrayOf(D, 2),
                        intArrayOf(2, 2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit()
            picks(r1, 24) shouldBe listOf(2, 3, 8, 9) // rows 0-1, columns 2-3
            r1.extent shouldBe 96L
            r1.lb shouldBe 0L
            r1.size shouldBe 16L
            val r2 =
                Datatype.darray(
                        4,
                        2,
                        intArrayOf(4, 6),
                        intArrayOf(B, C),
                        intArrayOf(D, 2),
                        intArrayOf(2, 2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit()
            picks(r2, 24) shouldBe listOf(12, 13, 16, 17, 18, 19, 22, 23) // rows 2-3, columns 0,1,4,5
        }

        test("the same in Fortran order lists the first dimension fastest at column-major displacements") {
            val t =
                Datatype.darray(
                        4,
                        1,
                        intArrayOf(4, 6),
                        intArrayOf(B, C),
                        intArrayOf(D, 2),
                        intArrayOf(2, 2),
                        Datatype.ORDER_FORTRAN,
                        Datatype.INT,
                    )
                    .commit()
            picks(t, 24) shouldBe listOf(8, 9, 12, 13) // (0,2) (1,2) (0,3) (1,3) at r + 4c
        }

        test("one dimension: block with a remainder, default cyclic, and none") {
            picks(
                Datatype.darray(
                        2,
                        1,
                        intArrayOf(5),
                        intArrayOf(B),
                        intArrayOf(D),
                        intArrayOf(2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit(),
                5,
            ) shouldBe listOf(3, 4)
            picks(
                Datatype.darray(
                        2,
                        0,
                        intArrayOf(5),
                        intArrayOf(B),
                        intArrayOf(D),
                        intArrayOf(2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit(),
                5,
            ) shouldBe listOf(0, 1, 2)
            picks(
                Datatype.darray(
                        2,
                        1,
                        intArrayOf(5),
                        intArrayOf(C),
                        intArrayOf(D),
                        intArrayOf(2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit(),
                5,
            ) shouldBe listOf(1, 3)
            picks(
                Datatype.darray(
                        1,
                        0,
                        intArrayOf(5),
                        intArrayOf(N),
                        intArrayOf(D),
                        intArrayOf(1),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                    .commit(),
                5,
            ) shouldBe listOf(0, 1, 2, 3, 4)
        }

        test(
            "every element of a 5x7 array distributed cyclic(2) x block on a 2x3 grid belongs to exactly one rank, and unpacking a rank's part touches only it"
        ) {
            val owners = IntArray(35)
            for (rank in 0 until 6) {
                val t =
                    Datatype.darray(
                            6,
                            rank,
                            intArrayOf(5, 7),
                            intArrayOf(C, B),
                            intArrayOf(2, D),
                            intArrayOf(2, 3),
                            Datatype.ORDER_C,
                            Datatype.INT,
                        )
                        .commit()
                val mine = picks(t, 35)
                mine.forEach { owners[it]++ }
                val packed = ByteBuffer.allocate(t.size.toInt())
                for (i in mine.indices) packed.putInt(i * 4, -1 - mine[i])
                val back = ByteBuffer.allocate(35 * 4)
                t.unpack(packed, 0, back, 0, 1)
                for (i in 0 until 35) back.getInt(i * 4) shouldBe (if (i in mine) -1 - i else 0)
            }
            owners.toList() shouldBe List(35) { 1 }
        }

        test(
            "a grid that does not hold the processes, or blocks that do not cover a dimension, raise MPI_ERR_ARG naming it"
        ) {
            shouldThrow<MPIException> {
                    Datatype.darray(
                        4,
                        0,
                        intArrayOf(4),
                        intArrayOf(B),
                        intArrayOf(D),
                        intArrayOf(3),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                }
                .also {
                    it.errorClass shouldBe ErrorClass.ERR_ARG
                    it.message shouldContain "does not hold 4 processes"
                }
            shouldThrow<MPIException> {
                    Datatype.darray(
                        2,
                        0,
                        intArrayOf(5),
                        intArrayOf(B),
                        intArrayOf(1),
                        intArrayOf(2),
                        Datatype.ORDER_C,
                        Datatype.INT,
                    )
                }
                .message shouldContain "do not cover 5 elements"
        }
    })

class KeyvalTest :
    FunSpec({
        test("attributes follow their keyval's callbacks: copied on dup, deleted on replace, delete and free") {
            runRanks(2) { mpi ->
                val deleted = ArrayList<Pair<Int, Any?>>()
                val plusOne =
                    Comm.createKeyval(
                        { _, _, extra, v -> (v as Int) + (extra as Int) },
                        { _, k, v, _ -> synchronized(deleted) { deleted += k to v } },
                        1,
                    )
                val noCopy = Comm.createKeyval(Comm.NULL_COPY_FN, Comm.NULL_DELETE_FN, null)
                val c = mpi.world.dup()
                c.setErrhandler(ErrorHandler.ERRORS_RETURN)
                c.getAttr(plusOne) shouldBe null
                c.setAttr(plusOne, 10)
                c.setAttr(noCopy, "kept here")
                c.getAttr(plusOne) shouldBe 10
                val c2 = c.dup()
                c2.getAttr(plusOne) shouldBe 11
                c2.getAttr(noCopy) shouldBe null
                c.setAttr(plusOne, 20)
                synchronized(deleted) { deleted.filter { it.first == plusOne }.map { it.second } } shouldBe listOf(10)
                c.deleteAttr(plusOne)
                c.getAttr(plusOne) shouldBe null
                c2.free()
                synchronized(deleted) {
                    deleted.filter { it.first == plusOne }.map { it.second }.sortedBy { it as Int }
                } shouldBe listOf(10, 11, 20)
                shouldThrow<MPIException> { c.deleteAttr(plusOne) }.errorClass shouldBe ErrorClass.ERR_KEYVAL
                shouldThrow<MPIException> { c.getAttr(12345) }.errorClass shouldBe ErrorClass.ERR_KEYVAL
                Comm.freeKeyval(noCopy) // each rank's own keyval (the ranks of this test share one JVM)
                shouldThrow<MPIException> { c.setAttr(noCopy, 1) }.errorClass shouldBe ErrorClass.ERR_KEYVAL
                c.getAttr(noCopy) shouldBe "kept here" // freeing a keyval leaves what is set
                c.free()
            }
        }
    })
