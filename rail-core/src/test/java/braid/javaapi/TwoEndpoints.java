package braid.javaapi;

import braid.core.AddressVector;
import braid.core.Braid;
import braid.core.CompletionQueue;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.Fabric;
import braid.core.Hints;
import braid.core.Info;
import braid.core.OpFlags;

/** Two shm endpoints in this process, each with its own domain, CQ and AV, each in the other's AV: what the Java specs share. */
final class TwoEndpoints implements AutoCloseable {
    final Fabric fabric;
    final Endpoint a;
    final Endpoint b;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final AddressVector avA;
    final AddressVector avB;
    /** b's address in a's AV, once [enable]d. */
    long aToB;

    TwoEndpoints(long caps) {
        Info info = Braid.getInfo(new Hints(caps)).stream()
            .filter(i -> i.getProvider().equals("shm")).findFirst().orElseThrow();
        fabric = Braid.fabric(info);
        Domain da = fabric.domain(info);
        Domain db = fabric.domain(info);
        cqA = da.completionQueue();
        cqB = db.completionQueue();
        avA = da.addressVector();
        avB = db.addressVector();
        a = da.endpoint();
        a.bind(cqA, OpFlags.TRANSMIT | OpFlags.RECV);
        a.bind(avA);
        b = db.endpoint();
        b.bind(cqB, OpFlags.TRANSMIT | OpFlags.RECV);
        b.bind(avB);
    }

    /** Enables both (after any further binds, such as counters) and inserts each in the other's AV. */
    TwoEndpoints enable() {
        a.enable();
        b.enable();
        aToB = avA.insert(b.getAddress());
        avB.insert(a.getAddress());
        return this;
    }

    @Override
    public void close() {
        fabric.close();
    }
}
