package braid.mpi.it

import braid.bootstrap.FileBootstrap
import braid.mpi.Datatype
import braid.mpi.ErrorClass
import braid.mpi.ErrorHandler
import braid.mpi.MPIException
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Window
import braid.mpi.testing.WindowChecks
import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder
import kotlin.system.exitProcess

/**
 * One rank of a one-sided job. `WindowRankMain SCENARIO` inits from its launcher (`braid run`); `WindowRankMain file
 * DIR RANK SIZE SCENARIO` from a [FileBootstrap] directory. Scenarios: `all` ([WindowChecks], every one), `cross-host`
 * (all but the shared window, which is refused), `contention` (the concurrent-update ones), `peer-death`,
 * `holder-death`, `shared-holder-death`. Prints `OK rank R of N: one-sided SCENARIO` and exits 0 when it passes.
 */
object WindowRankMain {
    @JvmStatic
    fun main(args: Array<String>) {
        try {
            val scenario = args.last()
            val mpi =
                if (args[0] == "file")
                    Mpi.init(
                        FileBootstrap(File(args[1]), args[2].toInt(), args[3].toInt()),
                        options =
                            MpiOptions()
                                .provider("shm")
                                // The accumulate-lock death needs the locked scheme; the others run either way.
                                .settings(
                                    braid.core.Settings.NONE.with(
                                        braid.mpi.MpiParams.WIN_ACC_LOCK,
                                        scenario == "accumulate-holder-death",
                                    )
                                ),
                    )
                else Mpi.init(args)
            mpi.use {
                mpi.world.setErrhandler(ErrorHandler.ERRORS_RETURN)
                when (scenario) {
                    "all" -> {
                        WindowChecks.putGetFence(mpi)
                        WindowChecks.contention(mpi)
                        WindowChecks.largeAccumulate(mpi)
                        WindowChecks.flushLocal(mpi)
                        WindowChecks.epochMixing(mpi)
                        WindowChecks.everyOpEverySyncMode(mpi)
                        WindowChecks.casLock(mpi)
                        WindowChecks.passiveBusyTarget(mpi)
                        WindowChecks.pscw(mpi)
                        WindowChecks.dynamic(mpi)
                        WindowChecks.shared(mpi)
                        WindowChecks.badCalls(mpi)
                    }
                    "cross-host" -> {
                        WindowChecks.putGetFence(mpi)
                        WindowChecks.contention(mpi)
                        WindowChecks.everyOpEverySyncMode(mpi)
                        WindowChecks.casLock(mpi)
                        WindowChecks.passiveBusyTarget(mpi)
                        WindowChecks.pscw(mpi)
                        WindowChecks.dynamic(mpi)
                        WindowChecks.badCalls(mpi)
                        WindowChecks.sharedRefusedAcrossHosts(mpi)
                    }
                    "contention" -> {
                        WindowChecks.contention(mpi)
                        WindowChecks.casLock(mpi)
                    }
                    "peer-death" -> peerDeath(mpi)
                    "holder-death" -> holderDeath(mpi)
                    "shared-holder-death" -> sharedHolderDeath(mpi)
                    "accumulate-holder-death" -> accumulateHolderDeath(mpi)
                    else -> error("unknown scenario $scenario")
                }
                println("OK rank ${mpi.world.rank} of ${mpi.world.size}: one-sided $scenario")
            }
            exitProcess(0)
        } catch (t: Throwable) {
            println("FAILED")
            t.printStackTrace(System.out)
            exitProcess(1)
        }
    }

    /**
     * Rank 2 dies while the others are in epochs with it (rank 0 holds its exclusive lock, rank 1 a lockAll): rank 0's
     * unlock after a put to it and rank 1's flush after a put to it fail with MPIX_ERR_PROC_FAILED naming rank 2, as
     * does a later lock of it; 0 and 1 then go on with epochs between themselves.
     */
    private fun peerDeath(mpi: Mpi) {
        val w = mpi.world
        val win = Window.allocate(64, 8, w)
        val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
        when (w.rank) {
            0 -> win.lock(Window.LOCK_EXCLUSIVE, 2, 0)
            1 -> win.lockAll(Window.MODE_NOCHECK)
        }
        w.barrier() // the epochs are open
        if (w.rank == 2) Runtime.getRuntime().halt(9)
        // Wait until the death is known (a receive from rank 2 fails), so the operations below come after it.
        try {
            w.recv(ByteBuffer.allocate(4), 1, Datatype.INT, 2, 5)
            throw AssertionError("a receive from the dead rank 2 succeeded")
        } catch (e: MPIException) {
            if (e.errorClass != ErrorClass.ERR_PROC_FAILED)
                throw AssertionError("the receive from rank 2: ${e.message}", e)
        }
        when (w.rank) {
            0 -> {
                expectFailedNaming2 {
                    win.put(one, 1, Datatype.LONG, 2, 0, 1, Datatype.LONG)
                    win.unlock(2)
                }
                expectFailedNaming2 { win.lock(Window.LOCK_SHARED, 2, 0) }
            }
            1 -> {
                expectFailedNaming2 {
                    win.put(one, 1, Datatype.LONG, 2, 0, 1, Datatype.LONG)
                    win.flush(2)
                }
                win.unlockAll()
            }
        }
        // The survivors still reach each other: each adds 1 at the other, sees the other's 1 arrive, then they agree
        // to end (point to point: a barrier would include the dead rank).
        val other = 1 - w.rank
        win.lock(Window.LOCK_EXCLUSIVE, other, 0)
        win.accumulate(one, 1, Datatype.LONG, other, 1, 1, Datatype.LONG, braid.mpi.Op.SUM)
        win.unlock(other)
        val deadline = System.nanoTime() + 30_000_000_000L
        while (win.base!!.getLong(8) != 1L) {
            if (System.nanoTime() > deadline) throw AssertionError("the survivor's accumulate never arrived")
            Thread.onSpinWait()
        }
        val b = ByteBuffer.allocate(4)
        w.sendRecv(b, 1, Datatype.INT, other, 3, ByteBuffer.allocate(4), 1, Datatype.INT, other, 3)
    }

    /**
     * Rank 2 takes rank 0's exclusive lock and dies holding it: ranks 0 and 1, waiting for that lock (exclusive, then
     * shared), get MPIX_ERR_PROC_FAILED naming rank 2 and the window instead of waiting for ever, every time they ask;
     * rank 1's own lock still serves them both.
     */
    private fun holderDeath(mpi: Mpi) {
        val w = mpi.world
        val win = Window.allocate(64, 8, w)
        val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
        if (w.rank == 2) win.lock(Window.LOCK_EXCLUSIVE, 0, 0)
        w.barrier() // rank 2 holds rank 0's lock
        if (w.rank == 2) Runtime.getRuntime().halt(9)
        expectFailedNaming2(win.getName()) { win.lock(Window.LOCK_EXCLUSIVE, 0, 0) }
        expectFailedNaming2(win.getName()) { win.lock(Window.LOCK_SHARED, 0, 0) }
        // The survivors go on with the lock of rank 1, which nobody dead holds: each adds 1 there under it.
        win.lock(Window.LOCK_EXCLUSIVE, 1, 0)
        win.accumulate(one, 1, Datatype.LONG, 1, 0, 1, Datatype.LONG, braid.mpi.Op.SUM)
        win.unlock(1)
        if (w.rank == 1) {
            val deadline = System.nanoTime() + 30_000_000_000L
            while (win.base!!.getLong(0) != 2L) {
                if (System.nanoTime() > deadline)
                    throw AssertionError("rank 1's counter is ${win.base!!.getLong(0)}, not 2")
                Thread.onSpinWait()
            }
        }
        val other = 1 - w.rank
        w.sendRecv(ByteBuffer.allocate(4), 1, Datatype.INT, other, 3, ByteBuffer.allocate(4), 1, Datatype.INT, other, 3)
    }

    /**
     * Rank 2 dies holding rank 0's accumulate lock word (as if inside an accumulate): ranks 0 and 1, accumulating on
     * rank 0 on a window whose accumulates all take that word, get MPIX_ERR_PROC_FAILED naming rank 2 and the window
     * instead of spinning for ever; rank 1's word serves them both.
     */
    private fun accumulateHolderDeath(mpi: Mpi) {
        val w = mpi.world
        val win = Window.allocate(64, 8, w)
        check(win.lockedAccumulates) { "a one-host allocate window should lock per accumulate" }
        val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
        if (w.rank == 2) win.holdAccumulateLock(0)
        w.barrier()
        if (w.rank == 2) Runtime.getRuntime().halt(9)
        win.lock(Window.LOCK_SHARED, 0, 0)
        expectFailedNaming2(win.getName()) {
            win.accumulate(one, 1, Datatype.LONG, 0, 0, 1, Datatype.LONG, braid.mpi.Op.SUM)
            win.flush(0)
        }
        expectFailedNaming2("accumulate lock") {
            win.fetchAndOp(
                one,
                ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()),
                Datatype.LONG,
                0,
                0,
                braid.mpi.Op.SUM,
            )
        }
        win.unlock(0)
        win.lock(Window.LOCK_SHARED, 1, 0)
        win.accumulate(one, 1, Datatype.LONG, 1, 0, 1, Datatype.LONG, braid.mpi.Op.SUM)
        win.unlock(1)
        if (w.rank == 1) {
            val deadline = System.nanoTime() + 30_000_000_000L
            while (win.base!!.getLong(0) != 2L) {
                if (System.nanoTime() > deadline)
                    throw AssertionError("rank 1's counter is ${win.base!!.getLong(0)}, not 2")
                Thread.onSpinWait()
            }
        }
        val other = 1 - w.rank
        w.sendRecv(ByteBuffer.allocate(4), 1, Datatype.INT, other, 3, ByteBuffer.allocate(4), 1, Datatype.INT, other, 3)
    }

    /**
     * Rank 2 takes a shared lock on rank 0 and dies holding it: ranks 0 and 1, waiting for rank 0's exclusive lock, get
     * MPIX_ERR_PROC_FAILED naming rank 2 and the window instead of waiting for ever, every time they ask; shared locks
     * on rank 0 are still granted (they do not conflict), and rank 1's lock serves them both.
     */
    private fun sharedHolderDeath(mpi: Mpi) {
        val w = mpi.world
        val win = Window.allocate(64, 8, w)
        val one = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 1)
        if (w.rank == 2) win.lock(Window.LOCK_SHARED, 0, 0)
        w.barrier() // rank 2 holds a shared lock on rank 0
        if (w.rank == 2) Runtime.getRuntime().halt(9)
        expectFailedNaming2(win.getName()) { win.lock(Window.LOCK_EXCLUSIVE, 0, 0) }
        expectFailedNaming2(win.getName()) { win.lock(Window.LOCK_EXCLUSIVE, 0, 0) }
        win.lock(Window.LOCK_SHARED, 0, 0)
        win.unlock(0)
        win.lock(Window.LOCK_EXCLUSIVE, 1, 0)
        win.accumulate(one, 1, Datatype.LONG, 1, 0, 1, Datatype.LONG, braid.mpi.Op.SUM)
        win.unlock(1)
        if (w.rank == 1) {
            val deadline = System.nanoTime() + 30_000_000_000L
            while (win.base!!.getLong(0) != 2L) {
                if (System.nanoTime() > deadline)
                    throw AssertionError("rank 1's counter is ${win.base!!.getLong(0)}, not 2")
                Thread.onSpinWait()
            }
        }
        val other = 1 - w.rank
        w.sendRecv(ByteBuffer.allocate(4), 1, Datatype.INT, other, 3, ByteBuffer.allocate(4), 1, Datatype.INT, other, 3)
    }

    private fun expectFailedNaming2(also: String = "", call: () -> Unit) {
        try {
            call()
            throw AssertionError("expected MPIX_ERR_PROC_FAILED naming rank 2; the call succeeded")
        } catch (e: MPIException) {
            if (
                e.errorClass != ErrorClass.ERR_PROC_FAILED ||
                    "rank 2" !in (e.message ?: "") ||
                    also !in (e.message ?: "")
            )
                throw AssertionError("expected MPIX_ERR_PROC_FAILED naming rank 2 and '$also', got ${e.message}", e)
            println("failed as expected: ${e.message}")
        }
    }
}
