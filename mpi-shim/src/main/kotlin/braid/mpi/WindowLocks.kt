package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import org.agrona.BufferUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * The lock words of a [Window], in each target's control region ([WindowControl]), taken by the rail's 64-bit atomics:
 * the passive-target lock ([acquire], [release]: exclusive by compare-and-swap from 0 to the holder's rank + 1 in the
 * high 32 bits, shared by adding 1 to the low 32) and the accumulate lock ([underAccumulateLock]: 0 to the holder's
 * rank + 1) that serialises the read-modify-write of elements the rail has no atomic for.
 *
 * A wait on a word drives this process's progress between attempts, and ends with `MPIX_ERR_PROC_FAILED` when the
 * target is found dead, or when the holder the word names is: the waiter asks the rail about it every [PROBE_NANOS] (an
 * 8-byte RMA read of the holder's control region, which the rail fails once the holder's process is gone, and which
 * makes the rail report it dead to every later look). The dead holder's lock is not taken over: the memory it guarded
 * may be half written, so every wait on it fails the same way, naming the holder, the target and the window. Shared
 * holders are counted, not named: a dead shared holder is not detected.
 */
internal class WindowLocks(private val win: Window, private val targets: WindowTargets) {
    /** Small direct buffers for the lock words' atomics (one operation at a time: window calls are serial). */
    private val wordOperand = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordCompare = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private val wordResult = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))

    /** The probe of a holder in flight (one at a time), the holder it asks about, and when the next one is due. */
    private val probeBuf = UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8))
    private var probe: WindowRequest? = null
    private var probeNext = 0L
    /** Why each holder a probe found dead is (null: not found so): a later wait on it fails at once. */
    private val deadHolders = arrayOfNulls<String>(win.comm.size)

    /**
     * Takes [target]'s passive-target lock word: exclusive by compare-and-swap from 0 to this rank's mark, shared by
     * adding 1 (and taking it back while an exclusive holder has it).
     */
    fun acquire(call: String, target: Int, exclusive: Boolean) {
        beginWait()
        if (exclusive) {
            val mine = exclusiveMark(win.comm.rank)
            while (true) {
                val old = casWord(call, target, WindowControl.LOCK, 0, mine)
                if (old == 0L) return
                backOff(call, target, if (old >= EXCLUSIVE_UNIT) exclusiveHolder(old) else -1, "the exclusive lock")
            }
        } else {
            while (true) {
                val old = addWord(call, target, WindowControl.LOCK, 1)
                if (old < EXCLUSIVE_UNIT) return
                addWord(call, target, WindowControl.LOCK, -1)
                backOff(call, target, exclusiveHolder(old), "the exclusive lock")
            }
        }
    }

    fun release(call: String, target: Int, exclusive: Boolean) {
        addWord(call, target, WindowControl.LOCK, if (exclusive) -exclusiveMark(win.comm.rank) else -1)
    }

    /** Runs [block] holding [target]'s accumulate lock word (a compare-and-swap spin lock in its control region). */
    inline fun underAccumulateLock(target: Int, block: () -> Unit) {
        val me = win.comm.rank + 1L
        beginWait()
        while (true) {
            val old = casWord("MPI_Accumulate (lock)", target, WindowControl.ACC_LOCK, 0, me)
            if (old == 0L) break
            backOff("MPI_Accumulate", target, (old - 1).toInt(), "the accumulate lock")
        }
        try {
            block()
        } finally {
            swapWord("MPI_Accumulate (unlock)", target, WindowControl.ACC_LOCK, 0)
        }
    }

    fun beginWait() {
        probeNext = System.nanoTime() + PROBE_NANOS
    }

    /**
     * Drives progress a little between lock attempts. A target reported dead ends the wait, as does a dead [holder]
     * (the rank the word names, -1 for none) of [what]: known dead already, or found dead by a probe.
     */
    fun backOff(call: String, target: Int, holder: Int, what: String) {
        val mpi = win.mpi
        mpi.deadPeer(win.addrOf(target))?.let {
            throw MPIException.of(ErrorClass.ERR_PROC_FAILED, call, "${win.name()}: rank $target has failed: $it")
        }
        if (holder in 0 until win.comm.size && holder != target) {
            val dead = deadHolders[holder] ?: mpi.deadPeer(win.addrOf(holder)) ?: probed(holder)
            if (dead != null)
                throw MPIException.of(
                    ErrorClass.ERR_PROC_FAILED,
                    call,
                    "${win.name()}: rank $holder, which holds $what on rank $target, has failed ($dead); " +
                        "the lock stays held, as the memory it guards may be half written",
                )
        }
        mpi.progress()
        Thread.onSpinWait()
    }

    /**
     * Whether a probe of [holder] found it dead (why, else null): reads the last probe's outcome once complete, and
     * starts the next every [PROBE_NANOS] while the wait goes on.
     */
    private fun probed(holder: Int): String? {
        val p = probe
        if (p != null) {
            if (!p.isComplete) return null
            probe = null
            if (p.statusError == ErrorClass.ERR_PROC_FAILED) deadHolders[p.target] = p.errorMessage
            if (p.target == holder && deadHolders[holder] != null) return deadHolders[holder]
        }
        val now = System.nanoTime()
        if (now - probeNext < 0) return null
        probeNext = now + PROBE_NANOS
        probe =
            targets.submit(
                WindowRequest(
                        win,
                        "MPI_Win_lock (is rank $holder alive?)",
                        holder,
                        WindowRequest.GET,
                        probeBuf,
                        0,
                        null,
                        null,
                        null,
                        null,
                        intArrayOf(0),
                        intArrayOf(8),
                        longArrayOf(WindowControl.VERSION.toLong()),
                        longArrayOf(targets.controlKeys[holder]),
                        null,
                    )
                    .also { it.borrows = false }
            )
        return null
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
        r.borrows = false
        targets.await(targets.submit(r))
        return wordResult.getLong(0)
    }

    private companion object {
        /** One exclusive holder in the lock word's high 32 bits. */
        const val EXCLUSIVE_UNIT = 1L shl 32
        /** How often a waiter asks the rail whether the holder of the lock it waits for lives. */
        const val PROBE_NANOS = 10_000_000L

        fun exclusiveMark(rank: Int): Long = (rank + 1L) shl 32

        fun exclusiveHolder(word: Long): Int = ((word ushr 32) - 1).toInt()
    }
}
