package braid.dsl.javaapi.example;

import braid.core.AtomicDatatype;
import braid.core.AtomicOp;
import braid.core.Completion;
import braid.core.EndpointFutures;
import braid.core.FiAddr;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.dsl.OpenLink;
import braid.dsl.Topology;
import braid.dsl.TopologyFiles;
import braid.dsl.TopologySpec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

import static java.util.concurrent.TimeUnit.SECONDS;

/** A config file, two endpoints of its link, a message through futures, an RMA write and a fetch-add. */
public final class QuickStart {
    public static void main(String[] args) throws Exception {
        TopologySpec spec = TopologyFiles.read(Path.of(args[0]));    // e.g. samples/config/local.conf
        try (OpenLink a = Topology.open(spec); OpenLink b = Topology.open(spec)) {
            long toB = a.getAv().insert(b.getAddress());             // between processes: exchange getAddress()
            ByteBuffer inbox = ByteBuffer.allocateDirect(64);
            CompletableFuture<Completion> got = EndpointFutures.trecvAsync(b.getEndpoint(), inbox, FiAddr.UNSPEC, 7);
            CompletableFuture<Completion> done = EndpointFutures.trecvAsync(b.getEndpoint(), ByteBuffer.allocate(1), FiAddr.UNSPEC, 8);
            ByteBuffer hello = ByteBuffer.wrap("hello, braid".getBytes(StandardCharsets.UTF_8));
            EndpointFutures.tsendAsync(a.getEndpoint(), hello, toB, 7).get(10, SECONDS);
            System.out.println("b received " + got.get(10, SECONDS).getLen() + " bytes on tag 7");

            // One-sided: b registers memory; a writes into it and adds to a counter there.
            ByteBuffer memory = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
            MemoryRegion mr = b.getDomain().registerMemory(memory, MrAccess.REMOTE);
            EndpointFutures.writeAsync(a.getEndpoint(), ByteBuffer.wrap(new byte[] {1, 2, 3}), toB, 0, mr.getKey()).get(10, SECONDS);
            ByteBuffer add = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 5);
            ByteBuffer old = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            EndpointFutures.fetchAtomicAsync(a.getEndpoint(), add, old, toB, 64, mr.getKey(), AtomicDatatype.INT64, AtomicOp.SUM)
                .get(10, SECONDS);
            EndpointFutures.tsendAsync(a.getEndpoint(), ByteBuffer.allocate(1), toB, 8).get(10, SECONDS);
            done.get(10, SECONDS);                                    // b's pending receive drove its side meanwhile
            System.out.println("wrote " + memory.get(2) + " at offset 2; counter was " + old.getLong(0) + ", is " + memory.getLong(64));
        }
    }
}
