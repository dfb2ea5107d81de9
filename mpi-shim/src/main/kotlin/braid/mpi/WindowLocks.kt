package braid.mpi

import braid.core.AtomicDatatype
import braid.core.AtomicDatatype.INT64
import braid.core.AtomicOp
import braid.core.AtomicOps
import org.agrona.BufferUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * The lock words of a [Window], in each target's control region ([WindowControl]), taken by 64-bit atomics: the CPU's
 * on the host segment where the target is on this host, the rail's elsewhere (both apply [AtomicOps]' compare-and-swap,
 * so they mix): the passive-target lock ([acquire], [release]: exclusive by compare-and-swap from 0 to the holder's
 * rank
 * + 1 in the high 32 bits, shared by adding 1 to the low 32, the holder's bit in the shared-holder set first) and the
 *   accumulate lock ([underAccumulateLock]: 0 to the holder's rank + 1) that serialises the read-modify-write of
 *   elements the rail has no atomic for.
 *
 * A wait on a word drives this process's progress between attempts, and ends with `MPIX_ERR_PROC_FAILED` when the
 * target is found dead, or when the holder the word names is: the waiter asks the rail about it every [PROBE_NANOS] (an
 * 8-byte RMA read of the holder's control region, which the rail fails once the holder's process is gone, and which
 * makes the rail report it dead to every later look). The dead holder's lock is not taken over: the memory it guarded
 * may be half written, so every wait on it fails the same way, naming the holder, the target and the window. Shared
 * holders are counted in the word and named in the target's shared-holder set ([WindowControl.SHARED_HOLDERS]): a
 * waiter for the exclusive lock reads the set every [PROBE_NANOS] and asks about each holder in turn. A holder's bit is
 * set before its count is added and cleared after it is taken back, so a counted holder is always named; a process that
 * dies between the two leaves a bit without a count, which misleads a waiter only while live holders keep the count up.
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

    /** The shared-holder set as last read (its ranks), the next one to ask about, and when to read the set again. */
    private val holderWords = WindowControl.holderWords(win.comm.size)
    private val holderSet = UnsafeBuffer(BufferUtil.allocateDirectAligned(8 * holderWords, 8))
    private var sharedHolders = IntArray(0)
    private var sharedNext = 0
    private var sharedScanNext = 0L

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
                if (old >= EXCLUSIVE_UNIT) backOff(call, target, exclusiveHolder(old), "the exclusive lock")
                else backOff(call, target, sharedHolder(call, target), "a shared lock")
            }
        } else {
            while (true) {
                markShared(call, target, true)
                val old = addWord(call, target, WindowControl.LOCK, 1)
                if (old < EXCLUSIVE_UNIT) return
                addWord(call, target, WindowControl.LOCK, -1)
                markShared(call, target, false)
                backOff(call, target, exclusiveHolder(old), "the exclusive lock")
            }
        }
    }

    fun release(call: String, target: Int, exclusive: Boolean) {
        addWord(call, target, WindowControl.LOCK, if (exclusive) -exclusiveMark(win.comm.rank) else -1)
        if (!exclusive) markShared(call, target, false)
    }

    /** Sets ([on]) or clears this rank's bit in [target]'s shared-holder set. */
    private fun markShared(call: String, target: Int, on: Boolean) {
        val me = win.comm.rank
        val at = WindowControl.SHARED_HOLDERS + 8 * (me / 64)
        val bit = 1L shl (me % 64)
        wordOperand.putLong(0, if (on) bit else bit.inv())
        word(call, target, at, WindowRequest.FETCH, if (on) AtomicOp.BOR else AtomicOp.BAND)
    }

    /**
     * The holder of a shared lock on [target] to ask about now (-1: none known): the set is read every [PROBE_NANOS],
     * and each read moves on to the next holder in it, so every holder is asked about in turn.
     */
    private fun sharedHolder(call: String, target: Int): Int {
        val now = System.nanoTime()
        if (now - sharedScanNext >= 0) {
            sharedScanNext = now + PROBE_NANOS
            readHolderSet(call, target)
            val found = ArrayList<Int>()
            for (w in 0 until holderWords) {
                var bits = holderSet.getLong(8 * w)
                while (bits != 0L) {
                    val r = w * 64 + java.lang.Long.numberOfTrailingZeros(bits)
                    if (r != win.comm.rank) found += r
                    bits = bits and (bits - 1)
                }
            }
            sharedHolders = found.toIntArray()
            sharedNext++
        }
        if (sharedHolders.isEmpty()) return -1
        return sharedHolders[sharedNext % sharedHolders.size]
    }

    /** Reads [target]'s shared-holder set into [holderSet]: from the mapping on this host, else by the rail. */
    private fun readHolderSet(call: String, target: Int) {
        val c = targets.directControl(target)
        if (c >= 0) {
            for (w in 0 until holderWords) holderSet.putLong(
                8 * w,
                targets.shm.getLongVolatile((c + WindowControl.SHARED_HOLDERS + 8 * w).toInt()),
            )
            return
        }
        val r =
            WindowRequest(
                win,
                "$call (who holds shared locks?)",
                target,
                WindowRequest.GET,
                holderSet,
                0,
                null,
                null,
                null,
                null,
                intArrayOf(0),
                intArrayOf(8 * holderWords),
                longArrayOf(WindowControl.SHARED_HOLDERS.toLong()),
                longArrayOf(targets.controlKeys[target]),
                null,
            )
        r.borrows = false
        targets.await(targets.submit(r))
    }

    /**
     * Runs [block] holding [target]'s accumulate lock word (a compare-and-swap spin lock in its control region). On a
     * target this process maps, the word is taken by the CPU's compare-and-swap and given back by a release store (the
     * holder is its only writer), the same word the rail's compare-and-swap takes for origins elsewhere.
     */
    inline fun underAccumulateLock(target: Int, block: () -> Unit) {
        val me = win.comm.rank + 1L
        val control = targets.directControl(target)
        if (control >= 0) {
            val shm = targets.shm
            val word = (control + WindowControl.ACC_LOCK).toInt()
            if (!shm.compareAndSetLong(word, 0, me)) {
                beginWait()
                while (!shm.compareAndSetLong(word, 0, me)) backOff(
                    "MPI_Accumulate",
                    target,
                    (shm.getLongVolatile(word) - 1).toInt(),
                    "the accumulate lock",
                )
            }
            try {
                block()
            } finally {
                shm.putLongOrdered(word, 0)
            }
            return
        }
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
        sharedScanNext = probeNext
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
        val c = targets.directControl(target)
        if (c >= 0) {
            val where = (c + at).toInt()
            AtomicOps.execute(targets.shm, where, wordOperand, 0, wordCompare, 0, wordResult, 0, INT64, aop, 1)
            return wordResult.getLong(0)
        }
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
