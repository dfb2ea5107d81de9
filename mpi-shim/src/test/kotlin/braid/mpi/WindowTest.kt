package braid.mpi

import braid.core.Settings
import braid.mpi.testing.WindowChecks
import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class WindowTest :
    FunSpec({
        test("put and get under fence move exact data between every pair of four ranks, derived types on both sides") {
            runRanks(4) { WindowChecks.putGetFence(it) }
        }

        test("every rank's fetchAndOp and accumulate on one location add up exactly, on every type, over many rounds") {
            runRanks(4, seconds = 120) { WindowChecks.contention(it) }
        }

        test("accumulates of thousands of elements from every rank, contiguous, strided and locked, add up exactly") {
            runRanks(4, seconds = 120) { WindowChecks.largeAccumulate(it) }
        }

        test("flushLocal leaves origin buffers reusable at once, and a get's data in place") {
            runRanks(3) { WindowChecks.flushLocal(it) }
        }

        test("a lock under a used fence epoch, or a fence under a lock, is MPI_ERR_RMA_SYNC naming window and rank") {
            runRanks(2) { WindowChecks.epochMixing(it) }
        }

        test(
            "accumulate and getAccumulate apply every predefined op to every basic type it takes, in every sync mode, exactly"
        ) {
            runRanks(2, seconds = 120) { WindowChecks.everyOpEverySyncMode(it) }
        }

        test("compareAndSwap serves as a lock every rank takes: a counter read and written under it ends exact") {
            runRanks(4, seconds = 120) { WindowChecks.casLock(it) }
        }

        test("a passive-target epoch completes while the target computes in a pure Java loop, making no MPI call") {
            runRanks(2, seconds = 60) { WindowChecks.passiveBusyTarget(it) }
        }

        test("post/start/complete/wait: origins' puts are at the target once wait returns, and test says when") {
            runRanks(4) { WindowChecks.pscw(it) }
        }

        test("a dynamic window reaches attached memory by its address, and detached memory no more") {
            runRanks(2) { WindowChecks.dynamic(it) }
        }

        test(
            "a shared window: a neighbour's direct stores are seen after sync and a barrier, and RMA reaches the same memory"
        ) {
            runRanks(4) { WindowChecks.shared(it) }
        }

        test(
            "bad calls raise MPI's error classes naming the window, the target and the value, and leave target memory alone"
        ) {
            runRanks(2) { WindowChecks.badCalls(it) }
        }

        // Rank 0 reaches the others through the rail (its rail's atomics), the others reach each other and rank 0 on
        // the shared mapping (the CPU's): updates of one element from both schemes must still never be lost.
        val railForRank0 = { r: Int -> if (r == 0) Settings.NONE.with(MpiParams.WIN_DIRECT, false) else Settings.NONE }

        val locked = Settings.NONE.with(MpiParams.WIN_ACC_LOCK, true)

        test("BRAID_MPI_WIN_ACC_LOCK on every rank of a one-host window locks per accumulate; else per element") {
            val cases =
                listOf(
                    { _: Int -> locked } to true,
                    { _: Int -> Settings.NONE } to false,
                    // One rank through the rail: its operations arrive at the rail's per-element target side.
                    { r: Int -> if (r == 0) locked.with(MpiParams.WIN_DIRECT, false) else locked } to false,
                    // One rank not asking: the window agrees on per element.
                    { r: Int -> if (r == 0) Settings.NONE else locked } to false,
                )
            for ((settings, expected) in cases) {
                runRanks(3, settings = settings) { mpi ->
                    val w = mpi.world
                    val win = Window.allocate(64, 8, w)
                    win.lockedAccumulates shouldBe expected
                    win.free()
                    // A window over caller memory is not in the host mapping: never locked per accumulate.
                    val created =
                        Window.create(
                            java.nio.ByteBuffer.allocateDirect(64).order(java.nio.ByteOrder.nativeOrder()),
                            64,
                            8,
                            w,
                        )
                    created.lockedAccumulates shouldBe false
                    created.free()
                }
            }
        }

        test(
            "with the locked scheme: contention, large, strided and every-op accumulates and the CAS lock add up exactly"
        ) {
            runRanks(4, seconds = 120, settings = { locked }) {
                WindowChecks.contention(it)
                WindowChecks.largeAccumulate(it)
                WindowChecks.casLock(it)
            }
            runRanks(2, seconds = 120, settings = { locked }) { WindowChecks.everyOpEverySyncMode(it) }
        }

        test(
            "same-host direct atomics and the rail's atomics on one location, mixed, add up exactly on every type and op"
        ) {
            runRanks(4, seconds = 120, settings = railForRank0) {
                WindowChecks.contention(it)
                WindowChecks.largeAccumulate(it)
                WindowChecks.casLock(it)
            }
        }

        test("every op in every sync mode, one rank through the rail and one direct, exactly; bad calls the same") {
            runRanks(2, seconds = 120, settings = railForRank0) {
                WindowChecks.putGetFence(it)
                WindowChecks.everyOpEverySyncMode(it)
                WindowChecks.passiveBusyTarget(it)
                WindowChecks.badCalls(it)
            }
        }
    })
