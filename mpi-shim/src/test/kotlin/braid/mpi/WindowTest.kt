package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder

private fun direct(bytes: Int): ByteBuffer = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())

private fun longs(vararg v: Long): ByteBuffer =
    direct(v.size * 8).also { b -> v.forEachIndexed { i, x -> b.putLong(i * 8, x) } }

private fun intsN(vararg v: Int): ByteBuffer =
    direct(v.size * 4).also { b -> v.forEachIndexed { i, x -> b.putInt(i * 4, x) } }

class WindowTest :
    FunSpec({
        test("put and get under fence move exact data between every pair of four ranks, derived types on both sides") {
            runRanks(4) { mpi ->
                val w = mpi.world
                val n = w.size
                val win = Window.allocate(16L * 4 * n, 4, w)
                win.setErrhandler(ErrorHandler.ERRORS_RETURN)
                val base = win.base!!
                win.fence(0)
                // Each rank puts 16 ints into slot [rank] of every target.
                for (t in 0 until n) {
                    val data = intsN(*IntArray(16) { 1000 * w.rank + 10 * t + it })
                    win.put(data, 16, Datatype.INT, t, 16L * w.rank, 16, Datatype.INT)
                }
                win.fence(0)
                for (s in 0 until n) for (i in 0 until 16) base.getInt((16 * s + i) * 4) shouldBe
                    1000 * s + 10 * w.rank + i
                // Get every other int of the next rank's slot 0 through a vector on the target side into a contiguous
                // buffer,
                // and contiguous target ints into a strided origin.
                val next = (w.rank + 1) % n
                val vec = Datatype.vector(8, 1, 2, Datatype.INT).commit()
                val got = direct(8 * 4)
                win.get(got, 8, Datatype.INT, next, 0, 1, vec)
                val strided = direct(16 * 4)
                win.get(strided, 1, vec, next, 16, 8, Datatype.INT)
                win.fence(0)
                for (i in 0 until 8) got.getInt(i * 4) shouldBe 10 * next + 2 * i
                for (i in 0 until 8) strided.getInt(2 * i * 4) shouldBe 1000 + 10 * next + i
                win.fence(Window.MODE_NOSUCCEED)
                win.free()
            }
        }

        test("every rank's fetchAndOp and accumulate on one location add up exactly, on every type, over many rounds") {
            val rounds = 200
            val n = 4
            runRanks(n, seconds = 120) { mpi ->
                val w = mpi.world
                val win = Window.allocate(64, 1, w)
                win.setErrhandler(ErrorHandler.ERRORS_RETURN)
                val types =
                    listOf(
                        Datatype.INT,
                        Datatype.LONG,
                        Datatype.DOUBLE,
                        Datatype.FLOAT,
                        Datatype.SHORT,
                        Datatype.BYTE,
                        Datatype.UINT64_T,
                    )
                win.lockAll(0)
                for ((k, t) in types.withIndex()) {
                    val sz = t.size.toInt()
                    val one = direct(8)
                    when (t) {
                        Datatype.DOUBLE -> one.putDouble(0, 1.0)
                        Datatype.FLOAT -> one.putFloat(0, 1.0f)
                        else -> for (i in 0 until sz) one.put(i, if (i == 0) 1 else 0)
                    }
                    val old = direct(8)
                    repeat(rounds) {
                        win.fetchAndOp(one, old, t, 0, 8L * k, Op.SUM)
                        win.accumulate(one, 1, t, 0, 8L * k, 1, t, Op.SUM)
                    }
                    win.flush(0)
                }
                win.unlockAll()
                w.barrier()
                if (w.rank == 0) {
                    val b = win.base!!
                    val total = 2 * rounds * n
                    b.getInt(0) shouldBe total
                    b.getLong(8) shouldBe total.toLong()
                    b.getDouble(16) shouldBe total.toDouble()
                    b.getFloat(24) shouldBe total.toFloat()
                    b.getShort(32) shouldBe total.toShort()
                    b.get(40) shouldBe total.toByte()
                    b.getLong(48) shouldBe total.toLong()
                }
                win.free()
            }
        }
    })
