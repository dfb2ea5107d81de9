package braid.mpi

import braid.mpi.testing.intAt
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer

/** A row-major matrix of ints, value at (r, c) = r * 100 + c. */
private fun matrix(rows: Int, cols: Int, direct: Boolean = false): ByteBuffer =
    (if (direct) ByteBuffer.allocateDirect(rows * cols * 4) else ByteBuffer.allocate(rows * cols * 4)).also { b ->
        for (r in 0 until rows) for (c in 0 until cols) b.putInt((r * cols + c) * 4, r * 100 + c)
    }

private fun packedInts(b: ByteBuffer, n: Int): List<Int> = List(n) { b.getInt(it * 4) }

class DatatypeTest :
    FunSpec({
        test("vector, indexed, indexed block, subarray and struct pack to the hand-packed reference") {
            val m = matrix(4, 5)
            fun pack(t: Datatype, count: Int = 1): List<Int> {
                t.commit()
                val out = ByteBuffer.allocate(t.packSize(count).toInt())
                t.pack(m, 0, count, out, 0) shouldBe out.capacity()
                return packedInts(out, out.capacity() / 4)
            }
            // Column 0: every 5th int.
            pack(Datatype.vector(4, 1, 5, Datatype.INT)) shouldBe listOf(0, 100, 200, 300)
            // Two columns of a resized column type: (0,0) (1,0)... then (0,1)...
            val column = Datatype.resized(Datatype.vector(4, 1, 5, Datatype.INT), 0, 4)
            pack(column, 2) shouldBe listOf(0, 100, 200, 300, 1, 101, 201, 301)
            pack(Datatype.indexed(intArrayOf(2, 1), intArrayOf(6, 0), Datatype.INT)) shouldBe listOf(101, 102, 0)
            pack(Datatype.indexedBlock(2, intArrayOf(18, 3), Datatype.INT)) shouldBe listOf(303, 304, 3, 4)
            pack(Datatype.hvector(2, 2, 40, Datatype.INT)) shouldBe listOf(0, 1, 200, 201)
            pack(Datatype.hindexed(intArrayOf(1, 1), longArrayOf(12, 4), Datatype.INT)) shouldBe listOf(3, 1)
            // Rows 1..2, columns 2..4 of the 4x5 matrix.
            pack(
                Datatype.subarray(intArrayOf(4, 5), intArrayOf(2, 3), intArrayOf(1, 2), Datatype.ORDER_C, Datatype.INT)
            ) shouldBe listOf(102, 103, 104, 202, 203, 204)
            // Fortran order: the first dimension varies fastest (a 5x4 column-major view of the same bytes).
            pack(
                Datatype.subarray(
                    intArrayOf(5, 4),
                    intArrayOf(3, 2),
                    intArrayOf(2, 1),
                    Datatype.ORDER_FORTRAN,
                    Datatype.INT,
                )
            ) shouldBe listOf(102, 103, 104, 202, 203, 204)
            pack(Datatype.contiguous(3, Datatype.INT), 2) shouldBe listOf(0, 1, 2, 3, 4, 100)
        }

        test("extent, lower bound and true extent follow the standard, struct padding included") {
            val v = Datatype.vector(3, 2, 4, Datatype.INT)
            v.size shouldBe 24
            v.lb shouldBe 0
            v.extent shouldBe (2 * 4 + 2) * 4L
            v.trueExtent shouldBe 40
            v.isContiguous shouldBe false
            val ix = Datatype.indexed(intArrayOf(1, 1), intArrayOf(3, -1), Datatype.INT)
            ix.lb shouldBe -4
            ix.extent shouldBe 20
            ix.trueLb shouldBe -4
            ix.trueExtent shouldBe 20
            // struct { int; byte } in C: size 5, extent padded to 8.
            val s = Datatype.struct(intArrayOf(1, 1), longArrayOf(0, 4), arrayOf(Datatype.INT, Datatype.BYTE))
            s.size shouldBe 5
            s.extent shouldBe 8
            s.trueExtent shouldBe 5
            s.basic shouldBe null
            val r = Datatype.resized(s, -2, 16)
            r.lb shouldBe -2
            r.extent shouldBe 16
            r.ub shouldBe 14
            r.trueLb shouldBe 0
            r.trueExtent shouldBe 5
            Datatype.contiguous(4, Datatype.DOUBLE).isContiguous shouldBe true
            Datatype.subarray(intArrayOf(4, 5), intArrayOf(2, 3), intArrayOf(1, 2), Datatype.ORDER_C, Datatype.INT)
                .extent shouldBe 80
        }

        test(
            "pack then unpack restores the layout in heap and direct buffers; a too small output raises MPI_ERR_TRUNCATE"
        ) {
            for (direct in listOf(false, true)) {
                val m = matrix(4, 5, direct)
                val t = Datatype.vector(2, 3, 5, Datatype.INT).commit()
                val packed = ByteBuffer.allocate(24)
                t.pack(m, 4, 1, packed, 0)
                val back = if (direct) ByteBuffer.allocateDirect(80) else ByteBuffer.allocate(80)
                t.unpack(packed, 0, back, 4, 1) shouldBe 24
                listOf(1, 2, 3, 6, 7, 8).forEach { back.getInt(it * 4) shouldBe m.getInt(it * 4) }
                back.getInt(0) shouldBe 0
                back.getInt(4 * 4) shouldBe 0
                val e = shouldThrow<MPIException> { t.pack(m, 0, 1, ByteBuffer.allocate(20), 0) }
                e.errorClass shouldBe ErrorClass.ERR_TRUNCATE
            }
        }

        test(
            "a matrix column sent as a vector type arrives as the hand-packed column, and a packed message unpacks into a column"
        ) {
            runRanks(2) { mpi ->
                val w = mpi.world
                val column = Datatype.vector(4, 1, 5, Datatype.INT).commit()
                if (w.rank == 0) {
                    w.send(matrix(4, 5, direct = true), 1, column, 1, 0)
                    w.send(
                        ByteBuffer.allocate(16).apply { for (i in 0 until 4) putInt(i * 4, 7 + i) },
                        4,
                        Datatype.INT,
                        1,
                        1,
                    )
                } else {
                    val b = ByteBuffer.allocate(16)
                    w.recv(b, 4, Datatype.INT, 0, 0).getCount(Datatype.INT) shouldBe 4
                    packedInts(b, 4) shouldBe listOf(0, 100, 200, 300)
                    val into = ByteBuffer.allocate(80)
                    val s = w.recv(into, 1, column, 0, 1)
                    s.getCount(column) shouldBe 1
                    s.getElements(column) shouldBe 4
                    listOf(0, 5, 10, 15).map { into.intAt(it) } shouldBe listOf(7, 8, 9, 10)
                }
            }
        }

        test("an uncommitted or freed type raises MPI_ERR_TYPE naming it; a predefined type cannot be freed") {
            val t = Datatype.vector(2, 1, 2, Datatype.INT)
            shouldThrow<MPIException> { t.pack(matrix(1, 4), 0, 1, ByteBuffer.allocate(8), 0) }
                .let {
                    it.errorClass shouldBe ErrorClass.ERR_TYPE
                    it.message shouldContain "not committed"
                }
            t.commit().free()
            shouldThrow<MPIException> { t.pack(matrix(1, 4), 0, 1, ByteBuffer.allocate(8), 0) }.message shouldContain
                "freed"
            shouldThrow<MPIException> { Datatype.INT.free() }.errorClass shouldBe ErrorClass.ERR_TYPE
            shouldThrow<MPIException> { Datatype.contiguous(-1, Datatype.INT) }.errorClass shouldBe ErrorClass.ERR_COUNT
        }
    })

class OpTest :
    FunSpec({
        fun native(n: Int) = ByteBuffer.allocate(n).order(java.nio.ByteOrder.nativeOrder())
        fun ints(vararg v: Int) = native(v.size * 4).also { b -> v.forEachIndexed { i, x -> b.putInt(i * 4, x) } }

        test("built-in ops combine ints, unsigned bytes, doubles and MAXLOC pairs as the standard defines") {
            val io = ints(1, -5, 7)
            Op.SUM.reduce(ints(2, 3, 4), 0, io, 0, 3, Datatype.INT)
            packedInts(io, 3) shouldBe listOf(3, -2, 11)
            Op.MAX.reduce(ints(9, -9, 11), 0, io, 0, 3, Datatype.INT)
            packedInts(io, 3) shouldBe listOf(9, -2, 11)
            Op.BXOR.reduce(ints(1, 1, 1), 0, io, 0, 3, Datatype.INT)
            packedInts(io, 3) shouldBe listOf(8, -1, 10)
            Op.LAND.reduce(ints(0, 1, 2), 0, io, 0, 3, Datatype.INT)
            packedInts(io, 3) shouldBe listOf(0, 1, 1)

            val u = ByteBuffer.wrap(byteArrayOf(200.toByte(), 1))
            Op.MAX.reduce(ByteBuffer.wrap(byteArrayOf(100, 2)), 0, u, 0, 2, Datatype.UINT8_T)
            (u.get(0).toInt() and 0xFF) shouldBe 200
            u.get(1) shouldBe 2

            val d = native(16).putDouble(0, 1.5).putDouble(8, 2.0)
            Op.PROD.reduce(native(16).putDouble(0, 2.0).putDouble(8, 0.25), 0, d, 0, 2, Datatype.DOUBLE)
            d.getDouble(0) shouldBe 3.0
            d.getDouble(8) shouldBe 0.5

            // MAXLOC on (double, int) pairs: the larger value wins, a tie takes the lower index.
            fun pairs(vararg p: Pair<Double, Int>) =
                native(p.size * 12).also { b ->
                    p.forEachIndexed { i, (v, x) -> b.putDouble(i * 12, v).putInt(i * 12 + 8, x) }
                }
            val loc = pairs(1.0 to 4, 5.0 to 9)
            Op.MAXLOC.reduce(pairs(1.0 to 2, 3.0 to 1), 0, loc, 0, 2, Datatype.DOUBLE_INT)
            loc.getInt(8) shouldBe 2
            loc.getDouble(12) shouldBe 5.0
            loc.getInt(20) shouldBe 9
        }

        test("a built-in op applies through a derived type of one kind; a bitwise op on floats raises MPI_ERR_OP") {
            val col = Datatype.vector(2, 1, 2, Datatype.INT).commit()
            val io = ints(1, 100, 2, 200)
            Op.SUM.reduce(ints(10, 0, 20, 0), 0, io, 0, 1, col)
            packedInts(io, 4) shouldBe listOf(11, 100, 22, 200)
            val e =
                shouldThrow<MPIException> {
                    Op.BAND.reduce(ByteBuffer.allocate(4), 0, ByteBuffer.allocate(4), 0, 1, Datatype.FLOAT)
                }
            e.errorClass shouldBe ErrorClass.ERR_OP
            e.message shouldContain "MPI_BAND is not defined on MPI_FLOAT"
        }

        test("a reduction refuses a buffer whose byte order is not native, naming the fix") {
            val bigEndian = ByteBuffer.allocate(4).order(java.nio.ByteOrder.BIG_ENDIAN)
            val other =
                if (java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.BIG_ENDIAN)
                    ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                else bigEndian
            val e = shouldThrow<MPIException> { Op.SUM.reduce(ints(1), 0, other, 0, 1, Datatype.INT) }
            e.errorClass shouldBe ErrorClass.ERR_BUFFER
            e.message shouldContain "order(ByteOrder.nativeOrder())"
        }

        test("a user op is called with MPI's operand order, so a non-commutative one composes left to right") {
            // 2x2 integer matrix product: inout = in * inout.
            val matmul =
                Op.create(
                    { input, inout, count, _ ->
                        for (k in 0 until count / 4) {
                            val o = k * 16
                            val a = IntArray(4) { input.getInt(o + it * 4) }
                            val b = IntArray(4) { inout.getInt(o + it * 4) }
                            inout.putInt(o, a[0] * b[0] + a[1] * b[2])
                            inout.putInt(o + 4, a[0] * b[1] + a[1] * b[3])
                            inout.putInt(o + 8, a[2] * b[0] + a[3] * b[2])
                            inout.putInt(o + 12, a[2] * b[1] + a[3] * b[3])
                        }
                    },
                    false,
                )
            matmul.isCommutative shouldBe false
            val io = ints(1, 1, 0, 1)
            matmul.reduce(ints(1, 0, 1, 1), 0, io, 0, 4, Datatype.INT)
            packedInts(io, 4) shouldBe listOf(1, 1, 1, 2)
        }
    })
