package braid.core

import org.agrona.concurrent.BackoffIdleStrategy
import org.agrona.concurrent.BusySpinIdleStrategy
import org.agrona.concurrent.IdleStrategy
import org.agrona.concurrent.YieldingIdleStrategy

/** How a waiting thread or coroutine spends the time between two attempts. */
public enum class IdleKind {
    /** Never gives the core up: lowest wake-up latency, one core at 100% while waiting. */
    SPIN,

    /**
     * Gives the core to other runnable threads (`Thread.yield`, or `yield()` in a coroutine); still 100% of a core on
     * an idle machine.
     */
    YIELD,

    /** Spins, then yields, then parks for growing periods up to [IdlePolicy.maxParkNanos]: almost no CPU while idle. */
    BACKOFF,
}

/**
 * The idle strategy of a domain ([DomainAttr.idle]): what blocking reads ([CompletionQueue.sread], [Counter.waitFor]),
 * the blocking and suspending forms of data operations, and a [ProgressEngine] do when a duty cycle finds no work.
 *
 * Under [BACKOFF], a waiter that has backed off to parking wakes at once when a thread of this process writes what it
 * waits for (a completion into its queue, a counter update, the completion of its operation): the writer unparks it,
 * and waiters arm themselves before their last check, as `fi_trywait` prescribes, so no wake-up is lost. Work that
 * arrives from another process cannot unpark anyone; it is found by the next duty cycle, so [maxParkNanos] bounds how
 * late such work is seen (1 ms by default) and costs about a thousand short wake-ups a second while idle. Under
 * automatic progress ([ProgressEngine]) only the engine polls; every other waiter parks until the engine's completions
 * unpark it.
 *
 * Coroutines cannot park a thread they share: they `yield()` where a thread would spin or yield and `delay` where it
 * would park, so their shortest park is one millisecond.
 */
public data class IdlePolicy
@JvmOverloads
constructor(
    val kind: IdleKind = IdleKind.BACKOFF,
    /**
     * The longest single park under [IdleKind.BACKOFF], in nanoseconds (≥ 1 µs). Smaller values let blocking threads
     * see another process's work sooner, at more wake-ups per idle second; but a coroutine (the `suspend` API) cannot
     * park for less than 1 ms, so it yields only this long before it waits in whole milliseconds: below the 1 ms
     * default, every wait longer than this costs a suspended caller a millisecond (200 µs made the `suspend` ping-pong
     * 60–450× slower). Keep the default unless you measured otherwise.
     */
    val maxParkNanos: Long = 1_000_000,
    /** Attempts that spin before yielding starts, under [IdleKind.BACKOFF]. */
    val maxSpins: Int = 100,
    /** Attempts that yield before parking starts, under [IdleKind.BACKOFF]. */
    val maxYields: Int = 100,
    /** The first park under [IdleKind.BACKOFF], in nanoseconds; each further park doubles it up to [maxParkNanos]. */
    val minParkNanos: Long = minOf(1_000L, maxParkNanos),
) {
    init {
        val problems = violations(maxParkNanos, maxSpins, maxYields, minParkNanos)
        if (problems.isNotEmpty()) {
            val fields =
                mapOf(
                    "maxParkNanos" to maxParkNanos,
                    "maxSpins" to maxSpins,
                    "maxYields" to maxYields,
                    "minParkNanos" to minParkNanos,
                )
            throw FabricException.invalid(
                "idle policy: " +
                    problems.entries.joinToString("; ") { (f, v) -> "$f ${fields[f]} ${v.problem} (${v.fix})" }
            )
        }
    }

    /** A fresh Agrona strategy for one waiting thread (strategies keep per-waiter state). */
    public fun newStrategy(): IdleStrategy =
        when (kind) {
            IdleKind.SPIN -> BusySpinIdleStrategy()
            IdleKind.YIELD -> YieldingIdleStrategy()
            IdleKind.BACKOFF -> BackoffIdleStrategy(maxSpins.toLong(), maxYields.toLong(), minParkNanos, maxParkNanos)
        }

    /** The coroutine form of the longest park, in whole milliseconds (at least 1). */
    @get:JvmSynthetic
    internal val maxParkMillis: Long
        get() = maxOf(1L, (maxParkNanos + 999_999) / 1_000_000)

    override fun toString(): String =
        when (kind) {
            IdleKind.BACKOFF -> "BACKOFF(spins=$maxSpins, yields=$maxYields, maxPark=${maxParkNanos / 1000} µs)"
            else -> kind.name
        }

    public companion object {
        /**
         * The rules an idle policy's fields obey: each broken one by field name, with what is wrong and the fix. Empty
         * when the fields make a valid policy. (The topology DSL reports these at its own paths.)
         */
        @JvmStatic
        public fun violations(
            maxParkNanos: Long,
            maxSpins: Int,
            maxYields: Int,
            minParkNanos: Long,
        ): Map<String, ParamViolation> {
            val out = LinkedHashMap<String, ParamViolation>()
            if (maxSpins < 0) out["maxSpins"] = ParamViolation("must be ≥ 0", "set maxSpins ≥ 0")
            if (maxYields < 0) out["maxYields"] = ParamViolation("must be ≥ 0", "set maxYields ≥ 0")
            if (maxParkNanos < 1_000) out["maxParkNanos"] = ParamViolation("is below 1 µs", "set maxParkNanos ≥ 1000")
            if (minParkNanos < 1 || minParkNanos > maxParkNanos) {
                out["minParkNanos"] =
                    ParamViolation("is outside 1..maxParkNanos ($maxParkNanos)", "set 1 ≤ minParkNanos ≤ maxParkNanos")
            }
            return out
        }

        /** Busy spin. */
        @JvmField public val SPIN: IdlePolicy = IdlePolicy(IdleKind.SPIN)

        /** Yield the core between attempts. */
        @JvmField public val YIELD: IdlePolicy = IdlePolicy(IdleKind.YIELD)

        /** Spin, yield, then park up to 1 ms: the default. */
        @JvmField public val BACKOFF: IdlePolicy = IdlePolicy()
    }
}
