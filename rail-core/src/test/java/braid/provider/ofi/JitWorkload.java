package braid.provider.ofi;

/**
 * Code that HotSpot compiles with implicit null checks (a field read through a null reference: a SIGSEGV the JVM turns
 * into a NullPointerException) and that allocates enough to bring collections, so safepoint polls, on the way. Written
 * in Java because Kotlin's own null checks are explicit and would never trap. With libfabric loaded and no signal
 * guard, 20 rounds killed the JVM 3 times out of 3 on the project's machine ("terminated with signal 11").
 */
final class JitWorkload {
    static final int PER_ROUND = 100_000;

    private JitWorkload() {}

    private static final class Box {
        final String s;

        Box(String s) {
            this.s = s;
        }
    }

    private static int length(Box b) {
        try {
            return b.s.length();
        } catch (NullPointerException e) {
            return -1;
        }
    }

    /** Runs [rounds] rounds and returns how many calls completed (all of them, unless the JVM died). */
    static long run(int rounds) {
        long done = 0;
        long sink = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < PER_ROUND; i++) {
                Box b = i % 3 == 0 ? null : new Box(i % 5 == 0 ? null : "x" + i);
                sink += length(b);
                done++;
            }
            if (r % 5 == 0) System.gc();
        }
        if (sink == Long.MIN_VALUE) System.out.println(sink);
        return done;
    }
}
