package braid.javaapi;

import braid.core.AtomicDatatype;
import braid.core.AtomicOp;
import braid.core.Caps;
import braid.core.Completion;
import braid.core.CompletionQueue;
import braid.core.Counter;
import braid.core.Endpoint;
import braid.core.EndpointFutures;
import braid.core.Errno;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.FiAddr;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.core.OpFlags;
import braid.core.ProgressEngine;
import braid.core.ProgressModel;
import braid.testsupport.Deadline;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every data operation in its future and blocking forms, with heap and direct ByteBuffers and
 * Agrona buffers, as a Java caller writes them — under the default manual progress, with no
 * progress call anywhere: derived futures (allOf, thenCompose, isDone polling) complete because
 * the domain drives progress while futures are outstanding.
 */
class JavaFormsTest {
    private static final long WAIT = 10_000;

    private Fabric fabric;
    private Endpoint a;
    private Endpoint b;
    private CompletionQueue cqA;
    private long aToB;
    private MemoryRegion mr;
    private Counter remoteWrites;

    @BeforeEach
    void setUp() {
        TwoEndpoints two = new TwoEndpoints(Caps.TAGGED | Caps.MSG | Caps.RMA_ALL);
        fabric = two.fabric;
        a = two.a;
        b = two.b;
        cqA = two.cqA;
        remoteWrites = b.getDomain().counter();
        b.bind(remoteWrites, OpFlags.REMOTE_WRITE);
        aToB = two.enable().aToB;
        mr = b.getDomain().registerMemory(ByteBuffer.allocateDirect(4096), MrAccess.REMOTE);
        assertEquals(ProgressModel.MANUAL, a.getDomain().getProgressModel());
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    private static ByteBuffer heap(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static ByteBuffer direct(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
    }

    private static String text(ByteBuffer b, int len) {
        byte[] out = new byte[len];
        b.duplicate().get(out);
        return new String(out, StandardCharsets.UTF_8);
    }

    private static ByteBuffer nativeLongs(int n) {
        return ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder());
    }

    @Test
    void allOfOverAThousandTaggedReceivesCompletesWithNoProgressCall() throws Exception {
        List<CompletableFuture<Completion>> all = new ArrayList<>();
        ByteBuffer[] rx = new ByteBuffer[1000];
        for (int i = 0; i < 1000; i++) {
            rx[i] = (i % 2 == 0) ? ByteBuffer.allocate(16) : ByteBuffer.allocateDirect(16);
            all.add(EndpointFutures.trecvAsync(b, rx[i], FiAddr.UNSPEC, i));
        }
        for (int i = 0; i < 1000; i++) all.add(EndpointFutures.tsendAsync(a, heap("m" + i), aToB, i));
        // Nobody calls get() on a Braid future: allOf is a plain CompletableFuture.
        CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < 1000; i++) {
            String m = "m" + i;
            assertEquals(m, text(rx[i], m.length()), "receive " + i);
            assertEquals(i, all.get(i).join().getTag());
        }
    }

    @Test
    void thenComposeChainsAnEchoAndIsDonePollingSeesItComplete() throws Exception {
        ByteBuffer atB = ByteBuffer.allocateDirect(32);
        ByteBuffer back = ByteBuffer.allocate(32);
        CompletableFuture<Completion> replyArrived = EndpointFutures.recvAsync(a, back, FiAddr.UNSPEC);
        CompletableFuture<Completion> echo = EndpointFutures.recvAsync(b, atB, FiAddr.UNSPEC)
            .thenCompose(c -> EndpointFutures.sendAsync(b, atB.duplicate().limit((int) c.getLen()), c.getSource()))
            .thenApply(c -> c);
        EndpointFutures.sendAsync(a, direct("echo me"), aToB);
        Deadline deadline = Deadline.of("the echo's reply, by isDone() polling alone");
        while (!replyArrived.isDone()) {
            deadline.check();
            Thread.onSpinWait();
        }
        assertEquals("echo me", text(back, 7));
        assertEquals(7L, echo.get(10, TimeUnit.SECONDS).getLen());
    }

    @Test
    void messageFormsWithHeapAndDirectByteBuffersAndAgronaBuffers() throws Exception {
        ByteBuffer rx = ByteBuffer.allocate(64);
        CompletableFuture<Completion> r1 = EndpointFutures.recvAsync(b, rx, FiAddr.UNSPEC);
        assertEquals(5L, EndpointFutures.sendBlocking(a, direct("hello"), aToB, WAIT).getLen());
        assertEquals(5L, r1.get(10, TimeUnit.SECONDS).getLen());
        assertEquals("hello", text(rx, 5));

        ByteBuffer drx = ByteBuffer.allocateDirect(64);
        CompletableFuture<Completion> r2 = EndpointFutures.recvAsync(b, drx, FiAddr.UNSPEC);
        EndpointFutures.senddataAsync(a, heap("with data"), 0xBEEFL, aToB).get(10, TimeUnit.SECONDS);
        Completion c2 = r2.get(10, TimeUnit.SECONDS);
        assertEquals(0xBEEFL, c2.getData());
        assertTrue((c2.getFlags() & OpFlags.REMOTE_CQ_DATA) != 0, "the receive reports remote CQ data");
        assertEquals("with data", text(drx, 9));

        CompletableFuture<Completion> r3 = EndpointFutures.trecvAsync(b, ByteBuffer.allocate(8), FiAddr.UNSPEC, 9L);
        EndpointFutures.tsenddataBlocking(a, direct("td"), 77L, aToB, 9L, WAIT);
        assertEquals(77L, r3.get(10, TimeUnit.SECONDS).getData());

        UnsafeBuffer arx = new UnsafeBuffer(new byte[8]);
        CompletableFuture<Completion> r4 = EndpointFutures.trecvAsync(b, arx, 0, 8, FiAddr.UNSPEC, 3L);
        EndpointFutures.tinjectAsync(a, heap("inj"), aToB, 3L).get(10, TimeUnit.SECONDS);
        assertEquals(3L, r4.get(10, TimeUnit.SECONDS).getLen());
        EndpointFutures.injectBlocking(a, direct("i2"), aToB, WAIT);
        assertEquals(2L, EndpointFutures.recvBlocking(b, ByteBuffer.allocate(4), FiAddr.UNSPEC, WAIT).getLen());
        EndpointFutures.tsendAsync(a, direct("tb"), aToB, 4L);
        assertEquals(4L, EndpointFutures.trecvBlocking(b, ByteBuffer.allocateDirect(4), FiAddr.UNSPEC, 4L, 0L, WAIT).getTag());
        // Without ignore bits, as trecvAsync has it.
        EndpointFutures.tsendAsync(a, direct("tc"), aToB, 5L);
        assertEquals(5L, EndpointFutures.trecvBlocking(b, ByteBuffer.allocateDirect(4), FiAddr.UNSPEC, 5L, WAIT).getTag());
        EndpointFutures.tsendAsync(a, direct("td"), aToB, 6L);
        assertEquals(2L, EndpointFutures.trecvBlocking(b, new UnsafeBuffer(new byte[4]), 0, 4, FiAddr.UNSPEC, 6L, WAIT).getLen());
    }

    @Test
    void aByteBufferTheOperationCannotUseIsRefusedByName() {
        FabricException e = assertThrows(FabricException.class,
            () -> EndpointFutures.recvAsync(b, ByteBuffer.allocate(8).asReadOnlyBuffer(), FiAddr.UNSPEC));
        assertEquals(Errno.EINVAL, e.getCode());
        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        assertEquals(-Errno.EINVAL, b.tryRecv(ByteBuffer.allocate(8).asReadOnlyBuffer(), FiAddr.UNSPEC, "ctx"));
    }

    /**
     * The RMA target serves peers' operations when its domain makes progress: here a progress
     * engine (automatic progress), as a server that only serves memory would run.
     */
    private ProgressEngine target() {
        return ProgressEngine.thread(b.getDomain());
    }

    @Test
    void rmaWriteAndReadInEveryFormWithByteBuffers() throws Exception {
        try (ProgressEngine engine = target()) {
            rmaForms();
        }
    }

    private void rmaForms() throws Exception {
        Completion w = EndpointFutures.writeAsync(a, heap("heap write"), aToB, 0, mr.getKey()).get(10, TimeUnit.SECONDS);
        assertTrue((w.getFlags() & OpFlags.RMA) != 0 && (w.getFlags() & OpFlags.WRITE) != 0, "an RMA write completion");
        assertEquals("heap write", text(mr.byteBuffer(), 10));
        EndpointFutures.writeBlocking(a, direct("direct"), aToB, 100, mr.getKey(), WAIT);
        ByteBuffer readBack = ByteBuffer.allocateDirect(6);
        EndpointFutures.readAsync(a, readBack, aToB, 100, mr.getKey()).get(10, TimeUnit.SECONDS);
        assertEquals("direct", text(readBack, 6));
        UnsafeBuffer agrona = new UnsafeBuffer(new byte[4]);
        EndpointFutures.readBlocking(a, agrona, 0, 4, aToB, 0, mr.getKey(), WAIT);
        assertEquals("heap", agrona.getStringWithoutLengthUtf8(0, 4));
        // The try form with a ByteBuffer: its completion arrives on the CQ with our context.
        assertEquals(0, a.tryWrite(heap("try"), aToB, 200, mr.getKey(), "try-write"));
        Completion c = new Completion();
        Deadline deadline = Deadline.of("the try write's completion");
        while (cqA.read(c) != 1) deadline.check();
        assertEquals("try-write", c.getContext());
        assertTrue(remoteWrites.waitAsync(3).get(10, TimeUnit.SECONDS) >= 3, "the target counted three remote writes");
    }

    @Test
    void atomicsInEveryFormUseTheNativeByteOrder() throws Exception {
        try (ProgressEngine engine = target()) {
            atomicForms();
        }
    }

    private void atomicForms() throws Exception {
        ByteBuffer one = nativeLongs(1).putLong(0, 1);
        ByteBuffer old = nativeLongs(1);
        for (int i = 0; i < 3; i++) EndpointFutures.fetchAtomicAsync(a, one, old, aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM).get(10, TimeUnit.SECONDS);
        assertEquals(2L, old.getLong(0));
        EndpointFutures.atomicBlocking(a, nativeLongs(1).putLong(0, 10), aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM, WAIT);
        assertEquals(13L, mr.byteBuffer().getLong(0));
        ByteBuffer expected = nativeLongs(1).putLong(0, 13);
        EndpointFutures.compareAtomicAsync(a, nativeLongs(1).putLong(0, 99), expected, old, aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.CSWAP)
            .get(10, TimeUnit.SECONDS);
        assertEquals(13L, old.getLong(0));
        assertEquals(99L, mr.byteBuffer().getLong(0));
        UnsafeBuffer agronaOld = new UnsafeBuffer(new byte[8]);
        UnsafeBuffer agronaOne = new UnsafeBuffer(new byte[8]);
        agronaOne.putLong(0, 1);
        EndpointFutures.fetchAtomicBlocking(a, agronaOne, 0, 1, agronaOld, 0, aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM, WAIT);
        assertEquals(99L, agronaOld.getLong(0));
        assertEquals(100L, mr.byteBuffer().getLong(0));
    }

    @Test
    void aBigEndianByteBufferIsRefusedByAtomicsInsteadOfGivingAWrongCounter() {
        ByteBuffer bigEndian = ByteBuffer.allocateDirect(8).putLong(0, 1);
        FabricException e = assertThrows(FabricException.class,
            () -> EndpointFutures.atomicAsync(a, bigEndian, aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM));
        assertEquals(Errno.EINVAL, e.getCode());
        assertTrue(e.getMessage().contains("BIG_ENDIAN") && e.getMessage().contains("nativeOrder"), e.getMessage());
        assertEquals(-Errno.EINVAL, a.tryAtomic(bigEndian, aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM, "ctx"));
        FabricException partial = assertThrows(FabricException.class,
            () -> EndpointFutures.atomicAsync(a, nativeLongs(1).limit(5), aToB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM));
        assertTrue(partial.getMessage().contains("whole number"), partial.getMessage());
        assertEquals(0L, mr.byteBuffer().getLong(0), "nothing reached the target");
    }

    @Test
    void aFailedRmaCompletesTheFutureExceptionallyWithTheErrno() {
        ProgressEngine engine = target();
        CompletableFuture<Completion> f = EndpointFutures.writeAsync(a, heap("x"), aToB, 0, mr.getKey() + 1000);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        FabricException fe = assertInstanceOf(FabricException.class, e.getCause());
        assertEquals(Errno.EACCES, fe.getCode());
        engine.close();
    }

    @Test
    void aCounterWaitFutureCompletesWithNoProgressCallAndFailsWhenTheErrorCountMoves() throws Exception {
        Counter sends = a.getDomain().counter();
        CompletableFuture<Long> reached = sends.waitAsync(2);
        sends.add(1);
        assertTrue(!reached.isDone(), "one is not two");
        sends.add(1);
        assertEquals(2L, reached.get(10, TimeUnit.SECONDS));
        CompletableFuture<Long> failing = sends.waitAsync(10);
        sends.addErr(1);
        ExecutionException e = assertThrows(ExecutionException.class, () -> failing.get(10, TimeUnit.SECONDS));
        assertEquals(Errno.EIO, assertInstanceOf(FabricException.class, e.getCause()).getCode());
        // A wait on the target's counter drives the target's progress, so the write is served.
        CompletableFuture<Long> counted = remoteWrites.waitAsync(1);
        CompletableFuture<Completion> write = EndpointFutures.writeAsync(a, heap("c"), aToB, 0, mr.getKey());
        assertEquals(1L, counted.get(10, TimeUnit.SECONDS));
        assertEquals(1L, write.get(10, TimeUnit.SECONDS).getLen());
    }

    @Test
    void aCounterWaitFailsWithEshutdownWhenItsDomainCloses() {
        CompletableFuture<Long> never = a.getDomain().counter().waitAsync(5);
        a.getDomain().close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> never.get(10, TimeUnit.SECONDS));
        assertEquals(Errno.ESHUTDOWN, assertInstanceOf(FabricException.class, e.getCause()).getCode());
    }
}
