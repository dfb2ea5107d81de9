package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import org.agrona.BufferUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * The lock words of a [Window], in each target's control region ([WindowControl]), taken by the rail's 64-bit atomics:
 * the passive-target lock ([acquire], [release]: exclusive by compare-and-swap from 0, shared by adding 1) and the
 * accumulate lock ([underAccumulateLock]) that serialises the read-modify-write of elements the rail has no atomic for.
 * A wait on a word drives this process's progress between attempts and ends with `MPIX_ERR_PROC_FAILED` when the target
 * is found dead.
 */
internal class WindowLocks(private val win: Window, private val targets: WindowTargets) {
    /** Small direct buffers for the lock words' atomics (one operation at a time: window calls are serial). */
    private val wordOperand = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordCompare = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordResult = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))

    /** Takes [target]'s passive-target lock word: exclusive by compare-and-swap from 0, shared by adding 1. */
    fun acquire(call: String, target: Int, exclusive: Boolean) {
        if (exclusive) {
            while (casWord(call, target, WindowControl.LOCK, 0, EXCLUSIVE) != 0L) backOff(call, target)
        } else {
            while (true) {
                val old = addWord(call, target, WindowControl.LOCK, 1)
                if (old < EXCLUSIVE) return
                addWord(call, target, WindowControl.LOCK, -1)
                backOff(call, target)
            }
        }
    }

    fun release(call: String, target: Int, exclusive: Boolean) {
        addWord(call, target, WindowControl.LOCK, if (exclusive) -EXCLUSIVE else -1)
    }

    /** Runs [block] holding [target]'s accumulate lock word (a compare-and-swap spin lock in its control region). */
    inline fun underAccumulateLock(target: Int, block: () -> Unit) {
        val me = win.comm.rank + 1L
        while (casWord("MPI_Accumulate (lock)", target, WindowControl.ACC_LOCK, 0, me) != 0L) backOff(
            "MPI_Accumulate",
            target,
        )
        try {
            block()
        } finally {
            swapWord("MPI_Accumulate (unlock)", target, WindowControl.ACC_LOCK, 0)
        }
    }

    /** Drives progress a little between lock attempts; a target reported dead ends the wait. */
    fun backOff(call: String, target: Int) {
        win.mpi.deadPeer(win.addrOf(target))?.let {
            throw MPIException.of(ErrorClass.ERR_PROC_FAILED, call, "${win.name()}: rank $target has failed: $it")
        }
        win.mpi.progress()
        Thread.onSpinWait()
    }

    fun casWord(call: String, target: Int, at: Int, expected: Long, value: Long): Long {
        wordOperand.putLong(0, value)
        wordCompare.putLong(0, expected)
        return word(call, target, at, WindowRequest.CAS, AtomicOp.CSWAP)
    }

    fun addWord(call: String, target: Int, at: Int, delta: Long): Long {
        wordOperand.putLong(0, delta)
        return word(call, target, at, WindowRequest.FETCH, AtomicOp.SUM)
    }

    fun swapWord(call: String, target: Int, at: Int, value: Long): Long {
        wordOperand.putLong(0, value)
        return word(call, target, at, WindowRequest.FETCH, AtomicOp.ATOMIC_WRITE)
    }

    private fun word(call: String, target: Int, at: Int, kind: Int, aop: AtomicOp): Long {
        val r =
            WindowRequest(
                win,
                call,
                target,
                kind,
                wordOperand,
                0,
                wordResult,
                wordCompare,
                AtomicDatatype.INT64,
                aop,
                intArrayOf(0),
                intArrayOf(8),
                longArrayOf(at.toLong()),
                longArrayOf(targets.controlKeys[target]),
                null,
            )
        targets.await(targets.submit(r))
        return wordResult.getLong(0)
    }

    private companion object {
        const val EXCLUSIVE = 1L shl 32
    }
}
