package braid.testsupport;

import com.sun.management.ThreadMXBean;

import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * The allocation check every "allocates nothing once warm" spec shares: the bytes the calling
 * thread allocates (the JVM's per-thread counter: bytes, not time) while a window of work runs.
 *
 * <p>What such a spec promises is the steady state. On a loaded machine the JIT may not yet have
 * compiled, and scalar-replaced, the path when the warm-up ends, so a first window can count
 * allocations that a compiled path does not make. {@link #least} therefore measures up to
 * {@code windows} windows and returns the least, stopping at the first within {@code enough}. An
 * allocation made per operation shows in every window and still fails the spec.
 */
public final class SteadyAllocation {
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    private SteadyAllocation() {
    }

    /** Bytes this thread allocated while {@code window} ran. */
    public static long of(Runnable window) {
        long tid = Thread.currentThread().getId();
        long before = THREADS.getThreadAllocatedBytes(tid);
        window.run();
        return THREADS.getThreadAllocatedBytes(tid) - before;
    }

    /**
     * The least byte count of up to {@code windows} runs of {@code window}, which returns the bytes
     * it counted itself (for windows that measure only part of their work); stops early at a run
     * that counted at most {@code enough}.
     */
    public static long leastCounted(int windows, long enough, LongSupplier window) {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < windows; i++) {
            least = Math.min(least, window.getAsLong());
            if (least <= enough) break;
        }
        return least;
    }

    /** As {@link #leastCounted} for windows measured whole by {@link #of}. */
    public static long least(int windows, long enough, Runnable window) {
        return leastCounted(windows, enough, () -> of(window));
    }
}
