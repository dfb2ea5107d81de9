package braid.javaapi;

import braid.core.Caps;
import braid.core.Completion;
import braid.core.Counter;
import braid.core.Domain;
import braid.core.FiAddr;
import braid.core.OpFlags;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The domain's one wait as a Java caller writes it: a {@code BooleanSupplier} condition and a
 * {@code System.nanoTime} deadline.
 */
class JavaWaitTest {

    @Test
    void driveUntilDrivesProgressUntilTheConditionHoldsAndGivesUpAtItsDeadline() {
        try (TwoEndpoints two = new TwoEndpoints(Caps.MSG)) {
            Domain domain = two.b.getDomain();
            Counter received = domain.counter();
            two.b.bind(received, OpFlags.RECV);
            long aToB = two.enable().aToB;
            assertEquals(0, two.b.tryRecv(ByteBuffer.allocateDirect(8), FiAddr.UNSPEC, "r"));
            assertEquals(0, two.a.tryInject(ByteBuffer.wrap("hi".getBytes(StandardCharsets.UTF_8)), aToB));

            // Counter.getValue() drives nothing: the wait's own progress completes the receive.
            assertTrue(domain.driveUntil(Domain.deadlineAfter(10_000), () -> received.getValue() >= 1));
            assertEquals(1, two.cqB.read(new Completion()));

            long start = System.nanoTime();
            assertFalse(domain.driveUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20), () -> received.getValue() >= 2));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    @Test
    void driveUntilWithItsOwnProgressEndsWhenAnotherThreadCompletesAFuture() throws Exception {
        try (TwoEndpoints two = new TwoEndpoints(Caps.MSG)) {
            Domain domain = two.enable().b.getDomain();
            CompletableFuture<String> answer = new CompletableFuture<>();
            Thread other = new Thread(() -> {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                answer.complete("done");
                domain.wakeWaiters();
            });
            other.start();
            int[] rounds = {0};
            assertTrue(domain.driveUntil(Domain.NO_DEADLINE, () -> { rounds[0]++; return domain.progress(); }, answer::isDone));
            assertTrue(rounds[0] >= 1);
            assertEquals("done", answer.get());
            other.join(10_000);
        }
    }
}
