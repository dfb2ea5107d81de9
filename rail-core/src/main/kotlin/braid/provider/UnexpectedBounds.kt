package braid.provider

import braid.core.SharedReceiveContext

/**
 * One endpoint's bounds on unexpected messages — [bytesLimit] bytes and the receive context's
 * [SharedReceiveContext.unexpectedLimit] messages — and the one place that says who may take what of them. Each rail of
 * the endpoint (one, or a link's several) has an [Account]:
 * - **held**: unexpected messages the rail holds now (its [MessageEngine] books them, eager payload bytes and every
 *   message, rendezvous heads included);
 * - **promised**: what the rail has let its senders send unexpected but not yet received (tcp's credit granted and
 *   unspent, and payloads being read; shm promises nothing: a message it cannot hold stays in its sender's ring).
 *
 * A rail's *claim* is held + promised. The rule, for bytes and for messages alike: a rail may claim at most
 * [Account.availableBytes] / [Account.availableMsgs] — the bound, less every other rail's claim, less what each other
 * rail is short of its **floor**. The floor is [floorPercent] % of the bounds, kept for each rail of an endpoint that
 * has more than one ([braid.core.CoreParams.UNEXPECTED_RAIL_FLOOR], at most 100 % / N for N rails, so N floors fit in
 * the bounds whatever N is): neither another rail's promises nor its held messages can take it, so a link's shm rail
 * always has room for same-host messages however many senders tcp has promised credit to, and tcp always has credit to
 * grant however many same-host messages wait. Above the floors the rails share what is free, first come. The claims
 * together never pass the bounds, so what is held never does either. One exception keeps a rail live: a message larger
 * than everything available may be held when nothing at all is held or promised (it would otherwise wait for ever).
 *
 * Not thread-safe: callers hold the domain lock.
 */
internal class UnexpectedBounds(
    /** The bound on bytes of unexpected eager payloads ([braid.core.CoreParams.UNEXPECTED_BYTES]). */
    val bytesLimit: Long,
    private val srx: () -> SharedReceiveContext,
    /** The part of the bounds, in percent, each rail of a multi-rail endpoint keeps for itself. */
    val floorPercent: Int,
) {
    private val accounts = ArrayList<Account>(2)

    /** Bytes of unexpected eager messages held now by all rails together, and the most ever held at once. */
    var heldBytes: Long = 0L
        private set

    var heldBytesMax: Long = 0L
        private set

    /** Every rail's account, in the order they were opened. */
    val rails: List<Account>
        get() = accounts

    /** A new account for the rail named [rail]: every rail that holds unexpected messages opens one. */
    fun account(rail: String): Account = Account(rail).also { accounts += it }

    /** The messages bound ([SharedReceiveContext.unexpectedLimit]). */
    val msgsLimit: Int
        get() = srx().unexpectedLimit

    /**
     * The percent each rail's floor is: [floorPercent], but at most 100 / the number of rails, so that the floors of N
     * rails together never pass the bounds (shm and two tcp rails at the largest setting, 50 %, keep 33 % each).
     */
    val railFloorPercent: Int
        get() = if (accounts.size < 2) 0 else minOf(floorPercent, 100 / accounts.size)

    /** Each rail's floor in bytes and messages: none for an endpoint with one rail. */
    val floorBytes: Long
        get() = railFloorPercent.let { p -> bytesLimit / 100 * p + bytesLimit % 100 * p / 100 }

    val floorMsgs: Int
        get() = (msgsLimit.toLong() * railFloorPercent / 100).toInt()

    /** One rail's part of the bounds: what it holds and what it has promised (see [UnexpectedBounds]). */
    inner class Account internal constructor(val rail: String) {
        var heldBytes: Long = 0L
            private set

        var heldBytesMax: Long = 0L
            private set

        var heldMsgs: Int = 0
            private set

        var promisedBytes: Long = 0L
            private set

        var promisedMsgs: Int = 0
            private set

        val claimBytes: Long
            get() = heldBytes + promisedBytes

        val claimMsgs: Int
            get() = heldMsgs + promisedMsgs

        /** The rail now holds [bytes] more payload bytes and [msgs] more messages (negative: fewer). */
        fun held(bytes: Long, msgs: Int) {
            heldBytes += bytes
            if (heldBytes > heldBytesMax) heldBytesMax = heldBytes
            heldMsgs += msgs
            val all = this@UnexpectedBounds
            all.heldBytes += bytes
            if (all.heldBytes > all.heldBytesMax) all.heldBytesMax = all.heldBytes
        }

        /**
         * The rail has promised its senders [bytes] and [msgs] that have not arrived yet (replaces what it said
         * before).
         */
        fun promise(bytes: Long, msgs: Int) {
            promisedBytes = bytes
            promisedMsgs = msgs
        }

        /** The most bytes this rail may claim now: the bound less the others' claims and floors. */
        fun availableBytes(): Long {
            val floor = floorBytes
            var n = bytesLimit
            for (i in 0 until accounts.size) {
                val o = accounts[i]
                if (o !== this) n -= maxOf(o.claimBytes, floor)
            }
            return n
        }

        /**
         * The most messages this rail may claim now: the bound less the others' claims and floors (messages the receive
         * context queues that no rail books count as another's).
         */
        fun availableMsgs(): Int {
            val floor = floorMsgs
            var tracked = 0L
            var n = msgsLimit.toLong()
            for (i in 0 until accounts.size) {
                val o = accounts[i]
                tracked += o.heldMsgs
                if (o !== this) n -= maxOf(o.claimMsgs, floor)
            }
            n -= maxOf(0L, srx().unexpectedCount - tracked)
            return n.coerceIn(Int.MIN_VALUE.toLong(), Int.MAX_VALUE.toLong()).toInt()
        }

        /**
         * Whether an unexpected message of [length] payload bytes (0 for a rendezvous head) must be pushed back rather
         * than held by a rail that promises nothing: no message or no [length] bytes of room left to it.
         */
        fun mustPushBack(length: Long): Boolean {
            if (claimMsgs + 1 > availableMsgs()) return true
            if (claimBytes + length <= availableBytes()) return false
            // Larger than all there is: held only when nothing at all is held or promised.
            for (i in 0 until accounts.size) if (accounts[i].claimBytes > 0) return true
            return false
        }

        override fun toString(): String =
            "$rail: held $heldBytes B / $heldMsgs msgs, promised $promisedBytes B / $promisedMsgs msgs, may claim ${availableBytes()} B / ${availableMsgs()} msgs"
    }

    override fun toString(): String =
        "unexpected bounds $bytesLimit B / $msgsLimit msgs (floor ${floorBytes} B / $floorMsgs msgs per rail): ${accounts.joinToString("; ")}"
}
