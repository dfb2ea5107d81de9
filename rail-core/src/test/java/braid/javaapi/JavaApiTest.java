package braid.javaapi;

import braid.core.AddressVector;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.Completion;
import braid.core.CompletionQueue;
import braid.core.Domain;
import braid.core.DomainAttr;
import braid.core.Endpoint;
import braid.core.EndpointFutures;
import braid.core.Errno;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.FiAddr;
import braid.core.Hints;
import braid.core.IdleKind;
import braid.core.IdlePolicy;
import braid.core.Info;
import braid.core.LinkSelector;
import braid.core.LinkStringException;
import braid.core.OpFlags;
import braid.core.ProgressEngine;
import braid.core.ProgressModel;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Java face of the progress engine: futures, blocking forms with time-outs, engines and idle policies, from plain Java. */
class JavaApiTest {
    private Fabric fabric;
    private Endpoint a;
    private Endpoint b;
    private long aToB;

    private Endpoint open(Info info, AddressVector[] avOut) {
        Domain domain = fabric.domain(info);
        CompletionQueue cq = domain.completionQueue();
        AddressVector av = domain.addressVector();
        Endpoint ep = domain.endpoint();
        ep.bind(cq, OpFlags.TRANSMIT | OpFlags.RECV);
        ep.bind(av);
        ep.enable();
        avOut[0] = av;
        return ep;
    }

    @BeforeEach
    void setUp() {
        Info info = Braid.getInfo(new Hints(Caps.TAGGED | Caps.MSG)).get(0);
        DomainAttr attr = info.getDomainAttr();
        // A domain attribute set from Java: back off to parks of at most 0.5 ms.
        Info tuned = info.withDomainAttr(
            new DomainAttr(attr.getThreading(), attr.getProgress(), attr.getAvType(), attr.getMrMode(), attr.getMrKeySize(), attr.getCqDataSize(),
                new IdlePolicy(IdleKind.BACKOFF, 500_000L)));
        fabric = Braid.fabric(tuned);
        AddressVector[] avA = new AddressVector[1];
        AddressVector[] avB = new AddressVector[1];
        a = open(tuned, avA);
        b = open(tuned, avB);
        aToB = avA[0].insert(b.getAddress());
        avB[0].insert(a.getAddress());
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    private static UnsafeBuffer text(String s) {
        return new UnsafeBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void linkStringsParseFromJava() {
        LinkSelector link = LinkSelector.parse("shm+tcp:eth0,lo").get(0);
        assertEquals("shm+tcp", link.getName());
        assertEquals(2, link.expand().size());
        LinkStringException e = assertThrows(LinkStringException.class, () -> LinkSelector.parse("shm++tcp", "BRAID_LINKS"));
        assertEquals("shm++tcp", e.getLink());
        assertEquals(Errno.EINVAL, e.getCode());
    }

    @Test
    void futuresCompleteWithTheCompletionAndGetDrivesManualProgress() throws Exception {
        UnsafeBuffer rx = new UnsafeBuffer(new byte[16]);
        CompletableFuture<Completion> receive = EndpointFutures.trecvAsync(b, rx, 0, 16, FiAddr.UNSPEC, 42L);
        CompletableFuture<Completion> send = EndpointFutures.tsendAsync(a, text("from java"), 0, 9, aToB, 42L);
        assertEquals(9L, send.get(10, TimeUnit.SECONDS).getLen());
        Completion c = receive.get(10, TimeUnit.SECONDS);
        assertEquals(9L, c.getLen());
        assertEquals(42L, c.getTag());
        assertEquals("from java", rx.getStringWithoutLengthUtf8(0, 9));
        assertEquals(ProgressModel.MANUAL, b.getDomain().getProgressModel());
    }

    @Test
    void blockingReceiveTimesOutWithdrawsTheReceiveAndLeavesTheMessageForTheNextOne() throws Exception {
        UnsafeBuffer rx = new UnsafeBuffer(new byte[16]);
        TimeoutException e = assertThrows(TimeoutException.class, () -> EndpointFutures.trecvBlocking(b, rx, 0, 16, FiAddr.UNSPEC, 7L, 0L, 20));
        assertTrue(e.getMessage().contains("withdrawn"), e.getMessage());
        EndpointFutures.tinjectBlocking(a, text("later"), 0, 5, aToB, 7L, 10_000);
        Completion c = EndpointFutures.trecvBlocking(b, rx, 0, 16, FiAddr.UNSPEC, 7L, 0L, 10_000);
        assertEquals(5L, c.getLen());
        assertEquals("later", rx.getStringWithoutLengthUtf8(0, 5));
    }

    @Test
    void cancellingAnUnmatchedReceiveFutureWithdrawsIt() {
        CompletableFuture<Completion> f = EndpointFutures.recvAsync(b, new UnsafeBuffer(new byte[8]), 0, 8, FiAddr.UNSPEC);
        assertTrue(f.cancel(true));
        assertTrue(f.isCancelled());
    }

    @Test
    void errorsArriveAsFabricExceptionsWithTheErrnoCode() {
        CompletableFuture<Completion> small = EndpointFutures.trecvAsync(b, new UnsafeBuffer(new byte[2]), 0, 2, FiAddr.UNSPEC, 1L);
        EndpointFutures.tinjectAsync(a, text("too long"), 0, 8, aToB, 1L).join();
        ExecutionException e = assertThrows(ExecutionException.class, () -> small.get(10, TimeUnit.SECONDS));
        FabricException fe = assertInstanceOf(FabricException.class, e.getCause());
        assertEquals(Errno.ETRUNC, fe.getCode());
        FabricException refused = assertThrows(FabricException.class, () -> EndpointFutures.sendBlocking(a, text("x"), 5, 10, aToB, 1000));
        assertEquals(Errno.EINVAL, refused.getCode());
    }

    @Test
    void aThreadEngineCompletesFuturesWithoutAnyCallFromTheApplication() throws Exception {
        try (ProgressEngine ea = ProgressEngine.thread(a.getDomain()); ProgressEngine eb = ProgressEngine.thread(b.getDomain(), "java-engine")) {
            assertSame(eb, b.getDomain().getProgressEngine());
            assertEquals(ProgressModel.AUTO, b.getDomain().getProgressModel());
            UnsafeBuffer rx = new UnsafeBuffer(new byte[16]);
            CompletableFuture<Completion> receive = EndpointFutures.trecvAsync(b, rx, 0, 16, FiAddr.UNSPEC, 5L, 0L);
            CompletableFuture<Completion> send = EndpointFutures.tsendAsync(a, text("auto"), 0, 4, aToB, 5L);
            // allOf(...) is a plain future: waiting on it drives nothing, the engines do.
            CompletableFuture.allOf(receive, send).get(10, TimeUnit.SECONDS);
            assertEquals(4L, receive.join().getLen());
            assertNotNull(eb.getEngineThread());
            assertEquals("java-engine", eb.getEngineThread().getName());
        }
        assertEquals(ProgressModel.MANUAL, b.getDomain().getProgressModel());
    }

    @Test
    void idlePoliciesAreUsableFromJava() {
        assertEquals(IdleKind.SPIN, IdlePolicy.SPIN.getKind());
        assertNotNull(IdlePolicy.BACKOFF.newStrategy());
        assertEquals(500_000L, b.getDomain().getIdlePolicy().getMaxParkNanos());
        FabricException e = assertThrows(FabricException.class, () -> new IdlePolicy(IdleKind.BACKOFF, 10L));
        assertEquals(Errno.EINVAL, e.getCode());
        assertFalse(b.getDomain().getIdlePolicy().toString().isEmpty());
    }
}
