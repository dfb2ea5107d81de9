package braid.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeadlineTest {
    @Test
    void aWaitThatRunsOutNamesWhatItWaitedForHowLongAndWhatItSawLast() {
        AtomicInteger reads = new AtomicInteger();
        AssertionError e = assertThrows(AssertionError.class, () ->
                Deadline.await("3 completions", Duration.ofMillis(50), reads::incrementAndGet, n -> n < 0));
        assertTrue(e.getMessage().startsWith("timed out after 50 ms waiting for 3 completions; last saw: "), e.getMessage());
        assertEquals(String.valueOf(reads.get()), e.getMessage().substring(e.getMessage().lastIndexOf(' ') + 1));
    }

    @Test
    void aConditionThatBecomesTrueOnAnotherThreadEndsTheWaitWithItsValue() throws Exception {
        AtomicInteger n = new AtomicInteger();
        Thread t = new Thread(() -> { for (int i = 0; i < 5; i++) n.incrementAndGet(); });
        t.start();
        assertEquals(5, Deadline.await("five increments", Duration.ofSeconds(10), n::get, v -> v == 5));
        t.join(10_000);
    }

    @Test
    void aLoopCheckFailsOnlyOnceTheDeadlinePassesAndReadsWhatItSawOnlyThen() throws Exception {
        Deadline d = Deadline.of("the reply", Duration.ofMillis(30));
        AtomicInteger asked = new AtomicInteger();
        d.check(() -> asked.incrementAndGet());
        assertEquals(0, asked.get());
        Thread.sleep(40);
        assertTrue(d.expired());
        assertEquals(0, d.remainingNanos());
        AssertionError e = assertThrows(AssertionError.class, () -> d.check(() -> "no bytes"));
        assertEquals("timed out after 30 ms waiting for the reply; last saw: no bytes", e.getMessage());
        assertEquals("timed out after 30 ms waiting for the reply", assertThrows(AssertionError.class, d::check).getMessage());
    }

    @Test
    void aNonPositiveTimeOutIsRejectedNamingTheWait() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Deadline.of("x", Duration.ZERO));
        assertTrue(e.getMessage().contains("deadline for x"), e.getMessage());
    }
}
