package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * `MPI_PROD` on [Datatype.C_FLOAT_COMPLEX] and [Datatype.C_DOUBLE_COMPLEX] is the complex product, `MPI_SUM` the
 * complex sum, in local reductions and in every reduction collective (blocking and not, in place, derived types of
 * complex numbers); other built-in ops and products over types mixing complex and real elements raise `MPI_ERR_OP`.
 */
class ComplexReductionTest :
    FunSpec({
        fun doubles(vararg v: Double): ByteBuffer =
            ByteBuffer.allocateDirect(8 * v.size).order(ByteOrder.nativeOrder()).also { b ->
                v.forEachIndexed { i, x -> b.putDouble(8 * i, x) }
            }

        fun ByteBuffer.d(i: Int) = getDouble(8 * i)

        // Rank r contributes z_r = (r + 1) + (r - 1)i, and w_r = 1 - r·i as a second element.
        fun z(r: Int) = doubleArrayOf(r + 1.0, r - 1.0, 1.0, -r.toDouble())

        fun product(n: Int, from: Int = 0): DoubleArray {
            var acc = doubleArrayOf(1.0, 0.0, 1.0, 0.0)
            for (r in from until n) {
                val v = z(r)
                acc =
                    doubleArrayOf(
                        acc[0] * v[0] - acc[1] * v[1],
                        acc[0] * v[1] + acc[1] * v[0],
                        acc[2] * v[2] - acc[3] * v[3],
                        acc[2] * v[3] + acc[3] * v[2],
                    )
            }
            return acc
        }

        fun ByteBuffer.shouldHold(expected: DoubleArray) {
            for (i in expected.indices) d(i) shouldBe (expected[i] plusOrMinus 1e-9)
        }

        test("Op.reduce (MPI_Reduce_local): PROD multiplies complex numbers, SUM adds them, for floats and doubles") {
            val a = doubles(1.0, 2.0, 0.0, 1.0) // (1 + 2i), i
            val b = doubles(3.0, -1.0, 0.0, 1.0) // (3 - i), i
            Op.PROD.reduce(a, 0, b, 0, 2, Datatype.C_DOUBLE_COMPLEX)
            b.shouldHold(doubleArrayOf(5.0, 5.0, -1.0, 0.0)) // (1 + 2i)(3 - i) = 5 + 5i; i·i = -1
            Op.SUM.reduce(a, 0, b, 0, 2, Datatype.C_DOUBLE_COMPLEX)
            b.shouldHold(doubleArrayOf(6.0, 7.0, -1.0, 1.0))

            val f = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putFloat(0, 2f).putFloat(4, 3f)
            val g = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putFloat(0, 4f).putFloat(4, -5f)
            Op.PROD.reduce(f, 0, g, 0, 1, Datatype.C_FLOAT_COMPLEX)
            g.getFloat(0) shouldBe 23f // (2 + 3i)(4 - 5i) = 8 + 15 + (12 - 10)i
            g.getFloat(4) shouldBe 2f
        }

        test("a derived type of complex numbers (contiguous, vector) multiplies them as complex numbers") {
            val pair = Datatype.contiguous(2, Datatype.C_DOUBLE_COMPLEX).commit()
            val a = doubles(1.0, 2.0, 0.0, 1.0)
            val b = doubles(3.0, -1.0, 0.0, 1.0)
            Op.PROD.reduce(a, 0, b, 0, 1, pair)
            b.shouldHold(doubleArrayOf(5.0, 5.0, -1.0, 0.0))
            val strided = Datatype.vector(2, 1, 2, Datatype.C_DOUBLE_COMPLEX).commit() // elements 0 and 2
            val c = doubles(0.0, 1.0, 9.0, 9.0, 0.0, 2.0)
            val e = doubles(0.0, 1.0, 7.0, 7.0, 1.0, 1.0)
            Op.PROD.reduce(c, 0, e, 0, 1, strided)
            e.shouldHold(doubleArrayOf(-1.0, 0.0, 7.0, 7.0, -2.0, 2.0)) // the gap is untouched
        }

        test("MAX on a complex type and PROD on a type mixing complex and real elements raise MPI_ERR_OP") {
            val a = doubles(1.0, 2.0)
            shouldThrow<MPIException> { Op.MAX.reduce(a, 0, doubles(0.0, 0.0), 0, 1, Datatype.C_DOUBLE_COMPLEX) }
                .errorClass shouldBe ErrorClass.ERR_OP
            val mixed =
                Datatype.struct(
                        intArrayOf(1, 1),
                        longArrayOf(0, 16),
                        arrayOf(Datatype.C_DOUBLE_COMPLEX, Datatype.DOUBLE),
                    )
                    .commit()
            shouldThrow<MPIException> { Op.PROD.reduce(doubles(1.0, 2.0, 3.0), 0, doubles(1.0, 2.0, 3.0), 0, 1, mixed) }
                .errorClass shouldBe ErrorClass.ERR_OP
            // SUM on it stays element-wise, which is right for both kinds.
            val s = doubles(1.0, 2.0, 3.0)
            Op.SUM.reduce(doubles(1.0, 1.0, 1.0), 0, s, 0, 1, mixed)
            s.shouldHold(doubleArrayOf(2.0, 3.0, 4.0))
        }

        test("allreduce, reduce, scan, exscan, reduce_scatter_block and iallreduce compute the complex product") {
            val n = 3
            runRanks(n) { mpi ->
                val w = mpi.world
                val r = w.rank
                val t = Datatype.C_DOUBLE_COMPLEX
                val mine = doubles(*z(r))
                val out = doubles(0.0, 0.0, 0.0, 0.0)
                w.allreduce(mine, out, 2, t, Op.PROD)
                out.shouldHold(product(n))
                val inPlace = doubles(*z(r))
                w.allreduce(Mpi.IN_PLACE, inPlace, 2, t, Op.PROD)
                inPlace.shouldHold(product(n))
                val root = doubles(0.0, 0.0, 0.0, 0.0)
                w.reduce(mine, if (r == 1) root else null, 2, t, Op.PROD, 1)
                if (r == 1) root.shouldHold(product(n))
                val scanned = doubles(0.0, 0.0, 0.0, 0.0)
                w.scan(mine, scanned, 2, t, Op.PROD)
                scanned.shouldHold(product(r + 1))
                val ex = doubles(0.0, 0.0, 0.0, 0.0)
                w.exscan(mine, ex, 2, t, Op.PROD)
                if (r > 0) ex.shouldHold(product(r))
                // Every rank sends n blocks of one complex number: z_r's first part to each block; block k is rank k's.
                val blocks = doubles(*DoubleArray(2 * n) { if (it % 2 == 0) r + 1.0 else r - 1.0 })
                val got = doubles(0.0, 0.0)
                w.reduceScatterBlock(blocks, got, 1, t, Op.PROD)
                got.shouldHold(product(n).copyOf(2))
                val nb = doubles(0.0, 0.0, 0.0, 0.0)
                w.iallreduce(mine, nb, 2, t, Op.PROD).waitFor()
                nb.shouldHold(product(n))
                val sum = doubles(0.0, 0.0, 0.0, 0.0)
                w.allreduce(mine, sum, 2, t, Op.SUM)
                sum.shouldHold(doubleArrayOf(6.0, 0.0, 3.0, -3.0)) // Σ(r + 1) + Σ(r - 1)i, Σ1 - Σr·i
            }
        }
    })
