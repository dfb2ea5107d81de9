package braid.testsupport;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one deadline-wait helper of Braid's tests: every wait in a test has a deadline, and a wait
 * that runs out fails with an {@link AssertionError} naming what it waited for, for how long, and
 * what it saw last ("timed out after 10 s waiting for 3 completions; last saw: 2 of them: [...]").
 *
 * <p>Two shapes. A passive wait, for a condition another thread or process makes true:
 * <pre>{@code
 * Deadline.await("the engine thread to park", () -> engine.isParked());
 * int n = Deadline.await("three unexpected messages", Duration.ofSeconds(5), () -> srx.unexpectedCount(), c -> c >= 3);
 * }</pre>
 * and a loop that does its own work each round (drives progress, reads a CQ) and checks the
 * deadline once per round, so the loop's body stays as it reads:
 * <pre>{@code
 * Deadline d = Deadline.of("4 completions", Duration.ofSeconds(10));
 * while (got.size() < 4) { domain.progress(); d.check(() -> got); }
 * }</pre>
 * The passive form polls with {@link Thread#yield} for its first {@link #SPIN_NANOS} (short waits
 * react at once), then sleeps a millisecond between polls (long waits leave the CPU to the threads
 * they wait on).
 */
public final class Deadline {
    /** The time out of the forms that take none. */
    public static final Duration DEFAULT = Duration.ofSeconds(10);

    /** How long a passive wait polls with {@code Thread.yield()} before it sleeps between polls. */
    public static final long SPIN_NANOS = 10_000_000L;

    private final String what;
    private final Duration timeout;
    private long start;
    private long end;

    private Deadline(String what, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("deadline for " + what + ": time out " + timeout + " is not positive");
        this.what = what;
        this.timeout = timeout;
        this.start = System.nanoTime();
        this.end = start + timeout.toNanos();
    }

    /** A deadline {@code timeout} from now for a wait on {@code what} (a phrase: "the reply from rank 1"). */
    public static Deadline of(String what, Duration timeout) {
        return new Deadline(what, timeout);
    }

    /** A deadline {@link #DEFAULT} from now for a wait on {@code what}. */
    public static Deadline of(String what) {
        return new Deadline(what, DEFAULT);
    }

    /**
     * Re-arms this deadline to its time out from now, allocating nothing: for a wait repeated inside
     * a region whose allocations a test measures (one deadline made before it, restarted per wait).
     */
    public Deadline restart() {
        start = System.nanoTime();
        end = start + timeout.toNanos();
        return this;
    }

    /** Whether the deadline has passed. */
    public boolean expired() {
        return System.nanoTime() - end >= 0;
    }

    /** Nanoseconds left, 0 once expired (for a bounded {@code Future.get} or {@code join}). */
    public long remainingNanos() {
        return Math.max(0L, end - System.nanoTime());
    }

    /** Milliseconds left, at least 1 while not expired, 0 once expired. */
    public long remainingMillis() {
        long n = remainingNanos();
        return n == 0 ? 0 : Math.max(1L, n / 1_000_000L);
    }

    /** Fails if the deadline has passed, saying what was awaited and for how long. */
    public void check() {
        if (expired()) throw failure(null, false);
    }

    /** Fails if the deadline has passed, saying what was awaited, for how long, and {@code seen} (asked only then). */
    public void check(Supplier<?> seen) {
        if (expired()) throw failure(seen, true);
    }

    /** The error this deadline fails with now, whether or not it has passed (for a wait that ends some other way). */
    public AssertionError failure(Supplier<?> seen) {
        return failure(seen, seen != null);
    }

    private AssertionError failure(Supplier<?> seen, boolean saw) {
        StringBuilder m = new StringBuilder("timed out after ").append(format(timeout)).append(" waiting for ").append(what);
        if (saw) {
            Object last;
            try {
                last = seen.get();
            } catch (RuntimeException e) {
                last = "(reading it failed: " + e + ")";
            }
            m.append("; last saw: ").append(last);
        }
        return new AssertionError(m.toString());
    }

    /** Waits until {@code condition} holds, failing after {@link #DEFAULT}. */
    public static void await(String what, BooleanSupplier condition) {
        await(what, DEFAULT, condition);
    }

    /** Waits until {@code condition} holds, failing after {@code timeout}. */
    public static void await(String what, Duration timeout, BooleanSupplier condition) {
        Deadline d = new Deadline(what, timeout);
        while (!condition.getAsBoolean()) {
            d.check();
            d.pause();
        }
    }

    /** Waits until {@code done} accepts what {@code probe} reads, and returns that; fails after {@code timeout} with the last value read. */
    public static <T> T await(String what, Duration timeout, Supplier<? extends T> probe, Predicate<? super T> done) {
        Deadline d = new Deadline(what, timeout);
        while (true) {
            T seen = probe.get();
            if (done.test(seen)) return seen;
            d.check(() -> seen);
            d.pause();
        }
    }

    /** As {@link #await(String, Duration, Supplier, Predicate)}, failing after {@link #DEFAULT}. */
    public static <T> T await(String what, Supplier<? extends T> probe, Predicate<? super T> done) {
        return await(what, DEFAULT, probe, done);
    }

    private void pause() {
        if (System.nanoTime() - start < SPIN_NANOS) {
            Thread.yield();
            return;
        }
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, e);
        }
    }

    private static String format(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
    }

    @Override
    public String toString() {
        return "Deadline(" + what + ", " + format(timeout) + ", " + (remainingNanos() / 1_000_000L) + " ms left)";
    }
}
