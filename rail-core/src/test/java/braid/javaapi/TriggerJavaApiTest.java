package braid.javaapi;

import braid.core.AddressVector;
import braid.core.AtomicDatatype;
import braid.core.AtomicOp;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.Completion;
import braid.core.CompletionQueue;
import braid.core.Counter;
import braid.core.DeferredOp;
import braid.core.DeferredWork;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.Fabric;
import braid.core.FabricException;
import braid.core.Hints;
import braid.core.Info;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.core.OpFlags;
import braid.core.TriggeredEndpoint;
import braid.core.WorkStatus;
import braid.testsupport.Deadline;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RMA, atomics and deferred work from plain Java: the overloads and constructors a Java caller uses. */
class TriggerJavaApiTest {
    private static Endpoint open(Domain domain, AddressVector av, CompletionQueue cq) {
        Endpoint ep = domain.endpoint();
        ep.bind(cq, OpFlags.TRANSMIT | OpFlags.RECV);
        ep.bind(av);
        ep.enable();
        return ep;
    }

    @Test
    void aDeferredFetchAddAndADirectOneFromJava() {
        Info info = Braid.getInfo(new Hints(Caps.TAGGED | Caps.RMA | Caps.ATOMIC)).get(0);
        try (Fabric fabric = Braid.fabric(info)) {
            Domain da = fabric.domain(info);
            Domain db = fabric.domain(info);
            AddressVector av = da.addressVector();
            CompletionQueue cqA = da.completionQueue();
            Endpoint a = open(da, av, cqA);
            Endpoint b = open(db, db.addressVector(), db.completionQueue());
            long toB = av.insert(b.getAddress());
            MemoryRegion mr = db.registerMemory(ByteBuffer.allocateDirect(8), MrAccess.REMOTE);
            UnsafeBuffer one = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
            one.putLong(0, 1);
            UnsafeBuffer old = new UnsafeBuffer(ByteBuffer.allocateDirect(16));

            Counter go = da.counter();
            Counter done = da.counter();
            DeferredWork work = new DeferredWork(go, 1, new DeferredOp.FetchAtomic(a, one, 0, 1, old, 0, toB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM), done);
            da.getDeferredWork().queue(work);
            assertEquals(WorkStatus.QUEUED, work.getStatus());
            go.add(1);
            assertEquals(0, a.tryFetchAtomic(one, 0, 1, old, 8, toB, 0, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM, "direct"));
            Completion c = new Completion();
            boolean direct = false;
            Deadline deadline = Deadline.of("the triggered and the direct fetch-add");
            while (done.getValue() < 1 || !direct) {
                db.progress();
                if (cqA.read(c) == 1) direct = true;
                deadline.check(work::toString);
            }
            assertEquals(2L, mr.getBuffer().getLong(0));
            assertEquals(1L, old.getLong(0) + old.getLong(8)); // one saw 0, the other 1

            TriggeredEndpoint alias = a.triggerAlias(go);
            alias.setThreshold(5);
            assertEquals(0, alias.tryWrite(one, 0, 8, toB, 0, mr.getKey(), null));
            List<DeferredWork> flushed = da.getDeferredWork().flush(go);
            assertEquals(1, flushed.size());
            assertEquals(WorkStatus.CANCELLED, flushed.get(0).getStatus());
            FabricException e = assertThrows(FabricException.class, () -> da.getDeferredWork().queue(new DeferredWork(go, 1, new DeferredOp.CounterAdd(done, 1), done)));
            assertTrue(e.getMessage().contains("no completion counter"), e.getMessage());
        }
    }
}
