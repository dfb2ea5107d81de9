package braid.collectives.javaapi;

import braid.collectives.CollectiveGroup;
import braid.collectives.CollectiveOp;
import braid.collectives.CollectiveRequest;
import braid.collectives.Collectives;
import braid.collectives.Datatype;
import braid.collectives.JoinOptions;
import braid.collectives.OffloadBinding;
import braid.collectives.ReduceOp;
import braid.collectives.offload.ShmOffload;
import braid.core.AddressVector;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.Errno;
import braid.core.Fabric;
import braid.core.Hints;
import braid.core.Info;
import braid.core.OpFlags;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** The offload provider from plain Java: configure, query, pair through a domain, read the counters. */
class OffloadJavaApiTest {
    @Test
    void pairTheOffloadWithADomainAndAllreduceThroughItFromJava() throws Exception {
        ShmOffload offload = ShmOffload.DEFAULT.withSlotBytes(4096).withOperations(EnumSet.of(CollectiveOp.ALLREDUCE, CollectiveOp.BARRIER));
        assertEquals(0, offload.queryCollective(CollectiveOp.ALLREDUCE, Datatype.INT32, ReduceOp.SUM));
        assertEquals(-Errno.ENOSYS, offload.queryCollective(CollectiveOp.BROADCAST, Datatype.INT32, null));
        Info info = Braid.getInfo(new Hints(Caps.TAGGED)).get(0);
        try (Fabric fabric = Braid.fabric(info)) {
            Domain[] domains = { fabric.domain(info), fabric.domain(info) };
            Endpoint[] eps = new Endpoint[2];
            AddressVector[] avs = new AddressVector[2];
            for (int i = 0; i < 2; i++) {
                avs[i] = domains[i].addressVector();
                eps[i] = domains[i].endpoint();
                eps[i].bind(domains[i].completionQueue(), OpFlags.TRANSMIT | OpFlags.RECV);
                eps[i].bind(avs[i]);
                eps[i].enable();
            }
            for (int i = 0; i < 2; i++) for (Endpoint e : eps) avs[i].insert(e.getAddress());
            ShmOffload.pairWith(domains[1], offload);  // rank 1's domain is paired; rank 0 names it in its options
            CompletableFuture<CollectiveGroup> f0 = Collectives.joinAsync(eps[0], avs[0].avSet(0L, 1L), JoinOptions.DEFAULT.withOffload(offload));
            CompletableFuture<CollectiveGroup> f1 = Collectives.joinAsync(eps[1], avs[1].avSet(0L, 1L));
            while (!f0.isDone() || !f1.isDone()) { domains[0].progress(); domains[1].progress(); }
            CollectiveGroup[] g = { f0.get(), f1.get() };
            UnsafeBuffer[] send = new UnsafeBuffer[2], recv = new UnsafeBuffer[2];
            CollectiveRequest[] req = new CollectiveRequest[2];
            for (int r = 0; r < 2; r++) {
                send[r] = new UnsafeBuffer(ByteBuffer.allocateDirect(4000));
                recv[r] = new UnsafeBuffer(ByteBuffer.allocateDirect(4000));
                for (int i = 0; i < 1000; i++) send[r].putInt(i * 4, r + i);
                req[r] = g[r].startAllreduce(send[r], 0, recv[r], 0, 1000, Datatype.INT32, ReduceOp.SUM);
            }
            boolean done0 = false, done1 = false;
            while (!done0 || !done1) { if (!done0) done0 = req[0].test(); if (!done1) done1 = req[1].test(); }
            for (int r = 0; r < 2; r++) {
                for (int i = 0; i < 1000; i++) assertEquals(1 + 2 * i, recv[r].getInt(i * 4));
                OffloadBinding o = g[r].getOffload();
                assertNotNull(o);
                assertFalse(o.isHierarchical());
                assertEquals(1L, o.getOffloadCalls());
                assertEquals(1L, o.getSegmentPhases());
            }
        }
    }
}
