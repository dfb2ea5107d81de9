package braid.mpi.ompi;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.IntBuffer;
import java.util.Arrays;
import mpi.*;

/**
 * Programs written the way Open MPI's Java users write them, one per mode, each checking what it gets and printing
 * "OK mode rank r of n" at the end (an AssertionError ends the rank non-zero). Run by OmpiProgramsIT under the
 * launchers with 2–8 ranks.
 */
public final class Checks {
    static int rank, size;
    static Intracomm world;

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError("rank " + rank + ": " + what);
    }

    static void eq(Object expected, Object actual, String what) {
        boolean same = expected instanceof int[] ? Arrays.equals((int[]) expected, (int[]) actual)
                : expected instanceof double[] ? Arrays.equals((double[]) expected, (double[]) actual)
                : expected.equals(actual);
        check(same, what + ": expected " + str(expected) + ", got " + str(actual));
    }

    static String str(Object o) {
        return o instanceof int[] ? Arrays.toString((int[]) o) : o instanceof double[] ? Arrays.toString((double[]) o)
                : String.valueOf(o);
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "p2p";
        if (mode.equals("no-init")) {
            // Loading the package's classes starts nothing that keeps the JVM alive: main returns, the JVM exits.
            check(MPI.COMM_WORLD != null && MPI.INT != null && MPI.SUM != null && MPI.int2 != null, "constants");
            System.out.println("OK no-init " + MPI.getVersion().getVersion() + "." + MPI.getVersion().getSubVersion());
            return;
        }
        if (mode.equals("init-first")) {
            initFirst(args);
            return;
        }
        MPI.Init(args);
        world = MPI.COMM_WORLD;
        rank = world.getRank();
        size = world.getSize();
        switch (mode) {
            case "p2p": p2p(); break;
            case "coll": collectives(); break;
            case "comm": comms(); break;
            case "topo": topologies(); break;
            case "struct": structs(); break;
            case "ports": ports(); break;
            case "errors": errors(); break;
            case "fatal": fatal(); break;
            case "abort": abort(Integer.parseInt(args[1])); break;
            case "file": file(args[1]); break;
            case "port-server": portServer(args[1]); break;
            case "port-client": portClient(args[1]); break;
            case "win": windows(); break;
            case "spawn": spawn(); break;
            case "spawn-child": spawnChild(); break;
            case "spawn-multiple-child": spawnMultipleChild(args[1]); break;
            default: throw new IllegalArgumentException("mode " + mode);
        }
        System.out.println("OK " + mode + " rank " + rank + " of " + size);
        MPI.Finalize();
    }

    /** Every call but the few that need no Init raises MPIException before MPI.Init. */
    static void initFirst(String[] args) throws Exception {
        check(!MPI.isInitialized() && !MPI.isFinalized(), "initialized before Init");
        check(MPI.getVersion().getVersion() >= 3, "version");
        check(!MPI.getLibVersion().isEmpty(), "library version");
        int refused = 0;
        try {
            MPI.COMM_WORLD.getRank();
        } catch (MPIException e) {
            refused++;
        }
        try {
            MPI.wtime();
        } catch (MPIException e) {
            refused++;
        }
        try {
            MPI.COMM_WORLD.barrier();
        } catch (MPIException e) {
            refused++;
        }
        try {
            Datatype.createContiguous(2, MPI.INT);
        } catch (MPIException e) {
            refused++;
        }
        check(refused == 4, refused + " of 4 calls before Init raised MPIException");
        MPI.Init(args);
        check(MPI.isInitialized(), "isInitialized after Init");
        try {
            MPI.Init(args);
            check(false, "a second Init was accepted");
        } catch (MPIException expected) {
        }
        rank = MPI.COMM_WORLD.getRank();
        size = MPI.COMM_WORLD.getSize();
        System.out.println("OK init-first rank " + rank + " of " + size);
        MPI.Finalize();
        check(MPI.isFinalized(), "isFinalized after Finalize");
    }

    // ## Point-to-point ##

    static void p2p() throws MPIException {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        // Each blocking mode with arrays: a ring.
        byte[] attach = new byte[4 * (64 + MPI.BSEND_OVERHEAD)];
        MPI.attachBuffer(attach);
        int mode = 0;
        for (String m : new String[] {"send", "sSend", "bSend", "rSend"}) {
            int[] out = {rank, mode, rank * 10 + mode}, in = new int[3];
            IntBuffer got = MPI.newIntBuffer(3);
            Request r = world.iRecv(got, 3, MPI.INT, prev, 10 + mode);
            world.barrier(); // the receive is posted everywhere before a ready send
            if (m.equals("send")) world.send(out, 3, MPI.INT, next, 10 + mode);
            if (m.equals("sSend")) world.sSend(out, 3, MPI.INT, next, 10 + mode);
            if (m.equals("bSend")) world.bSend(out, 3, MPI.INT, next, 10 + mode);
            if (m.equals("rSend")) world.rSend(out, 3, MPI.INT, next, 10 + mode);
            Status s = r.waitStatus();
            check(r.isNull(), m + ": the request is null after its wait");
            eq(prev, s.getSource(), m + " source");
            eq(10 + mode, s.getTag(), m + " tag");
            eq(3, s.getCount(MPI.INT), m + " count");
            eq(prev * 10 + mode, got.get(2), m + " data");
            mode++;
        }
        byte[] detached = MPI.detachBuffer();
        check(detached == attach, "detachBuffer returns the attached array");

        // Blocking receive into arrays of each element type, from arrays.
        double[] d = {rank + 0.5, rank + 1.5};
        double[] dIn = new double[2];
        Status s = world.sendRecv(d, 2, MPI.DOUBLE, next, 1, dIn, 2, MPI.DOUBLE, prev, 1);
        eq(new double[] {prev + 0.5, prev + 1.5}, dIn, "sendRecv of doubles");
        eq(prev, s.getSource(), "sendRecv source");
        long[] l = {rank * 1_000_000_000_000L};
        world.sendRecvReplace(l, 1, MPI.LONG, next, 2, prev, 2);
        eq(prev * 1_000_000_000_000L, l[0], "sendRecvReplace of a long");
        char[] c = {(char) ('a' + rank)};
        char[] cIn = new char[1];
        world.sendRecv(c, 1, MPI.CHAR, next, 3, cIn, 1, MPI.CHAR, prev, 3);
        eq((char) ('a' + prev), cIn[0], "chars");
        boolean[] b = {rank % 2 == 0, true};
        boolean[] bIn = new boolean[2];
        world.sendRecv(b, 2, MPI.BOOLEAN, next, 4, bIn, 2, MPI.BOOLEAN, prev, 4);
        check(bIn[0] == (prev % 2 == 0) && bIn[1], "booleans");

        // Slices: of an array (a heap buffer) and of a direct buffer.
        int[] big = new int[10];
        Arrays.fill(big, -1);
        int[] src = {rank, rank + 1, rank + 2};
        world.sendRecv(src, 3, MPI.INT, next, 5, MPI.slice(big, 4), 3, MPI.INT, prev, 5);
        eq(new int[] {-1, -1, -1, -1, prev, prev + 1, prev + 2, -1, -1, -1}, big, "receive into a slice of an array");
        IntBuffer direct = MPI.newIntBuffer(8);
        for (int i = 0; i < 8; i++) direct.put(i, 100 * rank + i);
        IntBuffer dirIn = MPI.newIntBuffer(8);
        Request rr = world.iRecv(MPI.slice(dirIn, 2), 4, MPI.INT, prev, 6);
        Request sr = world.iSend(MPI.slice(direct, 4), 4, MPI.INT, next, 6);
        Request.waitAll(new Request[] {rr, sr});
        for (int i = 0; i < 4; i++) eq(100 * prev + 4 + i, dirIn.get(2 + i), "direct slice element " + i);
        eq(0, dirIn.get(0), "direct slice left the head alone");

        // Each nonblocking mode with direct buffers, any/some/all.
        MPI.attachBuffer(new byte[2 * (64 + MPI.BSEND_OVERHEAD)]);
        ByteBuffer[] outs = new ByteBuffer[4];
        DoubleBuffer[] ins = new DoubleBuffer[4];
        Request[] recvs = new Request[4];
        for (int k = 0; k < 4; k++) {
            ins[k] = MPI.newDoubleBuffer(2);
            recvs[k] = world.iRecv(ins[k], 2, MPI.DOUBLE, prev, 20 + k);
        }
        world.barrier();
        Request[] sends = new Request[4];
        for (int k = 0; k < 4; k++) {
            outs[k] = MPI.newByteBuffer(16);
            outs[k].putDouble(0, rank * 10 + k).putDouble(8, -k);
        }
        sends[0] = world.iSend(outs[0], 2, MPI.DOUBLE, next, 20);
        sends[1] = world.isSend(outs[1], 2, MPI.DOUBLE, next, 21);
        sends[2] = world.ibSend(outs[2], 2, MPI.DOUBLE, next, 22);
        sends[3] = world.irSend(outs[3], 2, MPI.DOUBLE, next, 23);
        int seen = 0;
        boolean[] done = new boolean[4];
        while (seen < 4) {
            int i = Request.waitAny(recvs);
            check(!done[i], "waitAny returned " + i + " twice");
            done[i] = true;
            seen++;
            check(recvs[i].isNull(), "waitAny's request is null after");
            eq((double) (prev * 10 + i), ins[i].get(0), "nonblocking mode " + i);
        }
        Status[] st = Request.waitAllStatus(sends);
        eq(4, st.length, "waitAllStatus length");
        check(Request.testAll(sends), "testAll after waitAll");
        MPI.detachBuffer();

        // Persistent requests, three rounds.
        IntBuffer pout = MPI.newIntBuffer(1), pin = MPI.newIntBuffer(1);
        Prequest ps = world.sendInit(pout, 1, MPI.INT, next, 30);
        Prequest pr = world.recvInit(pin, 1, MPI.INT, prev, 30);
        for (int round = 0; round < 3; round++) {
            pout.put(0, rank * 100 + round);
            Prequest.startAll(new Prequest[] {pr, ps});
            pr.waitFor();
            ps.waitFor();
            eq(prev * 100 + round, pin.get(0), "persistent round " + round);
        }
        ps.free();
        pr.free();

        // Probe, iProbe, matched probe, test/testStatus, PROC_NULL.
        int[] one = {rank};
        Request snd = world.iSend(MPI.newIntBuffer(1).put(0, rank), 1, MPI.INT, next, 40);
        Status ps1 = world.probe(prev, 40);
        eq(1, ps1.getCount(MPI.INT), "probe count");
        Status ip;
        do ip = world.iProbe(MPI.ANY_SOURCE, 40); while (ip == null);
        eq(prev, ip.getSource(), "iProbe source");
        Message msg = new Message();
        check(msg.isNull(), "a new Message is null");
        Status ms = msg.mProbe(prev, 40, world);
        eq(40, ms.getTag(), "mProbe tag");
        int[] mIn = new int[1];
        msg.mRecv(mIn, 1, MPI.INT);
        eq(prev, mIn[0], "mRecv");
        while (!snd.test()) {}
        check(snd.isNull(), "test returned true and nulled the request");
        Status pn = world.recv(one, 1, MPI.INT, MPI.PROC_NULL, 0);
        eq(MPI.PROC_NULL, pn.getSource(), "receive from PROC_NULL");
        world.send(one, 1, MPI.INT, MPI.PROC_NULL, 0);
        check(MPI.REQUEST_NULL.isNull(), "REQUEST_NULL is null");
        world.barrier();
    }

    // ## Collectives ##

    static int sum(int n) {
        return n * (n - 1) / 2;
    }

    static void collectives() throws MPIException {
        int root = size - 1;
        world.barrier();
        world.iBarrier().waitFor();

        int[] b = new int[3];
        if (rank == root) b = new int[] {7, 8, 9};
        world.bcast(b, 3, MPI.INT, root);
        eq(new int[] {7, 8, 9}, b, "bcast");
        IntBuffer ib = MPI.newIntBuffer(2);
        if (rank == 0) ib.put(0, 11).put(1, 12);
        world.iBcast(ib, 2, MPI.INT, 0).waitFor();
        eq(12, ib.get(1), "iBcast");

        // reduce, allReduce, in place, nonblocking
        int[] mine = {rank, 1}, red = new int[2];
        world.reduce(mine, red, 2, MPI.INT, MPI.SUM, root);
        if (rank == root) eq(new int[] {sum(size), size}, red, "reduce");
        int[] inplace = {rank, 1};
        world.reduce(inplace, 2, MPI.INT, MPI.SUM, 0);
        if (rank == 0) eq(new int[] {sum(size), size}, inplace, "reduce in place at the root");
        double[] all = {rank};
        world.allReduce(all, 1, MPI.DOUBLE, MPI.MAX);
        eq((double) (size - 1), all[0], "allReduce MAX in place");
        int[] ar = new int[1];
        world.allReduce(new int[] {rank + 1}, ar, 1, MPI.INT, MPI.PROD);
        int fact = 1;
        for (int i = 1; i <= size; i++) fact *= i;
        eq(fact, ar[0], "allReduce PROD");
        IntBuffer sendB = MPI.newIntBuffer(1).put(0, rank), recvB = MPI.newIntBuffer(1);
        world.iAllReduce(sendB, recvB, 1, MPI.INT, MPI.SUM).waitFor();
        eq(sum(size), recvB.get(0), "iAllReduce");
        IntBuffer rb2 = MPI.newIntBuffer(1);
        world.iReduce(sendB, rb2, 1, MPI.INT, MPI.MIN, 0).waitFor();
        if (rank == 0) eq(0, rb2.get(0), "iReduce MIN");
        IntBuffer ipb = MPI.newIntBuffer(1).put(0, rank);
        world.iAllReduce(ipb, 1, MPI.INT, MPI.BOR).waitFor();
        int bor = 0;
        for (int i = 0; i < size; i++) bor |= i;
        eq(bor, ipb.get(0), "iAllReduce BOR in place");

        // gather, gatherv, scatter, scatterv, allGather(v), allToAll(v)
        int[] g = new int[size * 2];
        world.gather(new int[] {rank, -rank}, 2, MPI.INT, g, 2, MPI.INT, root);
        if (rank == root) for (int i = 0; i < size; i++) check(g[2 * i] == i && g[2 * i + 1] == -i, "gather " + i);
        int[] gi = new int[size]; // the root's block is in place; the others send from the start of theirs
        gi[0] = rank * 3;
        world.gather(gi, 1, MPI.INT, 0);
        if (rank == 0) for (int i = 0; i < size; i++) eq(i * 3, gi[i], "gather in place " + i);
        int[] counts = new int[size], displs = new int[size];
        int total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = i + 1;
            displs[i] = total;
            total += i + 1;
        }
        int[] mineV = new int[rank + 1];
        Arrays.fill(mineV, rank);
        int[] gv = new int[total];
        world.gatherv(mineV, rank + 1, MPI.INT, gv, counts, displs, MPI.INT, 0);
        if (rank == 0) for (int i = 0; i < size; i++) eq(i, gv[displs[i] + i], "gatherv block " + i);
        IntBuffer gvb = MPI.newIntBuffer(total);
        IntBuffer mvb = MPI.newIntBuffer(rank + 1);
        for (int i = 0; i <= rank; i++) mvb.put(i, rank);
        world.iGatherv(mvb, rank + 1, MPI.INT, gvb, counts, displs, MPI.INT, 0).waitFor();
        if (rank == 0) eq(size - 1, gvb.get(total - 1), "iGatherv last");
        IntBuffer ig = MPI.newIntBuffer(size);
        world.iGather(MPI.newIntBuffer(1).put(0, rank + 5), 1, MPI.INT, ig, 1, MPI.INT, 0).waitFor();
        if (rank == 0) eq(size + 4, ig.get(size - 1), "iGather");

        int[] sc = new int[size * 2];
        for (int i = 0; i < size * 2; i++) sc[i] = i;
        int[] scIn = new int[2];
        world.scatter(sc, 2, MPI.INT, scIn, 2, MPI.INT, root);
        eq(new int[] {2 * rank, 2 * rank + 1}, scIn, "scatter");
        int[] scv = new int[total];
        for (int i = 0; i < total; i++) scv[i] = i;
        int[] scvIn = new int[rank + 1];
        world.scatterv(scv, counts, displs, MPI.INT, scvIn, rank + 1, MPI.INT, 0);
        eq(displs[rank] + rank, scvIn[rank], "scatterv");
        IntBuffer isc = MPI.newIntBuffer(size);
        for (int i = 0; i < size; i++) isc.put(i, 50 + i);
        IntBuffer iscIn = MPI.newIntBuffer(1);
        world.iScatter(isc, 1, MPI.INT, iscIn, 1, MPI.INT, 0).waitFor();
        eq(50 + rank, iscIn.get(0), "iScatter");
        world.iScatterv(isc, counts.length > 0 ? ones(size) : null, iota(size), MPI.INT, iscIn, 1, MPI.INT, 0)
                .waitFor();
        eq(50 + rank, iscIn.get(0), "iScatterv");

        int[] ag = new int[size];
        world.allGather(new int[] {rank * rank}, 1, MPI.INT, ag, 1, MPI.INT);
        for (int i = 0; i < size; i++) eq(i * i, ag[i], "allGather " + i);
        int[] agi = new int[size];
        agi[rank] = rank + 100;
        world.allGather(agi, 1, MPI.INT);
        eq(100 + size - 1, agi[size - 1], "allGather in place");
        int[] agv = new int[total];
        world.allGatherv(mineV, rank + 1, MPI.INT, agv, counts, displs, MPI.INT);
        for (int i = 0; i < size; i++) eq(i, agv[displs[i]], "allGatherv " + i);
        IntBuffer iag = MPI.newIntBuffer(size);
        world.iAllGather(MPI.newIntBuffer(1).put(0, -rank), 1, MPI.INT, iag, 1, MPI.INT).waitFor();
        eq(-(size - 1), iag.get(size - 1), "iAllGather");
        IntBuffer iagv = MPI.newIntBuffer(total);
        world.iAllGatherv(mvb, rank + 1, MPI.INT, iagv, counts, displs, MPI.INT).waitFor();
        eq(size - 1, iagv.get(total - 1), "iAllGatherv");

        int[] a2a = new int[size], a2aIn = new int[size];
        for (int i = 0; i < size; i++) a2a[i] = rank * 100 + i;
        world.allToAll(a2a, 1, MPI.INT, a2aIn, 1, MPI.INT);
        for (int i = 0; i < size; i++) eq(i * 100 + rank, a2aIn[i], "allToAll " + i);
        int[] a2av = new int[size];
        world.allToAllv(a2a, ones(size), iota(size), MPI.INT, a2av, ones(size), iota(size), MPI.INT);
        eq(a2aIn[size - 1], a2av[size - 1], "allToAllv");
        int[] a2aw = new int[size];
        Datatype[] types = new Datatype[size];
        Arrays.fill(types, MPI.INT);
        int[] bytesDispl = new int[size];
        for (int i = 0; i < size; i++) bytesDispl[i] = 4 * i;
        world.allToAllw(a2a, ones(size), bytesDispl, types, a2aw, ones(size), bytesDispl, types);
        eq(a2aIn[0], a2aw[0], "allToAllw");
        IntBuffer ia = MPI.newIntBuffer(size), iaIn = MPI.newIntBuffer(size);
        for (int i = 0; i < size; i++) ia.put(i, rank * 100 + i);
        world.iAllToAll(ia, 1, MPI.INT, iaIn, 1, MPI.INT).waitFor();
        eq(rank, iaIn.get(0), "iAllToAll");
        world.iAllToAllv(ia, ones(size), iota(size), MPI.INT, iaIn, ones(size), iota(size), MPI.INT).waitFor();
        eq((size - 1) * 100 + rank, iaIn.get(size - 1), "iAllToAllv");
        IntBuffer wIn = MPI.newIntBuffer(size);
        world.iAllToAllw(ia, ones(size), bytesDispl, types, wIn, ones(size), bytesDispl, types).waitFor();
        eq((size - 1) * 100 + rank, wIn.get(size - 1), "iAllToAllw");

        // reduceScatter(Block), scan, exScan, and their nonblocking forms
        int[] rsIn = new int[size];
        Arrays.fill(rsIn, rank + 1);
        int[] rsOut = new int[1];
        world.reduceScatterBlock(rsIn, rsOut, 1, MPI.INT, MPI.SUM);
        eq(size * (size + 1) / 2, rsOut[0], "reduceScatterBlock");
        world.reduceScatter(rsIn, rsOut, ones(size), MPI.INT, MPI.SUM);
        eq(size * (size + 1) / 2, rsOut[0], "reduceScatter");
        IntBuffer rsb = MPI.newIntBuffer(size);
        for (int i = 0; i < size; i++) rsb.put(i, 1);
        IntBuffer rso = MPI.newIntBuffer(1);
        world.iReduceScatterBlock(rsb, rso, 1, MPI.INT, MPI.SUM).waitFor();
        eq(size, rso.get(0), "iReduceScatterBlock");
        world.iReduceScatter(rsb, rso, ones(size), MPI.INT, MPI.SUM).waitFor();
        eq(size, rso.get(0), "iReduceScatter");
        int[] sc1 = new int[1];
        world.scan(new int[] {rank + 1}, sc1, 1, MPI.INT, MPI.SUM);
        eq((rank + 1) * (rank + 2) / 2, sc1[0], "scan");
        int[] ex = {-7};
        world.exScan(new int[] {rank + 1}, ex, 1, MPI.INT, MPI.SUM);
        if (rank > 0) eq(rank * (rank + 1) / 2, ex[0], "exScan");
        IntBuffer isb = MPI.newIntBuffer(1);
        world.iScan(MPI.newIntBuffer(1).put(0, 1), isb, 1, MPI.INT, MPI.SUM).waitFor();
        eq(rank + 1, isb.get(0), "iScan");
        world.iExScan(MPI.newIntBuffer(1).put(0, 1), isb, 1, MPI.INT, MPI.SUM).waitFor();
        if (rank > 0) eq(rank, isb.get(0), "iExScan");
        int[] inout = {5, 6};
        Comm.reduceLocal(new int[] {1, 2}, inout, 2, MPI.INT, MPI.SUM);
        eq(new int[] {6, 8}, inout, "reduceLocal");

        // MAXLOC with the pair type, through MPI.int2's records.
        ByteBuffer pair = MPI.newByteBuffer(MPI.int2.getExtent()), best = MPI.newByteBuffer(MPI.int2.getExtent());
        Int2.Data d = MPI.int2.getData(pair);
        d.putValue(rank % 2 == 0 ? rank : -rank);
        d.putIndex(rank);
        world.allReduce(pair, best, 1, MPI.INT2, MPI.MAXLOC);
        Int2.Data w = MPI.int2.getData(best);
        int top = (size - 1) % 2 == 0 ? size - 1 : size - 2;
        eq(top, w.getValue(), "MAXLOC value");
        eq(top, w.getIndex(), "MAXLOC index");
        world.barrier();
    }

    static int[] ones(int n) {
        int[] a = new int[n];
        Arrays.fill(a, 1);
        return a;
    }

    static int[] iota(int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = i;
        return a;
    }

    // ## Communicators and groups ##

    static void comms() throws MPIException {
        Intracomm dup = world.dup();
        eq(MPI.CONGRUENT, Comm.compare(world, dup), "compare with a dup");
        eq(MPI.IDENT, Comm.compare(world, world), "compare with itself");
        dup.setName("my dup");
        eq("my dup", dup.getName(), "name");
        Intracomm half = world.split(rank % 2, -rank);
        eq((size + 1 - rank % 2) / 2, half.getSize(), "split size");
        int[] hs = new int[1];
        half.allReduce(new int[] {1}, hs, 1, MPI.INT, MPI.SUM);
        eq(half.getSize(), hs[0], "traffic on the split");
        Intracomm none = world.split(rank == 0 ? MPI.UNDEFINED : 1, 0);
        check(rank == 0 ? none == null : none != null, "UNDEFINED colour gets no communicator");

        Group wg = world.getGroup();
        Group evens = wg.incl(evens(size));
        Group odds = wg.excl(evens(size));
        eq(MPI.UNEQUAL, Group.compare(evens, odds), "evens vs odds");
        eq(size, Group.union(evens, odds).getSize(), "union");
        eq(0, Group.intersection(evens, odds).getSize(), "intersection");
        eq(odds.getSize(), Group.difference(wg, evens).getSize(), "difference");
        eq(new int[] {0}, Group.translateRanks(evens, new int[] {0}, wg), "translateRanks");
        eq(MPI.SIMILAR, Group.compare(wg, Group.union(odds, evens)), "a permuted group is similar");
        eq(evens.getSize(), wg.rangeIncl(new int[][] {{0, size - 1, 2}}).getSize(), "rangeIncl");
        eq(odds.getSize(), wg.rangeExcl(new int[][] {{0, size - 1, 2}}).getSize(), "rangeExcl");
        eq(0, MPI.GROUP_EMPTY.getSize(), "GROUP_EMPTY");
        Intracomm ev = world.create(evens);
        check(rank % 2 == 0 ? ev != null && ev.getSize() == evens.getSize() : ev == null, "create");
        if (rank % 2 == 1) {
            Intracomm og = world.createGroup(odds, 7);
            eq(odds.getSize(), og.getSize(), "createGroup");
            og.barrier();
            og.free();
        }
        Intracomm shared = world.splitType(Comm.TYPE_SHARED, rank, MPI.INFO_NULL);
        eq(size, shared.getSize(), "splitType shares one host");

        // Attributes: predefined and user ones.
        check((Integer) world.getAttr(MPI.TAG_UB) >= 32767, "TAG_UB");
        eq(MPI.PROC_NULL, world.getAttr(MPI.HOST), "HOST");
        world.getAttr(MPI.IO);
        eq(MPI.ERR_LASTCODE, world.getAttr(MPI.LASTUSEDCODE), "LASTUSEDCODE before any code is added");
        world.getAttr(MPI.UNIVERSE_SIZE);
        world.getAttr(MPI.APPNUM);
        world.getAttr(MPI.WTIME_IS_GLOBAL);
        int key = Comm.createKeyval();
        dup.setAttr(key, "value");
        eq("value", dup.getAttr(key), "user attribute");
        Intracomm dd = dup.dup();
        eq("value", dd.getAttr(key), "a dup copies the attribute");
        dup.deleteAttr(key);
        check(dup.getAttr(key) == null, "deleted attribute");

        // Info.
        Info info = new Info();
        info.set("k1", "v1");
        info.set("k2", "v2");
        eq(2, info.size(), "info size");
        eq("k2", info.getKey(1), "info key order");
        eq("v1", info.dup().get("k1"), "info dup");
        info.delete("k1");
        check(info.get("k1") == null, "info delete");
        dup.setInfo(info);
        eq("v2", dup.getInfo().get("k2"), "comm info");
        info.free();
        check(info.isNull(), "freed info");

        // Intercommunicator from two halves, merge, free.
        Intracomm local = world.split(rank % 2, rank);
        if (size > 1) {
            Intercomm inter = world.createIntercomm(local, 0, rank % 2 == 0 ? 1 : 0, 99);
            check(inter.isInter(), "isInter");
            eq(size / 2 + (rank % 2 == 1 ? size % 2 : 0), inter.getRemoteSize(), "remote size");
            int[] x = new int[1];
            if (inter.getRank() == 0) {
                inter.send(new int[] {rank}, 1, MPI.INT, 0, 5);
                inter.recv(x, 1, MPI.INT, 0, 5);
                eq(rank % 2 == 0 ? 1 : 0, x[0], "intercomm leader exchange");
            }
            Intracomm merged = inter.merge(rank % 2 == 1);
            eq(size, merged.getSize(), "merged size");
            Intercomm idup = inter.dup();
            idup.free();
            inter.free();
            merged.free();
        }
        check(Intercomm.getParent().isNull(), "no parent");
        dd.free();
        dup.free();
        check(dup.isNull(), "freed communicator is null");
        Intracomm ic = world.iDup();
        ic.getRequest().waitFor();
        ic.free();
        world.barrier();
    }

    static int[] evens(int n) {
        int[] a = new int[(n + 1) / 2];
        for (int i = 0; i < a.length; i++) a[i] = 2 * i;
        return a;
    }

    // ## Topologies ##

    static void topologies() throws MPIException {
        int[] dims = new int[2];
        CartComm.createDims(size, dims);
        eq(size, dims[0] * dims[1], "createDims product");
        check(dims[0] >= dims[1], "createDims non-increasing");
        CartComm cart = world.createCart(dims, new boolean[] {true, false}, false);
        eq(MPI.CART, cart.getTopology(), "topology kind");
        CartParms p = cart.getTopo();
        eq(2, p.getDimCount(), "dim count");
        int[] coords = cart.getCoords(rank);
        eq(rank, cart.getRank(coords), "rank of own coords");
        eq(coords[0], p.getCoord(0), "getTopo coords");
        ShiftParms sh = cart.shift(0, 1);
        eq(cart.getRank(new int[] {(coords[0] + dims[0] - 1) % dims[0], coords[1]}), sh.getRankSource(),
                "shift source (periodic)");
        ShiftParms edge = cart.shift(1, 1);
        if (coords[1] == dims[1] - 1) eq(MPI.PROC_NULL, edge.getRankDest(), "shift off a non-periodic edge");
        CartComm row = cart.sub(new boolean[] {false, true});
        eq(dims[1], row.getSize(), "sub size");
        // Neighbor collectives: each process's 4 neighbors (2 per dimension, -1 then +1).
        int[] nb = new int[4];
        Arrays.fill(nb, -9);
        cart.neighborAllGather(new int[] {rank}, 1, MPI.INT, nb, 1, MPI.INT);
        eq(sh.getRankSource(), nb[0], "neighbor allgather from -1 in dimension 0");
        eq(sh.getRankDest(), nb[1], "neighbor allgather from +1 in dimension 0");
        if (edge.getRankDest() == MPI.PROC_NULL) eq(-9, nb[3], "no neighbor past the edge");
        int[] toEach = {rank * 10, rank * 10 + 1, rank * 10 + 2, rank * 10 + 3};
        int[] fromEach = new int[4];
        cart.neighborAllToAll(toEach, 1, MPI.INT, fromEach, 1, MPI.INT);
        // What came from my -1 neighbor in dimension 0 is what it sent towards +1 (its block 1).
        eq(sh.getRankSource() * 10 + 1, fromEach[0], "neighbor alltoall pairs blocks by direction");
        IntBuffer nbb = MPI.newIntBuffer(4);
        cart.iNeighborAllGather(MPI.newIntBuffer(1).put(0, rank), 1, MPI.INT, nbb, 1, MPI.INT).waitFor();
        eq(nb[0], nbb.get(0), "iNeighborAllGather");

        // A ring as a graph, and as a distributed graph.
        int[] index = new int[size], edges = new int[2 * size];
        for (int i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + size - 1) % size;
            edges[2 * i + 1] = (i + 1) % size;
        }
        GraphComm graph = world.createGraph(index, edges, false);
        eq(MPI.GRAPH, graph.getTopology(), "graph kind");
        eq(2 * size, graph.getDims().getEdgeCount(), "graph edges");
        int[] gn = graph.getNeighbors(rank);
        eq((rank + 1) % size, gn[1], "graph neighbors");
        int[] gIn = new int[2];
        graph.neighborAllGather(new int[] {rank}, 1, MPI.INT, gIn, 1, MPI.INT);
        eq(gn[0], gIn[0], "graph neighbor allgather");
        GraphComm dist = world.createDistGraphAdjacent(new int[] {(rank + size - 1) % size}, new int[] {(rank + 1) % size},
                MPI.INFO_NULL, false);
        eq(MPI.DIST_GRAPH, dist.getTopology(), "dist graph kind");
        DistGraphNeighbors dn = dist.getDistGraphNeighbors();
        eq(1, dn.getInDegree(), "in degree");
        int[] dIn = new int[1];
        dist.neighborAllToAll(new int[] {rank}, 1, MPI.INT, dIn, 1, MPI.INT);
        eq((rank + size - 1) % size, dIn[0], "dist graph alltoall");
        GraphComm dist2 = world.createDistGraph(new int[] {rank}, new int[] {1}, new int[] {(rank + 1) % size},
                new int[] {5}, MPI.INFO_NULL, false);
        DistGraphNeighbors dn2 = dist2.getDistGraphNeighbors();
        eq((rank + size - 1) % size, dn2.getSource(0), "createDistGraph in-edge");
        eq(5, dn2.getSourceWeight(0), "createDistGraph weight");
        world.barrier();
    }

    // ## Derived datatypes and user ops ##

    static final class Particle extends Struct {
        final int pos = addDouble(3), id = addInt(), tag = addChar();

        @Override
        protected Data newData() {
            return new Data();
        }

        final class Data extends Struct.Data {
            double pos(int i) {
                return getDouble(pos, i);
            }

            void pos(int i, double v) {
                putDouble(pos, i, v);
            }

            int id() {
                return getInt(id);
            }

            void id(int v) {
                putInt(id, v);
            }

            char tag() {
                return getChar(tag);
            }

            void tag(char c) {
                putChar(tag, c);
            }
        }
    }

    static void structs() throws MPIException {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        Particle particle = new Particle();
        int n = 3;
        ByteBuffer out = MPI.newByteBuffer(particle.getExtent() * n), in = MPI.newByteBuffer(particle.getExtent() * n);
        for (int k = 0; k < n; k++) {
            Particle.Data d = particle.getData(out, k);
            for (int i = 0; i < 3; i++) d.pos(i, rank + k + i / 10.0);
            d.id(rank * 10 + k);
            d.tag((char) ('A' + k));
        }
        world.sendRecv(out, n, particle.getType(), next, 1, in, n, particle.getType(), prev, 1);
        for (int k = 0; k < n; k++) {
            Particle.Data d = particle.getData(in, k);
            eq(prev * 10 + k, d.id(), "struct id " + k);
            eq(prev + k + 0.2, d.pos(2), "struct pos " + k);
            eq((char) ('A' + k), d.tag(), "struct tag " + k);
        }
        // The same with byte arrays.
        byte[] ba = new byte[particle.getExtent() * n];
        world.sendRecv(out, n, particle.getType(), next, 2, ba, n, particle.getType(), prev, 2);
        eq(prev * 10 + 2, ((Particle.Data) particle.getData(ba, 2)).id(), "struct into a byte[]");

        // A vector datatype: a matrix column, in elements of the base type.
        int rows = 4, cols = 3;
        Datatype column = Datatype.createVector(rows, 1, cols, MPI.INT);
        column.commit();
        eq(rows, column.getSize(), "vector size in base elements");
        eq((rows - 1) * cols + 1, column.getExtent(), "vector extent in base elements");
        int[] m = new int[rows * cols], mIn = new int[rows * cols];
        for (int i = 0; i < m.length; i++) m[i] = rank * 1000 + i;
        Arrays.fill(mIn, -1);
        world.sendRecv(m, 1, column, next, 3, mIn, 1, column, prev, 3);
        for (int r = 0; r < rows; r++) {
            eq(prev * 1000 + r * cols, mIn[r * cols], "column row " + r);
            eq(-1, mIn[r * cols + 1], "the gap after row " + r + " is untouched");
        }
        Datatype contig = Datatype.createContiguous(2, MPI.DOUBLE);
        contig.commit();
        Datatype idx = Datatype.createIndexed(new int[] {1, 2}, new int[] {0, 3}, MPI.INT);
        idx.commit();
        eq(3, idx.getSize(), "indexed size");
        Datatype res = Datatype.createResized(MPI.INT, 0, 8);
        res.commit();
        eq(2, res.getExtent(), "resized extent in ints");
        Datatype dupd = column.dup();
        dupd.free();
        check(dupd.isNull(), "freed datatype is null");

        // User ops: on arrays (the Object form) and on buffers (the ByteBuffer form), commutative or not.
        Op sumOfSquares = new Op(new UserFunction() {
            @Override
            public void call(Object inVec, Object inOutVec, int count, Datatype type) {
                int[] a = (int[]) inVec, b = (int[]) inOutVec;
                for (int i = 0; i < count; i++) b[i] = a[i] + b[i];
            }
        }, true);
        int[] us = new int[1];
        world.allReduce(new int[] {rank * rank}, us, 1, MPI.INT, sumOfSquares);
        int expect = 0;
        for (int i = 0; i < size; i++) expect += i * i;
        eq(expect, us[0], "user op (arrays)");
        check(sumOfSquares.isCommutative(), "commutative");
        Op firstWins = new Op(new UserFunction() {
            @Override
            public void call(ByteBuffer in, ByteBuffer inOut, int count, Datatype type) {
                for (int i = 0; i < count; i++) inOut.putInt(4 * i, in.getInt(4 * i));
            }
        }, false);
        int[] fw = new int[1];
        world.reduce(new int[] {rank + 100}, fw, 1, MPI.INT, firstWins, 0);
        if (rank == 0) eq(100, fw[0], "non-commutative user op keeps rank order");
        sumOfSquares.free();
        check(sumOfSquares.isNull(), "freed op");

        // Pack and unpack.
        byte[] packed = new byte[world.packSize(3, MPI.INT) + world.packSize(1, MPI.DOUBLE)];
        int pos = world.pack(new int[] {1, 2, 3}, 3, MPI.INT, packed, 0);
        pos = world.pack(new double[] {2.5}, 1, MPI.DOUBLE, packed, pos);
        int[] ui = new int[3];
        double[] ud = new double[1];
        int upos = world.unpack(packed, 0, ui, 3, MPI.INT);
        world.unpack(packed, upos, ud, 1, MPI.DOUBLE);
        eq(new int[] {1, 2, 3}, ui, "unpacked ints");
        eq(2.5, ud[0], "unpacked double");
        world.barrier();
    }

    // ## Ports ##

    /** The even ranks accept on a port, the odd ranks connect to it: an intercommunicator through a port. */
    static void ports() throws MPIException {
        Intracomm half = world.split(rank % 2, rank);
        byte[] name = new byte[MPI.MAX_PORT_NAME];
        String port = null;
        if (rank == 0) {
            port = Intracomm.openPort();
            byte[] p = port.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            System.arraycopy(p, 0, name, 0, p.length);
        }
        world.bcast(name, name.length, MPI.BYTE, 0);
        String got = new String(name, java.nio.charset.StandardCharsets.UTF_8).trim();
        Intercomm inter = rank % 2 == 0 ? half.accept(got, 0) : half.connect(got, 0);
        eq(rank % 2 == 0 ? size / 2 : (size + 1) / 2, inter.getRemoteSize(), "remote group through the port");
        int[] x = new int[1];
        if (half.getRank() == 0) {
            inter.send(new int[] {rank}, 1, MPI.INT, 0, 3);
            inter.recv(x, 1, MPI.INT, 0, 3);
            eq(rank % 2 == 0 ? 1 : 0, x[0], "a message through the port's intercommunicator");
        }
        int[] all = new int[1];
        inter.allReduce(new int[] {1}, all, 1, MPI.INT, MPI.SUM);
        eq(inter.getRemoteSize(), all[0], "an intercommunicator allreduce sums the other group");
        inter.disconnect();
        check(inter.isNull(), "disconnected");
        if (rank == 0) Intracomm.closePort(port);
        world.barrier();
    }

    /** One job opens a port and writes its name to [file]; the other job reads it and connects. */
    static void portServer(String file) throws Exception {
        String port = null;
        if (rank == 0) {
            port = Intracomm.openPort();
            java.nio.file.Path tmp = java.nio.file.Paths.get(file + ".tmp");
            java.nio.file.Files.writeString(tmp, port);
            java.nio.file.Files.move(tmp, java.nio.file.Paths.get(file), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        Intercomm inter = world.accept(port, 0);
        betweenJobs(inter, 1);
        if (rank == 0) Intracomm.closePort(port);
    }

    static void portClient(String file) throws Exception {
        java.nio.file.Path path = java.nio.file.Paths.get(file);
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!java.nio.file.Files.exists(path)) {
            check(System.nanoTime() < deadline, "no port name in " + file + " after 120 s");
            Thread.sleep(20);
        }
        String port = java.nio.file.Files.readString(path);
        Intercomm inter = world.connect(port, 0);
        betweenJobs(inter, 2);
    }

    /** Both jobs: each rank sends its job's mark to the same rank of the other job, and a reduction over both. */
    static void betweenJobs(Intercomm inter, int mark) throws MPIException {
        int peer = rank % inter.getRemoteSize();
        int[] got = new int[1];
        Request r = inter.iRecv(MPI.newIntBuffer(1), 1, MPI.INT, MPI.ANY_SOURCE, 4);
        if (rank < inter.getRemoteSize()) inter.send(new int[] {mark * 100 + rank}, 1, MPI.INT, peer, 4);
        if (rank < inter.getRemoteSize()) {
            Status s = r.waitStatus();
            check(s.getSource() == rank, "message between jobs from " + s.getSource());
        } else r.cancel();
        int[] sum = new int[1];
        inter.allReduce(new int[] {mark}, sum, 1, MPI.INT, MPI.SUM);
        eq((3 - mark) * inter.getRemoteSize(), sum[0], "allreduce between jobs sums the other job's marks");
        inter.disconnect();
        System.out.println("between jobs: rank " + rank + " of job " + mark + " done");
    }

    // ## Errors ##

    static void errors() throws MPIException {
        world.setErrhandler(MPI.ERRORS_RETURN);
        check(world.getErrhandler() == MPI.ERRORS_RETURN, "errhandler set");
        expect(MPI.ERR_RANK, () -> world.send(new int[1], 1, MPI.INT, size + 5, 0));
        expect(MPI.ERR_TAG, () -> world.send(new int[1], 1, MPI.INT, 0, -5));
        expect(MPI.ERR_ROOT, () -> world.bcast(new int[1], 1, MPI.INT, size));
        expect(MPI.ERR_COUNT, () -> world.send(new int[1], -1, MPI.INT, 0, 0));
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        Request r = world.iSend(MPI.newIntBuffer(4), 4, MPI.INT, next, 9);
        expect(MPI.ERR_TRUNCATE, () -> world.recv(new int[2], 2, MPI.INT, prev, 9));
        r.waitFor();
        Intracomm d = world.dup();
        d.free();
        expect(MPI.ERR_COMM, () -> d.barrier());
        expect(MPI.ERR_INFO_NOKEY, () -> new Info().delete("missing"));
        Win freed = new Win(MPI.newIntBuffer(2), 8, 4, MPI.INFO_NULL, world);
        freed.free();
        expect(MPI.ERR_WIN, () -> freed.fence(0));
        world.setErrhandler(MPI.ERRORS_ARE_FATAL);
        world.barrier();
    }

    // ## One-sided windows ##

    /** Windows made every way, every communication call in every kind of epoch, and the errors of misuse. */
    static void windows() throws MPIException {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;

        // A created window over the caller's IntBuffer; put and get in fence epochs.
        IntBuffer mem = MPI.newIntBuffer(4);
        Win win = new Win(mem, 4 * 4, 4, MPI.INFO_NULL, world);
        check(win.getGroup().getSize() == size, "window group");
        eq(16L, win.getAttr(MPI.WIN_SIZE), "WIN_SIZE");
        eq(4, win.getAttr(MPI.WIN_DISP_UNIT), "WIN_DISP_UNIT");
        win.setName("ints");
        eq("ints", win.getName(), "window name");
        IntBuffer out = MPI.newIntBuffer(2);
        out.put(0, rank * 10).put(1, rank * 10 + 1);
        win.fence(MPI.MODE_NOPRECEDE);
        win.put(out, 2, MPI.INT, next, 1, 2, MPI.INT); // into next's elements 1 and 2
        win.fence(0);
        eq(new int[] {0, prev * 10, prev * 10 + 1, 0}, ints(mem), "put in fence");
        IntBuffer in = MPI.newIntBuffer(2);
        win.get(in, 2, MPI.INT, next, 1, 2, MPI.INT);
        win.fence(0);
        eq(new int[] {rank * 10, rank * 10 + 1}, ints(in), "get in fence");

        // Accumulate from every rank into rank 0's element 0, atomically.
        IntBuffer one = MPI.newIntBuffer(1).put(0, rank + 1);
        win.accumulate(one, 1, MPI.INT, 0, 0, 1, MPI.INT, MPI.SUM);
        win.fence(0);
        if (rank == 0) eq(size * (size + 1) / 2, mem.get(0), "accumulate SUM");
        win.fence(0);

        // fetchAndOp: a distributed counter at rank 0's element 3; every rank's ticket is distinct.
        IntBuffer inc = MPI.newIntBuffer(1).put(0, 1), ticket = MPI.newIntBuffer(1);
        win.fetchAndOp(inc, ticket, MPI.INT, 0, 3, MPI.SUM);
        win.fence(0);
        int[] tickets = new int[size];
        world.allGather(new int[] {ticket.get(0)}, 1, MPI.INT, tickets, 1, MPI.INT);
        Arrays.sort(tickets);
        for (int r = 0; r < size; r++) eq(r, tickets[r], "fetchAndOp ticket");
        if (rank == 0) eq(size, mem.get(3), "counter after fetchAndOp");

        // compareAndSwap: only one rank swaps 0 for its rank + 100 in rank 0's element 0 (reset first).
        if (rank == 0) mem.put(0, 0);
        win.fence(0);
        IntBuffer mine = MPI.newIntBuffer(1).put(0, rank + 100), zero = MPI.newIntBuffer(1), old =
                MPI.newIntBuffer(1);
        win.compareAndSwap(mine, zero, old, MPI.INT, 0, 0);
        win.fence(MPI.MODE_NOSUCCEED);
        int[] won = new int[size];
        world.allGather(new int[] {old.get(0) == 0 ? 1 : 0}, 1, MPI.INT, won, 1, MPI.INT);
        eq(1, Arrays.stream(won).sum(), "exactly one compareAndSwap wins");

        // Request-based put and get inside lockAll, completed by the requests and flush.
        win.lockAll(0);
        IntBuffer v = MPI.newIntBuffer(1).put(0, 7000 + rank);
        Request rp = win.rPut(v, 1, MPI.INT, next, 3, 1, MPI.INT);
        rp.waitFor();
        win.flush(next);
        win.unlockAll();
        world.barrier();
        eq(7000 + prev, mem.get(3), "rPut under lockAll");
        world.barrier();

        // Post/start/complete/wait: each rank exposes to prev and accesses next.
        Group wg = world.getGroup();
        Group toNext = wg.incl(new int[] {next}), fromPrev = wg.incl(new int[] {prev});
        win.post(fromPrev, 0);
        win.start(toNext, 0);
        IntBuffer pscw = MPI.newIntBuffer(1).put(0, 500 + rank);
        win.put(pscw, 1, MPI.INT, next, 0, 1, MPI.INT);
        win.complete();
        while (!win.test()) Thread.onSpinWait(); // MPI_Win_test until the exposure epoch ends
        eq(500 + prev, mem.get(0), "put in post/start/complete/wait");

        // Exclusive lock: rGet and rAccumulate, then unlock.
        win.lock(MPI.LOCK_EXCLUSIVE, next, 0);
        IntBuffer got = MPI.newIntBuffer(1);
        Request rg = win.rGet(got, 1, MPI.INT, next, 0, 1, MPI.INT);
        rg.waitFor();
        Request ra = win.rAccumulate(MPI.newIntBuffer(1).put(0, 1), 1, MPI.INT, next, 2, 1, MPI.INT, MPI.SUM);
        ra.waitFor();
        IntBuffer before = MPI.newIntBuffer(1);
        win.getAccumulate(MPI.newIntBuffer(1), 1, MPI.INT, before, 1, MPI.INT, next, 2, 1, MPI.INT, MPI.NO_OP);
        IntBuffer replaced = MPI.newIntBuffer(1);
        Request rga = win.rGetAccumulate(MPI.newIntBuffer(1).put(0, -1), 1, MPI.INT, replaced, 1, MPI.INT, next, 1, 1,
                MPI.INT, MPI.REPLACE);
        rga.waitFor();
        win.flushLocal(next);
        win.flushLocalAll();
        win.flushAll();
        win.unlock(next);
        eq(rank * 10, replaced.get(0), "rGetAccumulate REPLACE returns the old value");
        eq(500 + rank, got.get(0), "rGet under an exclusive lock");
        world.barrier();
        eq(prev * 10 + 2, mem.get(2), "rAccumulate under an exclusive lock");
        eq(rank * 10 + 2, before.get(0), "getAccumulate NO_OP reads the target");
        eq(-1, mem.get(1), "rGetAccumulate REPLACE wrote the target");

        // Errors: an access outside an epoch, outside the target's window, an unlock without a lock.
        win.setErrhandler(MPI.ERRORS_RETURN);
        expect(MPI.ERR_RMA_SYNC, () -> win.put(out, 1, MPI.INT, next, 0, 1, MPI.INT));
        expect(MPI.ERR_RMA_SYNC, () -> win.unlock(next));
        win.fence(0);
        expect(68 /* Open MPI's MPI_ERR_RMA_RANGE */, () -> win.put(out, 2, MPI.INT, next, 3, 2, MPI.INT));
        win.fence(0);
        win.free();
        expect(MPI.ERR_WIN, () -> win.fence(0));
        world.setErrhandler(MPI.ERRORS_RETURN);
        expect(MPI.ERR_DISP, () -> new Win(MPI.newIntBuffer(1), 4, 0, MPI.INFO_NULL, world));
        check(throwsIllegalArgument(() -> new Win(IntBuffer.allocate(1), 4, 4, MPI.INFO_NULL, world)),
                "a heap base buffer is refused");
        world.setErrhandler(MPI.ERRORS_ARE_FATAL);

        // An allocated window: its memory is getAttr(MPI.WIN_BASE).
        Win alloc = new Win(8 * 2, 8, MPI.INFO_NULL, world, MPI.newByteBuffer(8), Win.FLAVOR_PRIVATE);
        ByteBuffer base = (ByteBuffer) alloc.getAttr(MPI.WIN_BASE);
        alloc.fence(0);
        alloc.put(MPI.newLongBuffer(1).put(0, 1L << 40 | rank), 1, MPI.LONG, next, 1, 1, MPI.LONG);
        alloc.fence(0);
        eq(1L << 40 | prev, base.getLong(8), "put into an allocated window");
        alloc.free();

        // A shared window: every rank stores into its own part, reads its neighbour's directly.
        Intracomm host = world.splitType(Comm.TYPE_SHARED, 0, new Info());
        Win shared = new Win(4, 4, MPI.INFO_NULL, host, MPI.newByteBuffer(8), Win.FLAVOR_SHARED);
        int hr = host.getRank(), hs = host.getSize();
        shared.sharedQuery(hr).putInt(0, 900 + hr);
        shared.sync();
        host.barrier();
        shared.sync();
        eq(900 + (hr + 1) % hs, shared.sharedQuery((hr + 1) % hs).getInt(0), "sharedQuery sees the neighbour's store");
        host.barrier();
        shared.free();
        host.free();

        // A dynamic window: attach and detach (Open MPI's int displacements cannot carry an address to put at).
        Win dyn = new Win(MPI.INFO_NULL, world);
        IntBuffer att = MPI.newIntBuffer(2);
        dyn.attach(att, 8);
        dyn.fence(0);
        dyn.fence(0);
        dyn.detach(att);
        dyn.free();
        world.barrier();
    }

    static int[] ints(IntBuffer b) {
        int[] a = new int[b.capacity()];
        for (int i = 0; i < a.length; i++) a[i] = b.get(i);
        return a;
    }

    static boolean throwsIllegalArgument(Call call) throws MPIException {
        try {
            call.run();
        } catch (IllegalArgumentException e) {
            return true;
        }
        return false;
    }

    interface Call {
        void run() throws MPIException;
    }

    static void expect(int errorClass, Call call) {
        try {
            call.run();
        } catch (MPIException e) {
            check(e.getErrorClass() == errorClass,
                    "error class " + e.getErrorClass() + " (" + e.getMessage() + "), expected " + errorClass);
            return;
        }
        check(false, "no MPIException, expected class " + errorClass);
    }

    /** Under the default ERRORS_ARE_FATAL a bad call ends the whole job with a non-zero code. */
    static void fatal() throws MPIException {
        world.barrier();
        if (rank == size - 1) world.send(new int[1], 1, MPI.INT, size + 1, 0);
        world.recv(new int[1], 1, MPI.INT, MPI.ANY_SOURCE, 77); // never arrives: the job must end anyway
    }

    static void abort(int code) throws MPIException {
        world.barrier();
        if (rank == 1 % size) world.abort(code);
        world.recv(new int[1], 1, MPI.INT, MPI.ANY_SOURCE, 78); // the others wait to be ended
    }

    // ## Spawn ##

    /**
     * The parents (this job) spawn 3 children running {@link #spawnChild}, the same JVM and class path: root 0 sends
     * each child its rank times 10 over the intercommunicator, the children add their world's sum and send it back to
     * every parent; then both sides disconnect. A command that does not exist raises ERR_SPAWN on every parent.
     */
    static void spawn() throws MPIException {
        String java = System.getProperty("java.home") + "/bin/java";
        String[] argv = {"-Xmx128m", "-cp", System.getProperty("java.class.path"), Checks.class.getName(),
                "spawn-child"};
        check(Intercomm.getParent().isNull(), "a job the launcher started has no parent");
        int[] errcodes = new int[3];
        Intercomm children = world.spawn(java, argv, 3, MPI.INFO_NULL, 0, errcodes);
        eq(3, children.getRemoteSize(), "the children's group");
        eq(size, children.getSize(), "the parents' group");
        eq(new int[] {MPI.SUCCESS, MPI.SUCCESS, MPI.SUCCESS}, errcodes, "errcodes");
        if (rank == 0) for (int c = 0; c < 3; c++) children.send(new int[] {10 * c}, 1, MPI.INT, c, 5);
        int[] got = new int[1];
        for (int c = 0; c < 3; c++) {
            children.recv(got, 1, MPI.INT, c, 6);
            eq(30 + 10 * c, got[0], "child " + c + "'s answer");
        }
        children.disconnect();
        spawnMultiple(java, argv);
        world.setErrhandler(MPI.ERRORS_RETURN);
        expect(MPI.ERR_SPAWN, () -> world.spawn("/nonexistent/braid-child", new String[0], 2, MPI.INFO_NULL, 0, null));
        // Children that end before they connect: a failing one, and one that never calls MPI_Init.
        int[] codes = new int[2];
        expect(MPI.ERR_SPAWN, () -> world.spawn("/bin/sh", new String[] {"-c", "exit 3"}, 2, MPI.INFO_NULL, 0, codes));
        eq(new int[] {MPI.ERR_SPAWN, MPI.ERR_SPAWN}, codes, "errcodes of children that died");
        expect(MPI.ERR_SPAWN, () -> world.spawn("/bin/sh", new String[] {"-c", "true"}, 1, MPI.INFO_NULL, 0, null));
        expect(MPI.ERR_SPAWN, () -> world.spawnMultiple(new String[] {"/bin/sh", "/bin/sh"},
                new String[][] {{"-c", "true"}}, new int[] {1, 1}, null, 0, null)); // one argument list for two
        world.setErrhandler(MPI.ERRORS_ARE_FATAL);
    }

    /**
     * {@code spawnMultiple} of two different commands: 2 processes of {@code java … spawn-multiple-child a} and 1 of
     * {@code /bin/sh -c 'exec "$@"' sh java … spawn-multiple-child b}; each child reports its entry's label, its
     * {@code APPNUM} and its rank in the children's world to every parent.
     */
    static void spawnMultiple(String java, String[] argv) throws MPIException {
        String[] a = Arrays.copyOf(argv, argv.length + 1);
        a[argv.length - 1] = "spawn-multiple-child";
        a[argv.length] = "a";
        String[] b = new String[a.length + 4];
        b[0] = "-c";
        b[1] = "exec \"$@\"";
        b[2] = "sh";
        b[3] = java;
        System.arraycopy(a, 0, b, 4, a.length);
        b[b.length - 1] = "b";
        int[] errcodes = new int[3];
        Intercomm children = world.spawnMultiple(new String[] {java, "/bin/sh"}, new String[][] {a, b},
                new int[] {2, 1}, new Info[] {MPI.INFO_NULL, MPI.INFO_NULL}, 0, errcodes);
        eq(3, children.getRemoteSize(), "the children's group of both commands");
        eq(new int[] {MPI.SUCCESS, MPI.SUCCESS, MPI.SUCCESS}, errcodes, "errcodes");
        int[] got = new int[3];
        for (int c = 0; c < 3; c++) {
            children.recv(got, 3, MPI.INT, c, 7);
            int label = c < 2 ? 'a' : 'b';
            eq(new int[] {label, c < 2 ? 0 : 1, c}, got, "child " + c + ": its command's label, APPNUM, rank");
        }
        children.disconnect();
    }

    static void spawnMultipleChild(String label) throws MPIException {
        Intercomm parent = Intercomm.getParent();
        check(!parent.isNull(), "a spawned process has a parent");
        eq(3, size, "the children's world holds both commands' processes");
        int appnum = (Integer) world.getAttr(MPI.APPNUM);
        for (int p = 0; p < parent.getRemoteSize(); p++)
            parent.send(new int[] {label.charAt(0), appnum, rank}, 3, MPI.INT, p, 7);
        parent.disconnect();
    }

    static void spawnChild() throws MPIException {
        Intercomm parent = Intercomm.getParent();
        check(!parent.isNull(), "a spawned process has a parent");
        int[] mine = new int[1];
        parent.recv(mine, 1, MPI.INT, 0, 5);
        eq(10 * rank, mine[0], "what the parents' root sent");
        int[] sum = new int[1];
        world.allReduce(mine, sum, 1, MPI.INT, MPI.SUM);
        for (int p = 0; p < parent.getRemoteSize(); p++) parent.send(new int[] {sum[0] + mine[0]}, 1, MPI.INT, p, 6);
        parent.disconnect();
    }

    // ## Files ##

    static void file(String dir) throws MPIException {
        String name = dir + "/rank-" + rank + ".dat";
        File f = new File(MPI.COMM_SELF, name, MPI.MODE_CREATE | MPI.MODE_RDWR);
        f.write(new int[] {1, 2, 3, 4}, 4, MPI.INT);
        eq(16L, f.getPosition(), "position after write (in bytes)");
        f.writeAt(16, new double[] {rank + 0.25}, 1, MPI.DOUBLE);
        eq(24L, f.getSize(), "file size");
        f.seek(4, MPI.SEEK_SET);
        int[] back = new int[2];
        Status s = f.read(back, 2, MPI.INT);
        eq(2, s.getCount(MPI.INT), "read count");
        eq(new int[] {2, 3}, back, "read after seek");
        double[] dd = new double[1];
        f.readAt(16, dd, 1, MPI.DOUBLE);
        eq(rank + 0.25, dd[0], "readAt");
        f.seek(-8, MPI.SEEK_END);
        eq(16L, f.getPosition(), "seek from the end");
        f.setView(0, MPI.INT, MPI.INT, "native");
        f.seek(3, MPI.SEEK_SET);
        int[] fourth = new int[1];
        f.read(fourth, 1, MPI.INT);
        eq(4, fourth[0], "a view of ints counts in ints");
        expect(MPI.ERR_UNSUPPORTED_OPERATION, () -> f.readShared(new int[1], 1, MPI.INT));
        expect(MPI.ERR_UNSUPPORTED_OPERATION, () -> f.readOrdered(new int[1], 1, MPI.INT));
        // Nonblocking forms (direct buffers), with explicit offsets and the individual pointer, in ints of the view.
        IntBuffer nb = MPI.newIntBuffer(2);
        nb.put(0, 10 * rank).put(1, 11 * rank);
        Request w = f.iWriteAt(6, nb, 2, MPI.INT);
        Status ws = w.waitStatus();
        eq(2, ws.getCount(MPI.INT), "iWriteAt count");
        check(w.isNull(), "an iWriteAt's request is null once waited for");
        IntBuffer got = MPI.newIntBuffer(2);
        Request r = f.iReadAt(6, got, 2, MPI.INT);
        eq(2, r.waitStatus().getCount(MPI.INT), "iReadAt count");
        eq(11 * rank, got.get(1), "iReadAt reads what iWriteAt wrote");
        f.seek(0, MPI.SEEK_SET);
        IntBuffer two = MPI.newIntBuffer(2);
        Request[] both = {f.iRead(two, 2, MPI.INT), f.iReadAll(MPI.slice(got, 1), 1, MPI.INT)};
        Request.waitAll(both);
        eq(1, two.get(0), "iRead at the pointer");
        eq(3, got.get(1), "iReadAll goes on from where iRead left the pointer");
        eq(3L, f.getPosition(), "the pointer after iRead and iReadAll");
        f.seek(8, MPI.SEEK_SET);
        eq(0, Request.waitAny(new Request[] {f.iWrite(nb, 1, MPI.INT)}), "iWrite's request in a waitAny");
        eq(9L, f.getPosition(), "the pointer after iWrite");
        check(throwsIllegalArgument(() -> f.iReadAt(0, IntBuffer.allocate(1), 1, MPI.INT)),
                "a nonblocking read into a heap buffer throws IllegalArgumentException");
        // Explicit-offset collectives and split collectives, every rank of COMM_SELF's file at once.
        f.writeAtAll(9, new int[] {rank + 100}, 1, MPI.INT);
        int[] one = new int[1];
        f.readAtAll(9, one, 1, MPI.INT);
        eq(rank + 100, one[0], "readAtAll reads what writeAtAll wrote");
        f.writeAtAllBegin(10, new int[] {rank + 200}, 1, MPI.INT);
        expect(MPI.ERR_OTHER, () -> f.readAllBegin(one, 1, MPI.INT));
        eq(1, f.writeAtAllEnd(null).getCount(MPI.INT), "writeAtAllEnd's count");
        f.readAtAllBegin(10, one, 1, MPI.INT);
        eq(1, f.readAtAllEnd(one).getCount(MPI.INT), "readAtAllEnd's count");
        eq(rank + 200, one[0], "a split collective read");
        expect(MPI.ERR_OTHER, () -> f.readAllEnd(one));
        f.close();
        expect(MPI.ERR_NO_SUCH_FILE, () -> new File(MPI.COMM_SELF, dir + "/missing-" + rank, MPI.MODE_RDONLY));
        File.delete(name);
        world.barrier();
    }
}
