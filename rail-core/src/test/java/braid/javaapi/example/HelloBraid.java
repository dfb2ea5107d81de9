package braid.javaapi.example;

import braid.core.AddressVector;
import braid.core.AtomicDatatype;
import braid.core.AtomicOp;
import braid.core.Braid;
import braid.core.Caps;
import braid.core.Completion;
import braid.core.CompletionQueue;
import braid.core.Domain;
import braid.core.Endpoint;
import braid.core.EndpointFutures;
import braid.core.FiAddr;
import braid.core.Hints;
import braid.core.Info;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.core.OpFlags;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Two processes on one machine over shared memory: the client sends 1,000 tagged messages of
 * 1 B to 64 KiB, writes into the server's registered memory and adds to a counter there with a
 * fetch-add; the server receives everything with futures and checks it. Addresses are exchanged
 * through files in a directory. Run: {@code java HelloBraid server DIR} and
 * {@code java HelloBraid client DIR}.
 */
public final class HelloBraid {
    static final int MESSAGES = 1000;
    static final long DONE_TAG = 1L << 40;

    public static void main(String[] args) throws Exception {
        boolean server = args[0].equals("server");
        Path dir = Path.of(args[1]);

        Info info = Braid.getInfo(new Hints(Caps.TAGGED | Caps.RMA_ALL)).stream()
            .filter(i -> i.getProvider().equals("shm")).findFirst().orElseThrow();
        try (var fabric = Braid.fabric(info)) {
            Domain domain = fabric.domain(info);
            CompletionQueue cq = domain.completionQueue();
            AddressVector av = domain.addressVector();
            Endpoint ep = domain.endpoint();
            ep.bind(cq, OpFlags.TRANSMIT | OpFlags.RECV);
            ep.bind(av);
            ep.enable();
            if (server) serve(domain, ep, dir); else client(ep, av, dir);
        }
        System.out.println("OK " + args[0]);
    }

    static int size(int i) {
        return 1 << (i % 17); // 1 B .. 64 KiB
    }

    static void serve(Domain domain, Endpoint ep, Path dir) throws Exception {
        MemoryRegion mr = domain.registerMemory(ByteBuffer.allocateDirect(4096), MrAccess.REMOTE);
        List<CompletableFuture<Completion>> received = new ArrayList<>();
        List<ByteBuffer> buffers = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(size(i));
            buffers.add(b);
            received.add(EndpointFutures.trecvAsync(ep, b, FiAddr.UNSPEC, i));
        }
        CompletableFuture<Completion> done = EndpointFutures.trecvAsync(ep, ByteBuffer.allocate(8), FiAddr.UNSPEC, DONE_TAG);
        publish(dir, "server", ByteBuffer.allocate(8 + ep.getAddress().length).putLong(mr.getKey()).put(ep.getAddress()).array());

        // Plain CompletableFuture combinators: the domain drives progress while futures are outstanding.
        CompletableFuture.allOf(received.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);
        for (int i = 0; i < MESSAGES; i++) {
            ByteBuffer b = buffers.get(i);
            if (received.get(i).join().getLen() != size(i) || b.get(0) != (byte) i || b.get(size(i) - 1) != (byte) i) {
                throw new IllegalStateException("message " + i + " arrived wrong");
            }
        }
        done.get(120, TimeUnit.SECONDS); // the client has finished its RMA write and fetch-add
        ByteBuffer memory = mr.byteBuffer(); // native byte order, as atomics use
        byte[] text = new byte[11];
        memory.get(0, text);
        if (!new String(text).equals("hello braid")) throw new IllegalStateException("RMA write missing: " + new String(text));
        if (memory.getLong(64) != 42) throw new IllegalStateException("counter is " + memory.getLong(64) + ", not 42");
        System.out.println("server: " + MESSAGES + " messages, the RMA write and the fetch-add arrived");
    }

    static void client(Endpoint ep, AddressVector av, Path dir) throws Exception {
        ByteBuffer published = ByteBuffer.wrap(lookup(dir, "server"));
        long key = published.getLong();
        byte[] address = new byte[published.remaining()];
        published.get(address);
        long server = av.insert(address);

        List<CompletableFuture<Completion>> sent = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            ByteBuffer b = ByteBuffer.allocate(size(i));
            while (b.hasRemaining()) b.put((byte) i);
            sent.add(EndpointFutures.tsendAsync(ep, b.flip(), server, i));
        }
        CompletableFuture.allOf(sent.toArray(new CompletableFuture[0])).get(120, TimeUnit.SECONDS);

        EndpointFutures.writeBlocking(ep, ByteBuffer.wrap("hello braid".getBytes()), server, 0, key, 30_000);
        ByteBuffer add = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder()).putLong(0, 42);
        ByteBuffer old = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        EndpointFutures.fetchAtomicAsync(ep, add, old, server, 64, key, AtomicDatatype.INT64, AtomicOp.SUM).get(30, TimeUnit.SECONDS);
        System.out.println("client: counter was " + old.getLong(0));
        EndpointFutures.tsendBlocking(ep, ByteBuffer.allocate(1), server, DONE_TAG, 30_000);
    }

    static void publish(Path dir, String name, byte[] blob) throws Exception {
        Path tmp = dir.resolve(name + ".tmp");
        Files.write(tmp, blob);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    }

    static byte[] lookup(Path dir, String name) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(dir.resolve(name))) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no " + name + " address in " + dir + " after 60 s");
            Thread.sleep(10);
        }
        return Files.readAllBytes(dir.resolve(name));
    }
}
