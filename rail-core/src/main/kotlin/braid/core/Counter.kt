package braid.core

import org.agrona.concurrent.IdleStrategy
import java.util.concurrent.atomic.AtomicLong

/**
 * A completion counter (`fid_cntr`): counts successful and failed operations of the endpoints
 * bound to it. Reading it under manual progress drives the domain's providers.
 */
public class Counter internal constructor(public val domain: Domain) : AutoCloseable {
    private val success = AtomicLong()
    private val errors = AtomicLong()

    /** The success count, after driving progress (`fi_cntr_read`). */
    public fun read(): Long {
        domain.progress()
        return success.get()
    }

    /** The error count, after driving progress (`fi_cntr_readerr`). */
    public fun readErr(): Long {
        domain.progress()
        return errors.get()
    }

    /** The success count without driving progress. */
    public val value: Long get() = success.get()

    /** The error count without driving progress. */
    public val errorValue: Long get() = errors.get()

    public fun add(n: Long) { success.addAndGet(n) }
    public fun set(n: Long) { success.set(n) }
    public fun addErr(n: Long) { errors.addAndGet(n) }
    public fun setErr(n: Long) { errors.set(n) }

    /**
     * Waits until the success count reaches [threshold] (`fi_cntr_wait`): returns 0, `-EIO`
     * if the error count moved while waiting, or `-ETIMEDOUT` after [timeoutMillis]
     * (negative: for ever).
     */
    @JvmOverloads
    public fun wait(threshold: Long, timeoutMillis: Long, idle: IdleStrategy = domain.idleStrategy()): Int {
        val deadline = if (timeoutMillis < 0) Long.MAX_VALUE else System.nanoTime() + timeoutMillis * 1_000_000
        val errorsBefore = errors.get()
        idle.reset()
        while (true) {
            if (read() >= threshold) return 0
            if (errors.get() != errorsBefore) return -Errno.EIO
            if (System.nanoTime() >= deadline) return -Errno.ETIMEDOUT
            idle.idle(0)
        }
    }

    override fun close() {}

    override fun toString(): String = "Counter(success=${success.get()}, errors=${errors.get()})"
}
