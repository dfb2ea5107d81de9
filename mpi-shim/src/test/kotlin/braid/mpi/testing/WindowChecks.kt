package braid.mpi.testing

import braid.mpi.BasicType
import braid.mpi.Datatype
import braid.mpi.ErrorClass
import braid.mpi.ErrorHandler
import braid.mpi.MPIException
import braid.mpi.Mpi
import braid.mpi.Op
import braid.mpi.Window
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

private fun direct(bytes: Int): ByteBuffer = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())

private fun longs(vararg v: Long): ByteBuffer =
    direct(v.size * 8).also { b -> v.forEachIndexed { i, x -> b.putLong(i * 8, x) } }

private fun intsN(vararg v: Int): ByteBuffer =
    direct(v.size * 4).also { b -> v.forEachIndexed { i, x -> b.putInt(i * 4, x) } }

/**
 * The one-sided checks, each run by every rank of a job: [braid.mpi.WindowTest] runs them on threads of one JVM, and
 * the multi-process test on `braid run` ranks. Each works for any number of ranks from 2.
 */
object WindowChecks {
    /** Put and get under fence move exact data between every pair of four ranks, derived types on both sides. */
    fun putGetFence(mpi: Mpi) {
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
        for (s in 0 until n) for (i in 0 until 16) base.getInt((16 * s + i) * 4) shouldBe 1000 * s + 10 * w.rank + i
        // Get every other int of the next rank's slot 0 through a vector on the target side into a contiguous
        // buffer, and contiguous target ints into a strided origin.
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

    /** Every rank's fetchAndOp and accumulate on one location add up exactly, on every type, over many rounds. */
    fun contention(mpi: Mpi) {
        val rounds = 200
        val n = mpi.world.size

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

    /**
     * Accumulates of many elements from every rank on one range add up exactly: ints well past one rail atomic (split
     * into whole elements), a strided target, shorts (the locked read-modify-write), and getAccumulate's old values.
     */
    fun largeAccumulate(mpi: Mpi) {
        val w = mpi.world
        val n = w.size
        val ints = 3000
        val shorts = 3001
        val rounds = 3
        // Bytes [0, 12000): the ints; [12000, 18002): the shorts; [20000, 44000): the strided ints (3 of every 4).
        val win = Window.allocate(44_000, 1, w)
        win.setErrhandler(ErrorHandler.ERRORS_RETURN)
        val src = direct(4500 * 4).also { b -> for (i in 0 until 4500) b.putInt(i * 4, (w.rank + 1) * (i % 7 + 1)) }
        val srcShorts =
            direct(shorts * 2).also { b -> for (i in 0 until shorts) b.putShort(i * 2, (i % 5 + 1).toShort()) }
        val strided = Datatype.vector(1500, 3, 4, Datatype.INT).commit()
        val old = direct(ints * 4)
        win.lockAll(0)
        repeat(rounds) {
            win.accumulate(src, ints, Datatype.INT, 0, 0, ints, Datatype.INT, Op.SUM)
            win.accumulate(srcShorts, shorts, Datatype.SHORT, 0, 12_000, shorts, Datatype.SHORT, Op.SUM)
            win.accumulate(src, 4500, Datatype.INT, 0, 20_000, 1, strided, Op.SUM)
            win.flush(0)
        }
        win.unlockAll()
        w.barrier()
        // Every rank has added; an atomic read of the whole int range returns each element's total.
        win.lockAll(0)
        win.getAccumulate(src, ints, Datatype.INT, old, ints, Datatype.INT, 0, 0, ints, Datatype.INT, Op.NO_OP)
        win.unlockAll()
        val ranks = n * (n + 1) / 2
        for (i in 0 until ints) old.getInt(i * 4) shouldBe rounds * ranks * (i % 7 + 1)
        w.barrier()
        if (w.rank == 0) {
            val b = win.base!!
            for (i in 0 until shorts) b.getShort(12_000 + i * 2) shouldBe (rounds * n * (i % 5 + 1)).toShort()
            for (k in 0 until 1500) for (j in 0 until 4) {
                val at = 20_000 + (4 * k + j) * 4
                val expect = if (j < 3) rounds * ranks * ((3 * k + j) % 7 + 1) else 0
                b.getInt(at) shouldBe expect
            }
        }
        win.free()
    }

    /**
     * flushLocal leaves every origin buffer reusable: puts (small, large, from a strided origin) whose origins are
     * overwritten right after it land with the data they were called with, and a get's data is in place when it
     * returns.
     */
    fun flushLocal(mpi: Mpi) {
        val w = mpi.world
        val n = w.size
        val next = (w.rank + 1) % n
        val prev = (w.rank + n - 1) % n
        val big = 200_000
        val win = Window.allocate(2L * big, 1, w)
        win.setErrhandler(ErrorHandler.ERRORS_RETURN)
        val origin = direct(big)
        val strided = direct(2 * 64 * 4)
        val vec = Datatype.vector(64, 1, 2, Datatype.INT).commit()
        win.lock(Window.LOCK_SHARED, next, 0)
        for ((k, size) in listOf(8, 4096, big).withIndex()) {
            for (i in 0 until size / 4) origin.putInt(i * 4, 1_000_000 * (w.rank + 1) + 10 * i + k)
            win.put(origin, size, Datatype.BYTE, next, 0, size, Datatype.BYTE)
            win.flushLocal(next)
            for (i in 0 until size / 4) origin.putInt(i * 4, -1) // reusable: the put must not see this
            win.flush(next)
            val got = direct(size)
            win.get(got, size, Datatype.BYTE, next, 0, size, Datatype.BYTE)
            win.flushLocal(next)
            for (i in 0 until size / 4) got.getInt(i * 4) shouldBe 1_000_000 * (w.rank + 1) + 10 * i + k
        }
        for (i in 0 until 64) strided.putInt(2 * i * 4, 7 * i + w.rank)
        win.put(strided, 1, vec, next, big.toLong(), 64, Datatype.INT)
        win.flushLocalAll()
        for (i in 0 until 64) strided.putInt(2 * i * 4, -1)
        win.unlock(next)
        w.barrier()
        val b = win.base!!
        for (i in 0 until 64) b.getInt(big + i * 4) shouldBe 7 * i + prev
        win.free()
    }

    /**
     * Sync modes do not mix: a lock (or lockAll) while a fence epoch has operations in it, and a fence inside a lock
     * epoch, raise MPI_ERR_RMA_SYNC naming the window and the rank; a fence epoch with nothing in it ends at a lock.
     */
    fun epochMixing(mpi: Mpi) {
        val w = mpi.world
        val other = (w.rank + 1) % w.size
        val win = Window.allocate(64, 4, w)
        win.setErrhandler(ErrorHandler.ERRORS_RETURN)
        val one = intsN(1)
        win.fence(0)
        win.put(one, 1, Datatype.INT, other, 0, 1, Datatype.INT)
        val underFence = shouldThrow<MPIException> { win.lock(Window.LOCK_SHARED, other, 0) }
        underFence.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
        underFence.message shouldContain win.getName()
        underFence.message shouldContain "rank $other"
        shouldThrow<MPIException> { win.lockAll(0) }.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
        win.fence(0) // completes the put; the epoch it opens has nothing in it
        win.lock(Window.LOCK_SHARED, other, 0)
        val inLock = shouldThrow<MPIException> { win.fence(0) }
        inLock.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
        inLock.message shouldContain win.getName()
        inLock.message shouldContain "rank $other"
        win.put(one, 1, Datatype.INT, other, 1, 1, Datatype.INT)
        win.unlock(other)
        w.barrier()
        win.base!!.getInt(0) shouldBe 1
        win.base!!.getInt(4) shouldBe 1
        win.free()
    }

    /**
     * Accumulate and getAccumulate apply every predefined op to every basic type it takes, in every sync mode, exactly.
     */
    fun everyOpEverySyncMode(mpi: Mpi) {
        val cases = opTypeCases()
        check(cases.size > 60) { "only ${cases.size} (op, type) cases" }
        check(cases.size > 60) { "only ${cases.size} (op, type) cases" }

        val w = mpi.world
        val win = Window.allocate(64, 1, w)
        val base = win.base!!
        val other = if (w.rank == 0) 1 else 0
        for ((c, case) in cases.withIndex()) {
            val (op, type) = case
            val mode = SyncMode.entries[c % SyncMode.entries.size]
            val count = 4
            val bytes = (count * type.size).toInt()
            // Rank 0 is the target: its window starts with `initial`; rank 1 accumulates `origin` into it.
            val initial = elements(type, count, seed = 3)
            val origin = elements(type, count, seed = 5 + c % 7)
            if (w.rank == 0) for (i in 0 until bytes) base.put(i, initial.get(i))
            w.barrier()
            val result = direct(bytes)
            mode.open(win, other)
            if (w.rank == 1) {
                if (c % 2 == 0) win.accumulate(origin, count, type, 0, 0, count, type, op)
                else win.getAccumulate(origin, count, type, result, count, type, 0, 0, count, type, op)
            }
            mode.close(win, other)
            w.barrier()
            if (w.rank == 0) {
                val expected = direct(bytes).also { for (i in 0 until bytes) it.put(i, initial.get(i)) }
                when (op) {
                    Op.REPLACE -> for (i in 0 until bytes) expected.put(i, origin.get(i))
                    Op.NO_OP -> {}
                    else -> op.reduce(origin, 0, expected, 0, count, type)
                }
                for (i in 0 until bytes) if (base.get(i) != expected.get(i))
                    error("$op on $type in $mode: byte $i is ${base.get(i)}, expected ${expected.get(i)}")
            } else if (w.rank == 1 && c % 2 == 1) {
                for (i in 0 until bytes) if (result.get(i) != initial.get(i))
                    error("getAccumulate $op on $type in $mode: result byte $i differs")
            }
        }
        win.free()
    }

    /** CompareAndSwap serves as a lock every rank takes: a counter read and written under it ends exact. */
    fun casLock(mpi: Mpi) {
        val rounds = 40
        val n = mpi.world.size

        val w = mpi.world
        val win = Window.allocate(16, 4, w)
        val me = intsN(w.rank + 1)
        val free = intsN(0)
        val old = direct(4)
        val counter = direct(4)
        win.lockAll(0)
        repeat(rounds) {
            do {
                win.compareAndSwap(me, free, old, Datatype.INT, 0, 0)
            } while (old.getInt(0) != 0)
            win.get(counter, 1, Datatype.INT, 0, 1, 1, Datatype.INT)
            win.flush(0)
            counter.putInt(0, counter.getInt(0) + 1)
            win.put(counter, 1, Datatype.INT, 0, 1, 1, Datatype.INT)
            win.flush(0)
            win.compareAndSwap(free, me, old, Datatype.INT, 0, 0)
            old.getInt(0) shouldBe w.rank + 1
        }
        win.unlockAll()
        w.barrier()
        if (w.rank == 0) win.base!!.getInt(4) shouldBe rounds * n
        win.free()
    }

    /** A passive-target epoch completes while the target computes in a pure Java loop, making no MPI call. */
    fun passiveBusyTarget(mpi: Mpi) {

        val w = mpi.world
        val win = Window.allocate(64, 8, w)
        if (w.rank == 1) win.base!!.putLong(8, 77)
        w.barrier()
        if (w.rank == 1) {
            // The target: no MPI call until the origin's exclusive epoch has put 42 into its window.
            val view = UnsafeBuffer(win.base!!)
            val deadline = System.nanoTime() + 30_000_000_000L
            var spins = 0L
            // Tell the origin the loop starts now, so its epoch runs while this thread computes (not before it).
            w.send(direct(0), 0, Datatype.BYTE, 0, 77)
            while (view.getLongVolatile(0) != 42L) {
                spins++
                if (System.nanoTime() > deadline) error("the origin's put never arrived while the target computed")
            }
            // The fetchAndOp's sum, applied before the put (one epoch, flushed).
            view.getLongVolatile(16) shouldBe 5L
            check(spins > 0) { "the target never computed" }
        } else if (w.rank == 0) {
            w.recv(direct(0), 0, Datatype.BYTE, 1, 77)
            win.lock(Window.LOCK_EXCLUSIVE, 1, 0)
            val got = direct(8)
            win.get(got, 1, Datatype.LONG, 1, 1, 1, Datatype.LONG)
            win.flush(1)
            got.getLong(0) shouldBe 77L
            val five = longs(5)
            val old = direct(8)
            win.fetchAndOp(five, old, Datatype.LONG, 1, 2, Op.SUM)
            old.getLong(0) shouldBe 0L
            win.flush(1)
            win.put(longs(42), 1, Datatype.LONG, 1, 0, 1, Datatype.LONG)
            win.unlock(1)
        }
        w.barrier()
        win.free()
    }

    /** Post/start/complete/wait: origins' puts are at the target once wait returns, and test says when. */
    fun pscw(mpi: Mpi) {

        val w = mpi.world
        val win = Window.allocate(4L * w.size, 4, w)
        val group = w.getGroup()
        repeat(2) { round ->
            if (w.rank == 0) {
                win.post(group.excl(intArrayOf(0)), 0)
                if (round == 0) win.waitFor() else while (!win.test()) Thread.onSpinWait()
                for (r in 1 until w.size) win.base!!.getInt(4 * r) shouldBe 100 * round + r
            } else {
                win.start(group.incl(intArrayOf(0)), 0)
                win.put(intsN(100 * round + w.rank), 1, Datatype.INT, 0, w.rank.toLong(), 1, Datatype.INT)
                win.complete()
            }
        }
        win.free()
    }

    /** A dynamic window reaches attached memory by its address, and detached memory no more. */
    fun dynamic(mpi: Mpi) {

        val w = mpi.world
        val win = Window.createDynamic(w)
        val mem = direct(64)
        val addr = direct(8)
        if (w.rank == 0) {
            win.attach(mem, 64)
            addr.putLong(0, Window.address(mem))
        }
        w.bcast(addr, 1, Datatype.LONG, 0)
        if (w.rank == 1) {
            win.lock(Window.LOCK_SHARED, 0, 0)
            win.put(longs(11, 22), 2, Datatype.LONG, 0, addr.getLong(0) + 8, 2, Datatype.LONG)
            win.unlock(0)
        }
        w.barrier()
        if (w.rank == 0) {
            mem.getLong(8) shouldBe 11L
            mem.getLong(16) shouldBe 22L
            win.detach(mem)
        }
        w.barrier()
        if (w.rank == 1) {
            win.lock(Window.LOCK_SHARED, 0, 0)
            val e =
                shouldThrow<MPIException> { win.put(longs(1), 1, Datatype.LONG, 0, addr.getLong(0), 1, Datatype.LONG) }
            e.errorClass shouldBe ErrorClass.ERR_RMA_RANGE
            e.message shouldContain "rank 0"
            win.unlock(0)
        }
        w.barrier()
        win.free()
    }

    /**
     * A shared window: a neighbour's direct stores are seen after sync and a barrier, and RMA reaches the same memory.
     */
    fun shared(mpi: Mpi) {

        val w = mpi.world
        val win = Window.allocateShared(16, 4, w)
        win.base!!.putInt(0, 7 * w.rank + 1)
        win.sync()
        w.barrier()
        win.sync()
        val next = (w.rank + 1) % w.size
        val part = win.sharedQuery(next)
        part.capacity() shouldBe 16
        part.getInt(0) shouldBe 7 * next + 1
        win.sharedDispUnit(next) shouldBe 4
        // Store into the neighbour's part directly; it sees it after sync + barrier.
        part.putInt(4, 1000 + w.rank)
        win.sync()
        w.barrier()
        win.sync()
        val prev = (w.rank + w.size - 1) % w.size
        win.base!!.getInt(4) shouldBe 1000 + prev
        win.fence(0)
        win.put(intsN(-w.rank), 1, Datatype.INT, next, 2, 1, Datatype.INT)
        win.fence(0)
        win.base!!.getInt(8) shouldBe -prev
        win.free()
    }

    /**
     * Bad calls raise MPI's error classes naming the window, the target and the value, and leave target memory alone.
     */
    fun badCalls(mpi: Mpi) {

        val w = mpi.world
        shouldThrow<MPIException> { Window.allocate(16, 0, w) }.errorClass shouldBe ErrorClass.ERR_DISP
        shouldThrow<MPIException> { Window.create(ByteBuffer.allocate(16), 16, 1, w) }.errorClass shouldBe
            ErrorClass.ERR_BASE
        val win = Window.allocate(32, 4, w)
        win.base!!.putInt(28, 99)
        w.barrier()
        val other = if (w.rank == 0) 1 else 0
        val one = intsN(5)
        // An operation outside any epoch.
        shouldThrow<MPIException> { win.put(one, 1, Datatype.INT, other, 0, 1, Datatype.INT) }
            .let {
                it.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
                it.message shouldContain "rank $other"
                it.message shouldContain win.getName()
            }
        shouldThrow<MPIException> { win.unlock(other) }.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
        shouldThrow<MPIException> { win.complete() }.errorClass shouldBe ErrorClass.ERR_RMA_SYNC
        shouldThrow<MPIException> { win.fence(12345) }.errorClass shouldBe ErrorClass.ERR_ASSERT
        shouldThrow<MPIException> { win.lock(99, other, 0) }.errorClass shouldBe ErrorClass.ERR_LOCKTYPE
        win.lock(Window.LOCK_SHARED, other, 0)
        // Past the end of the target's window: element 8 of 8, and a run that starts inside and ends outside.
        shouldThrow<MPIException> { win.put(one, 1, Datatype.INT, other, 8, 1, Datatype.INT) }
            .let {
                it.errorClass shouldBe ErrorClass.ERR_RMA_RANGE
                it.message shouldContain "[32, 36)"
                it.message shouldContain "rank $other"
            }
        shouldThrow<MPIException> { win.put(intsN(1, 2), 2, Datatype.INT, other, 7, 2, Datatype.INT) }
            .errorClass shouldBe ErrorClass.ERR_RMA_RANGE
        shouldThrow<MPIException> {
                win.accumulate(direct(8), 1, Datatype.DOUBLE, other, 0, 1, Datatype.DOUBLE, Op.BAND)
            }
            .errorClass shouldBe ErrorClass.ERR_OP
        shouldThrow<MPIException> {
                win.accumulate(one, 1, Datatype.INT, other, 0, 1, Datatype.INT, Op.create({ _, _, _, _ -> }, true))
            }
            .errorClass shouldBe ErrorClass.ERR_OP
        win.unlock(other)
        w.barrier()
        win.base!!.getInt(28) shouldBe 99
        win.free()
        shouldThrow<MPIException> { win.fence(0) }
            .let {
                it.errorClass shouldBe ErrorClass.ERR_WIN
                it.message shouldContain "freed"
            }
    }

    /** A shared window over ranks on several hosts is refused on every rank with MPI_ERR_RMA_SHARED, nothing hangs. */
    fun sharedRefusedAcrossHosts(mpi: Mpi) {
        val e = shouldThrow<MPIException> { Window.allocateShared(16, 4, mpi.world) }
        e.errorClass shouldBe ErrorClass.ERR_RMA_SHARED
        e.message shouldContain "another host"
        mpi.world.barrier()
    }
}

/** How a test case opens and closes the epoch in which rank 1 reaches rank 0. */
private enum class SyncMode {
    FENCE,
    PSCW,
    LOCK,
    LOCK_ALL;

    fun open(win: Window, other: Int) {
        val me = win.getGroup().rank
        when (this) {
            FENCE -> win.fence(0)
            PSCW ->
                if (me == 0) win.post(win.getGroup().incl(intArrayOf(1)), 0)
                else if (me == 1) win.start(win.getGroup().incl(intArrayOf(0)), 0)
            LOCK -> if (me == 1) win.lock(Window.LOCK_EXCLUSIVE, other, 0)
            LOCK_ALL -> if (me == 1) win.lockAll(0)
        }
    }

    fun close(win: Window, other: Int) {
        val me = win.getGroup().rank
        when (this) {
            FENCE -> win.fence(Window.MODE_NOSUCCEED)
            PSCW -> if (me == 0) win.waitFor() else if (me == 1) win.complete()
            LOCK -> if (me == 1) win.unlock(other)
            LOCK_ALL -> if (me == 1) win.unlockAll()
        }
    }
}

private val ALL_OPS =
    listOf(
        Op.MAX,
        Op.MIN,
        Op.SUM,
        Op.PROD,
        Op.LAND,
        Op.BAND,
        Op.LOR,
        Op.BOR,
        Op.LXOR,
        Op.BXOR,
        Op.MAXLOC,
        Op.MINLOC,
        Op.REPLACE,
        Op.NO_OP,
    )

private val ALL_TYPES =
    listOf(
        Datatype.BYTE,
        Datatype.CHAR,
        Datatype.SHORT,
        Datatype.BOOLEAN,
        Datatype.INT,
        Datatype.LONG,
        Datatype.FLOAT,
        Datatype.DOUBLE,
        Datatype.UINT8_T,
        Datatype.UINT16_T,
        Datatype.UINT32_T,
        Datatype.UINT64_T,
        Datatype.INT2,
        Datatype.SHORT_INT,
        Datatype.LONG_INT,
        Datatype.FLOAT_INT,
        Datatype.DOUBLE_INT,
    )

/** Every (op, type) pair MPI allows in an accumulate. */
private fun opTypeCases(): List<Pair<Op, Datatype>> =
    ALL_OPS.flatMap { op ->
        ALL_TYPES.filter { t -> runCatching { op.checkApplies(t, "test") }.isSuccess }.map { op to it }
    }

/** [count] elements of [type] with small values that differ by element and [seed]. */
private fun elements(type: Datatype, count: Int, seed: Int): ByteBuffer {
    val b = direct((count * type.size).toInt())
    val basic = type.basic!!
    for (i in 0 until count) {
        val v = (i * 3 + seed) % 11 + 1
        val at = (i * type.size).toInt()
        fun value(k: BasicType, at: Int) {
            when (k) {
                BasicType.INT8,
                BasicType.UINT8 -> b.put(at, v.toByte())
                BasicType.BOOL -> b.put(at, (v % 2).toByte())
                BasicType.INT16,
                BasicType.UINT16,
                BasicType.CHAR16 -> b.putShort(at, v.toShort())
                BasicType.INT32,
                BasicType.UINT32 -> b.putInt(at, v)
                BasicType.INT64,
                BasicType.UINT64 -> b.putLong(at, v.toLong())
                BasicType.FLOAT32 -> b.putFloat(at, v.toFloat())
                BasicType.FLOAT64 -> b.putDouble(at, v.toDouble())
                else -> error("no values for $k")
            }
        }
        val pair = basic.pairValue
        if (pair != null) {
            value(pair, at)
            b.putInt(at + pair.size, i + seed)
        } else value(basic, at)
    }
    return b
}
