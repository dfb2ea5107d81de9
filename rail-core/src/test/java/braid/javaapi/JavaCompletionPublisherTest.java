package braid.javaapi;

import braid.core.Caps;
import braid.core.Completion;
import braid.core.CompletionError;
import braid.core.CompletionQueue;
import braid.core.Counter;
import braid.core.DeferredOp;
import braid.core.DeferredWork;
import braid.core.Endpoint;
import braid.core.EndpointFutures;
import braid.core.Errno;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.FiAddr;
import braid.core.OpFlags;
import braid.core.TriggeredEndpoint;
import braid.testsupport.Deadline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The completion publisher (java.util.concurrent.Flow) under manual progress with no progress
 * call, demand honoured, error completions; and the ByteBuffer forms of triggered operations.
 */
class JavaCompletionPublisherTest {
    private Fabric fabric;
    private Endpoint a;
    private Endpoint b;
    private CompletionQueue cqB;
    private long aToB;

    @BeforeEach
    void setUp() {
        TwoEndpoints two = new TwoEndpoints(Caps.TAGGED | Caps.MSG | Caps.TRIGGER);
        fabric = two.fabric;
        a = two.a;
        b = two.b;
        cqB = two.cqB;
        aToB = two.enable().aToB;
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    /** A subscriber that requests [initial] and records what it is given. */
    static final class Recorder implements Flow.Subscriber<Completion> {
        final List<Completion> items = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final CountDownLatch ended = new CountDownLatch(1);
        volatile Flow.Subscription subscription;
        private final long initial;

        Recorder(long initial) {
            this.initial = initial;
        }

        @Override public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(initial);
        }

        @Override public void onNext(Completion c) {
            items.add(c);
        }

        @Override public void onError(Throwable t) {
            error.set(t);
            ended.countDown();
        }

        @Override public void onComplete() {
            ended.countDown();
        }

        void awaitItems(int n) {
            Deadline.await(n + " completions at the subscriber", Deadline.DEFAULT, items::size, got -> got >= n);
        }
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aSubscriberGetsCompletionsOnlyAsFarAsItsDemandAndTheRestStayQueued() throws Exception {
        for (int i = 0; i < 5; i++) assertEquals(0, b.tryTrecv(ByteBuffer.allocate(8), FiAddr.UNSPEC, i, 0, "rx" + i));
        Recorder r = new Recorder(2);
        cqB.publisher().subscribe(r);
        for (int i = 0; i < 5; i++) EndpointFutures.tsendAsync(a, text("m" + i), aToB, i).get(10, TimeUnit.SECONDS);
        r.awaitItems(2);
        Thread.sleep(50); // nothing more may arrive without demand
        assertEquals(2, r.items.size());
        r.subscription.request(3);
        r.awaitItems(5);
        for (int i = 0; i < 5; i++) assertEquals("rx" + i, r.items.get(i).getContext());
        r.subscription.cancel();
        // Cancelled: the next completion stays in the queue for a plain read.
        EndpointFutures.tsendAsync(a, text("after"), aToB, 9).get(10, TimeUnit.SECONDS);
        assertEquals(0, b.tryTrecv(ByteBuffer.allocate(8), FiAddr.UNSPEC, 9, 0, "rx9"));
        Completion c = new Completion();
        Deadline deadline = Deadline.of("rx9's completion");
        while (cqB.read(c) != 1) deadline.check();
        assertEquals("rx9", c.getContext());
        assertEquals(5, r.items.size());
    }

    @Test
    void anErrorCompletionGoesToTheHandlerOrEndsTheStreamWithItsErrno() throws Exception {
        List<CompletionError> errors = new CopyOnWriteArrayList<>();
        Recorder kept = new Recorder(Long.MAX_VALUE);
        cqB.publisher(errors::add, null).subscribe(kept);
        assertEquals(0, b.tryTrecv(ByteBuffer.allocate(2), FiAddr.UNSPEC, 1, 0, "small"));
        EndpointFutures.tsendAsync(a, text("too long"), aToB, 1).get(10, TimeUnit.SECONDS);
        assertEquals(0, b.tryTrecv(ByteBuffer.allocate(8), FiAddr.UNSPEC, 2, 0, "fine"));
        EndpointFutures.tsendAsync(a, text("ok"), aToB, 2).get(10, TimeUnit.SECONDS);
        kept.awaitItems(1);
        assertEquals("fine", kept.items.get(0).getContext());
        assertEquals(1, errors.size());
        assertEquals(Errno.ETRUNC, errors.get(0).getErr());
        kept.subscription.cancel();

        Recorder ended = new Recorder(Long.MAX_VALUE);
        cqB.publisher().subscribe(ended);
        assertEquals(0, b.tryTrecv(ByteBuffer.allocate(2), FiAddr.UNSPEC, 3, 0, "small"));
        EndpointFutures.tsendAsync(a, text("too long"), aToB, 3).get(10, TimeUnit.SECONDS);
        assertTrue(ended.ended.await(10, TimeUnit.SECONDS), "the stream ended within 10 s");
        assertEquals(Errno.ETRUNC, assertInstanceOf(FabricException.class, ended.error.get()).getCode());
    }

    @Test
    void triggeredOperationsTakeByteBuffersAndFireWhenTheirCounterReachesTheThreshold() throws Exception {
        Counter trigger = a.getDomain().counter();
        TriggeredEndpoint t = a.triggerAlias(trigger, 1);
        CompletableFuture<Completion> rx = EndpointFutures.trecvAsync(b, ByteBuffer.allocateDirect(16), FiAddr.UNSPEC, 4);
        assertEquals(0, t.tryTsend(text("triggered"), aToB, 4, "t"));
        assertTrue(!rx.isDone(), "nothing is sent before the trigger");
        a.getDomain().getDeferredWork().queue(new DeferredWork(trigger, 0, new DeferredOp.CounterAdd(trigger, 1)));
        assertEquals(9L, rx.get(10, TimeUnit.SECONDS).getLen());
        ByteBuffer bigEndian = ByteBuffer.allocateDirect(8);
        assertEquals(ByteOrder.BIG_ENDIAN, bigEndian.order());
        assertEquals(-Errno.EINVAL, t.tryAtomic(bigEndian, aToB, 0, 1, braid.core.AtomicDatatype.INT64, braid.core.AtomicOp.SUM, "x"));
    }
}
