package braid.collectives.javaapi;

import braid.collectives.CollectiveGroup;
import braid.collectives.CollectiveJoin;
import braid.collectives.CollectiveOp;
import braid.collectives.CollectiveAlgorithm;
import braid.collectives.CollectiveRequest;
import braid.collectives.CollectiveTuning;
import braid.collectives.Collectives;
import braid.collectives.Datatype;
import braid.collectives.JoinOptions;
import braid.collectives.ReduceOp;
import braid.collectives.UserReduction;
import braid.core.AddressVector;
import braid.core.AvSet;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.CompletionQueue;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.Errno;
import braid.core.Event;
import braid.core.EventQueue;
import braid.core.EventType;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.Hints;
import braid.core.Info;
import braid.core.OpFlags;
import braid.testsupport.Deadline;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Collectives from plain Java: joins, the start/wait and future forms, a user reduction, the ByteBuffer forms (heap and direct). */
class CollectivesJavaApiTest {
    /** A non-commutative reduction in Java: keeps the lower rank's value. */
    static final class First implements UserReduction {
        @Override public void reduce(DirectBuffer input, int inputOffset, MutableDirectBuffer inout, int inoutOffset, int count, Datatype datatype) {
            for (int i = 0; i < count; i++) inout.putInt(inoutOffset + i * datatype.size(), input.getInt(inputOffset + i * datatype.size()));
        }
        @Override public boolean isCommutative() { return false; }
    }

    @Test
    void twoRanksJoinAllreduceAndBroadcastFromJava() throws Exception {
        Info info = Braid.getInfo(new Hints(Caps.TAGGED)).get(0);
        try (Fabric fabric = Braid.fabric(info)) {
            Domain[] domains = { fabric.domain(info), fabric.domain(info) };
            Endpoint[] eps = new Endpoint[2];
            AddressVector[] avs = new AddressVector[2];
            for (int i = 0; i < 2; i++) {
                CompletionQueue cq = domains[i].completionQueue();
                avs[i] = domains[i].addressVector();
                eps[i] = domains[i].endpoint();
                eps[i].bind(cq, OpFlags.TRANSMIT | OpFlags.RECV);
                eps[i].bind(avs[i]);
            }
            EventQueue eq = fabric.eventQueue();
            eps[0].bind(eq);
            for (Endpoint e : eps) e.enable();
            for (int i = 0; i < 2; i++) for (Endpoint e : eps) avs[i].insert(e.getAddress());
            JoinOptions options = JoinOptions.DEFAULT.withTuning(CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RECURSIVE_DOUBLING));
            CollectiveJoin j0 = Collectives.startJoin(eps[0], avs[0].avSet(0L, 1L), eq, "join-0", options);
            CompletableFuture<CollectiveGroup> f1 = Collectives.joinAsync(eps[1], avs[1].avSet(0L, 1L), options);   // every member must choose alike
            CollectiveGroup g0 = null;
            Deadline joined = Deadline.of("both joins");
            while (g0 == null || !f1.isDone()) { g0 = j0.test(); domains[1].progress(); joined.check(); }
            CollectiveGroup g1 = f1.get();
            Event ev = new Event();
            assertEquals(1, eq.read(ev));
            assertEquals(EventType.JOIN_COMPLETE, ev.type);
            assertEquals("join-0", ev.context);

            UnsafeBuffer s0 = new UnsafeBuffer(ByteBuffer.allocateDirect(16)), s1 = new UnsafeBuffer(ByteBuffer.allocateDirect(16));
            UnsafeBuffer r0 = new UnsafeBuffer(ByteBuffer.allocateDirect(16)), r1 = new UnsafeBuffer(ByteBuffer.allocateDirect(16));
            s0.putInt(0, 5); s1.putInt(0, 7);
            CollectiveRequest a = g0.startAllreduce(s0, 0, r0, 0, 1, Datatype.INT32, ReduceOp.SUM);
            CompletableFuture<Void> b = g1.startAllreduce(s1, 0, r1, 0, 1, Datatype.INT32, ReduceOp.SUM).toFuture();
            Deadline summed = Deadline.of("both allreduces");
            while (!a.test() || !b.isDone()) { domains[1].progress(); summed.check(); }
            assertEquals(12, r0.getInt(0));
            assertEquals(12, r1.getInt(0));

            CollectiveRequest c = g0.startAllreduce(s0, 0, r0, 0, 1, Datatype.INT32, new First());
            CollectiveRequest d = g1.startAllreduce(s1, 0, r1, 0, 1, Datatype.INT32, new First());
            Deadline firsts = Deadline.of("both allreduces with a Java operator");
            while (!c.test() | !d.test()) firsts.check();
            assertEquals(5, r0.getInt(0));
            assertEquals(5, r1.getInt(0));

            // ByteBuffer forms: direct on rank 0, heap on rank 1, data from each buffer's position.
            ByteBuffer bs0 = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder()), br0 = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
            ByteBuffer bs1 = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder()), br1 = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
            bs0.position(8); bs1.position(16); br0.position(24); br1.position(4);
            for (int i = 0; i < 3; i++) { bs0.putDouble(8 + i * 8, 1.5 * i); bs1.putDouble(16 + i * 8, 10.0 + i); }
            CollectiveRequest e = g0.startAllreduce(bs0, br0, 3, Datatype.DOUBLE, ReduceOp.SUM);
            CollectiveRequest f = g1.startAllreduce(bs1, br1, 3, Datatype.DOUBLE, ReduceOp.SUM);
            while (!e.test() | !f.test()) { }
            for (int i = 0; i < 3; i++) {
                assertEquals(10.0 + 2.5 * i, br0.getDouble(24 + i * 8));
                assertEquals(10.0 + 2.5 * i, br1.getDouble(4 + i * 8));
            }
            assertEquals(24, br0.position());
            br1.putInt(4, 0); br0.putInt(24, 42);
            CollectiveRequest h = g0.startBroadcast(br0, 1, Datatype.INT32, 0);
            CollectiveRequest k = g1.startBroadcast(br1, 1, Datatype.INT32, 0);
            while (!h.test() | !k.test()) { }
            assertEquals(42, br1.getInt(4));
            FabricException refused = assertThrows(FabricException.class, () -> g1.startAllreduce(bs1, br1.asReadOnlyBuffer(), 3, Datatype.DOUBLE, ReduceOp.SUM));
            assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());

            // Closing from Java: refused (a code, no exception) while a barrier is in flight, then try-with-resources.
            CollectiveRequest early = g0.startBarrier();            // rank 1 has not started its barrier
            assertEquals(-Errno.EBUSY, g0.tryClose());
            CollectiveRequest late = g1.startBarrier();
            Deadline barriers = Deadline.of("both barriers after the refused close");
            while (!early.test() | !late.test()) barriers.check();
            try (CollectiveGroup closing0 = g0; CollectiveGroup closing1 = g1) {
                assertTrue(!closing0.isClosed() && !closing1.isClosed());
            }
            assertTrue(g0.isClosed() && g1.isClosed());
            FabricException closed = assertThrows(FabricException.class, g0::startBarrier);
            assertEquals(Errno.EOPBADSTATE, closed.getCode());
            eps[0].close(); eps[1].close();
        }
    }
}
